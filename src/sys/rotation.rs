//! The rotation rate of a block device, for the flush check's floor (one revolution per
//! commit): its own, or for dm and md the rate of the disks under it (`slaves`, recursively).
//!
//! Per disk, the first that answers: VPD page B1h as the kernel cached it (`device/vpd_pgb1`;
//! libata emulates it from IDENTIFY word 217), word 217 asked of the drive
//! (`LinuxDrives::sata_identity`), else `queue/rotational` (whether it rotates, not how fast).
//!
//! A stacked device takes its fastest rotating member's rate (a commit may be acknowledged by
//! that one), and has no floor when any member does not rotate or has an unknown rate (a
//! commit may land on that member alone).

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::flush::timing::{Rotation, thousands};
use crate::model::is_kernel_name;
use crate::sys::{DriveControl, LinuxDrives, SysRoot};

/// The source of a device with no drive of its own (loop, zram).
const NO_DRIVE: &str =
    "no drive of its own (its queue/rotational is the kernel's default, not a fact)";

/// Whether the device in `dir` has no drive of its own: loop (`loop/`) or zram
/// (`comp_algorithm`).
fn has_no_drive(dir: &Path) -> bool {
    dir.join("loop").is_dir() || dir.join("comp_algorithm").exists()
}

/// The source of a disk that rotates at a rate nobody gave.
const ROTATES_NO_RATE: &str = "queue/rotational: rotates, rate not said";

/// How deep a stack of devices is followed (dm on md on dm ...).
const MAX_DEPTH: usize = 16;

/// MEDIUM ROTATION RATE of VPD page B1h (SBC-4 6.6.2): `Some(0)` non-rotating (0001h),
/// `Some(rpm)` for 0401h-FFFEh; `None` for another page, a short one, 0000h or reserved.
pub fn parse_vpd_b1(page: &[u8]) -> Option<u32> {
    if page.len() < 6 || page[1] != 0xB1 {
        return None;
    }
    match u16::from_be_bytes([page[4], page[5]]) {
        0x0001 => Some(0),
        r @ 0x0401..=0xFFFE => Some(u32::from(r)),
        _ => None,
    }
}

/// One disk at the bottom of the stack: its rate and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Leaf {
    name: String,
    rpm: Option<u32>,
    source: &'static str,
}

/// The rotation of device `name` on the running system.
pub fn rotation(name: &str) -> Rotation {
    let drives = LinuxDrives::new(SysRoot::host());
    let ata = |disk: &str| {
        let dev = drives.device(disk).ok()?;
        drives.sata_identity(&dev)?.rotation_rpm
    };
    rotation_in(Path::new("/sys/class/block"), name, &ata)
}

/// The rotation of `name` from the tree `class_block` (`/sys/class/block`); `ata` asks a disk's
/// IDENTIFY word 217 (`Some(0)`: non-rotating).
pub fn rotation_in(class_block: &Path, name: &str, ata: &dyn Fn(&str) -> Option<u32>) -> Rotation {
    let dir = disk_dir(class_block, name);
    // The kernel sets the flag by default on a device with no drive: nothing is inferred.
    let rotational = if has_no_drive(&dir) {
        None
    } else {
        read_flag(&dir.join("queue/rotational"))
    };
    let mut leaves = Vec::new();
    let mut seen = HashSet::new();
    collect(class_block, name, 0, &mut seen, &mut leaves, ata);
    let (rpm, source) = combine(name, &leaves);
    Rotation {
        rpm,
        rotational,
        source,
    }
}

/// The directory whose `queue` and `device` belong to `name` (a partition's: its disk's).
fn disk_dir(class_block: &Path, name: &str) -> PathBuf {
    let dir = class_block.join(name);
    if dir.join("partition").exists() {
        dir.join("..")
    } else {
        dir
    }
}

