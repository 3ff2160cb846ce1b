//! `DriveControl`: every device command disktriage issues, as one trait in plain data
//! (`crate::model`): callers see states, readings and typed errors (`DriveError`), never ioctls,
//! sense bytes or sysfs paths. Linux: `drives::LinuxDrives`; tests and screen snapshots:
//! `fake::FakeDrives`, which touches nothing.

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

/// What applying a change had to say beyond success ("the kernel's view was refreshed with a
/// SCSI rescan").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Applied {
    pub notes: Vec<String>,
}

/// The device commands behind cache, scheduler, SMART, temperature, drive logs and self-tests.
/// Usable from several threads (the temperature poller has its own); every read goes to the
/// device, nothing is cached.
pub trait DriveControl: Send + Sync {
    /// Resolves `sda`, `/dev/sda` or a partition (`sda1`, resolved to `sda`).
    fn resolve(&self, arg: &str) -> Result<ResolvedDisk, DriveError>;

    /// A fresh sysfs read of one whole disk. A name that is not a plain kernel name
    /// (`crate::model::is_kernel_name`) is `DriveError::Invalid`: it could leave `/sys/block`.
    fn device(&self, name: &str) -> Result<BlockDevice, DriveError>;

    /// `device(name)`, refused (`DriveError::NotChosen`, nothing done) unless still the device
    /// the admin chose. Actions then check what they open against this reading.
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

    /// What tells this disk from a later one under its name (`diskseq`, a loop device's
    /// image), journaled and compared on restore. Empty by default.
    fn identity(&self, dev: &BlockDevice) -> DeviceIdentity {
        let _ = dev;
        DeviceIdentity::default()
    }

    /// The drive's own volatile write cache, as the drive reports it; `NotSupported` on
    /// transports without a cache control.
    fn drive_cache(&self, dev: &BlockDevice) -> Result<DriveCache, DriveError>;

    /// Switches the drive's write cache. Callers read it back with `drive_cache`.
    fn set_drive_cache(&self, dev: &BlockDevice, enabled: bool) -> Result<Applied, DriveError>;

    /// The I/O schedulers offered and the active one.
    fn scheduler(&self, dev: &BlockDevice) -> Result<SchedulerSet, DriveError>;

    /// Activates a scheduler; an unknown name is `DriveError::Invalid` listing the offered ones.
    fn set_scheduler(&self, dev: &BlockDevice, name: &str) -> Result<Applied, DriveError>;

    /// SMART / health data: native for ATA and NVMe, `smartctl` for others when installed,
    /// `SmartReading::Unavailable` with the reason otherwise.
    fn smart(&self, dev: &BlockDevice) -> Result<SmartReading, DriveError>;

    /// The temperature in degrees Celsius, as cheaply as the transport allows (one SMART page
    /// or health log). `Ok(None)` without a sensor disktriage can read.
    fn temperature(&self, dev: &BlockDevice) -> Result<Option<i64>, DriveError>;

    /// Error log, self-test log and state: native for ATA and NVMe, else `smartctl`. A log the
    /// drive does not keep is `LogRead::NotSupported`, not an error.
    fn drive_logs(&self, dev: &BlockDevice) -> Result<DriveLogs, DriveError>;

    /// The self-test state alone, as cheaply as possible: what is polled during a self-test.
    fn self_test_status(&self, dev: &BlockDevice) -> Result<SelfTestStatus, DriveError>;

    /// Starts a short or long self-test in the background (I/O goes on), or aborts the running
    /// one. `NotSupported` where the drive or transport has none.
    fn start_self_test(&self, dev: &BlockDevice, kind: SelfTestKind) -> Result<(), DriveError>;
}
