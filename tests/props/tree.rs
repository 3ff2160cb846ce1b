//! Properties of the sysfs reader (`SysRoot::read_device`, `SysRoot::inventory`) on trees
//! written to a temporary directory with hostile attribute contents: huge and negative
//! numbers, NULs, invalid UTF-8, escape sequences, attributes larger than a page, and
//! mountinfo and swaps tables with non-UTF-8 paths.

use std::fs;
use std::path::Path;

use proptest::collection::vec;
use proptest::prelude::*;

use disktriage::model::{Bytes, InUse};
use disktriage::sys::SysRoot;

use super::strategies::{hostile_bytes, number_text};
use super::{Outcome, display_safe, run};

const NAMES: &[&str] = &[
    "sda", "nvme0n1", "vda", "loop0", "mmcblk0", "dm-0", "md0", "zram0", "xvda",
];

const ATTRIBUTES: &[&str] = &[
    "dev",
    "size",
    "removable",
    "ro",
    "queue/rotational",
    "queue/logical_block_size",
    "queue/physical_block_size",
    "queue/nr_requests",
    "queue/read_ahead_kb",
    "queue/max_sectors_kb",
    "queue/scheduler",
    "queue/write_cache",
    "loop/backing_file",
    "dm/name",
    "device/vendor",
    "device/model",
    "device/serial",
    "device/firmware_rev",
    "device/rev",
    "device/vpd_pg80",
    "device/name",
    "device/fwrev",
    "serial",
    "p1/partition",
    "p1/dev",
    "p1/start",
    "p1/size",
    "p1/ro",
];

fn contents() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        6 => hostile_bytes(40),
        3 => number_text().prop_map(String::into_bytes),
        1 => (prop::sample::select(vec![b'7', b'A', 0u8, 0xff]), 60_000usize..70_000)
            .prop_map(|(b, n)| vec![b; n]),
    ]
    .boxed()
}

#[derive(Debug, Clone)]
struct Tree {
    name: &'static str,
    attributes: Vec<(&'static str, Vec<u8>)>,
    /// A mount point as raw bytes (Linux allows any byte but NUL and `/` in a name).
    mount_dir: Vec<u8>,
    swaps_extra: Vec<u8>,
}

fn tree() -> impl Strategy<Value = Tree> {
    (
        prop::sample::select(NAMES),
        vec((prop::sample::select(ATTRIBUTES), contents()), 0..16),
        hostile_bytes(12),
        hostile_bytes(40),
    )
        .prop_map(|(name, attributes, mount_dir, swaps_extra)| Tree {
            name,
            attributes,
            mount_dir: mount_dir
                .into_iter()
                .filter(|b| !matches!(b, 0 | b'/' | b'\n' | b' ' | b'\t' | b'\\'))
                .collect(),
            swaps_extra,
        })
}

fn write(dir: &Path, rel: &str, bytes: &[u8]) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

pub fn read_device(cases: u32) -> Result<Outcome, String> {
    run(cases, tree(), |t| {
        let tmp = tempfile::tempdir().unwrap();
        let dev_dir = tmp.path().join("sys/block").join(t.name);
        fs::create_dir_all(&dev_dir).unwrap();
        for (rel, bytes) in &t.attributes {
            // The partition directory is named after the device.
            let rel = rel.replacen("p1/", &format!("{}1/", t.name), 1);
            write(&dev_dir, &rel, bytes);
        }
        // The device is mounted at a directory whose name is not UTF-8.
        let mut mountinfo = b"27 1 254:0 / / rw,relatime - ext4 /dev/vdz rw\n".to_vec();
        mountinfo.extend_from_slice(b"99 27 259:9 / /mnt/");
        mountinfo.extend_from_slice(&t.mount_dir);
        mountinfo.extend_from_slice(format!(" rw - ext4 /dev/{} rw\n", t.name).as_bytes());
        write(tmp.path(), "proc/self/mountinfo", &mountinfo);
        let mut swaps = b"Filename\tType\tSize\tUsed\tPriority\n".to_vec();
        swaps.extend_from_slice(&t.swaps_extra);
        write(tmp.path(), "proc/swaps", &swaps);

        let root = SysRoot::new(tmp.path());
        let d = root.read_device(t.name);
        for text in [
            &d.vendor,
            &d.model,
            &d.serial,
            &d.firmware,
            &d.backing_file,
            &d.dm_name,
        ]
        .into_iter()
        .flatten()
        {
            prop_assert!(display_safe(text), "{text:?}");
            prop_assert!(!text.is_empty() && text.len() <= 4 * 64 * 1024);
        }
        // The last write of an attribute is what the file holds.
        let last = |rel: &str| {
            t.attributes
                .iter()
                .rev()
                .find(|(r, _)| *r == rel)
                .map(|(_, b)| b.clone())
        };
        let expected_size = last("size").and_then(|b| {
            String::from_utf8_lossy(&b)
                .trim()
                .parse::<u64>()
                .ok()
                .map(Bytes::from_kernel_sectors)
        });
        prop_assert_eq!(d.size_bytes, expected_size);
        if let Some(s) = &d.scheduler
            && let Some(a) = &s.active
        {
            prop_assert!(s.offers(a));
        }

        let inv = root
            .inventory()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(inv.devices.len(), 1);
        for n in &inv.notes {
            prop_assert!(display_safe(n), "{n:?}");
        }
        // Readable tables, whatever bytes they hold, make a complete in-use check, and the
        // mount is found by its source.
        prop_assert!(inv.usage_complete, "notes: {:?}", inv.notes);
        let mounted = inv.devices[0]
            .in_use
            .iter()
            .any(|u| matches!(u, InUse::Mounted { .. }));
        prop_assert!(
            mounted,
            "mount of /dev/{} not seen: {:?}",
            t.name,
            inv.devices[0].in_use
        );
        Ok(())
    })
}
