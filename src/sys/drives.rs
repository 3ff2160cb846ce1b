//! The transports and `LinuxDrives`, the `DriveControl` implementation on a Linux system (or
//! a captured sysfs tree, for the sysfs parts).
//!
//! Each transport is one file under `drives/`: how the inventory recognises its devices in sysfs,
//! the identity attributes it reads, and its driver, which does all that talks to the drive.
//! `TRANSPORTS` is the one table of them, in the order the inventory asks. The scheduler is
//! sysfs and the same everywhere.
//!
//! | transport | file                 | recognised by                        | write cache                           | SMART                      |
//! |-----------|----------------------|--------------------------------------|---------------------------------------|----------------------------|
//! | nvme      | `nvme.rs`            | name `nvme*`                         | Identify VWC + Get/Set Features 0x06  | SMART/Health log           |
//! | loop, zram, dm, md, nbd, ram | `virtual_devices.rs` | name `loop*`, `zram*`, `dm-*`, `md*`, `nbd*`, `ram*` | not supported | none |
//! | mmc       | `mmc.rs`             | name `mmcblk*`                       | not supported                         | none                       |
//! | virtio    | `virtio.rs`          | name `vd*`                           | `/sys/block/vdX/cache_type`           | none                       |
//! | usb       | `usb.rs`             | a `usbN` in the sysfs path           | ATA via SAT, else SCSI caching page   | ATA via SAT, else smartctl |
//! | sata      | `sata.rs`            | an `ataN` in the path, vendor "ATA"  | ATA IDENTIFY + SET FEATURES (SG_IO)   | ATA SMART (SG_IO)          |
//! | scsi      | `scsi.rs`            | name `sd*`/`sr*`, a `target*` in the path | SCSI caching page (MODE SENSE/SELECT) | smartctl             |
//! | unknown   | `scsi.rs`            | anything else                        | not supported                         | smartctl                   |
//!
//! Logs and self-tests follow the SMART column: ATA SMART logs and EXECUTE OFF-LINE IMMEDIATE,
//! NVMe log pages 0x01/0x06 and Device Self-test, else what `smartctl -j -a` prints (no
//! self-test start). Commands are in `passthru`; the pages they return are decoded in
//! `crate::smart`.

mod inventory;
mod mmc;
mod nvme;
mod sata;
mod scsi;
mod usb;
mod virtio;
mod virtual_devices;

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use super::drive_control::{Applied, DriveControl, ResolvedDisk};
use super::error::DriveError;
use super::smartctl;
use super::sysfs::{AttrReader, SysRoot};
use crate::model::{
    BlockDevice, DriveCache, DriveLogs, KernelWriteCache, SchedulerSet, SelfTestKind,
    SelfTestStatus, SmartReading, Transport,
};
use crate::smart::PageError;
use crate::smart::smartctl::{parse_smartctl_json, parse_smartctl_logs};

const CACHE: &str = "drive write cache control";
const SELF_TEST: &str = "self-test";

/// Why disktriage does not start a self-test on a drive it reads through smartctl (SCSI, an
/// unknown transport), and what does.
fn self_test_only_through_smartctl(dev: &BlockDevice) -> DriveError {
    DriveError::not_supported_because(
        SELF_TEST,
        dev.transport,
        "disktriage starts self-tests on ATA and NVMe drives; `smartctl -t short` starts one \
         here",
    )
}
/// How long libata's asynchronous revalidation after SET FEATURES may take to update the
/// kernel's flush policy.
const KERNEL_FOLLOW_TIMEOUT: Duration = Duration::from_secs(3);

/// The Linux implementation of `DriveControl`.
#[derive(Debug, Clone)]
pub struct LinuxDrives {
    root: SysRoot,
}

/// One raw page for `disktriage debug pages` (fixture capture).
#[derive(Debug, Clone)]
pub struct RawPage {
    pub name: String,
    pub bytes: Result<Vec<u8>, String>,
}

