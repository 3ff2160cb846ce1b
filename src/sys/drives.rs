//! `LinuxDrives`: the `DriveControl` implementation on a Linux system (or a captured sysfs tree,
//! for the sysfs parts). The scheduler is sysfs and the same everywhere; everything that talks
//! to the drive itself is done by one driver per transport, chosen once in `driver_for`:
//!
//! | transport | driver       | write cache                           | SMART                      |
//! |-----------|--------------|---------------------------------------|----------------------------|
//! | sata      | `sata.rs`    | ATA IDENTIFY + SET FEATURES (SG_IO)   | ATA SMART (SG_IO)          |
//! | usb       | `usb.rs`     | ATA via SAT, else SCSI caching page   | ATA via SAT, else smartctl |
//! | scsi      | `scsi.rs`    | SCSI caching page (MODE SENSE/SELECT) | smartctl                   |
//! | nvme      | `nvme.rs`    | Identify VWC + Get/Set Features 0x06  | SMART/Health log           |
//! | virtio    | `virtio.rs`  | `/sys/block/vdX/cache_type`           | none                       |
//! | unknown   | `scsi.rs`    | not supported                         | smartctl                   |
//! | others    | `Unsupported`| not supported                         | none                       |
//!
//! The drive's logs and self-tests follow the SMART column: ATA SMART logs and SMART
//! EXECUTE OFF-LINE IMMEDIATE, NVMe log pages 0x01/0x06 and Device Self-test, the logs
//! `smartctl -j -a` prints (no self-test start) elsewhere.
//!
//! The commands the drivers send are in `crate::sys::passthru`; the pages they get back are
//! decoded by the pure code in `crate::smart`.

mod nvme;
mod sata;
mod scsi;
mod usb;
mod virtio;

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::error::DriveError;
use super::platform::{Applied, DriveControl, ResolvedDisk};
use super::smartctl;
use super::sysfs::SysRoot;
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

/// What disktriage does with the drives of one transport. Every method defaults to what a
/// transport without that feature answers ("drive write cache control not supported on
/// loop", SMART unavailable, no sensor, no raw pages), so a driver spells out only what its
/// transport has. `LinuxDrives` hands each call to the driver `driver_for` picks.
trait TransportDriver: Sync {
    /// The drive's own write cache, as the drive reports it.
    fn drive_cache(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<DriveCache, DriveError> {
        let _ = drives;
        Err(DriveError::not_supported(CACHE, dev.transport))
    }

    /// Switches the drive's write cache.
    fn set_drive_cache(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
        enabled: bool,
    ) -> Result<Applied, DriveError> {
        let _ = (drives, enabled);
        Err(DriveError::not_supported(CACHE, dev.transport))
    }

    /// SMART / health data, or why there is none.
    fn smart(&self, drives: &LinuxDrives, dev: &BlockDevice) -> Result<SmartReading, DriveError> {
        let _ = drives;
        Ok(SmartReading::Unavailable {
            reason: format!("SMART not available on {}", dev.transport),
        })
    }

    /// The temperature in degrees Celsius; `Ok(None)` without a sensor disktriage reads.
    fn temperature(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<Option<i64>, DriveError> {
        let _ = (drives, dev);
        Ok(None)
    }

    /// The drive's error and self-test logs and its self-test state.
    fn drive_logs(&self, drives: &LinuxDrives, dev: &BlockDevice) -> Result<DriveLogs, DriveError> {
        let _ = drives;
        Ok(DriveLogs::unavailable(
            &dev.name,
            dev.transport,
            &format!("no drive logs on {}", dev.transport),
        ))
    }

    /// The self-test state alone (polled while a self-test runs).
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

    /// Starts a short or long self-test, or aborts the running one.
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

/// The one place that maps a transport to its driver. The match is exhaustive: a new
/// `Transport` does not compile until it is given a driver here.
fn driver_for(transport: Transport) -> &'static dyn TransportDriver {
    match transport {
        Transport::Sata => &sata::Sata,
        Transport::Usb => &usb::Usb,
        Transport::Scsi => &scsi::SCSI,
        Transport::Nvme => &nvme::Nvme,
        Transport::Virtio => &virtio::Virtio,
        Transport::Unknown => &scsi::UNKNOWN,
        Transport::Mmc
        | Transport::Loop
        | Transport::Zram
        | Transport::Md
        | Transport::Dm
        | Transport::Nbd
        | Transport::Ram => &Unsupported,
    }
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
    /// ioctl need no write access (root's CAP_SYS_RAWIO / CAP_SYS_ADMIN decide).
    fn open(&self, dev: &BlockDevice) -> Result<(File, PathBuf), DriveError> {
        let path = self.node(dev);
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| DriveError::from_io("open", &path, &e))?;
        // The node opened must be the device read (a disk swapped under its name since, a
        // loop device attached to another file, is refused before any command reaches it). A
        // captured tree's nodes are stand-ins: only a live one is checked.
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

    /// Writes attribute `rel` of `dev` through its sysfs directory, once that directory is
    /// found to be the device read (`SysRoot::open_chosen_dir`).
    fn write_attr(&self, dev: &BlockDevice, rel: &str, value: &str) -> Result<(), DriveError> {
        let dir = self.root.open_chosen_dir(&dev.chosen())?;
        dir.write(rel, value)
            .map_err(|e| DriveError::from_io("write", &dir.path_of(rel), &e))
    }

    /// Asks `sd` to re-read the device (caching page included): after a raw MODE SELECT it
    /// keeps a stale `cache_type` and flush policy until then.
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

    /// The logs `smartctl -j -a` prints, for the transports disktriage does not read
    /// natively.
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

/// The raw pages of a device behind SG_IO: the ATA pages (through ATA PASS-THROUGH) and then
/// the SCSI caching page, whichever the device answers.
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

/// A scheduler name as the kernel spells them; anything else is refused before it reaches
/// sysfs.
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
        // A name not listed may still work: the kernel loads `<name>-iosched` on demand. It
        // answers EINVAL when there is no such scheduler.
        // Written through the directory found to be the device read: a device attached under
        // its name since is refused, nothing written.
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
        // The device node is a regular file here: a cache command sent to it would fail with
        // an I/O error, not this refusal.
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
}
