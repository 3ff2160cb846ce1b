//! `DriveControl`: every device command disktriage issues, as one small trait. The Linux
//! implementation is `crate::sys::drives::LinuxDrives`; `crate::sys::fake::FakeDrives` is a
//! hand-written stand-in that touches nothing, for tests and for snapshot-testing screens.
//!
//! The trait speaks in plain data (`crate::model`): callers never see ioctls, sense bytes or
//! sysfs paths, only states, readings and typed errors (`DriveError`) they can branch on.

use crate::model::{
    BlockDevice, DeviceIdentity, DriveCache, DriveLogs, SchedulerSet, SelfTestKind, SelfTestStatus,
    SmartReading,
};

use super::error::DriveError;

/// A device argument resolved to its whole disk (not a test's target, which is
/// `crate::bench::results::outcome::TargetInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedDisk {
    /// The whole disk, freshly read from sysfs.
    pub device: BlockDevice,
    /// The partition the admin named, when it was one (`sda1` for `sda`).
    pub partition: Option<String>,
}

/// What applying a change had to say beyond success (e.g. "the kernel's view was refreshed
/// with a SCSI rescan").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Applied {
    pub notes: Vec<String>,
}

/// The device commands behind cache, scheduler, SMART, temperature, the drive's logs and its
/// self-tests.
///
/// Implementations must be usable from several threads (the temperature poller runs on its
/// own). Every method that reads re-reads from the device: nothing is cached.
pub trait DriveControl: Send + Sync {
    /// Resolves `sda`, `/dev/sda` or a partition (`sda1`, resolved to `sda`).
    fn resolve(&self, arg: &str) -> Result<ResolvedDisk, DriveError>;

    /// A fresh sysfs read of one whole disk (kernel's flush policy, scheduler, ...). A name
    /// that is not a plain kernel name (`crate::model::is_kernel_name`) is
    /// `DriveError::Invalid`: it could point outside `/sys/block`.
    fn device(&self, name: &str) -> Result<BlockDevice, DriveError>;

    /// `device(name)`, refused (`DriveError::NotChosen`, nothing done) unless it is still the
    /// device `chosen` (the one the admin chose on the screen). The actions that follow check
    /// the object they open against this reading (`LinuxDrives`), so what they act on is the
    /// device chosen.
    fn chosen_device(
        &self,
        name: &str,
        chosen: Option<&crate::model::ChosenDevice>,
    ) -> Result<BlockDevice, DriveError> {
        let found = self.device(name);
        let Some(chosen) = chosen else { return found };
        let now = match &found {
            Ok(dev) => Some(dev.chosen()),
            Err(DriveError::NoDevice(_)) => None,
            Err(_) => return found,
        };
        match chosen.refusal(now.as_ref()) {
            Some(why) => Err(DriveError::NotChosen(why)),
            None => found,
        }
    }

    /// What tells this disk from another that later gets its name (`diskseq`, a loop
    /// device's image, ...), recorded with every journal entry and compared on restore.
    /// Unknown (empty) by default.
    fn identity(&self, dev: &BlockDevice) -> DeviceIdentity {
        let _ = dev;
        DeviceIdentity::default()
    }

    /// The drive's own volatile write cache, as the drive reports it.
    /// `DriveError::NotSupported` on transports without a cache control.
    fn drive_cache(&self, dev: &BlockDevice) -> Result<DriveCache, DriveError>;

    /// Switches the drive's write cache. Callers read it back with `drive_cache`.
    fn set_drive_cache(&self, dev: &BlockDevice, enabled: bool) -> Result<Applied, DriveError>;

    /// The I/O schedulers offered and the active one.
    fn scheduler(&self, dev: &BlockDevice) -> Result<SchedulerSet, DriveError>;

    /// Activates a scheduler. An unknown name is `DriveError::Invalid` listing the offered
    /// ones.
    fn set_scheduler(&self, dev: &BlockDevice, name: &str) -> Result<Applied, DriveError>;

    /// SMART / health data: native for ATA and NVMe, `smartctl` for others when installed,
    /// `SmartReading::Unavailable` with the reason otherwise.
    fn smart(&self, dev: &BlockDevice) -> Result<SmartReading, DriveError>;

    /// The current temperature in degrees Celsius, read as cheaply as the transport allows
    /// (one 512-byte SMART page or health log). `Ok(None)` when the device has no sensor
    /// disktriage can read.
    fn temperature(&self, dev: &BlockDevice) -> Result<Option<i64>, DriveError>;

    /// What the drive logged: its error log, its self-test log and the state of its
    /// self-test, natively for ATA and NVMe, through `smartctl` for others when installed.
    /// A log the drive does not keep is `LogRead::NotSupported` with the reason, not an
    /// error.
    fn drive_logs(&self, dev: &BlockDevice) -> Result<DriveLogs, DriveError>;

    /// The self-test state alone, as cheaply as the transport allows (one SMART READ DATA,
    /// one Device Self-test log): what is polled while a self-test runs.
    fn self_test_status(&self, dev: &BlockDevice) -> Result<SelfTestStatus, DriveError>;

    /// Starts a short or long self-test in the background (the drive keeps serving I/O), or
    /// aborts the running one. `DriveError::NotSupported` where the drive or transport has
    /// none.
    fn start_self_test(&self, dev: &BlockDevice, kind: SelfTestKind) -> Result<(), DriveError>;
}