impl RawPage {
    fn new(name: &str, bytes: Result<Vec<u8>, String>) -> Self {
        RawPage {
            name: name.to_string(),
            bytes,
        }
    }
}

/// One transport's driver: `DriveControl`'s methods and `LinuxDrives::raw_pages`. Each defaults
/// to "not supported" (no SMART, no sensor, no pages), so a driver spells out only what it has.
trait TransportDriver: Sync {
    fn drive_cache(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<DriveCache, DriveError> {
        let _ = drives;
        Err(DriveError::not_supported(CACHE, dev.transport))
    }

    fn set_drive_cache(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
        enabled: bool,
    ) -> Result<Applied, DriveError> {
        let _ = (drives, enabled);
        Err(DriveError::not_supported(CACHE, dev.transport))
    }

    fn smart(&self, drives: &LinuxDrives, dev: &BlockDevice) -> Result<SmartReading, DriveError> {
        let _ = drives;
        Ok(SmartReading::Unavailable {
            reason: format!("SMART not available on {}", dev.transport),
        })
    }

    fn temperature(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<Option<i64>, DriveError> {
        let _ = (drives, dev);
        Ok(None)
    }

    fn drive_logs(&self, drives: &LinuxDrives, dev: &BlockDevice) -> Result<DriveLogs, DriveError> {
        let _ = drives;
        Ok(DriveLogs::unavailable(
            &dev.name,
            dev.transport,
            &format!("no drive logs on {}", dev.transport),
        ))
    }

    fn self_test_status(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<SelfTestStatus, DriveError> {
        let _ = drives;
        Ok(SelfTestStatus::unsupported(format!(
            "self-tests not supported on {}",
            dev.transport
        )))
    }

    fn start_self_test(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
        kind: SelfTestKind,
    ) -> Result<(), DriveError> {
        let _ = (drives, kind);
        Err(DriveError::not_supported(SELF_TEST, dev.transport))
    }

    /// The raw pages `disktriage debug pages` captures, from the opened device node.
    fn raw_pages(&self, file: &File, path: &Path, dev: &BlockDevice) -> Vec<RawPage> {
        let _ = (file, path);
        vec![RawPage::new(
            "none",
            Err(format!("no raw pages on {}", dev.transport)),
        )]
    }
}

/// Transports whose drives have nothing disktriage can command (mmc, loop, zram, md, dm, nbd,
/// ram): every answer is the trait's default.
struct Unsupported;

impl TransportDriver for Unsupported {}

/// What the inventory knows of a device when it asks the rows which transport it is.
struct Seen<'a> {
    /// The kernel name (`sda`, `nvme0n1`).
    name: &'a str,
    /// The path below `sys/` with the `/sys/block` link resolved, e.g.
    /// `devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda`.
    sys_path: &'a str,
    /// `device/vendor`, which a SCSI device has ("ATA" for libata's disks).
    scsi_vendor: Option<&'a str>,
}

impl Seen<'_> {
    fn name_starts_with(&self, prefix: &str) -> bool {
        self.name.starts_with(prefix)
    }

    /// Whether a whole component of the sysfs path satisfies `pred`.
    fn path_has(&self, pred: impl Fn(&str) -> bool) -> bool {
        Path::new(self.sys_path).components().any(|c| match c {
            Component::Normal(s) => s.to_str().is_some_and(&pred),
            _ => false,
        })
    }

    /// Whether a whole path component is `prefix` and a number (`usb2`, `ata1`; not `data1`).
    fn path_has_numbered(&self, prefix: &str) -> bool {
        self.path_has(|s| {
            s.strip_prefix(prefix)
                .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        })
    }
}

/// One transport, written in its own file: how devices are recognised, the identity
/// attributes read, and the driver.
struct TransportRow {
    transport: Transport,
    /// Rows are asked in `TRANSPORTS` order: a row need not exclude what rows above took.
    recognises: fn(&Seen) -> bool,
    /// Reads the identity attributes; each read or missing one adds its note in this order.
    read_identity: fn(&Seen, &mut AttrReader, &mut BlockDevice),
    driver: &'static dyn TransportDriver,
}

/// The `read_identity` of a transport whose devices have no identity attributes.
fn no_identity(_: &Seen, _: &mut AttrReader, _: &mut BlockDevice) {}

/// Every transport, in the order the inventory asks them. Kernel names first (the surest
/// witness), then the sysfs path of SCSI disks: a USB bridge puts `usbN` in it, libata `ataN`,
/// and vendor "ATA" (the SAT layer's) is libata's fallback. The last row takes the rest.
/// Adding a transport is its file and one line here.
const TRANSPORTS: &[&TransportRow] = &[
    &nvme::ROW,
    &virtual_devices::LOOP,
    &virtual_devices::ZRAM,
    &virtual_devices::DM,
    &virtual_devices::MD,
    &mmc::ROW,
    &virtual_devices::NBD,
    &virtual_devices::RAM,
    &virtio::ROW,
    &usb::ROW,
    &sata::ROW,
    &scsi::ROW,
    &scsi::UNKNOWN_ROW,
];

/// The row of the device `seen`: the first that recognises it.
fn row_of(seen: &Seen) -> &'static TransportRow {
    TRANSPORTS
        .iter()
        .copied()
        .find(|row| (row.recognises)(seen))
        .unwrap_or(&scsi::UNKNOWN_ROW)
}

