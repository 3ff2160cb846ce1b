//! What the honesty guards (`bench::results::guards`) read from sysfs: the speed of a disk's
//! link, found up its device path (SATA `ata_link/linkN/sata_spd`, PCIe
//! `current_link_speed`/`_width`, USB `speed`); the dm-crypt and md layers under a block device
//! (dm-crypt by a `CRYPT-` `dm/uuid` or, live, its table via `sys::dm`; md by `md/level`; down
//! through `slaves/`); and the block device a mount's source names, for file systems whose
//! files report an anonymous device (btrfs).

use std::fs;
use std::path::{Path, PathBuf};

use super::SysRoot;
use super::sysfs::read_attr_text;
use crate::model::DevNum;

/// Link attributes found above a disk, as the kernel words them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LinkFacts {
    /// "6.0 Gbps" (`ata_link`'s `sata_spd`).
    pub sata_spd: Option<String>,
    /// "8.0 GT/s PCIe" and "4" (the nearest PCIe function's current link).
    pub pcie_speed: Option<String>,
    pub pcie_width: Option<String>,
    /// "480", "5000" (Mbit/s, the USB device's `speed`).
    pub usb_speed: Option<String>,
    /// The best the SATA port supports (`ata_link`'s `hw_sata_spd_limit`, "6.0 Gbps").
    pub sata_spd_limit: Option<String>,
    /// The PCIe function's maximum link ("8.0 GT/s PCIe", "4": `max_link_speed`/`_width`).
    pub pcie_max_speed: Option<String>,
    pub pcie_max_width: Option<String>,
    /// The USB version the device declares (`version`, " 3.20"): what it could run at.
    pub usb_version: Option<String>,
}

/// A layer under a file system that changes what its figures mean, by the names an admin knows:
/// kernel name (`dm-0`, `md127`), mapping name (`/dev/mapper/<mapping>`) and `slaves/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayerFact {
    Crypt {
        name: String,
        mapping: Option<String>,
        below: Vec<String>,
    },
    Md {
        name: String,
        level: Option<String>,
        members: Vec<String>,
    },
}

/// How far up a device path, or down a stack of slaves, the walks go.
const MAX_DEPTH: usize = 16;

