//! The write guard: a write test destroys data, so it runs only on a device nothing uses, and
//! only when the admin typed the device's own name. Pure: it decides from the inventory.

use crate::model::usage;
use crate::model::{DevNum, FileId, InUse, Inventory, ZoneModel};

/// Why a write test may not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteRefusal {
    #[error(
        "refusing to write to {name}: {reasons}. Unmount it, swapoff it or stop what holds it \
         first"
    )]
    InUse { name: String, reasons: String },
    #[error("refusing to write to {name}: could not check whether it is in use ({why})")]
    UsageUnknown { name: String, why: String },
    #[error(
        "refusing to write to {name}: it is not in the device list, so its use cannot be checked"
    )]
    Unknown { name: String },
    #[error(
        "this test writes to {name} and destroys the data on it: pass --destroy-data {name} to \
         confirm"
    )]
    NotConfirmed { name: String },
    #[error(
        "refusing to write to {name}: it is a host-managed zoned device ({zones}). Its \
         sequential zones take writes only in order, at each zone's write pointer, and this \
         test writes where it chooses: the drive would reject the writes part-way. Reading \
         it is fine (a read test, scan, triage)"
    )]
    HostManaged { name: String, zones: String },
    #[error(
        "refusing to write to {name}: the device is read-only (ro=1 in sysfs: losetup -r, \
         blockdev --setro or a write-protect switch). Make it writable (blockdev --setrw) or \
         choose a read test"
    )]
    ReadOnly { name: String },
    #[error(
        "{first} and {second} are the same data ({why}): writing one writes the other, and \
         measuring both at once measures neither. Give it once"
    )]
    SameData {
        first: String,
        second: String,
        why: &'static str,
    },
    #[error(
        "this test rewrites the data on {name} in place (--preserve: each block it writes is read \
         first and the same bytes are written back, so an interruption leaves the data as it \
         was; a device that fails in the middle of a write can still lose that block, and \
         another program writing to {name} meanwhile can have its writes undone): pass \
         --destroy-data {name} to confirm"
    )]
    RewriteNotConfirmed { name: String },
    #[error(
        "refusing to rewrite {name} in place (--preserve): {processes} {has} it open for \
         writing. A rewrite writes back the bytes it read, so a write another process makes \
         meanwhile would be undone without a word. Stop {it} or wait until {done} done, then \
         run again"
    )]
    OtherWriters {
        name: String,
        /// "pid 812 (dd)", "pid 812 (dd), pid 901 (qemu-system-x86)".
        processes: String,
        has: &'static str,
        it: &'static str,
        done: &'static str,
    },
    #[error(
        "--destroy-data {given} does not name the target {name}: type the target's own name \
         to confirm"
    )]
    WrongName { given: String, name: String },
    #[error(
        "this test overwrites {path}, which existed before: pass --destroy-data {name} to \
         confirm (a file this program creates needs no confirmation)"
    )]
    FileNotConfirmed { path: String, name: String },
    #[error(
        "--destroy-data {given} does not name {path}: type the file's name ({name}) to confirm \
         overwriting it"
    )]
    WrongFileName {
        given: String,
        path: String,
        name: String,
    },
}

impl WriteRefusal {
    /// The refusal as a rewrite (`--preserve`) words it: the same confirmation, but it does not
    /// confirm the destruction of the data.
    pub fn for_rewrite(self, rewrite: bool) -> WriteRefusal {
        match self {
            WriteRefusal::NotConfirmed { name } if rewrite => {
                WriteRefusal::RewriteNotConfirmed { name }
            }
            other => other,
        }
    }
}

/// The in-use reasons of a device or partition by kernel name, from the inventory.
pub fn usage_of<'a>(inv: &'a Inventory, name: &str) -> Option<Vec<&'a InUse>> {
    if let Some(d) = inv.find(name) {
        return Some(d.in_use.iter().collect());
    }
    inv.devices.iter().find_map(|d| {
        d.partitions.iter().any(|p| p.name == name).then(|| {
            // The partition's own use, and the disk's through loop devices (a loop over the
            // disk covers the partition too).
            d.in_use
                .iter()
                .filter(|u| {
                    u.device() == name || (u.device() == d.name && matches!(u, InUse::Loop { .. }))
                })
                .collect()
        })
    })
}

