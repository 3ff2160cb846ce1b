//! What a drive's state is, read only: views for the commands and the TUI built from
//! `DriveControl` calls: the write cache next to the kernel's flush policy, the SMART verdict,
//! the scheduler, and temperature polling during a run (`temperature`). Changes go through
//! `crate::changes` instead, which journals them first.

pub mod temperature;

use crate::model::{BlockDevice, CacheStatus, DriveLogs, SchedulerSet, SmartHealth};
use crate::smart::verdict;
use crate::sys::{DriveControl, DriveError};

/// The drive's cache (as the drive reports it) and the kernel's flush policy (freshly read).
/// A transport without cache control is a status ("not supported on loop"), not an error;
/// permission and I/O errors are errors.
pub fn cache_status(
    drives: &dyn DriveControl,
    dev: &BlockDevice,
) -> Result<CacheStatus, DriveError> {
    let drive = match drives.drive_cache(dev) {
        Ok(cache) => Ok(cache),
        Err(DriveError::NotSupported {
            transport, detail, ..
        }) => Err(format!(
            "not supported on {transport}{}",
            detail.map(|d| format!(" ({d})")).unwrap_or_default()
        )),
        Err(e) => return Err(e),
    };
    let kernel = drives.device(&dev.name)?.kernel_write_cache;
    Ok(CacheStatus::new(&dev.name, dev.transport, drive, kernel))
}

/// The SMART reading of a device, judged.
pub fn smart_health(
    drives: &dyn DriveControl,
    dev: &BlockDevice,
) -> Result<SmartHealth, DriveError> {
    let reading = drives.smart(dev)?;
    Ok(verdict::assess(&dev.name, dev.transport, reading))
}

/// The SMART verdict together with the drive's logs, judged with them
/// (`verdict::judge_logs`): what `disktriage smart` prints. The logs are read even when
/// SMART is not available (smartctl may have them); a failure to read them is returned
/// beside the health, not instead of it.
pub fn smart_report(
    drives: &dyn DriveControl,
    dev: &BlockDevice,
) -> Result<(SmartHealth, Result<DriveLogs, DriveError>), DriveError> {
    let mut health = smart_health(drives, dev)?;
    let logs = drives.drive_logs(dev);
    if let Ok(logs) = &logs {
        verdict::judge_logs(&mut health, logs);
    }
    Ok((health, logs))
}

/// The offered schedulers and the active one.
pub fn scheduler(drives: &dyn DriveControl, dev: &BlockDevice) -> Result<SchedulerSet, DriveError> {
    drives.scheduler(dev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CacheAgreement, KernelWriteCache, SmartReading, Transport, Verdict};
    use crate::sys::{FakeDevice, FakeDrives};

    #[test]
    fn cache_status_per_transport() {
        let drives = FakeDrives::new()
            .with(FakeDevice::new("sda", Transport::Sata))
            .with(FakeDevice::new("loop0", Transport::Loop).without_cache_control());
        let sda = drives.device("sda").unwrap();
        let s = cache_status(&drives, &sda).unwrap();
        assert_eq!(s.drive.as_ref().unwrap().enabled, Some(true));
        assert_eq!(s.kernel_flush_policy, Some(KernelWriteCache::WriteBack));
        assert_eq!(s.agreement, CacheAgreement::Agree);

        let loop0 = drives.device("loop0").unwrap();
        let s = cache_status(&drives, &loop0).unwrap();
        assert!(s.drive.is_none());
        assert_eq!(
            s.drive_unavailable.as_deref(),
            Some("not supported on loop")
        );
        assert!(s.disagreement.is_none());

        // A permission error is an error, not a status.
        drives.update("sda", |d| {
            d.cache = Err(DriveError::PermissionDenied {
                op: "open".into(),
                path: "/dev/sda".into(),
            })
        });
        assert!(cache_status(&drives, &sda).unwrap_err().is_permission());
    }

    #[test]
    fn nvme_cache_off_with_stale_kernel_view_is_reported() {
        let drives = FakeDrives::new().with(FakeDevice::new("nvme0n1", Transport::Nvme));
        let dev = drives.device("nvme0n1").unwrap();
        drives.set_drive_cache(&dev, false).unwrap();
        let s = cache_status(&drives, &dev).unwrap();
        assert_eq!(s.agreement, CacheAgreement::HarmlessMismatch);
        assert!(s.disagreement.unwrap().contains("harmless"));
    }

    #[test]
    fn smart_health_judges_the_reading() {
        let drives = FakeDrives::new().with(FakeDevice::new("vda", Transport::Virtio));
        let dev = drives.device("vda").unwrap();
        let h = smart_health(&drives, &dev).unwrap();
        assert_eq!(h.verdict, Verdict::Unavailable);
        assert_eq!(
            h.unavailable_reason.as_deref(),
            Some("SMART not available on virtio")
        );
        drives.update("vda", |d| {
            d.smart = Ok(SmartReading::Unavailable { reason: "x".into() })
        });
        assert_eq!(
            smart_health(&drives, &dev)
                .unwrap()
                .unavailable_reason
                .unwrap(),
            "x"
        );
    }
}