fn attr(path: &Path) -> Option<String> {
    read_attr_text(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Is `name` an ATA port directory (`ata1`)?
fn is_ata_port(name: &str) -> bool {
    name.strip_prefix("ata")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// An attribute of an ATA port's link: `ataN/linkM/ata_link/linkM/<attribute>`.
fn ata_link_attr(port: &Path, attribute: &str) -> Option<String> {
    let mut links: Vec<String> = fs::read_dir(port)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("link"))
        .collect();
    links.sort();
    links
        .iter()
        .find_map(|l| attr(&port.join(l).join("ata_link").join(l).join(attribute)))
}

/// The link attributes above disk `name` (`/sys/block/<name>`).
pub fn link_facts(root: &SysRoot, name: &str) -> LinkFacts {
    let mut facts = LinkFacts::default();
    let Ok(top) = fs::canonicalize(root.root().join("sys/devices")) else {
        return facts;
    };
    let Ok(dev) = fs::canonicalize(root.block_dir(name)) else {
        return facts;
    };
    for dir in dev.ancestors().take(MAX_DEPTH) {
        if !dir.starts_with(&top) || dir == top {
            break;
        }
        let base = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if facts.sata_spd.is_none() && is_ata_port(&base) {
            facts.sata_spd = ata_link_attr(dir, "sata_spd");
            facts.sata_spd_limit = ata_link_attr(dir, "hw_sata_spd_limit");
        }
        if facts.pcie_speed.is_none() && dir.join("current_link_speed").exists() {
            facts.pcie_speed = attr(&dir.join("current_link_speed"));
            facts.pcie_width = attr(&dir.join("current_link_width"));
            facts.pcie_max_speed = attr(&dir.join("max_link_speed"));
            facts.pcie_max_width = attr(&dir.join("max_link_width"));
        }
        if facts.usb_speed.is_none() && dir.join("busnum").exists() {
            facts.usb_speed = attr(&dir.join("speed"));
            facts.usb_version = attr(&dir.join("version"));
        }
    }
    facts
}

/// `<root>/sys/class/block/<name>`, else `<root>/sys/block/<name>`, resolved.
fn class_dir(root: &SysRoot, name: &str) -> Option<PathBuf> {
    fs::canonicalize(root.root().join("sys/class/block").join(name))
        .or_else(|_| fs::canonicalize(root.block_dir(name)))
        .ok()
}

/// The dm-crypt and md layers under block device `name` (a partition counts as its disk),
/// the topmost first.
pub fn layers(root: &SysRoot, name: &str) -> Vec<LayerFact> {
    let mut out = Vec::new();
    let Some(dir) = class_dir(root, name) else {
        return out;
    };
    // Only the running system's mappings have tables to ask.
    let live = root.root() == Path::new("/");
    walk(&dir, 0, live, &mut out);
    out
}

/// Whether the dm device in `dir` is dm-crypt: cryptsetup gives a `CRYPT-` uuid (as lsblk
/// reads); a bare dmsetup mapping has none, so live the table says (root only; else the uuid).
fn is_crypt(dir: &Path, live: bool) -> bool {
    if !dir.join("dm").is_dir() {
        return false;
    }
    if attr(&dir.join("dm/uuid")).is_some_and(|u| u.starts_with("CRYPT-")) {
        return true;
    }
    if !live {
        return false;
    }
    let Some((major, minor)) = attr(&dir.join("dev")).and_then(|d| {
        let (ma, mi) = d.split_once(':')?;
        Some((ma.parse::<u32>().ok()?, mi.parse::<u32>().ok()?))
    }) else {
        return false;
    };
    super::dm::target_types(major, minor).is_ok_and(|types| types.iter().any(|t| t == "crypt"))
}

fn walk(dir: &Path, depth: usize, live: bool, out: &mut Vec<LayerFact>) {
    if depth > MAX_DEPTH {
        return;
    }
    // A partition's layers are its disk's.
    let dir = if dir.join("partition").exists() {
        match dir.parent() {
            Some(p) => p.to_path_buf(),
            None => return,
        }
    } else {
        dir.to_path_buf()
    };
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let below: Vec<PathBuf> = match fs::read_dir(dir.join("slaves")) {
        Ok(slaves) => {
            let mut below: Vec<PathBuf> = slaves
                .filter_map(Result::ok)
                .filter_map(|e| fs::canonicalize(e.path()).ok())
                .collect();
            // By name, as the admin lists them (paths would order them by bus address).
            below.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
            below
        }
        Err(_) => Vec::new(),
    };
    let below_names = || -> Vec<String> {
        below
            .iter()
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect()
    };
    if is_crypt(&dir, live) {
        out.push(LayerFact::Crypt {
            name: name.clone(),
            mapping: attr(&dir.join("dm/name")),
            below: below_names(),
        });
    }
    if dir.join("md").is_dir() {
        out.push(LayerFact::Md {
            name: name.clone(),
            level: attr(&dir.join("md/level")),
            members: below_names(),
        });
    }
    for s in &below {
        walk(s, depth + 1, live, out);
    }
}

/// The block device the mount of file system `dev` names as source (`/dev/sdb1`), for file
/// systems whose files carry an anonymous device number (btrfs, 0:N).
pub fn mount_source_device(dev: DevNum) -> Option<DevNum> {
    let table = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let m = super::parse::parse_mountinfo(&table)
        .into_iter()
        .rev()
        .find(|m| m.dev == Some(dev))?;
    if !m.source.starts_with("/dev/") {
        return None;
    }
    match super::direct::identify(Path::new(&m.source)).ok()? {
        super::direct::PathKind::BlockDevice { dev, .. } => Some(dev),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab() -> SysRoot {
        SysRoot::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sysfs/qemu-lab"
        ))
    }

    #[test]
    fn layers_of_the_labs_md_and_dm_devices() {
        let lab = lab();
        assert_eq!(
            layers(&lab, "md0"),
            [LayerFact::Md {
                name: "md0".into(),
                level: Some("raid1".into()),
                members: vec!["vdb".into(), "vdc".into()],
            }]
        );
        // dm-0 is an LVM volume (uuid LVM-...), not dm-crypt: nothing to say.
        assert_eq!(layers(&lab, "dm-0"), []);
        assert_eq!(layers(&lab, "sda"), []);
        assert_eq!(layers(&lab, "missing"), []);
    }

    #[test]
    fn a_crypt_volume_on_md_is_seen_through_its_slaves() {
        // A hand-made tree: dm-1 (CRYPT-) on md1 (raid5, no members); partition dm-1p1 above.
        let t = tempfile::tempdir().unwrap();
        let devs = t.path().join("sys/devices/virtual/block");
        let dm = devs.join("dm-1");
        let md = devs.join("md1");
        fs::create_dir_all(dm.join("dm")).unwrap();
        fs::create_dir_all(dm.join("slaves")).unwrap();
        fs::create_dir_all(dm.join("dm-1p1")).unwrap();
        fs::write(dm.join("dm-1p1/partition"), "1\n").unwrap();
        fs::write(dm.join("dm/uuid"), "CRYPT-LUKS2-abc-cr\n").unwrap();
        fs::write(dm.join("dm/name"), "cr\n").unwrap();
        fs::create_dir_all(md.join("md")).unwrap();
        fs::write(md.join("md/level"), "raid5\n").unwrap();
        std::os::unix::fs::symlink("../../md1", dm.join("slaves/md1")).unwrap();
        let class = t.path().join("sys/class/block");
        fs::create_dir_all(&class).unwrap();
        std::os::unix::fs::symlink(&dm, class.join("dm-1")).unwrap();
        std::os::unix::fs::symlink(dm.join("dm-1p1"), class.join("dm-1p1")).unwrap();
        let root = SysRoot::new(t.path());
        let want = [
            LayerFact::Crypt {
                name: "dm-1".into(),
                mapping: Some("cr".into()),
                below: vec!["md1".into()],
            },
            LayerFact::Md {
                name: "md1".into(),
                level: Some("raid5".into()),
                members: Vec::new(),
            },
        ];
        assert_eq!(layers(&root, "dm-1"), want);
        assert_eq!(layers(&root, "dm-1p1"), want);
    }

    #[test]
    fn link_attributes_are_found_above_the_disk() {
        // The lab's paths and values (QEMU lab, Debian's QEMU 7.2: AHCI port 1 at 1.5 Gbps,
        // the NVMe controller on the root bus without a PCIe link ("Unknown", width 0), the USB
        // disk at 5000 Mbit/s).
        let t = tempfile::tempdir().unwrap();
        let pci = t.path().join("sys/devices/pci0000:00");
        let sata = pci.join("0000:00:1f.2/ata1");
        let sda = sata.join("host0/target0:0:0/0:0:0:0/block/sda");
        let nvme = pci.join("0000:00:03.0");
        let nvme0n1 = nvme.join("nvme/nvme0/nvme0n1");
        let usb = pci.join("0000:00:06.0/usb2/2-1");
        let sdc = usb.join("2-1:1.0/host7/target7:0:0/7:0:0:0/block/sdc");
        for d in [&sda, &nvme0n1, &sdc, &sata.join("link1/ata_link/link1")] {
            fs::create_dir_all(d).unwrap();
        }
        fs::write(sata.join("link1/ata_link/link1/sata_spd"), "1.5 Gbps\n").unwrap();
        fs::write(nvme.join("current_link_speed"), "Unknown\n").unwrap();
        fs::write(nvme.join("current_link_width"), "0\n").unwrap();
        fs::write(usb.join("busnum"), "2\n").unwrap();
        fs::write(usb.join("speed"), "5000\n").unwrap();
        // What a real machine (kernel 6.x) also has: port limit, maximum link, USB version.
        fs::write(
            sata.join("link1/ata_link/link1/hw_sata_spd_limit"),
            "6.0 Gbps\n",
        )
        .unwrap();
        fs::write(nvme.join("max_link_speed"), "8.0 GT/s PCIe\n").unwrap();
        fs::write(nvme.join("max_link_width"), "4\n").unwrap();
        fs::write(usb.join("version"), " 3.20\n").unwrap();
        let block = t.path().join("sys/block");
        fs::create_dir_all(&block).unwrap();
        for (n, p) in [("sda", &sda), ("nvme0n1", &nvme0n1), ("sdc", &sdc)] {
            std::os::unix::fs::symlink(p, block.join(n)).unwrap();
        }
        let root = SysRoot::new(t.path());
        assert_eq!(
            link_facts(&root, "sda").sata_spd.as_deref(),
            Some("1.5 Gbps")
        );
        let n = link_facts(&root, "nvme0n1");
        assert_eq!(
            (n.pcie_speed.as_deref(), n.pcie_width.as_deref()),
            (Some("Unknown"), Some("0"))
        );
        assert_eq!(
            (n.pcie_max_speed.as_deref(), n.pcie_max_width.as_deref()),
            (Some("8.0 GT/s PCIe"), Some("4"))
        );
        assert_eq!(n.sata_spd, None);
        assert_eq!(n.sata_spd_limit, None);
        assert_eq!(
            link_facts(&root, "sda").sata_spd_limit.as_deref(),
            Some("6.0 Gbps")
        );
        let u = link_facts(&root, "sdc");
        assert_eq!(u.usb_speed.as_deref(), Some("5000"));
        assert_eq!(u.usb_version.as_deref(), Some("3.20"));
        assert_eq!(link_facts(&root, "nope"), LinkFacts::default());
        // The lab's capture has none of them: nothing is made up.
        assert_eq!(link_facts(&lab(), "sda"), LinkFacts::default());
    }
}
