//! The inventory read from captured sysfs trees (`tests/fixtures/sysfs/<scenario>/`), asserted
//! field by field, plus what `disktriage list` prints for them.
//!
//! Scenarios: `host-loop-zram` (this project's dev machine: a partitioned loop device with a
//! mounted partition, a 4Kn loop device, zram as swap, the virtio system disk), `qemu-lab`
//! (the QEMU lab: SATA on AHCI, NVMe, SCSI on virtio-scsi, USB storage, virtio-blk with a
//! mounted and a swap partition, md RAID1 and an LVM-style dm device), and `garbage` (hand-made
//! nonsense: malformed numbers, escape sequences, dangling links, missing proc files).

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use disktriage::model::{
    BlockDevice, Bytes, DevNum, HolderKind, InUse, Inventory, KernelWriteCache, Transport,
};
use disktriage::sys::SysRoot;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sysfs")
        .join(name)
}

fn inventory(name: &str) -> Inventory {
    SysRoot::new(fixture(name))
        .inventory()
        .expect("fixture inventory")
}

fn device<'a>(inv: &'a Inventory, name: &str) -> &'a BlockDevice {
    inv.find(name)
        .unwrap_or_else(|| panic!("{name} missing from inventory"))
}

fn dev(major: u32, minor: u32) -> Option<DevNum> {
    Some(DevNum { major, minor })
}

fn sched(d: &BlockDevice) -> (Option<&str>, Vec<&str>) {
    let s = d.scheduler.as_ref().expect("scheduler known");
    (
        s.active.as_deref(),
        s.available.iter().map(String::as_str).collect(),
    )
}

fn list_output(scenario: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .arg("--root")
        .arg(fixture(scenario))
        .arg("list")
        .args(args)
        .output()
        .expect("run disktriage");
    assert!(
        out.status.success(),
        "list failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

#[test]
fn host_loop_and_zram() {
    let inv = inventory("host-loop-zram");
    assert!(inv.usage_complete);
    assert!(inv.notes.is_empty());
    let names: Vec<&str> = inv.devices.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "loop0", "loop1", "loop2", "loop3", "loop4", "loop5", "loop6", "loop7", "vda", "zram0"
        ]
    );

    let l0 = device(&inv, "loop0");
    assert_eq!(l0.path, PathBuf::from("/dev/loop0"));
    assert_eq!(l0.dev, dev(7, 0));
    assert_eq!(l0.size_bytes, Some(Bytes(64 << 20)));
    assert_eq!(l0.transport, Transport::Loop);
    assert_eq!(
        (
            l0.vendor.as_deref(),
            l0.model.as_deref(),
            l0.serial.as_deref()
        ),
        (None, None, None)
    );
    assert_eq!(l0.firmware, None);
    assert_eq!(l0.rotational, Some(true));
    assert_eq!(
        (l0.logical_block_size, l0.physical_block_size),
        (Some(512), Some(512))
    );
    assert_eq!(
        sched(l0),
        (Some("none"), vec!["none", "mq-deadline", "kyber", "bfq"])
    );
    assert_eq!(l0.nr_requests, Some(128));
    assert_eq!(l0.read_ahead_kb, Some(2560));
    assert_eq!(l0.kernel_write_cache, Some(KernelWriteCache::WriteBack));
    assert_eq!((l0.removable, l0.read_only), (Some(false), Some(false)));
    assert_eq!(l0.backing_file.as_deref(), Some("/tmp/dtcap/a.img"));
    assert!(l0.holders.is_empty());
    assert!(!l0.is_placeholder());
    let parts: Vec<_> = l0
        .partitions
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                p.dev,
                p.number,
                p.start_sector,
                p.size_bytes,
            )
        })
        .collect();
    assert_eq!(
        parts,
        [
            (
                "loop0p1",
                dev(259, 0),
                Some(1),
                Some(2048),
                Some(Bytes(32 << 20))
            ),
            (
                "loop0p2",
                dev(259, 1),
                Some(2),
                Some(67584),
                Some(Bytes(30 << 20))
            ),
        ]
    );
    assert_eq!(
        l0.in_use,
        [InUse::Mounted {
            device: "loop0p1".into(),
            mount_point: "/tmp/dtcap/mnt".into(),
            fstype: "ext4".into()
        }]
    );
    assert_eq!(l0.usage_summary(), "loop0p1 mounted at /tmp/dtcap/mnt");

    let l1 = device(&inv, "loop1");
    assert_eq!(
        (l1.logical_block_size, l1.physical_block_size),
        (Some(4096), Some(4096))
    );
    assert_eq!(l1.size_bytes, Some(Bytes(32 << 20)));
    assert!(l1.partitions.is_empty());
    assert!(!l1.is_in_use());

    for idle in ["loop2", "loop3", "loop7"] {
        let d = device(&inv, idle);
        assert!(d.is_placeholder(), "{idle}");
        assert_eq!(d.size_bytes, Some(Bytes(0)));
        assert_eq!(d.kernel_write_cache, Some(KernelWriteCache::WriteThrough));
    }

    let vda = device(&inv, "vda");
    assert_eq!(vda.transport, Transport::Virtio);
    assert_eq!(vda.serial.as_deref(), Some("overlayblk"));
    assert_eq!(vda.size_bytes, Some(Bytes(256 << 30)));
    assert_eq!(
        (vda.logical_block_size, vda.physical_block_size),
        (Some(512), Some(4096))
    );
    assert_eq!(sched(vda).0, Some("mq-deadline"));
    assert_eq!(vda.usage_summary(), "mounted at /");

    let z = device(&inv, "zram0");
    assert_eq!(z.transport, Transport::Zram);
    assert_eq!(z.dev, dev(253, 0));
    assert_eq!(z.size_bytes, Some(Bytes(256 << 20)));
    assert_eq!(z.rotational, Some(false));
    assert_eq!(
        (z.logical_block_size, z.physical_block_size),
        (Some(4096), Some(4096))
    );
    // zram is bio-based: no scheduler file at all, which is "none applies", not "unknown".
    assert_eq!(sched(z), (None, vec![]));
    assert_eq!(z.nr_requests, None);
    assert_eq!(z.kernel_write_cache, Some(KernelWriteCache::WriteThrough));
    assert_eq!(
        z.in_use,
        [InUse::Swap {
            device: "zram0".into()
        }]
    );
    assert!(!z.is_placeholder());
}

