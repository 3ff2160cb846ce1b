//! The in-use verdict: which mounts, swap areas and stacked devices claim a block device or one
//! of its partitions. Pure matching over tables the `sys` layer parsed.

use super::device::{BlockDevice, DevNum, Holder, InUse};

/// One line of `/proc/self/mountinfo`, reduced to what the verdict needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// The `major:minor` of the mounted filesystem's device (0:N for pseudo filesystems).
    pub dev: Option<DevNum>,
    /// The mount source as given to mount(8), e.g. `/dev/sda1` or `/dev/mapper/vg-root`.
    pub source: String,
    pub mount_point: String,
    pub fstype: String,
}

/// One active swap area from `/proc/swaps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwapEntry {
    pub path: String,
    /// "partition" or "file".
    pub kind: String,
}

/// Does `source` (a mount or swap path) name the node `name`, or its dm alias?
fn names_node(source: &str, name: &str, dm_name: Option<&str>) -> bool {
    let dev_name = name.replace('!', "/");
    if source == format!("/dev/{dev_name}") {
        return true;
    }
    match dm_name {
        Some(dm) => source == format!("/dev/mapper/{dm}"),
        None => false,
    }
}

/// The reasons one node (a whole device or a partition) is in use.
fn node_usage(
    name: &str,
    dev: Option<DevNum>,
    dm_name: Option<&str>,
    holders: &[Holder],
    mounts: &[MountEntry],
    swaps: &[SwapEntry],
) -> Vec<InUse> {
    let mut reasons = Vec::new();
    for m in mounts {
        // Pseudo filesystems have major 0; a real block device never does.
        let by_number = matches!((dev, m.dev), (Some(a), Some(b)) if a == b && a.major != 0);
        if by_number || names_node(&m.source, name, dm_name) {
            let reason = InUse::Mounted {
                device: name.to_string(),
                mount_point: m.mount_point.clone(),
                fstype: m.fstype.clone(),
            };
            if !reasons.contains(&reason) {
                reasons.push(reason);
            }
        }
    }
    for s in swaps {
        if s.kind == "partition" && names_node(&s.path, name, dm_name) {
            reasons.push(InUse::Swap {
                device: name.to_string(),
            });
        }
    }
    for h in holders {
        reasons.push(InUse::Held {
            device: name.to_string(),
            holder: h.clone(),
        });
    }
    reasons
}

/// Fills `device.in_use` from its own mounts, swap and holders and those of its partitions: a
/// disk whose partition is mounted is in use.
pub fn assess(device: &mut BlockDevice, mounts: &[MountEntry], swaps: &[SwapEntry]) {
    let mut reasons = node_usage(
        &device.name,
        device.dev,
        device.dm_name.as_deref(),
        &device.holders,
        mounts,
        swaps,
    );
    for p in &device.partitions {
        reasons.extend(node_usage(&p.name, p.dev, None, &p.holders, mounts, swaps));
    }
    device.in_use = reasons;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::device::{HolderKind, Partition};

    fn mount(dev: &str, source: &str, at: &str) -> MountEntry {
        MountEntry {
            dev: dev.parse().ok(),
            source: source.into(),
            mount_point: at.into(),
            fstype: "ext4".into(),
        }
    }

    fn disk_with_partition() -> BlockDevice {
        let mut d = BlockDevice::unknown("sda", "/dev/sda".into());
        d.dev = "8:0".parse().ok();
        d.partitions.push(Partition {
            name: "sda1".into(),
            path: "/dev/sda1".into(),
            dev: "8:1".parse().ok(),
            number: Some(1),
            start_sector: Some(2048),
            size_bytes: None,
            read_only: Some(false),
            holders: vec![],
        });
        d
    }

    #[test]
    fn mounted_partition_marks_the_disk() {
        let mut d = disk_with_partition();
        assess(&mut d, &[mount("8:1", "/dev/sda1", "/boot")], &[]);
        assert_eq!(d.usage_summary(), "sda1 mounted at /boot");
    }

    #[test]
    fn match_by_number_when_source_is_an_alias() {
        let mut d = disk_with_partition();
        assess(&mut d, &[mount("8:0", "UUID=abc", "/data")], &[]);
        assert_eq!(d.usage_summary(), "mounted at /data");
    }

    #[test]
    fn pseudo_filesystems_never_match() {
        let mut d = BlockDevice::unknown("zram0", "/dev/zram0".into());
        d.dev = "0:22".parse().ok();
        assess(&mut d, &[mount("0:22", "proc", "/proc")], &[]);
        assert!(!d.is_in_use());
    }

    #[test]
    fn swap_partitions_but_not_swap_files() {
        let mut d = BlockDevice::unknown("zram0", "/dev/zram0".into());
        let swaps = [
            SwapEntry {
                path: "/dev/zram0".into(),
                kind: "partition".into(),
            },
            SwapEntry {
                path: "/dev/zram0.file".into(),
                kind: "file".into(),
            },
        ];
        assess(&mut d, &[], &swaps);
        assert_eq!(d.usage_summary(), "active swap");
    }

    #[test]
    fn dm_alias_and_holders() {
        let mut d = BlockDevice::unknown("dm-0", "/dev/dm-0".into());
        d.dm_name = Some("vg-root".into());
        assess(&mut d, &[mount("", "/dev/mapper/vg-root", "/")], &[]);
        assert_eq!(d.usage_summary(), "mounted at /");

        let mut p = disk_with_partition();
        p.partitions[0].holders.push(Holder {
            name: "md0".into(),
            kind: HolderKind::Md,
            label: None,
        });
        assess(&mut p, &[], &[]);
        assert_eq!(p.usage_summary(), "sda1 held by md (md0)");
    }
}
