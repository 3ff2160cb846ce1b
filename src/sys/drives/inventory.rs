//! The inventory: every block device of `/sys/block` read, in natural name order, with the
//! mount and swap tables that say which are in use. Each device's transport is the first row
//! of the transport table (`super::TRANSPORTS`) that recognises it, and that row reads its
//! identity attributes; the rest is the same for every transport.
//!
//! These are `SysRoot` methods, written here rather than in `sysfs.rs` because they read the
//! transport table: `sysfs.rs` stays below `drives` (which opens devices through it).

use std::fs;

use anyhow::Context;

use super::{Seen, row_of};
use crate::model::device::{SwapEntry, SwapKind};
use crate::model::usage::{self, MountEntry};
use crate::model::{BlockDevice, Bytes, Inventory, KernelWriteCache, SchedulerSet};
use crate::sys::direct;
use crate::sys::parse::{parse_devnum, parse_flag, parse_mountinfo, parse_number, parse_swaps};
use crate::sys::sysfs::{
    AttrReader, MAX_TABLE_BYTES, SysRoot, dev_node_path, natural_key, read_text_file,
};

impl SysRoot {
    /// Lists and reads every entry of `/sys/block`, sorted by name (numbers in natural order).
    pub fn inventory(&self) -> anyhow::Result<Inventory> {
        let block = self.root().join("sys/block");
        let entries = fs::read_dir(&block)
            .with_context(|| format!("cannot list {} (is sysfs mounted?)", block.display()))?;
        let mut notes = Vec::new();
        let mut names = Vec::new();
        let mut listed: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        listed.sort_by_key(|a| natural_key(a));
        for name in listed {
            // Following the symlink: a device removed while we list is no longer a directory.
            if block.join(&name).is_dir() {
                names.push(name);
            } else {
                notes.push(format!(
                    "skipped /sys/block/{}: not a device directory (removed while listing?)",
                    crate::model::text::neutralize_controls(&name)
                ));
            }
        }

        let mounts = self.read_table("proc/self/mountinfo", parse_mountinfo, &mut notes);
        let swaps = self.read_table("proc/swaps", parse_swaps, &mut notes);
        let usage_complete = mounts.is_some() && swaps.is_some();
        let mounts: Vec<MountEntry> = mounts.unwrap_or_default();
        let mut swaps: Vec<SwapEntry> = swaps.unwrap_or_default();
        for s in swaps.iter_mut().filter(|s| s.kind == SwapKind::File) {
            s.file = direct::file_identity(&self.below_root(&s.path)).map(|(id, _)| id);
        }

        let mut devices = self.read_devices(&names);
        usage::assess_all(&mut devices, &mounts, &swaps);
        Ok(Inventory {
            devices,
            usage_complete,
            notes,
            swaps,
        })
    }

    /// Reads the devices `names`, in that order. With many devices (64 loop devices, a
    /// storage server) the reads are shared among a few threads: the TUI's device list waits
    /// for them.
    fn read_devices(&self, names: &[String]) -> Vec<BlockDevice> {
        const PER_THREAD: usize = 16;
        let threads = std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .min(4)
            .min(names.len().div_ceil(PER_THREAD));
        if threads <= 1 {
            return names.iter().map(|name| self.read_device(name)).collect();
        }
        let chunk = names.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = names
                .chunks(chunk)
                .map(|part| {
                    let reader = std::thread::Builder::new()
                        .name("inventory".into())
                        .spawn_scoped(scope, move || {
                            part.iter().map(|name| self.read_device(name)).collect()
                        });
                    (part, reader)
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|(part, reader)| {
                    // A thread that could not be started or that panicked (a bug): its
                    // devices are read here instead.
                    reader.ok().and_then(|r| r.join().ok()).unwrap_or_else(|| {
                        part.iter()
                            .map(|name| self.read_device(name))
                            .collect::<Vec<_>>()
                    })
                })
                .collect()
        })
    }

    /// Reads one `/proc` table, noting (not failing) when it cannot be read.
    fn read_table<T>(
        &self,
        rel: &str,
        parse: fn(&str) -> Vec<T>,
        notes: &mut Vec<String>,
    ) -> Option<Vec<T>> {
        let path = self.root().join(rel);
        // Paths in these tables may hold any byte but NUL: the text is decoded leniently, so
        // one odd mount point does not make the whole table unreadable.
        match read_text_file(&path, MAX_TABLE_BYTES) {
            Ok(text) => Some(parse(&text)),
            Err(e) => {
                notes.push(format!(
                    "cannot read /{rel} ({}): in-use checks are incomplete",
                    crate::sys::error::describe_io_brief(&e)
                ));
                None
            }
        }
    }

    /// Reads everything sysfs says about one block device.
    pub fn read_device(&self, name: &str) -> BlockDevice {
        let dir = self.block_dir(name);
        let mut r = AttrReader::new(&dir);
        let mut d = BlockDevice::unknown(name, dev_node_path(name));

        d.dev = r.text("dev").as_deref().and_then(parse_devnum);
        d.diskseq = r.number("diskseq");
        d.size_bytes = r
            .text("size")
            .as_deref()
            .and_then(parse_number::<u64>)
            .map(Bytes::from_kernel_sectors);
        d.removable = r.text("removable").as_deref().and_then(parse_flag);
        d.read_only = r.text("ro").as_deref().and_then(parse_flag);

        d.rotational = r.text("queue/rotational").as_deref().and_then(parse_flag);
        d.logical_block_size = r.number("queue/logical_block_size");
        d.physical_block_size = r.number("queue/physical_block_size");
        d.nr_requests = r.number("queue/nr_requests");
        d.read_ahead_kb = r.number("queue/read_ahead_kb");
        d.max_sectors_kb = r.number("queue/max_sectors_kb");
        d.scheduler = match r.text("queue/scheduler") {
            Some(text) => text.parse::<SchedulerSet>().ok(),
            // Bio-based devices (zram on recent kernels) have a queue but no scheduler file:
            // no scheduler applies, which is not the same as unknown.
            None if dir.join("queue").is_dir() && !dir.join("queue/scheduler").exists() => {
                Some(SchedulerSet::default())
            }
            None => None,
        };
        d.kernel_write_cache = r
            .text("queue/write_cache")
            .and_then(|s| s.parse::<KernelWriteCache>().ok());

        d.backing_file = r.clean("loop/backing_file");
        if let Some(text) = &d.backing_file {
            d.loop_backing = Some(self.loop_backing(name, d.dev, text));
        }
        d.dm_name = r.clean("dm/name");

        // The vendor is read for every device, before its transport is known: the SCSI rows
        // recognise libata disks by it.
        let scsi_vendor = r.clean("device/vendor");
        let sys_path = self.relative_canonical(&dir);
        let seen = Seen {
            name,
            sys_path: &sys_path,
            scsi_vendor: scsi_vendor.as_deref(),
        };
        let row = row_of(&seen);
        d.transport = row.transport;
        (row.read_identity)(&seen, &mut r, &mut d);

        d.holders = self.holders(&dir.join("holders"));
        d.partitions = self.partitions(&dir);
        d.notes = r.notes;
        d
    }
}