/// The transport of a device from its kernel name, resolved sysfs path (below `sys/`) and SCSI
/// vendor, as the inventory decides it.
pub fn classify_transport(name: &str, sys_path: &str, scsi_vendor: Option<&str>) -> Transport {
    row_of(&Seen {
        name,
        sys_path,
        scsi_vendor,
    })
    .transport
}

/// The driver of a transport (a unit test checks every `Transport` has a row, so `Unsupported`
/// is only a safe fallback).
fn driver_for(transport: Transport) -> &'static dyn TransportDriver {
    TRANSPORTS
        .iter()
        .find(|row| row.transport == transport)
        .map_or(&Unsupported, |row| row.driver)
}

impl LinuxDrives {
    pub fn new(root: SysRoot) -> Self {
        LinuxDrives { root }
    }

    pub fn host() -> Self {
        LinuxDrives::new(SysRoot::host())
    }

    /// The device node below the root (`/dev/sda` on a live system).
    fn node(&self, dev: &BlockDevice) -> PathBuf {
        let rel = dev.path.strip_prefix("/").unwrap_or(&dev.path);
        self.root.root().join(rel)
    }

    /// Opens the node read-only and non-blocking, as hdparm does: SG_IO and the NVMe admin
    /// ioctl need no write access, only root's capabilities.
    fn open(&self, dev: &BlockDevice) -> Result<(File, PathBuf), DriveError> {
        let path = self.node(dev);
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| DriveError::from_io("open", &path, &e))?;
        // The node must be the device read: a disk swapped in under its name is refused before
        // any command. A captured tree's nodes are stand-ins, so only a live one is checked.
        if self.root.root() == Path::new("/") && dev.dev.is_some() {
            let chosen = dev.chosen();
            match super::direct::refuse_unless_chosen(&file, &chosen) {
                Ok(Ok(())) => {}
                Ok(Err(why)) => return Err(DriveError::NotChosen(why)),
                Err(e) => return Err(DriveError::from_io("fstat", &path, &e)),
            }
        }
        Ok((file, path))
    }

    fn attr_path(&self, dev: &BlockDevice, rel: &str) -> PathBuf {
        self.root.block_dir(&dev.name).join(rel)
    }

    fn read_attr(&self, dev: &BlockDevice, rel: &str) -> Result<String, DriveError> {
        let path = self.attr_path(dev, rel);
        super::sysfs::read_attr_text(&path)
            .map(|s| s.trim().to_string())
            .map_err(|e| DriveError::from_io("read", &path, &e))
    }

    /// Writes attribute `rel` of `dev` through its sysfs directory, once checked to be the
    /// device read (`SysRoot::open_chosen_dir`).
    fn write_attr(&self, dev: &BlockDevice, rel: &str, value: &str) -> Result<(), DriveError> {
        let dir = self.root.open_chosen_dir(&dev.chosen())?;
        dir.write(rel, value)
            .map_err(|e| DriveError::from_io("write", &dir.path_of(rel), &e))
    }

    /// Asks `sd` to re-read the device: after a raw MODE SELECT its `cache_type` and flush
    /// policy stay stale until then.
    fn rescan(&self, dev: &BlockDevice, applied: &mut Applied) {
        match self.write_attr(dev, "device/rescan", "1") {
            Ok(()) => applied
                .notes
                .push("the kernel's view was refreshed with a SCSI rescan".into()),
            Err(e) => applied.notes.push(format!(
                "could not refresh the kernel's view, its flush policy may be stale: {e}"
            )),
        }
    }

    /// Waits until the kernel's flush policy follows the drive (libata revalidates the
    /// device asynchronously after SET FEATURES).
    fn wait_for_kernel_view(&self, dev: &BlockDevice, enabled: bool, applied: &mut Applied) {
        let want = KernelWriteCache::from_enabled(enabled);
        let start = Instant::now();
        while start.elapsed() < KERNEL_FOLLOW_TIMEOUT {
            let now = self
                .read_attr(dev, "queue/write_cache")
                .ok()
                .and_then(|s| s.parse::<KernelWriteCache>().ok());
            if now == Some(want) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        applied.notes.push(format!(
            "the kernel's flush policy did not follow within {} s",
            KERNEL_FOLLOW_TIMEOUT.as_secs()
        ));
    }

    /// SMART through `smartctl -j -a`, for the transports disktriage does not read natively.
    fn smartctl_reading(&self, dev: &BlockDevice) -> Result<SmartReading, DriveError> {
        let node = self.node(dev);
        match smartctl::run(&node)? {
            None => Ok(SmartReading::Unavailable {
                reason: format!(
                    "SMART not available on {} (disktriage reads SMART natively from ATA and \
                     NVMe drives only; smartctl, which could try, is not installed)",
                    dev.transport
                ),
            }),
            Some((json, code)) => match parse_smartctl_json(&json, code) {
                Ok(report) => Ok(SmartReading::Smartctl(Box::new(report))),
                Err(e) => Ok(SmartReading::Unavailable {
                    reason: format!(
                        "SMART not available on {}: smartctl's answer was unreadable ({e})",
                        dev.transport
                    ),
                }),
            },
        }
    }

    /// The logs `smartctl -j -a` prints, for transports not read natively.
    fn smartctl_logs(&self, dev: &BlockDevice) -> Result<DriveLogs, DriveError> {
        let node = self.node(dev);
        let unavailable = |why: String| Ok(DriveLogs::unavailable(&dev.name, dev.transport, &why));
        match smartctl::run(&node)? {
            None => unavailable(format!(
                "no drive logs on {}: disktriage reads them natively from ATA and NVMe drives \
                 only, and smartctl, which could, is not installed",
                dev.transport
            )),
            Some((json, _)) => match parse_smartctl_logs(&json, &dev.name, dev.transport) {
                Ok(logs) => Ok(logs),
                Err(e) => unavailable(format!(
                    "no drive logs on {}: smartctl's answer was unreadable ({e})",
                    dev.transport
                )),
            },
        }
    }

    /// Raw pages for fixture capture (`disktriage debug pages`), named by what they are.
    pub fn raw_pages(&self, dev: &BlockDevice) -> Vec<RawPage> {
        match self.open(dev) {
            Ok((file, path)) => driver_for(dev.transport).raw_pages(&file, &path, dev),
            Err(e) => vec![RawPage::new("open", Err(e.to_string()))],
        }
    }
}

