//! Who else uses a device: the processes with it, a partition, a device stacked on it or a file
//! on any of them open (`/proc/PID/fd`), and their I/O counters (sysinfo); `model::activity`
//! decides what counts as busy. Also who can write a target during a `--preserve` rewrite
//! (`writers`), and which devices share a medium with a target, so a check's or scan's own
//! files stay off it (`target_family`, `stacked_on`).

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use super::direct::devnum;
use super::parse::parse_mountinfo;
use super::scan::whole_disk;
use super::sysfs::{SysRoot, read_attr_text, read_text_file};
use crate::model::activity::ProcessIo;
use crate::model::{DevNum, FileId};

/// Bounds on the walks over stacked devices: a cycle or a huge tree must not stall a run.
const MAX_FAMILY: usize = 256;
/// Bound on the loop devices and layers walked down and up from a target.
const MAX_WALK: usize = 4096;
/// Bounds on the scan of `/proc`: millions of open files are not walked before every run.
const MAX_FDS_PER_PROCESS: usize = 65_536;
/// Far above any real mount table; a bigger one is read no further.
const MAX_MOUNTINFO_BYTES: u64 = 16 << 20;

/// The device, its partitions, and every device stacked on any of them (holders, through any
/// number of layers): I/O through any of them reaches the device.
pub fn device_family(root: &SysRoot, dev: DevNum) -> Vec<DevNum> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![root.root().join(format!("sys/dev/block/{dev}"))];
    seen.insert(dev);
    while let Some(dir) = todo.pop() {
        if seen.len() >= MAX_FAMILY {
            break;
        }
        let mut next = Vec::new();
        // Partitions are subdirectories with a `partition` file; holders are links.
        if let Ok(entries) = fs::read_dir(&dir) {
            for e in entries.flatten() {
                let p = e.path();
                if p.join("partition").exists() {
                    next.push(p);
                }
            }
        }
        if let Ok(entries) = fs::read_dir(dir.join("holders")) {
            next.extend(entries.flatten().map(|e| e.path()));
        }
        for p in next {
            let Some(d) = read_attr_text(&p.join("dev"))
                .ok()
                .and_then(|t| t.trim().parse::<DevNum>().ok())
            else {
                continue;
            };
            if seen.insert(d) {
                todo.push(p);
            }
        }
    }
    seen.into_iter().collect()
}

/// The processes other than this one with one of `devs` open, or a file under one of their
/// mounts, with their names. Descriptors are matched by the kernel's path: a `/dev` node is
/// stat'ed (devtmpfs never blocks), any other file is matched against mount points without
/// touching it, so a hung network file system cannot stall a run.
pub fn openers(devs: &[DevNum]) -> Vec<(u32, String)> {
    let mounts = mount_points(|dev| dev.is_some_and(|d| devs.contains(&d)));
    other_processes(|proc_dir| {
        fs::read_dir(proc_dir.join("fd")).is_ok_and(|fds| {
            fds.flatten().take(MAX_FDS_PER_PROCESS).any(|fd| {
                fs::read_link(fd.path()).is_ok_and(|target| {
                    let t = target.to_string_lossy();
                    is_block_node_of(&t, devs) || (t.starts_with('/') && under_any(&mounts, &t))
                })
            })
        })
    })
}

/// The mount points whose device `keep` accepts, from this process's mount table.
fn mount_points(keep: impl Fn(Option<DevNum>) -> bool) -> Vec<String> {
    read_text_file(Path::new("/proc/self/mountinfo"), MAX_MOUNTINFO_BYTES)
        .map(|t| parse_mountinfo(&t))
        .unwrap_or_default()
        .into_iter()
        .filter(|m| keep(m.dev))
        .map(|m| m.mount_point)
        .collect()
}