#[test]
fn qemu_lab_transports() {
    let inv = inventory("qemu-lab");
    assert!(inv.usage_complete);

    let sata = device(&inv, "sda");
    assert_eq!(sata.transport, Transport::Sata);
    assert_eq!(sata.dev, dev(8, 0));
    assert_eq!(sata.vendor.as_deref(), Some("ATA"));
    assert_eq!(sata.model.as_deref(), Some("DT SATA DISK"));
    assert_eq!(sata.serial.as_deref(), Some("DT-SATA-0"));
    assert_eq!(sata.firmware.as_deref(), Some("2.5+"));
    assert_eq!(sata.size_bytes, Some(Bytes(256 << 20)));
    assert_eq!(sata.rotational, Some(true));
    assert_eq!(sata.nr_requests, Some(64));
    assert_eq!(
        sched(sata),
        (Some("mq-deadline"), vec!["mq-deadline", "none"])
    );
    assert_eq!(sata.kernel_write_cache, Some(KernelWriteCache::WriteBack));
    assert!(!sata.is_in_use());

    let nvme = device(&inv, "nvme0n1");
    assert_eq!(nvme.transport, Transport::Nvme);
    assert_eq!(nvme.dev, dev(259, 0));
    assert_eq!(nvme.vendor, None);
    assert_eq!(nvme.model.as_deref(), Some("QEMU NVMe Ctrl"));
    assert_eq!(nvme.serial.as_deref(), Some("DT-NVME-0"));
    assert_eq!(nvme.firmware.as_deref(), Some("7.2.22"));
    assert_eq!(nvme.rotational, Some(false));
    assert_eq!(nvme.media_label(), "SSD");
    assert_eq!(nvme.max_sectors_kb, Some(512));

    let scsi = device(&inv, "sdb");
    assert_eq!(scsi.transport, Transport::Scsi);
    assert_eq!(scsi.vendor.as_deref(), Some("QEMU"));
    assert_eq!(scsi.model.as_deref(), Some("QEMU HARDDISK"));
    assert_eq!(scsi.serial.as_deref(), Some("DT-SCSI-0"));
    assert_eq!(scsi.firmware.as_deref(), Some("2.5+"));

    let usb = device(&inv, "sdc");
    assert_eq!(usb.transport, Transport::Usb);
    assert_eq!(usb.model.as_deref(), Some("QEMU HARDDISK"));
    // QEMU's usb-storage answers no VPD serial page: unknown, not invented.
    assert_eq!(usb.serial, None);
    assert_eq!(usb.nr_requests, Some(2));

    let vda = device(&inv, "vda");
    assert_eq!(vda.transport, Transport::Virtio);
    assert_eq!(vda.serial.as_deref(), Some("DT-VIRTIO-0"));
    assert_eq!(vda.model, None);
    let parts: Vec<_> = vda
        .partitions
        .iter()
        .map(|p| (p.name.as_str(), p.start_sector, p.size_bytes))
        .collect();
    assert_eq!(
        parts,
        [
            ("vda1", Some(2048), Some(Bytes(128 << 20))),
            ("vda2", Some(264192), Some(Bytes(126 << 20))),
        ]
    );
    assert_eq!(
        vda.usage_summary(),
        "vda1 mounted at /mnt/data; vda2 active swap"
    );

    for member in ["vdb", "vdc"] {
        let d = device(&inv, member);
        assert_eq!(d.holders.len(), 1);
        assert_eq!(d.holders[0].kind, HolderKind::Md);
        assert_eq!(d.usage_summary(), "held by md (md0)");
    }
    let md = device(&inv, "md0");
    assert_eq!(md.transport, Transport::Md);
    assert_eq!(md.size_bytes, Some(Bytes(255 << 20)));
    // md and dm print "none" without brackets: no scheduler can be chosen.
    assert_eq!(sched(md), (None, vec!["none"]));
    assert!(!md.is_in_use());

    let lvm_member = device(&inv, "vdd");
    assert_eq!(lvm_member.holders[0].kind, HolderKind::Lvm);
    assert_eq!(lvm_member.holders[0].label.as_deref(), Some("vg0-data"));
    assert_eq!(lvm_member.usage_summary(), "held by LVM (vg0-data, dm-0)");
    let dm = device(&inv, "dm-0");
    assert_eq!(dm.transport, Transport::Dm);
    assert_eq!(dm.dm_name.as_deref(), Some("vg0-data"));
    assert_eq!(dm.usage_summary(), "mounted at /mnt/lv");
}

