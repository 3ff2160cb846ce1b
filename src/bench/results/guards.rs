//! Honesty guards: what a figure cannot mean, said beside it. Wording and arithmetic over what
//! `sys::links` read:
//! - a file test on a copy-on-write or compressing file system (btrfs, zfs, bcachefs) measures
//!   the file system's way of writing, not the disk's;
//! - dm-crypt or md RAID under a file system adds a layer the figures include;
//! - a throughput above the link's ceiling (SATA, the NVMe controller's PCIe, USB) cannot have
//!   come through that link: a cache answered.

use crate::bench::results::outcome::{LinkCeiling, RunReport};
use crate::model::{BytesPerSec, Transport};
use crate::sys::links::{LayerFact, LinkFacts};

/// The first number in `text` ("6.0 Gbps" -> 6.0, "8.0 GT/s PCIe" -> 8.0).
fn leading_number(text: &str) -> Option<f64> {
    let t = text.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    t[..end].parse::<f64>().ok().filter(|v| *v > 0.0)
}

/// SATA's `sata_spd` ("1.5 Gbps", "3.0 Gbps", "6.0 Gbps"; "<unknown>" without a link): 8b/10b
/// encoding, so 6.0 Gbps carries 600 MB/s.
pub fn sata_ceiling(spd: &str) -> Option<LinkCeiling> {
    let gbps = leading_number(spd)?;
    Some(LinkCeiling {
        link: format!("SATA {gbps:.1} Gbps"),
        bytes_per_sec: gbps * 1e9 * 8.0 / 10.0 / 8.0,
    })
}

/// A PCIe function's `current_link_speed` ("8.0 GT/s PCIe", "2.5 GT/s") and
/// `current_link_width` ("4"): per lane 8b/10b up to 5 GT/s, 128b/130b from 8 GT/s (gen 3-5).
pub fn pcie_ceiling(speed: &str, width: &str) -> Option<LinkCeiling> {
    let gts = leading_number(speed)?;
    let lanes = width.trim().parse::<u32>().ok().filter(|&w| w > 0)?;
    let efficiency = if gts < 8.0 { 8.0 / 10.0 } else { 128.0 / 130.0 };
    Some(LinkCeiling {
        link: format!("PCIe {gts:.1} GT/s x{lanes}"),
        bytes_per_sec: gts * 1e9 * efficiency * f64::from(lanes) / 8.0,
    })
}

/// A USB device's `speed` in Mbit/s ("480", "5000", "10000", "20000"): 480 Mbps carries at most
/// 60 MB/s, SuperSpeed uses 8b/10b (5000) or 128b/132b (10000 and up).
pub fn usb_ceiling(speed: &str) -> Option<LinkCeiling> {
    let mbps = leading_number(speed)?;
    let efficiency = if mbps < 5000.0 {
        1.0
    } else if mbps < 10000.0 {
        8.0 / 10.0
    } else {
        128.0 / 132.0
    };
    Some(LinkCeiling {
        link: format!("USB {mbps:.0} Mbps"),
        bytes_per_sec: mbps * 1e6 * efficiency / 8.0,
    })
}

/// The ceiling of the link a disk of `transport` hangs on (SATA, NVMe's PCIe, USB). Others
/// (virtio, loop, SCSI behind an HBA) have no link this can judge.
pub fn link_ceiling(transport: Transport, facts: &LinkFacts) -> Option<LinkCeiling> {
    match transport {
        Transport::Sata => facts.sata_spd.as_deref().and_then(sata_ceiling),
        Transport::Nvme => match (&facts.pcie_speed, &facts.pcie_width) {
            (Some(s), Some(w)) => pcie_ceiling(s, w),
            _ => None,
        },
        Transport::Usb => facts.usb_speed.as_deref().and_then(usb_ceiling),
        _ => None,
    }
}

/// "faster than the link: a cache answered" for every phase above the link's ceiling.
pub fn faster_than_link(report: &RunReport) -> Vec<String> {
    let Some(c) = &report.target.link_ceiling else {
        return Vec::new();
    };
    report
        .outcome
        .phases
        .iter()
        .filter(|p| p.bytes_per_sec() > c.bytes_per_sec)
        .map(|p| {
            format!(
                "faster than the link: a cache answered ({} at {:.1} MB/s, above the {} \
                 link's {:.1} MB/s)",
                p.label,
                BytesPerSec(p.bytes_per_sec()).mb_per_sec(),
                c.link,
                BytesPerSec(c.bytes_per_sec).mb_per_sec()
            )
        })
        .collect()
}

/// File systems that write elsewhere than in place (copy-on-write) or compress: a file test
/// there measures the file system's way of writing.
pub fn cow_filesystem(fstype: &str) -> Option<&'static str> {
    match fstype {
        "btrfs" => Some("btrfs"),
        "zfs" => Some("zfs"),
        "bcachefs" => Some("bcachefs"),
        _ => None,
    }
}

