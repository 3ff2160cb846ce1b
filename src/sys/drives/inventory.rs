//! The inventory: every block device of `/sys/block`, in natural name order, with the mount
//! and swap tables that say which are in use. A device's transport is the first row of
//! `super::TRANSPORTS` that recognises it, and that row reads its identity attributes. These
//! `SysRoot` methods live here, not in `sysfs.rs`, because they read the transport table
//! (`sysfs.rs` stays below `drives`, which opens devices through it).

use std::fs;

use anyhow::Context;

use super::{Seen, row_of};
use crate::model::device::{SwapEntry, SwapKind};
use crate::model::usage::{self, MountEntry};
use crate::model::{
    BlockDevice, Bytes, Inventory, KernelWriteCache, SchedulerSet, Transport, ZoneModel, Zoning,
};
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
            // Following the link: a device removed while listing is no longer a directory.
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

    /// Reads the devices `names`, in order, shared among a few threads when there are many
    /// (64 loop devices, a storage server): the TUI's device list waits for them.
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
                    // A thread that failed to start or panicked: its devices are read here.
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
        // Paths in these tables may hold any byte but NUL: decoded leniently, so one odd mount
        // point does not make the whole table unreadable.
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
            // Bio-based devices (zram lately) have a queue but no scheduler file: none
            // applies, which is not unknown.
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

        // Read before the transport is known: the SCSI rows recognise libata disks by it.
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

        d.zoning = self.zoning(&mut r, &d);
        d.holders = self.holders(&dir.join("holders"));
        d.partitions = self.partitions(&dir);
        d.notes = r.notes;
        d
    }

    /// Zoned or shingled media from sysfs alone (no command sent): the kernel's zone model,
    /// zones and zone size; on a SATA disk the IDENTIFY data libata keeps, else its discard
    /// and rotational flags (libata reports discard only for a drive that states TRIM).
    fn zoning(&self, r: &mut AttrReader, d: &BlockDevice) -> Zoning {
        let kernel = r
            .text("queue/zoned")
            .and_then(|w| ZoneModel::from_kernel(&w));
        let mut z = Zoning {
            kernel,
            nr_zones: r.number::<u64>("queue/nr_zones").filter(|n| *n > 0),
            zone_bytes: kernel
                .and(r.number::<u64>("queue/chunk_sectors"))
                .filter(|n| *n > 0)
                .map(|n| n.saturating_mul(512)),
            ..Zoning::default()
        };
        if d.transport != Transport::Sata {
            return z;
        }
        match self.ata_identify(&d.name) {
            Some(id) => {
                z.drive = id.zoned;
                z.trim_rotating = id.trim_supported && id.rotation_rpm.is_some_and(|r| r > 0);
            }
            None => {
                let discard = r.number::<u64>("queue/discard_max_bytes").unwrap_or(0) > 0;
                z.trim_rotating = discard && d.rotational == Some(true);
            }
        }
        z
    }

    /// The IDENTIFY words libata keeps for SATA disk `name` (`ata_device` beside its SCSI
    /// device: `ataN/linkN/devN.T`, or `ataN/linkN.C/devN.C.0` behind a port multiplier).
    fn ata_identify(&self, name: &str) -> Option<crate::smart::ata::AtaIdentity> {
        let scsi = fs::canonicalize(self.block_dir(name).join("device")).ok()?;
        let address = scsi.file_name()?.to_string_lossy().into_owned();
        let mut parts = address.split(':');
        let (_, channel, target) = (parts.next()?, parts.next()?, parts.next()?);
        let port = scsi.ancestors().find(|a| {
            a.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("ata"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })?;
        let n = port.file_name()?.to_str()?.strip_prefix("ata")?;
        let candidates = [
            format!("link{n}.{channel}/dev{n}.{channel}.0"),
            format!("link{n}/dev{n}.{target}"),
        ];
        let text = candidates.iter().find_map(|rel| {
            let dev = rel.rsplit('/').next()?;
            read_text_file(
                &port.join(rel).join("ata_device").join(dev).join("id"),
                4096,
            )
            .ok()
            .filter(|t| !t.trim().is_empty())
        })?;
        let words: Vec<u16> = text
            .split_whitespace()
            .map(|w| u16::from_str_radix(w, 16).ok())
            .collect::<Option<_>>()?;
        if words.len() != 256 {
            return None;
        }
        let page: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        crate::smart::ata::parse_identify(&page).ok()
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use crate::model::{ZoneModel, Zoning};
    use crate::sys::SysRoot;

    /// A SATA disk `name` on port `ataN` as libata lays it out, its IDENTIFY words given.
    fn sata_disk(root: &Path, name: &str, port: u32, words: &[(usize, u16)]) {
        let ata = root.join(format!("sys/devices/pci0000:00/0000:00:1f.2/ata{port}"));
        let scsi = ata.join(format!("host{port}/target{port}:0:0/{port}:0:0:0"));
        let disk = scsi.join("block").join(name);
        fs::create_dir_all(disk.join("queue")).unwrap();
        fs::write(scsi.join("vendor"), "ATA     \n").unwrap();
        fs::write(disk.join("queue/rotational"), "1\n").unwrap();
        fs::write(disk.join("queue/zoned"), "none\n").unwrap();
        fs::write(disk.join("queue/discard_max_bytes"), "0\n").unwrap();
        fs::create_dir_all(root.join("sys/block")).unwrap();
        std::os::unix::fs::symlink(&disk, root.join("sys/block").join(name)).unwrap();
        std::os::unix::fs::symlink(&scsi, disk.join("device")).unwrap();
        let dev = format!("dev{port}.0");
        let id_dir = ata.join(format!("link{port}/{dev}/ata_device/{dev}"));
        fs::create_dir_all(&id_dir).unwrap();
        let mut id = [0u16; 256];
        id[0] = 0x0040;
        for (w, v) in words {
            id[*w] = *v;
        }
        // As libata prints it: "%04x" and a space, a newline after every eighth word.
        let text: String = id
            .iter()
            .enumerate()
            .map(|(i, w)| format!("{w:04x}{}", if (i + 1) % 8 == 0 { '\n' } else { ' ' }))
            .collect();
        fs::write(id_dir.join("id"), text).unwrap();
    }

    #[test]
    fn zones_from_the_kernel_and_from_the_ata_identify_libata_keeps() {
        let root = tempfile::tempdir().unwrap();
        let sys = SysRoot::new(root.path());
        // Host-managed (scsi_debug zbc=host-managed): zones of chunk_sectors.
        let hm = root.path().join("sys/block/sdq");
        fs::create_dir_all(hm.join("queue")).unwrap();
        fs::write(hm.join("queue/zoned"), "host-managed\n").unwrap();
        fs::write(hm.join("queue/nr_zones"), "524\n").unwrap();
        fs::write(hm.join("queue/chunk_sectors"), "524288\n").unwrap();
        let d = sys.read_device("sdq");
        assert_eq!(
            d.zoning,
            Zoning {
                kernel: Some(ZoneModel::HostManaged),
                nr_zones: Some(524),
                zone_bytes: Some(256 << 20),
                ..Zoning::default()
            }
        );
        assert_eq!(
            d.zoning.words(),
            Some(("zoned", "host-managed, 524 zones of 256 MiB".to_string()))
        );
        // Drive-managed SMR by word 69, rotating (217: 5400 rpm) and TRIM (169).
        sata_disk(
            root.path(),
            "sdr",
            3,
            &[(69, 0x0002), (169, 1), (217, 5400)],
        );
        let d = sys.read_device("sdr");
        assert_eq!(d.zoning.drive, Some(ZoneModel::DriveManaged));
        assert!(d.zoning.trim_rotating);
        assert_eq!(
            d.zoning.words(),
            Some(("SMR", "drive-managed (the drive says so)".to_string()))
        );
        // TRIM at 7,200 rpm, no zoned capabilities: the hint.
        sata_disk(root.path(), "sds", 4, &[(169, 1), (217, 7200)]);
        let words = sys.read_device("sds").zoning.words().unwrap();
        assert_eq!(words.0, "SMR suspected");
        // An SSD (217: 1) that TRIMs: nothing; IDENTIFY wins over the kernel's rotational 1.
        sata_disk(root.path(), "sdt", 5, &[(169, 1), (217, 1)]);
        assert_eq!(sys.read_device("sdt").zoning.words(), None);
        // No IDENTIFY kept: the kernel's discard on a rotating SATA disk is the hint.
        let sdu = root.path().join("sys/devices/pci0000:00/0000:00:1f.2/ata6");
        sata_disk(root.path(), "sdu", 6, &[]);
        fs::remove_dir_all(sdu.join("link6")).unwrap();
        let queue = root.path().join("sys/block/sdu/queue");
        assert_eq!(sys.read_device("sdu").zoning.words(), None);
        fs::write(queue.join("discard_max_bytes"), "2147450880\n").unwrap();
        assert_eq!(
            sys.read_device("sdu").zoning.words().map(|w| w.0),
            Some("SMR suspected")
        );
        fs::write(queue.join("rotational"), "0\n").unwrap();
        assert_eq!(sys.read_device("sdu").zoning.words(), None);
        // A garbled id is not read (nothing guessed from it).
        sata_disk(root.path(), "sdv", 7, &[(69, 2)]);
        let id = root
            .path()
            .join("sys/devices/pci0000:00/0000:00:1f.2/ata7/link7/dev7.0/ata_device/dev7.0/id");
        fs::write(&id, "0040 zzzz\n").unwrap();
        assert_eq!(sys.read_device("sdv").zoning.drive, None);
    }
}