#[test]
fn garbage_never_panics_and_leaves_fields_unknown() {
    let inv = inventory("garbage");
    assert!(
        !inv.usage_complete,
        "no /proc/swaps: usage cannot be complete"
    );
    assert_eq!(
        inv.notes,
        [
            "skipped /sys/block/gone: not a device directory (removed while listing?)",
            "skipped /sys/block/stray-file: not a device directory (removed while listing?)",
            "cannot read /proc/swaps (No such file or directory): in-use checks are incomplete",
        ]
    );
    let names: Vec<&str> = inv.devices.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["loop0", "sdz"]);

    let sdz = device(&inv, "sdz");
    assert_eq!(sdz.transport, Transport::Sata);
    assert_eq!(sdz.dev, None, "8:x is not a device number");
    assert_eq!(sdz.size_bytes, None, "banana is not a size");
    assert_eq!(sdz.removable, None, "2 is not a flag");
    assert_eq!(
        sdz.scheduler, None,
        "an unclosed bracket is not a scheduler list"
    );
    assert_eq!(sdz.logical_block_size, None);
    assert_eq!(sdz.physical_block_size, None);
    assert_eq!(sdz.nr_requests, None, "too large for u32");
    assert_eq!(sdz.kernel_write_cache, None);
    assert_eq!(sdz.serial, None, "a truncated VPD page has no serial");
    let model = sdz
        .model
        .as_deref()
        .expect("model text survives, neutralised");
    assert!(!model.chars().any(char::is_control), "{model:?}");
    assert!(model.ends_with("Evil Model"));
    assert_eq!(
        sdz.firmware.as_ref().map(String::len),
        Some(64 * 1024),
        "cut at 64 KiB"
    );
    assert_eq!(sdz.partitions.len(), 1);
    assert_eq!(sdz.partitions[0].size_bytes, None);
    assert_eq!(sdz.usage_summary(), "sdz1 mounted at /mnt/evil?name");

    let loop0 = device(&inv, "loop0");
    assert!(loop0.is_placeholder(), "empty backing_file");
    assert_eq!(
        loop0.scheduler, None,
        "a directory where a file belongs is unknown"
    );
}

/// Runs `f` on its own thread; fails (instead of hanging the suite) when it takes too long.
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what} hung (20 s): a read under --root blocked"))
}