fn collect(
    class_block: &Path,
    name: &str,
    depth: usize,
    seen: &mut HashSet<String>,
    leaves: &mut Vec<Leaf>,
    ata: &dyn Fn(&str) -> Option<u32>,
) {
    if !is_kernel_name(name) || !seen.insert(name.to_string()) {
        return;
    }
    let mut members: Vec<String> = fs::read_dir(class_block.join(name).join("slaves"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    members.sort();
    if members.is_empty() || depth >= MAX_DEPTH {
        leaves.push(leaf(class_block, name, ata));
        return;
    }
    for m in members {
        collect(class_block, &m, depth + 1, seen, leaves, ata);
    }
}

fn leaf(class_block: &Path, name: &str, ata: &dyn Fn(&str) -> Option<u32>) -> Leaf {
    let dir = disk_dir(class_block, name);
    // The disk's own name (a partition's disk), for the words and the ATA question.
    let disk = fs::canonicalize(&dir)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| name.to_string());
    // No drive: its queue/rotational is the kernel's default.
    if has_no_drive(&dir) {
        return Leaf {
            name: disk,
            rpm: None,
            source: NO_DRIVE,
        };
    }
    if let Some(rpm) = fs::read(dir.join("device/vpd_pgb1"))
        .ok()
        .and_then(|b| parse_vpd_b1(&b))
    {
        return Leaf {
            name: disk,
            rpm: Some(rpm),
            source: "VPD page B1h",
        };
    }
    if let Some(rpm) = ata(&disk) {
        return Leaf {
            name: disk,
            rpm: Some(rpm),
            source: "ATA IDENTIFY word 217",
        };
    }
    match read_flag(&dir.join("queue/rotational")) {
        Some(false) => Leaf {
            name: disk,
            rpm: Some(0),
            source: "queue/rotational",
        },
        Some(true) => Leaf {
            name: disk,
            rpm: None,
            source: ROTATES_NO_RATE,
        },
        None => Leaf {
            name: disk,
            rpm: None,
            source: "nothing in sysfs",
        },
    }
}

/// The device's rate from its leaves, and the words for where it came from.
fn combine(name: &str, leaves: &[Leaf]) -> (Option<u32>, String) {
    let Some(first) = leaves.first() else {
        return (None, format!("nothing known of {name}"));
    };
    if leaves.len() == 1 {
        let (source, note) = match first.source {
            ROTATES_NO_RATE => ("queue/rotational", " (it rotates; how fast is not said)"),
            other => (other, ""),
        };
        let of = if first.name == name {
            format!("{source} of {name}{note}")
        } else {
            format!("{source} of {} under {name}{note}", first.name)
        };
        return (first.rpm, of);
    }
    let each = leaves
        .iter()
        .map(|l| {
            let rate = match l.rpm {
                Some(0) => "does not rotate".to_string(),
                Some(r) => format!("{} rpm", thousands(r)),
                None => "rate unknown".to_string(),
            };
            format!("{} {rate} ({})", l.name, l.source)
        })
        .collect::<Vec<_>>()
        .join(", ");
    let rpm = if leaves.iter().all(|l| l.rpm == Some(0)) {
        Some(0)
    } else if leaves.iter().any(|l| matches!(l.rpm, None | Some(0))) {
        None
    } else {
        leaves.iter().filter_map(|l| l.rpm).max()
    };
    let verdict = match rpm {
        Some(0) => "none rotates".to_string(),
        Some(r) => format!("the fastest, {} rpm, sets the floor", thousands(r)),
        None => "not every member rotates at a known rate, so there is no floor".to_string(),
    };
    (rpm, format!("the disks under {name}: {each}; {verdict}"))
}

fn read_flag(path: &Path) -> Option<bool> {
    match fs::read_to_string(path).ok()?.trim() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(rate: u16) -> Vec<u8> {
        let mut p = vec![0u8; 64];
        p[1] = 0xB1;
        p[3] = 0x3C;
        p[4..6].copy_from_slice(&rate.to_be_bytes());
        p
    }

    #[test]
    fn vpd_b1_rotation_rate() {
        assert_eq!(parse_vpd_b1(&page(7200)), Some(7200));
        assert_eq!(parse_vpd_b1(&page(0x1C20)), Some(7200));
        assert_eq!(parse_vpd_b1(&page(5400)), Some(5400));
        assert_eq!(parse_vpd_b1(&page(1)), Some(0));
        assert_eq!(parse_vpd_b1(&page(0)), None);
        assert_eq!(parse_vpd_b1(&page(0x0400)), None);
        assert_eq!(parse_vpd_b1(&page(0xFFFF)), None);
        // Another page, or one cut short.
        let mut other = page(7200);
        other[1] = 0xB0;
        assert_eq!(parse_vpd_b1(&other), None);
        assert_eq!(parse_vpd_b1(&page(7200)[..5]), None);
        assert_eq!(parse_vpd_b1(&[]), None);
    }

    /// A /sys/class/block of plain directories: `disks` are (name, vpd rate, rotational),
    /// `stacks` (name, members).
    fn tree(
        disks: &[(&str, Option<u16>, Option<&str>)],
        stacks: &[(&str, &[&str])],
    ) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for (name, vpd, rot) in disks {
            let d = t.path().join(name);
            fs::create_dir_all(d.join("queue")).unwrap();
            fs::create_dir_all(d.join("slaves")).unwrap();
            if let Some(r) = vpd {
                fs::create_dir_all(d.join("device")).unwrap();
                fs::write(d.join("device/vpd_pgb1"), page(*r)).unwrap();
            }
            if let Some(r) = rot {
                fs::write(d.join("queue/rotational"), format!("{r}\n")).unwrap();
            }
        }
        for (name, members) in stacks {
            let d = t.path().join(name);
            fs::create_dir_all(d.join("slaves")).unwrap();
            fs::create_dir_all(d.join("queue")).unwrap();
            fs::write(d.join("queue/rotational"), "1\n").unwrap();
            for m in *members {
                fs::create_dir_all(d.join("slaves").join(m)).unwrap();
            }
        }
        t
    }

    fn no_ata(_: &str) -> Option<u32> {
        None
    }

    #[test]
    fn a_disk_says_its_own_rate() {
        let t = tree(&[("sda", Some(7200), Some("1"))], &[]);
        let r = rotation_in(t.path(), "sda", &no_ata);
        assert_eq!(r.rpm, Some(7200));
        assert_eq!(r.rotational, Some(true));
        assert_eq!(r.source, "VPD page B1h of sda");
        assert_eq!(r.floor_ms().map(|f| (f * 100.0).round()), Some(833.0));
    }

    #[test]
    fn ata_identify_then_the_rotational_flag() {
        let t = tree(&[("sda", None, Some("1")), ("loop0", None, Some("0"))], &[]);
        let ata = |d: &str| (d == "sda").then_some(5400);
        let r = rotation_in(t.path(), "sda", &ata);
        assert_eq!(
            (r.rpm, r.source.as_str()),
            (Some(5400), "ATA IDENTIFY word 217 of sda")
        );
        let r = rotation_in(t.path(), "sda", &no_ata);
        assert_eq!(r.rpm, None);
        assert_eq!(
            r.source,
            "queue/rotational of sda (it rotates; how fast is not said)"
        );
        let r = rotation_in(t.path(), "loop0", &no_ata);
        assert_eq!((r.rpm, r.rotational), (Some(0), Some(false)));
        assert_eq!(r.floor_ms(), None);
    }

    #[test]
    fn a_stack_takes_the_fastest_rotating_member() {
        let t = tree(
            &[
                ("sda", Some(5400), Some("1")),
                ("sdb", Some(7200), Some("1")),
                ("nvme0n1", None, Some("0")),
            ],
            &[
                ("md0", &["sda", "sdb"]),
                ("dm-0", &["md0"]),
                ("dm-1", &["sda", "nvme0n1"]),
            ],
        );
        let r = rotation_in(t.path(), "dm-0", &no_ata);
        assert_eq!(r.rpm, Some(7200));
        assert!(
            r.source
                .starts_with("the disks under dm-0: sda 5,400 rpm (VPD page B1h), sdb 7,200 rpm"),
            "{}",
            r.source
        );
        // A member that does not rotate: a commit may land on it alone, so no floor.
        let r = rotation_in(t.path(), "dm-1", &no_ata);
        assert_eq!(r.rpm, None);
        assert!(r.source.contains("no floor"), "{}", r.source);
    }

    #[test]
    fn a_loop_in_the_members_ends() {
        let t = tree(&[], &[("dm-0", &["dm-1"]), ("dm-1", &["dm-0"])]);
        let r = rotation_in(t.path(), "dm-0", &no_ata);
        assert_eq!(r.rpm, None);
    }
}
