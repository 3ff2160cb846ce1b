//! The link a disk hangs on as the triage reports it (`LinkState`): what was negotiated against
//! the best both ends support, from the kernel's words (`sys::links::LinkFacts`) and, for SATA,
//! the drive's own IDENTIFY (word 76, the SATA generations it supports).

use super::facts::LinkState;
use crate::model::Transport;
use crate::sys::links::LinkFacts;

/// The first number in a kernel link word: "6.0 Gbps" -> 6.0, "8.0 GT/s PCIe" -> 8.0,
/// "480" -> 480.0, " 3.20" -> 3.2. `None` for "Unknown", "<unknown>" and the like.
fn leading_number(text: &str) -> Option<f64> {
    let t = text.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    t[..end].parse::<f64>().ok().filter(|v| *v > 0.0)
}

/// A SATA generation's rate in Gb/s (IDENTIFY word 76 bits 1..=3): 1.5, 3.0, 6.0.
pub fn sata_gen_rate(generation: u8) -> Option<f64> {
    match generation {
        1 => Some(1.5),
        2 => Some(3.0),
        3 => Some(6.0),
        _ => None,
    }
}

/// The best USB rate in Gb/s a device of USB `version` ("3.20", "2.00") can run at.
fn usb_best_rate(version: &str) -> Option<f64> {
    let v = leading_number(version)?;
    Some(if v >= 3.0 {
        5.0
    } else if v >= 2.0 {
        0.48
    } else {
        0.012
    })
}

fn words(rate: f64, unit: &str) -> String {
    format!("{rate} {unit}")
}