/// Runs the binary with `--root tree`; kills it and fails when it does not finish in time.
fn run_within(tree: &Path, args: &[&str]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .arg("--root")
        .arg(tree)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run disktriage");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("disktriage --root {} {args:?} hung (20 s)", tree.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

#[test]
fn fifos_and_devices_in_the_tree_are_garbage_not_hangs() {
    // A copy of a real capture where some files are what sysfs and procfs never hold: FIFOs
    // (reading one waits forever for a writer) and character devices.
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    let cp = Command::new("cp")
        .arg("-a")
        .arg(fixture("host-loop-zram"))
        .arg(&tree)
        .status()
        .unwrap();
    assert!(cp.success());
    let fifo = |rel: &str| {
        let path = tree.join(rel);
        std::fs::remove_file(&path).unwrap();
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    };
    let device = |rel: &str, dev: &str| {
        let path = tree.join(rel);
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(dev, &path).unwrap();
    };
    fifo("sys/block/loop0/size");
    fifo("sys/block/loop2/queue/scheduler");
    fifo("proc/self/mountinfo");
    device("sys/block/loop1/queue/scheduler", "/dev/zero");
    // An empty "swap list" from /dev/null must not pass for "no swap".
    device("proc/swaps", "/dev/null");

    let root = tree.clone();
    let inv = within("the inventory", move || SysRoot::new(root).inventory()).unwrap();
    let loop0 = inv.find("loop0").unwrap();
    assert_eq!(loop0.size_bytes, None, "a FIFO is not a size");
    assert!(
        loop0
            .notes
            .iter()
            .any(|n| n.starts_with("size: not a regular file")),
        "{:?}",
        loop0.notes
    );
    assert_eq!(inv.find("loop1").unwrap().scheduler, None);
    assert_eq!(inv.find("loop2").unwrap().scheduler, None);
    assert!(
        !inv.usage_complete,
        "the mount and swap tables were not read"
    );
    for table in ["/proc/self/mountinfo", "/proc/swaps"] {
        assert!(
            inv.notes
                .iter()
                .any(|n| n.starts_with(&format!("cannot read {table} (not a regular file"))),
            "{table}: {:?}",
            inv.notes
        );
    }
    // What the admin sees: `?` where the size should be, the rest of the device still listed.
    let out = run_within(&tree, &["list"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("loop0 "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains(" ? "), "{row}");
    // Commands that read one attribute fail with the reason instead of waiting.
    let out = run_within(&tree, &["sched", "loop2"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn list_table_fits_80_columns_and_hides_placeholders() {
    let table = list_output("host-loop-zram", &[]);
    for line in table.lines() {
        assert!(line.chars().count() <= 80, "too wide: {line:?}");
    }
    insta::assert_snapshot!("list_host_loop_zram", table);
    assert!(!table.contains("loop2"));
    assert!(table.contains("6 unused loop/zram devices hidden (--all shows them)."));

    let all = list_output("host-loop-zram", &["--all"]);
    assert!(all.contains("loop7"));
    assert!(!all.contains("hidden"));

    let lab = list_output("qemu-lab", &[]);
    for line in lab.lines() {
        assert!(line.chars().count() <= 80, "too wide: {line:?}");
    }
    insta::assert_snapshot!("list_qemu_lab", lab);

    let garbage = list_output("garbage", &["--all"]);
    assert!(
        !garbage.contains('\u{1b}'),
        "no escape sequence reaches the terminal"
    );
    insta::assert_snapshot!("list_garbage", garbage);
}

#[test]
fn list_json_has_every_field_with_stable_keys() {
    let text = list_output("qemu-lab", &["--json"]);
    let doc: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(doc["schema"], 1);
    assert_eq!(doc["usage_complete"], true);
    let devices = doc["devices"].as_array().expect("devices array");
    // serde_json's map is ordered by key: compare the sorted key sets.
    let keys: Vec<&str> = devices[0]
        .as_object()
        .expect("device object")
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = vec![
        "name",
        "path",
        "dev",
        "size_bytes",
        "vendor",
        "model",
        "serial",
        "firmware",
        "transport",
        "rotational",
        "logical_block_size",
        "physical_block_size",
        "scheduler",
        "nr_requests",
        "read_ahead_kb",
        "max_sectors_kb",
        "kernel_write_cache",
        "removable",
        "read_only",
        "backing_file",
        "dm_name",
        "zoning",
        "partitions",
        "holders",
        "in_use",
        "notes",
        "in_use_summary",
        "placeholder",
    ];
    expected.sort_unstable();
    assert_eq!(keys, expected);
    let sda = devices.iter().find(|d| d["name"] == "sda").expect("sda");
    assert_eq!(sda["size_bytes"], 268435456u64);
    assert_eq!(sda["dev"]["major"], 8);
    assert_eq!(sda["transport"], "sata");
    assert_eq!(sda["kernel_write_cache"], "write back");
    assert_eq!(sda["scheduler"]["active"], "mq-deadline");
    let vda = devices.iter().find(|d| d["name"] == "vda").expect("vda");
    assert_eq!(vda["partitions"][1]["size_bytes"], 132120576u64);
    assert_eq!(vda["in_use"][0]["kind"], "mounted");
    assert_eq!(vda["in_use"][0]["mount_point"], "/mnt/data");
    assert_eq!(vda["in_use"][1]["kind"], "swap");
    let vdd = devices.iter().find(|d| d["name"] == "vdd").expect("vdd");
    assert_eq!(vdd["in_use"][0]["holder"]["kind"], "lvm");
    // QEMU's IDE disk states TRIM and rotates: the SMR hint; nothing zoned.
    assert_eq!(
        sda["zoning"],
        serde_json::json!({"kernel": null, "nr_zones": null, "zone_bytes": null,
                           "drive": null, "trim_rotating": true})
    );
    assert_eq!(vdd["zoning"]["trim_rotating"], false);
}
