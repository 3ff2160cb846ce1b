//! Who else is using a device: the processes that have it, one of its partitions or the
//! devices stacked on it, or a file on any of them, open (from `/proc/PID/fd`), and their I/O
//! counters (through sysinfo). `model::activity` decides what counts as busy.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use super::direct::devnum;
use super::parse::parse_mountinfo;
use super::sysfs::{SysRoot, read_attr_text, read_text_file};
use crate::model::DevNum;
use crate::model::activity::ProcessIo;

/// Bounds for the walk over stacked devices: a cycle or a huge tree must not stall a run.
const MAX_FAMILY: usize = 256;
/// Bounds for the scan of `/proc`, so a machine with millions of open files is not walked
/// whole before every run.
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

/// The processes other than this one with an open descriptor on one of `devs` (the device
/// node itself) or on a file under a mount of one of them, with their name.
///
/// Descriptors are matched by the path the kernel shows for them: a `/dev` node is stat'ed
/// (on devtmpfs, which never blocks), any other file is matched against the mount points of
/// `devs` without touching it, so a hung network file system another process has open cannot
/// stall a run.
pub fn openers(devs: &[DevNum]) -> Vec<(u32, String)> {
    let mounts: Vec<String> =
        read_text_file(Path::new("/proc/self/mountinfo"), MAX_MOUNTINFO_BYTES)
            .map(|t| parse_mountinfo(&t))
            .unwrap_or_default()
            .into_iter()
            .filter(|m| m.dev.is_some_and(|d| devs.contains(&d)))
            .map(|m| m.mount_point)
            .collect();
    let under_mount = |path: &str| {
        mounts.iter().any(|m| {
            m == "/"
                || path
                    .strip_prefix(m.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    };
    let is_our_node = |path: &str| {
        path.starts_with("/dev/")
            && fs::metadata(path)
                .is_ok_and(|m| m.file_type().is_block_device() && devs.contains(&devnum(m.rdev())))
    };
    let me = std::process::id();
    let Ok(procs) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(fds) = fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        let uses = fds.flatten().take(MAX_FDS_PER_PROCESS).any(|fd| {
            fs::read_link(fd.path()).is_ok_and(|target| {
                let t = target.to_string_lossy();
                is_our_node(&t) || (t.starts_with('/') && under_mount(&t))
            })
        });
        if uses {
            let name = fs::read_to_string(p.path().join("comm"))
                .map(|s| s.trim_end().to_string())
                .unwrap_or_else(|_| "?".into());
            found.push((pid, name));
        }
    }
    found
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