/// A device's raw pages behind SG_IO: the ATA pages (ATA PASS-THROUGH), then the SCSI caching
/// page, whichever it answers.
fn sg_raw_pages(file: &File, path: &Path) -> Vec<RawPage> {
    let mut pages = sata::raw_pages(file, path);
    pages.extend(scsi::raw_pages(file, path));
    pages
}

fn bad_answer(op: &str, path: &Path, e: &PageError) -> DriveError {
    DriveError::BadAnswer {
        op: op.to_string(),
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// A scheduler name as the kernel spells them; anything else is refused before sysfs.
fn valid_scheduler_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl DriveControl for LinuxDrives {
    fn resolve(&self, arg: &str) -> Result<ResolvedDisk, DriveError> {
        let (disk, partition) = self.root.resolve_disk(arg)?;
        Ok(ResolvedDisk {
            device: self.root.read_device(&disk),
            partition,
        })
    }

    fn device(&self, name: &str) -> Result<BlockDevice, DriveError> {
        if !crate::model::is_kernel_name(name) {
            return Err(DriveError::Invalid(format!(
                "{:?} is not a kernel device name",
                crate::model::text::neutralize_controls(name)
            )));
        }
        if !self.root.block_dir(name).is_dir() {
            return Err(DriveError::NoDevice(format!(
                "no block device {name:?} (removed?)"
            )));
        }
        Ok(self.root.read_device(name))
    }

    fn identity(&self, dev: &BlockDevice) -> crate::model::DeviceIdentity {
        self.root.device_identity(&dev.name)
    }

    fn drive_cache(&self, dev: &BlockDevice) -> Result<DriveCache, DriveError> {
        driver_for(dev.transport).drive_cache(self, dev)
    }

    fn set_drive_cache(&self, dev: &BlockDevice, enabled: bool) -> Result<Applied, DriveError> {
        driver_for(dev.transport).set_drive_cache(self, dev, enabled)
    }

    fn scheduler(&self, dev: &BlockDevice) -> Result<SchedulerSet, DriveError> {
        let path = self.attr_path(dev, "queue/scheduler");
        match super::sysfs::read_attr_text(&path) {
            Ok(text) => text.parse().map_err(|e| DriveError::BadAnswer {
                op: "read".into(),
                path,
                detail: format!("{e}"),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(DriveError::not_supported_because(
                    "I/O scheduler",
                    dev.transport,
                    "a bio-based device: no queue/scheduler",
                ))
            }
            Err(e) => Err(DriveError::from_io("read", &path, &e)),
        }
    }

    fn set_scheduler(&self, dev: &BlockDevice, name: &str) -> Result<Applied, DriveError> {
        let offered = self.scheduler(dev)?;
        let available = || offered.available.join(", ");
        if offered.is_empty() {
            return Err(DriveError::not_supported_because(
                "I/O scheduler",
                dev.transport,
                "the kernel offers no scheduler for this queue",
            ));
        }
        let unknown = || {
            DriveError::Invalid(format!(
                "unknown I/O scheduler {:?} for {}; available: {}",
                crate::model::text::neutralize_controls(name),
                dev.name,
                available()
            ))
        };
        if !valid_scheduler_name(name) {
            return Err(unknown());
        }
        // An unlisted name may work: the kernel loads `<name>-iosched` on demand (else EINVAL).
        // Written through the directory checked to be the device read.
        let dir = self.root.open_chosen_dir(&dev.chosen())?;
        match dir.write("queue/scheduler", name) {
            Ok(()) => Ok(Applied::default()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Err(unknown()),
            Err(e) => Err(DriveError::from_io(
                "write",
                &dir.path_of("queue/scheduler"),
                &e,
            )),
        }
    }

    fn smart(&self, dev: &BlockDevice) -> Result<SmartReading, DriveError> {
        driver_for(dev.transport).smart(self, dev)
    }

    fn temperature(&self, dev: &BlockDevice) -> Result<Option<i64>, DriveError> {
        driver_for(dev.transport).temperature(self, dev)
    }

    fn drive_logs(&self, dev: &BlockDevice) -> Result<DriveLogs, DriveError> {
        driver_for(dev.transport).drive_logs(self, dev)
    }

    fn self_test_status(&self, dev: &BlockDevice) -> Result<SelfTestStatus, DriveError> {
        driver_for(dev.transport).self_test_status(self, dev)
    }

    fn start_self_test(&self, dev: &BlockDevice, kind: SelfTestKind) -> Result<(), DriveError> {
        driver_for(dev.transport).start_self_test(self, dev, kind)
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// A root with `/sys/block/<name>/` and a regular file standing in for `/dev/<name>`.
    fn root_with(
        name: &str,
        transport: Transport,
    ) -> (tempfile::TempDir, LinuxDrives, BlockDevice) {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("sys/block").join(name)).unwrap();
        fs::create_dir_all(dir.path().join("dev")).unwrap();
        fs::write(dir.path().join("dev").join(name), b"").unwrap();
        let drives = LinuxDrives::new(SysRoot::new(dir.path()));
        let mut dev = BlockDevice::unknown(name, PathBuf::from("/dev").join(name));
        dev.transport = transport;
        (dir, drives, dev)
    }

    #[test]
    fn a_disk_of_unknown_transport_gets_no_cache_command_but_a_self_test_hint() {
        // The node is a regular file here: a cache command would fail with EIO, not this refusal.
        let (_dir, drives, dev) = root_with("xvda", Transport::Unknown);
        assert_eq!(
            drives.drive_cache(&dev).unwrap_err().to_string(),
            "drive write cache control not supported on unknown"
        );
        assert_eq!(
            drives.set_drive_cache(&dev, true).unwrap_err().to_string(),
            "drive write cache control not supported on unknown"
        );
        let refusal = drives
            .start_self_test(&dev, SelfTestKind::Short)
            .unwrap_err()
            .to_string();
        assert!(refusal.contains("smartctl"), "{refusal}");
    }

    #[test]
    fn a_transport_without_drive_commands_says_so_for_each() {
        let (_dir, drives, dev) = root_with("loop0", Transport::Loop);
        assert_eq!(
            drives.drive_cache(&dev).unwrap_err().to_string(),
            "drive write cache control not supported on loop"
        );
        assert_eq!(
            drives.set_drive_cache(&dev, false).unwrap_err().to_string(),
            "drive write cache control not supported on loop"
        );
        assert_eq!(
            drives.smart(&dev).unwrap(),
            SmartReading::Unavailable {
                reason: "SMART not available on loop".into()
            }
        );
        assert_eq!(drives.temperature(&dev).unwrap(), None);
        let pages = drives.raw_pages(&dev);
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0].name, "none");
        assert_eq!(pages[0].bytes, Err("no raw pages on loop".into()));
    }

    #[test]
    fn raw_pages_of_a_missing_node_name_the_open() {
        let (dir, drives, dev) = root_with("loop0", Transport::Loop);
        fs::remove_file(dir.path().join("dev/loop0")).unwrap();
        let pages = drives.raw_pages(&dev);
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0].name, "open");
        assert!(pages[0].bytes.is_err());
    }

    #[test]
    fn virtio_cache_is_the_cache_type_attribute() {
        let (dir, drives, dev) = root_with("vda", Transport::Virtio);
        let attr = dir.path().join("sys/block/vda/cache_type");
        assert_eq!(
            drives.drive_cache(&dev).unwrap_err().to_string(),
            "drive write cache control not supported on virtio (no cache_type attribute)"
        );

        fs::write(&attr, "write back\n").unwrap();
        let cache = drives.drive_cache(&dev).unwrap();
        assert_eq!((cache.enabled, cache.changeable), (Some(true), true));
        drives.set_drive_cache(&dev, false).unwrap();
        assert_eq!(fs::read_to_string(&attr).unwrap(), "write through");
        assert_eq!(drives.drive_cache(&dev).unwrap().enabled, Some(false));

        // Read-only: the device did not offer VIRTIO_BLK_F_CONFIG_WCE.
        fs::set_permissions(&attr, fs::Permissions::from_mode(0o444)).unwrap();
        let cache = drives.drive_cache(&dev).unwrap();
        assert!(!cache.changeable);
        let e = drives.set_drive_cache(&dev, true).unwrap_err();
        assert!(e.is_not_supported(), "{e:?}");
        assert!(e.to_string().contains("VIRTIO_BLK_F_CONFIG_WCE"), "{e}");
        assert_eq!(fs::read_to_string(&attr).unwrap(), "write through");

        fs::write(&attr, "write around").unwrap();
        assert!(matches!(
            drives.drive_cache(&dev),
            Err(DriveError::BadAnswer { .. })
        ));
        assert_eq!(
            drives.smart(&dev).unwrap(),
            SmartReading::Unavailable {
                reason: "SMART not available on virtio".into()
            }
        );
        assert_eq!(drives.temperature(&dev).unwrap(), None);
    }

    /// Every `Transport` is a row, once: without one it is unrecognisable and has no driver.
    #[test]
    fn every_transport_has_one_row() {
        // A new variant does not compile here until it is listed.
        fn listed(t: Transport) -> Transport {
            match t {
                Transport::Nvme
                | Transport::Sata
                | Transport::Scsi
                | Transport::Usb
                | Transport::Virtio
                | Transport::Mmc
                | Transport::Loop
                | Transport::Zram
                | Transport::Md
                | Transport::Dm
                | Transport::Nbd
                | Transport::Ram
                | Transport::Unknown => t,
            }
        }
        let all = [
            Transport::Nvme,
            Transport::Sata,
            Transport::Scsi,
            Transport::Usb,
            Transport::Virtio,
            Transport::Mmc,
            Transport::Loop,
            Transport::Zram,
            Transport::Md,
            Transport::Dm,
            Transport::Nbd,
            Transport::Ram,
            Transport::Unknown,
        ];
        for t in all.map(listed) {
            let rows = TRANSPORTS.iter().filter(|r| r.transport == t).count();
            assert_eq!(rows, 1, "{t}: {rows} rows");
        }
        assert_eq!(TRANSPORTS.len(), all.len());
        // The last row takes what no other recognised.
        let last = TRANSPORTS.last().unwrap();
        assert_eq!(last.transport, Transport::Unknown);
        assert!((last.recognises)(&Seen {
            name: "",
            sys_path: "",
            scsi_vendor: None
        }));
    }

    #[test]
    fn transports_from_names_and_paths() {
        let t = classify_transport;
        assert_eq!(
            t(
                "nvme0n1",
                "devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1",
                None
            ),
            Transport::Nvme
        );
        assert_eq!(
            t(
                "sda",
                "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda",
                Some("ATA")
            ),
            Transport::Sata
        );
        assert_eq!(
            t(
                "sdb",
                "devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdb",
                Some("ATA")
            ),
            Transport::Usb
        );
        assert_eq!(
            t(
                "sdc",
                "devices/pci0000:00/0000:00:05.0/virtio2/host2/target2:0:0/2:0:0:0/block/sdc",
                Some("QEMU")
            ),
            Transport::Scsi
        );
        assert_eq!(t("sdd", "", Some("ATA")), Transport::Sata);
        assert_eq!(
            t(
                "vda",
                "devices/pci0000:00/0000:00:02.0/virtio1/block/vda",
                None
            ),
            Transport::Virtio
        );
        assert_eq!(
            t("loop0", "devices/virtual/block/loop0", None),
            Transport::Loop
        );
        assert_eq!(t("zram0", "", None), Transport::Zram);
        assert_eq!(t("md127", "", None), Transport::Md);
        assert_eq!(t("dm-3", "", None), Transport::Dm);
        assert_eq!(t("mmcblk0", "", None), Transport::Mmc);
        assert_eq!(t("xvda", "", None), Transport::Unknown);
        // "ata" must be a whole numbered component, not a substring of something else.
        assert_eq!(
            t("sde", "devices/data1/target1:0:0/block/sde", Some("IBM")),
            Transport::Scsi
        );
    }
}