/// What a file test should say about the file system it ran on and the layers below it.
pub fn filesystem_notes(fstype: Option<&str>, layers: &[LayerFact]) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(fs) = fstype.and_then(cow_filesystem) {
        notes.push(format!(
            "the file is on {fs}, a copy-on-write file system that may compress: writes go to \
             new places with their checksums and metadata, compressible data shrinks; the \
             figures are the file system's, not the disk's"
        ));
    }
    for l in layers {
        notes.push(match l {
            LayerFact::Crypt {
                name,
                mapping,
                below,
            } => {
                let mapping = mapping
                    .as_ref()
                    .map(|m| format!(", /dev/mapper/{m}"))
                    .unwrap_or_default();
                format!(
                    "the file system is on dm-crypt ({name}{mapping}{}): every byte is \
                     encrypted or decrypted by the CPU, and the figures include it",
                    over(below)
                )
            }
            LayerFact::Md {
                name,
                level,
                members,
            } => format!(
                "the file system is on md RAID ({name}, {}{}): the figures are the array's, \
                 not one disk's",
                level.as_deref().unwrap_or("level unknown"),
                over(members)
            ),
        });
    }
    notes
}

/// " over vdb, vdc": the devices a layer is made of, as the admin's tools name them.
fn over(devices: &[String]) -> String {
    if devices.is_empty() {
        String::new()
    } else {
        format!(" over {}", devices.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_speeds_become_ceilings_after_their_encoding() {
        let mb = |c: Option<LinkCeiling>| c.map(|c| (c.link, (c.bytes_per_sec / 1e6).round()));
        assert_eq!(
            mb(sata_ceiling("6.0 Gbps")),
            Some(("SATA 6.0 Gbps".into(), 600.0))
        );
        assert_eq!(mb(sata_ceiling("1.5 Gbps")).unwrap().1, 150.0);
        assert_eq!(mb(sata_ceiling("<unknown>")), None);
        assert_eq!(
            mb(pcie_ceiling("8.0 GT/s PCIe", "4")),
            Some(("PCIe 8.0 GT/s x4".into(), 3938.0))
        );
        assert_eq!(mb(pcie_ceiling("2.5 GT/s PCIe", "1")).unwrap().1, 250.0);
        assert_eq!(mb(pcie_ceiling("Unknown", "4")), None);
        assert_eq!(mb(pcie_ceiling("8.0 GT/s", "0")), None);
        assert_eq!(mb(usb_ceiling("480")), Some(("USB 480 Mbps".into(), 60.0)));
        assert_eq!(mb(usb_ceiling("5000")).unwrap().1, 500.0);
        assert_eq!(mb(usb_ceiling("10000")).unwrap().1, 1212.0);
        assert_eq!(mb(usb_ceiling("")), None);
    }

    #[test]
    fn only_the_link_of_the_transport_counts() {
        let facts = LinkFacts {
            sata_spd: Some("3.0 Gbps".into()),
            pcie_speed: Some("2.5 GT/s PCIe".into()),
            pcie_width: Some("1".into()),
            usb_speed: Some("480".into()),
            ..LinkFacts::default()
        };
        assert_eq!(
            link_ceiling(Transport::Sata, &facts).unwrap().link,
            "SATA 3.0 Gbps"
        );
        assert_eq!(
            link_ceiling(Transport::Nvme, &facts).unwrap().link,
            "PCIe 2.5 GT/s x1"
        );
        assert_eq!(
            link_ceiling(Transport::Usb, &facts).unwrap().link,
            "USB 480 Mbps"
        );
        // A virtio disk's PCI function is virtual: no ceiling is judged from it.
        assert_eq!(link_ceiling(Transport::Virtio, &facts), None);
        // The QEMU lab's NVMe controller has no PCIe link: no ceiling, nothing flagged.
        let lab_nvme = LinkFacts {
            pcie_speed: Some("Unknown".into()),
            pcie_width: Some("0".into()),
            ..LinkFacts::default()
        };
        assert_eq!(link_ceiling(Transport::Nvme, &lab_nvme), None);
    }

    #[test]
    fn copy_on_write_and_layers_are_said() {
        let n = filesystem_notes(Some("btrfs"), &[]);
        assert!(
            n[0].starts_with("the file is on btrfs, a copy-on-write"),
            "{n:?}"
        );
        assert!(filesystem_notes(Some("ext4"), &[]).is_empty());
        assert!(filesystem_notes(None, &[]).is_empty());
        let n = filesystem_notes(
            Some("zfs"),
            &[
                LayerFact::Crypt {
                    name: "dm-1".into(),
                    mapping: Some("data".into()),
                    below: vec!["md0".into()],
                },
                LayerFact::Md {
                    name: "md0".into(),
                    level: Some("raid1".into()),
                    members: vec!["sda2".into(), "sdb2".into()],
                },
            ],
        );
        assert_eq!(n.len(), 3);
        assert!(
            n[1].starts_with("the file system is on dm-crypt (dm-1, /dev/mapper/data over md0): "),
            "{n:?}"
        );
        assert!(
            n[2].starts_with("the file system is on md RAID (md0, raid1 over sda2, sdb2): "),
            "{n:?}"
        );
        // Without a name or members (a tree that lacks them), only what is known is said.
        let n = filesystem_notes(
            None,
            &[
                LayerFact::Crypt {
                    name: "dm-2".into(),
                    mapping: None,
                    below: Vec::new(),
                },
                LayerFact::Md {
                    name: "md1".into(),
                    level: None,
                    members: Vec::new(),
                },
            ],
        );
        assert!(n[0].contains("dm-crypt (dm-2): "), "{n:?}");
        assert!(n[1].contains("md RAID (md1, level unknown): "), "{n:?}");
    }
}