/// Is `path` (as the kernel shows it) at or below one of `mounts`?
fn under_any(mounts: &[String], path: &str) -> bool {
    mounts.iter().any(|m| {
        m == "/"
            || path
                .strip_prefix(m.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// Is `path` a `/dev` node of one of `devs`? (devtmpfs: a stat never blocks.)
fn is_block_node_of(path: &str, devs: &[DevNum]) -> bool {
    path.starts_with("/dev/")
        && fs::metadata(path)
            .is_ok_and(|m| m.file_type().is_block_device() && devs.contains(&devnum(m.rdev())))
}

/// The processes other than this one for which `matches` (given `/proc/PID`) holds, with names.
fn other_processes(mut matches: impl FnMut(&Path) -> bool) -> Vec<(u32, String)> {
    let me = std::process::id();
    let Ok(procs) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me || !matches(&p.path()) {
            continue;
        }
        let name = fs::read_to_string(p.path().join("comm"))
            .map(|s| s.trim_end().to_string())
            .unwrap_or_else(|_| "?".into());
        found.push((pid, name));
    }
    found
}

/// Far above a real process's map of mappings; a bigger one is read no further.
const MAX_MAPS_BYTES: u64 = 64 << 20;

/// What a rewrite must not share with another writer.
#[derive(Debug, Clone, Copy)]
pub enum Written<'a> {
    /// Block devices, by number: the target, its partitions and what is stacked on them.
    Devices(&'a [DevNum]),
    /// One regular file, by identity (any of its names). `path` is matched as text when its
    /// file system is not in the mount table under the file's device (a btrfs subvolume).
    File { id: FileId, path: &'a str },
}

/// The processes other than this one that can write `what` now: a descriptor open O_WRONLY or
/// O_RDWR (`/proc/PID/fdinfo/N`), or for a file a shared writable mapping (`/proc/PID/maps`),
/// which outlives its descriptor. Matched as in `openers`. Not seen: later openers, io_uring
/// registered files, the kernel's own writers, other PID namespaces.
pub fn writers(what: Written) -> Vec<(u32, String)> {
    let file_mounts: Vec<String> = match what {
        Written::File { id, .. } => mount_points(|dev| dev == Some(id.dev)),
        Written::Devices(_) => Vec::new(),
    };
    let is_target = |fd_link: &Path, shown: &str| match what {
        Written::Devices(devs) => is_block_node_of(shown, devs),
        Written::File { id, path } => {
            let name = shown.strip_suffix(" (deleted)").unwrap_or(shown);
            if name.starts_with('/') && under_any(&file_mounts, name) {
                fs::metadata(fd_link).is_ok_and(|m| {
                    m.file_type().is_file() && devnum(m.dev()) == id.dev && m.ino() == id.ino
                })
            } else {
                file_mounts.is_empty() && name == path
            }
        }
    };
    other_processes(|proc_dir| {
        let writes_fd = fs::read_dir(proc_dir.join("fd")).is_ok_and(|fds| {
            fds.flatten().take(MAX_FDS_PER_PROCESS).any(|fd| {
                fs::read_link(fd.path()).is_ok_and(|shown| {
                    is_target(&fd.path(), &shown.to_string_lossy())
                        && fd_writable(&proc_dir.join("fdinfo").join(fd.file_name()))
                })
            })
        });
        writes_fd
            || match what {
                Written::File { id, .. } => read_text_file(&proc_dir.join("maps"), MAX_MAPS_BYTES)
                    .is_ok_and(|maps| maps_shared_writable(&maps, id)),
                Written::Devices(_) => false,
            }
    })
}

/// Whether `/proc/PID/fdinfo/N` says opened for writing: the access mode is the low two bits of
/// its octal `flags:` (1 O_WRONLY, 2 O_RDWR). Unreadable (gone): no.
fn fd_writable(fdinfo: &Path) -> bool {
    read_text_file(fdinfo, 1 << 20).is_ok_and(|t| fdinfo_writable(&t))
}

fn fdinfo_writable(text: &str) -> bool {
    text.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u64::from_str_radix(f.trim(), 8).ok())
        .is_some_and(|flags| matches!(flags & 0o3, 1 | 2))
}

/// Whether `/proc/PID/maps` text holds a shared writable mapping (`rw?s`) of file `id`.
fn maps_shared_writable(maps: &str, id: FileId) -> bool {
    maps.lines().any(|line| {
        let mut cols = line.split_whitespace();
        let (Some(_), Some(perms), Some(_), Some(dev), Some(ino)) = (
            cols.next(),
            cols.next(),
            cols.next(),
            cols.next(),
            cols.next(),
        ) else {
            return false;
        };
        let perms = perms.as_bytes();
        let shared_write = perms.get(1) == Some(&b'w') && perms.get(3) == Some(&b's');
        let same_dev = dev.split_once(':').is_some_and(|(ma, mi)| {
            u32::from_str_radix(ma, 16).ok() == Some(id.dev.major)
                && u32::from_str_radix(mi, 16).ok() == Some(id.dev.minor)
        });
        shared_write && same_dev && ino.parse::<u64>().ok() == Some(id.ino)
    })
}

/// The I/O counters of these processes now; a process that ended meanwhile is left out.
pub fn io_counters(processes: &[(u32, String)]) -> Vec<ProcessIo> {
    use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};
    if processes.is_empty() {
        return Vec::new();
    }
    let Ok(mut sys) = System::new() else {
        return Vec::new();
    };
    let pids: Vec<Pid> = processes.iter().map(|(p, _)| Pid::from_u32(*p)).collect();
    sys.refresh_processes_specifics(
        ProcessesToUpdate::Some(&pids),
        true,
        ProcessRefreshKind::nothing().with_disk_usage(),
    );
    processes
        .iter()
        .filter_map(|(pid, name)| {
            let usage = sys.process(Pid::from_u32(*pid))?.disk_usage();
            Some(ProcessIo {
                pid: *pid,
                name: name.clone(),
                read_bytes: usage.total_read_bytes,
                written_bytes: usage.total_written_bytes,
            })
        })
        .collect()
}

/// Every device sharing a medium with `target`: down to where its data lives (disk, slaves,
/// loop backing file), then up from each ([`stacked_on`]). A check's LOG there dies with it.
pub fn target_family(target: DevNum) -> Vec<DevNum> {
    let host = SysRoot::host();
    let loops = loop_devices(&host);
    let roots = roots(target, &loops);
    stacked_on_with(&host, &loops, roots)
}

/// Every device whose data lives on `disk`: partitions, holders (dm, md) and loop devices
/// backed by a file on them, recursively. A scan's mapfile there lands on the disk scanned.
pub fn stacked_on(disk: DevNum) -> Vec<DevNum> {
    let host = SysRoot::host();
    let loops = loop_devices(&host);
    stacked_on_with(&host, &loops, [disk])
}

fn stacked_on_with(
    host: &SysRoot,
    loops: &[(DevNum, DevNum)],
    disks: impl IntoIterator<Item = DevNum>,
) -> Vec<DevNum> {
    let mut family: BTreeSet<DevNum> = BTreeSet::new();
    for disk in disks {
        family.insert(disk);
        family.extend(device_family(host, whole_disk(disk)));
    }
    // Loop devices over a file on the family, until no new one joins.
    loop {
        let before = family.len();
        for (dev, backing) in loops {
            if family.len() >= MAX_WALK {
                break;
            }
            if !family.contains(dev) && family.contains(backing) {
                family.extend(device_family(host, *dev));
            }
        }
        if family.len() == before || family.len() >= MAX_WALK {
            break;
        }
    }
    family.into_iter().collect()
}

/// The devices `target`'s data lives on: what is below every partition, slave and backing file
/// with nothing further below (a disk, or a file system's anonymous device: tmpfs, FUSE).
fn roots(target: DevNum, loops: &[(DevNum, DevNum)]) -> BTreeSet<DevNum> {
    let mut out = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut todo = vec![target];
    while let Some(dev) = todo.pop() {
        if !seen.insert(dev) || seen.len() >= MAX_WALK {
            continue;
        }
        let disk = whole_disk(dev);
        if disk != dev {
            todo.push(disk);
            continue;
        }
        let mut below: Vec<DevNum> = loops
            .iter()
            .filter(|(l, _)| *l == dev)
            .map(|(_, backing)| *backing)
            .collect();
        if let Ok(entries) = std::fs::read_dir(super::flush::dev_dir(dev).join("slaves")) {
            below.extend(entries.flatten().filter_map(|e| {
                read_attr_text(&e.path().join("dev"))
                    .ok()
                    .and_then(|t| t.trim().parse::<DevNum>().ok())
            }));
        }
        if below.is_empty() {
            out.insert(dev);
        }
        todo.extend(below);
    }
    out
}

/// Each attached loop device with the device of the file system its backing file is on.
fn loop_devices(host: &SysRoot) -> Vec<(DevNum, DevNum)> {
    let Ok(entries) = fs::read_dir(host.root().join("sys/block")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten().take(MAX_WALK) {
        let name = e.file_name().to_string_lossy().to_string();
        let dir = e.path();
        let Ok(text) = read_attr_text(&dir.join("loop/backing_file")) else {
            continue;
        };
        let dev = read_attr_text(&dir.join("dev"))
            .ok()
            .and_then(|t| t.trim().parse::<DevNum>().ok());
        let Some(dev) = dev else { continue };
        if let Some(file) = host.loop_backing(&name, Some(dev), text.trim_end()).file {
            out.push((dev, file.dev));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_descriptors_opened_for_writing_count() {
        let info = |flags: &str| format!("pos:\t0\nflags:\t{flags}\nmnt_id:\t25\nino:\t12\n");
        assert!(!fdinfo_writable(&info("0100000")), "O_RDONLY|O_LARGEFILE");
        assert!(fdinfo_writable(&info("0100001")), "O_WRONLY");
        assert!(fdinfo_writable(&info("02100002")), "O_RDWR|O_CLOEXEC");
        assert!(!fdinfo_writable(&info("012000000")), "O_PATH");
        assert!(!fdinfo_writable("pos:\t0\n"));
        assert!(!fdinfo_writable("flags:\tnot octal\n"));
    }

    #[test]
    fn a_shared_writable_mapping_of_the_file_counts_and_nothing_else() {
        let id = FileId {
            dev: DevNum {
                major: 253,
                minor: 1,
            },
            ino: 4242,
        };
        let line = |perms: &str, dev: &str, ino: u64| {
            format!("7f00-7f10 {perms} 00000000 {dev} {ino}    /data/test.img\n")
        };
        assert!(maps_shared_writable(&line("rw-s", "fd:01", 4242), id));
        assert!(
            !maps_shared_writable(&line("rw-p", "fd:01", 4242), id),
            "private"
        );
        assert!(
            !maps_shared_writable(&line("r--s", "fd:01", 4242), id),
            "read-only"
        );
        assert!(
            !maps_shared_writable(&line("rw-s", "fd:02", 4242), id),
            "other fs"
        );
        assert!(
            !maps_shared_writable(&line("rw-s", "fd:01", 4243), id),
            "other file"
        );
        assert!(!maps_shared_writable(
            "7f00-7f10 rw-p 00000000 00:00 0\n",
            id
        ));
        assert!(!maps_shared_writable("garbage\n\n", id));
    }
}