/// Does `given` (what the admin typed) name `name`? Accepts `sdb` and `/dev/sdb`, exactly:
/// a name with a space before or after it is not the device's name.
pub fn confirms(given: &str, name: &str) -> bool {
    given == name || given.strip_prefix("/dev/") == Some(name)
}

/// Is `err` the refusal for want of any `--destroy-data`? The binary exits 2 for it, as for
/// every usage error; a wrong name or a device in use is a refusal (1).
pub fn is_unconfirmed(err: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        err.downcast_ref::<WriteRefusal>(),
        Some(
            WriteRefusal::NotConfirmed { .. }
                | WriteRefusal::RewriteNotConfirmed { .. }
                | WriteRefusal::FileNotConfirmed { .. }
        )
    )
}

/// Decides whether a write test may run on block device `name`.
pub fn check_device_write(
    inv: &Inventory,
    name: &str,
    confirmation: Option<&str>,
) -> Result<(), WriteRefusal> {
    let Some(reasons) = usage_of(inv, name) else {
        return Err(WriteRefusal::Unknown { name: name.into() });
    };
    if !reasons.is_empty() {
        let owner = inv
            .devices
            .iter()
            .find(|d| d.name == name || d.partitions.iter().any(|p| p.name == name))
            .map_or(name, |d| d.name.as_str());
        let text = reasons
            .iter()
            .map(|u| {
                if owner == name {
                    u.describe(name)
                } else {
                    u.describe(u.device())
                }
            })
            .collect::<Vec<_>>()
            .join("; ");
        return Err(WriteRefusal::InUse {
            name: name.into(),
            reasons: text,
        });
    }
    if let Some(reasons) = loops_stacked_on(inv, name) {
        return Err(WriteRefusal::InUse {
            name: name.into(),
            reasons,
        });
    }
    if !inv.usage_complete {
        return Err(WriteRefusal::UsageUnknown {
            name: name.into(),
            why: inv.notes.join("; "),
        });
    }
    // Before the typed name: no name typed makes these writes possible.
    if let Some(d) = inv.devices.iter().find(|d| d.name == name)
        && d.zoning.kernel == Some(ZoneModel::HostManaged)
    {
        return Err(WriteRefusal::HostManaged {
            name: name.into(),
            zones: d.zoning.words().map_or_else(String::new, |w| w.1),
        });
    }
    check_confirmation(name, confirmation)
}

/// The loop devices over `name` or its disk or partitions, mounted or not, in words; `None`
/// when none. Loop claims nothing, so O_EXCL does not stop a later user (a mount, a VM's
/// disk) of this data.
fn loops_stacked_on(inv: &Inventory, name: &str) -> Option<String> {
    let (disk, target) = inv.devices.iter().find_map(|d| {
        if d.name == name {
            Some((d, None))
        } else {
            d.partitions
                .iter()
                .find(|p| p.name == name)
                .map(|p| (d, Some(p)))
        }
    })?;
    let covered: Vec<DevNum> = match target {
        // Writing the disk writes every partition; a loop over a partition uses the disk.
        None => std::iter::once(disk.dev)
            .chain(disk.partitions.iter().map(|p| p.dev))
            .flatten()
            .collect(),
        // Writing a partition writes what a loop over the whole disk shows.
        Some(p) => [p.dev, disk.dev].into_iter().flatten().collect(),
    };
    let loops: Vec<String> = inv
        .devices
        .iter()
        .filter(|l| {
            l.loop_backing
                .and_then(|b| b.block)
                .is_some_and(|b| covered.contains(&b))
        })
        .map(|l| {
            format!(
                "{} is a loop device attached over it (detach it first: losetup -d {})",
                l.name,
                l.path.display()
            )
        })
        .collect();
    (!loops.is_empty()).then(|| loops.join("; "))
}