/// The link of a disk of `transport` from the kernel's facts and, for SATA, the drive's
/// highest generation (`drive_sata_gen`, from IDENTIFY). `None` when the transport has no link
/// the triage judges or the kernel names none.
pub fn link_state(
    transport: Transport,
    facts: &LinkFacts,
    drive_sata_gen: Option<u8>,
) -> Option<LinkState> {
    match transport {
        Transport::Sata => {
            let current = facts.sata_spd.clone()?;
            let port = facts.sata_spd_limit.as_deref().and_then(leading_number);
            let drive = drive_sata_gen.and_then(sata_gen_rate);
            let best_rate = match (port, drive) {
                (Some(p), Some(d)) => Some(p.min(d)),
                (one, other) => one.or(other),
            };
            Some(LinkState {
                kind: "sata".into(),
                current_rate: leading_number(&current),
                current,
                best: best_rate.map(|r| words(r, "Gbps")),
                best_rate,
                width: None,
                max_width: None,
            })
        }
        Transport::Nvme => {
            let current = facts.pcie_speed.clone()?;
            let best = facts.pcie_max_speed.clone();
            let current_rate = leading_number(&current);
            // A function with no link (QEMU's controller on the root bus: speed "Unknown",
            // width 0, maximum 255) has no widths to compare: a link is x1 to x32.
            let lanes = |w: Option<&str>| {
                w.and_then(|w| w.trim().parse::<u32>().ok())
                    .filter(|w| (1..=32).contains(w) && current_rate.is_some())
            };
            Some(LinkState {
                kind: "pcie".into(),
                current_rate,
                current,
                best_rate: best.as_deref().and_then(leading_number),
                best,
                width: lanes(facts.pcie_width.as_deref()),
                max_width: lanes(facts.pcie_max_width.as_deref()),
            })
        }
        Transport::Usb => {
            let current = facts.usb_speed.clone()?;
            let best_rate = facts.usb_version.as_deref().and_then(usb_best_rate);
            Some(LinkState {
                kind: "usb".into(),
                // The kernel gives Mbit/s.
                current_rate: leading_number(&current).map(|mbit| mbit / 1000.0),
                current: format!("{current} Mbps"),
                best: best_rate.map(|r| words(r, "Gbps")),
                best_rate,
                width: None,
                max_width: None,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sata_best_is_the_lower_of_the_port_and_the_drive() {
        let facts = LinkFacts {
            sata_spd: Some("1.5 Gbps".into()),
            sata_spd_limit: Some("6.0 Gbps".into()),
            ..LinkFacts::default()
        };
        let l = link_state(Transport::Sata, &facts, Some(3)).unwrap();
        assert_eq!(l.current_rate, Some(1.5));
        assert_eq!(l.best_rate, Some(6.0));
        assert_eq!(l.best.as_deref(), Some("6 Gbps"));
        // A 3 Gb/s drive on a 6 Gb/s port: best 3.
        let l = link_state(Transport::Sata, &facts, Some(2)).unwrap();
        assert_eq!(l.best_rate, Some(3.0));
        // Only the port known.
        let l = link_state(Transport::Sata, &facts, None).unwrap();
        assert_eq!(l.best_rate, Some(6.0));
        // "<unknown>" limit and no drive generation: no best, nothing judged.
        let unknown = LinkFacts {
            sata_spd: Some("<unknown>".into()),
            sata_spd_limit: Some("<unknown>".into()),
            ..LinkFacts::default()
        };
        let l = link_state(Transport::Sata, &unknown, None).unwrap();
        assert_eq!((l.current_rate, l.best_rate), (None, None));
        assert_eq!(
            link_state(Transport::Sata, &LinkFacts::default(), None),
            None
        );
    }

    #[test]
    fn identify_word_76_names_the_generations() {
        // Gen1 | Gen2 | Gen3 (bits 1-3) plus NCQ (bit 8): Gen3.
        assert_eq!(crate::smart::ata::sata_generation_of(0x010E), Some(3));
        assert_eq!(crate::smart::ata::sata_generation_of(0x0006), Some(2));
        assert_eq!(crate::smart::ata::sata_generation_of(0x0002), Some(1));
        assert_eq!(crate::smart::ata::sata_generation_of(0x0000), None);
        assert_eq!(crate::smart::ata::sata_generation_of(0xFFFF), None);
        assert_eq!(crate::smart::ata::sata_generation_of(0x0100), None);
    }

    #[test]
    fn pcie_current_against_max_speed_and_width() {
        let facts = LinkFacts {
            pcie_speed: Some("2.5 GT/s PCIe".into()),
            pcie_width: Some("1".into()),
            pcie_max_speed: Some("8.0 GT/s PCIe".into()),
            pcie_max_width: Some("4".into()),
            ..LinkFacts::default()
        };
        let l = link_state(Transport::Nvme, &facts, None).unwrap();
        assert_eq!(l.kind, "pcie");
        assert_eq!((l.current_rate, l.best_rate), (Some(2.5), Some(8.0)));
        assert_eq!((l.width, l.max_width), (Some(1), Some(4)));
        // The QEMU lab's controller has no link: no rates.
        let lab = LinkFacts {
            pcie_speed: Some("Unknown".into()),
            pcie_width: Some("0".into()),
            pcie_max_speed: Some("Unknown".into()),
            pcie_max_width: Some("255".into()),
            ..LinkFacts::default()
        };
        let l = link_state(Transport::Nvme, &lab, None).unwrap();
        assert_eq!((l.current_rate, l.best_rate), (None, None));
        assert_eq!((l.width, l.max_width), (None, None));
    }

    #[test]
    fn usb_speed_against_the_devices_version() {
        let facts = LinkFacts {
            usb_speed: Some("480".into()),
            usb_version: Some("3.20".into()),
            ..LinkFacts::default()
        };
        let l = link_state(Transport::Usb, &facts, None).unwrap();
        assert_eq!((l.current_rate, l.best_rate), (Some(0.48), Some(5.0)));
        let usb2 = LinkFacts {
            usb_speed: Some("480".into()),
            usb_version: Some("2.00".into()),
            ..LinkFacts::default()
        };
        assert_eq!(
            link_state(Transport::Usb, &usb2, None).unwrap().best_rate,
            Some(0.48)
        );
        // Other transports: no link judged.
        assert_eq!(link_state(Transport::Loop, &facts, None), None);
    }
}