/// Whether a write test may overwrite the existing regular file `path` (its real path, from the
/// descriptor): never an active swap file or a loop device's backing file in use.
pub fn check_file_write(
    inv: &Inventory,
    path: &str,
    id: FileId,
    confirmation_name: &str,
    confirmation: Option<&str>,
) -> Result<(), WriteRefusal> {
    let reasons = usage::file_usage(&inv.devices, &inv.swaps, path, id);
    if !reasons.is_empty() {
        return Err(WriteRefusal::InUse {
            name: path.into(),
            reasons: reasons
                .iter()
                .map(|u| u.describe(path))
                .collect::<Vec<_>>()
                .join("; "),
        });
    }
    if !inv.usage_complete {
        return Err(WriteRefusal::UsageUnknown {
            name: path.into(),
            why: inv.notes.join("; "),
        });
    }
    match confirmation {
        Some(g) if g == confirmation_name || g == path => Ok(()),
        Some(g) => Err(WriteRefusal::WrongFileName {
            given: g.into(),
            path: path.into(),
            name: confirmation_name.into(),
        }),
        None => Err(WriteRefusal::FileNotConfirmed {
            path: path.into(),
            name: confirmation_name.into(),
        }),
    }
}

/// A rewrite (`--preserve`) of `name` while other processes can write it is refused, naming
/// them (why: `rewrite_guard`).
pub fn check_no_other_writers(name: &str, writers: &[(u32, String)]) -> Result<(), WriteRefusal> {
    if writers.is_empty() {
        return Ok(());
    }
    let one = writers.len() == 1;
    Err(WriteRefusal::OtherWriters {
        name: name.into(),
        processes: writers
            .iter()
            .map(|(pid, comm)| {
                format!(
                    "pid {pid} ({})",
                    crate::model::text::neutralize_controls(comm)
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
        has: if one { "has" } else { "have" },
        done: if one { "it is" } else { "they are" },
        it: if one { "it" } else { "them" },
    })
}

/// The confirmation alone (also used for existing files).
pub fn check_confirmation(name: &str, confirmation: Option<&str>) -> Result<(), WriteRefusal> {
    match confirmation {
        None => Err(WriteRefusal::NotConfirmed { name: name.into() }),
        Some(g) if confirms(g, name) => Ok(()),
        Some(g) => Err(WriteRefusal::WrongName {
            given: g.into(),
            name: name.into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BlockDevice, Holder, HolderKind, Partition};

    #[test]
    fn a_typed_name_is_the_device_name_exactly() {
        assert!(confirms("loop0", "loop0"));
        assert!(confirms("/dev/loop0", "loop0"));
        // What the admin typed is what is checked: a stray space names no device.
        for given in [
            "loop0 ",
            " loop0",
            "/dev/loop0 ",
            "loop0\n",
            "loop",
            "/dev/loop0/",
        ] {
            assert!(!confirms(given, "loop0"), "{given:?}");
        }
    }

    #[test]
    fn only_a_missing_confirmation_is_unconfirmed() {
        let missing = WriteRefusal::NotConfirmed {
            name: "loop0".into(),
        };
        assert!(is_unconfirmed(&missing));
        assert!(is_unconfirmed(&missing.clone().for_rewrite(true)));
        let wrong = WriteRefusal::WrongName {
            given: "loop1".into(),
            name: "loop0".into(),
        };
        assert!(!is_unconfirmed(&wrong));
    }

    fn inv() -> Inventory {
        let mut free = BlockDevice::unknown("loop1", "/dev/loop1".into());
        free.partitions = vec![];
        let mut busy = BlockDevice::unknown("loop0", "/dev/loop0".into());
        busy.partitions = vec![
            Partition {
                name: "loop0p1".into(),
                path: "/dev/loop0p1".into(),
                dev: None,
                number: Some(1),
                start_sector: None,
                size_bytes: None,
                read_only: None,
                holders: vec![],
            },
            Partition {
                name: "loop0p2".into(),
                path: "/dev/loop0p2".into(),
                dev: None,
                number: Some(2),
                start_sector: None,
                size_bytes: None,
                read_only: None,
                holders: vec![],
            },
        ];
        busy.in_use = vec![InUse::Mounted {
            device: "loop0p1".into(),
            mount_point: "/mnt/x".into(),
            fstype: "ext4".into(),
        }];
        let mut held = BlockDevice::unknown("vdb", "/dev/vdb".into());
        held.in_use = vec![InUse::Held {
            device: "vdb".into(),
            holder: Holder {
                name: "md0".into(),
                kind: HolderKind::Md,
                label: None,
            },
        }];
        Inventory {
            devices: vec![busy, free, held],
            usage_complete: true,
            notes: vec![],
            swaps: vec![],
        }
    }

    #[test]
    fn a_loop_device_attached_over_the_target_refuses_it_mounted_or_not() {
        let dev = |major, minor| Some(DevNum { major, minor });
        let mut disk = BlockDevice::unknown("sdb", "/dev/sdb".into());
        disk.dev = dev(8, 16);
        disk.partitions = vec![Partition {
            name: "sdb1".into(),
            path: "/dev/sdb1".into(),
            dev: dev(8, 17),
            number: Some(1),
            start_sector: None,
            size_bytes: None,
            read_only: None,
            holders: vec![],
        }];
        let other = BlockDevice::unknown("sdc", "/dev/sdc".into());
        let over = |backing| {
            let mut l = BlockDevice::unknown("loop7", "/dev/loop7".into());
            l.loop_backing = Some(crate::model::LoopBacking {
                file: None,
                block: backing,
            });
            l
        };
        let inv_with = |l: BlockDevice| Inventory {
            devices: vec![disk.clone(), other.clone(), l],
            usage_complete: true,
            notes: vec![],
            swaps: vec![],
        };
        // Over the disk: the disk and its partition refused; another disk not.
        let i = inv_with(over(dev(8, 16)));
        for name in ["sdb", "sdb1"] {
            let e = check_device_write(&i, name, Some(name)).unwrap_err();
            assert!(
                e.to_string()
                    .contains("loop7 is a loop device attached over it"),
                "{e}"
            );
        }
        assert_eq!(check_device_write(&i, "sdc", Some("sdc")), Ok(()));
        // Over the partition: the partition and its disk refused.
        let i = inv_with(over(dev(8, 17)));
        for name in ["sdb", "sdb1"] {
            assert!(check_device_write(&i, name, Some(name)).is_err(), "{name}");
        }
        // A loop device over a file: not over the disk.
        let i = inv_with(over(None));
        assert_eq!(check_device_write(&i, "sdb", Some("sdb")), Ok(()));
    }

    #[test]
    fn free_device_needs_its_own_name() {
        let i = inv();
        assert_eq!(check_device_write(&i, "loop1", Some("loop1")), Ok(()));
        assert_eq!(check_device_write(&i, "loop1", Some("/dev/loop1")), Ok(()));
        assert_eq!(
            check_device_write(&i, "loop1", None),
            Err(WriteRefusal::NotConfirmed {
                name: "loop1".into()
            })
        );
        let wrong = check_device_write(&i, "loop1", Some("loop0")).unwrap_err();
        assert!(wrong.to_string().contains("does not name the target loop1"));
    }

    #[test]
    fn a_rewrite_asks_for_the_same_name_in_its_own_words() {
        let e = check_device_write(&inv(), "loop1", None).unwrap_err();
        let rewrite = e.clone().for_rewrite(true).to_string();
        assert!(
            rewrite.starts_with("this test rewrites the data on loop1 in place"),
            "{rewrite}"
        );
        assert!(
            rewrite.ends_with("pass --destroy-data loop1 to confirm"),
            "{rewrite}"
        );
        assert_eq!(e.clone().for_rewrite(false), e);
        // Only the wording of the missing confirmation changes: a refusal stays a refusal.
        let wrong = check_device_write(&inv(), "loop1", Some("loop9")).unwrap_err();
        assert_eq!(wrong.clone().for_rewrite(true), wrong);
    }

    #[test]
    fn in_use_is_refused_even_when_confirmed() {
        let i = inv();
        let e = check_device_write(&i, "loop0", Some("loop0")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "refusing to write to loop0: loop0p1 mounted at /mnt/x. Unmount it, swapoff it or \
             stop what holds it first"
        );
        let e = check_device_write(&i, "vdb", Some("vdb")).unwrap_err();
        assert!(e.to_string().contains("held by md (md0)"));
        // The mounted partition itself is refused; its free sibling is allowed.
        let e = check_device_write(&i, "loop0p1", Some("loop0p1")).unwrap_err();
        assert!(e.to_string().contains("mounted at /mnt/x"), "{e}");
        assert_eq!(check_device_write(&i, "loop0p2", Some("loop0p2")), Ok(()));
    }

    #[test]
    fn a_rewrite_is_refused_while_another_process_can_write_and_names_it() {
        assert_eq!(check_no_other_writers("loop1", &[]), Ok(()));
        let e = check_no_other_writers("loop1", &[(812, "dd".into())]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "refusing to rewrite loop1 in place (--preserve): pid 812 (dd) has it open for \
             writing. A rewrite writes back the bytes it read, so a write another process \
             makes meanwhile would be undone without a word. Stop it or wait until it is done, \
             then run again"
        );
        let e = check_no_other_writers(
            "/srv/t.img",
            &[(812, "dd".into()), (901, "evil\x1b[2J".into())],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("pid 812 (dd), pid 901 (evil") && e.contains(" have it open"),
            "{e}"
        );
        assert!(!e.contains('\x1b'), "{e}");
        assert!(e.contains("Stop them or wait until they are done"), "{e}");
    }

    #[test]
    fn unknown_usage_and_unknown_devices_are_refused() {
        let mut i = inv();
        i.usage_complete = false;
        i.notes.push("cannot read /proc/swaps".into());
        let e = check_device_write(&i, "loop1", Some("loop1")).unwrap_err();
        assert!(matches!(e, WriteRefusal::UsageUnknown { .. }));
        let e = check_device_write(&inv(), "sdq", Some("sdq")).unwrap_err();
        assert!(matches!(e, WriteRefusal::Unknown { .. }));
    }

    #[test]
    fn a_host_managed_zoned_device_is_refused_before_its_name_is_asked() {
        let mut i = inv();
        let mut zoned = BlockDevice::unknown("sdz", "/dev/sdz".into());
        zoned.zoning = crate::model::Zoning {
            kernel: Some(ZoneModel::HostManaged),
            nr_zones: Some(16),
            zone_bytes: Some(4 << 20),
            ..Default::default()
        };
        let mut aware = BlockDevice::unknown("sdy", "/dev/sdy".into());
        aware.zoning.kernel = Some(ZoneModel::HostAware);
        i.devices.extend([zoned, aware]);
        for confirmation in [None, Some("sdz")] {
            let e = check_device_write(&i, "sdz", confirmation).unwrap_err();
            assert!(matches!(e, WriteRefusal::HostManaged { .. }), "{e:?}");
            assert!(!is_unconfirmed(&e));
            let text = e.to_string();
            assert!(
                text.starts_with(
                    "refusing to write to sdz: it is a host-managed zoned device (host-managed, \
                     16 zones of 4 MiB)"
                ) && text.contains("Reading it is fine"),
                "{text}"
            );
        }
        // Host-aware zones take random writes (the drive manages them).
        assert_eq!(check_device_write(&i, "sdy", Some("sdy")), Ok(()));
    }
}
