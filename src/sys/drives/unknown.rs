//! Disks whose transport sysfs does not tell. disktriage sends them no cache command; SMART
//! comes from `smartctl` when installed (it probes the device itself), and `debug pages`
//! tries the SG_IO pages so a capture shows what the device answers.

use std::fs::File;
use std::path::Path;

use super::{LinuxDrives, RawPage, TransportDriver, sg_raw_pages};
use crate::model::{BlockDevice, SmartReading};
use crate::sys::error::DriveError;

/// The driver for an unknown transport.
pub(super) struct Unknown;

impl TransportDriver for Unknown {
    fn smart(&self, drives: &LinuxDrives, dev: &BlockDevice) -> Result<SmartReading, DriveError> {
        drives.smartctl_reading(dev)
    }

    fn drive_logs(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<crate::model::DriveLogs, DriveError> {
        drives.smartctl_logs(dev)
    }

    fn self_test_status(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<crate::model::SelfTestStatus, DriveError> {
        Ok(drives.smartctl_logs(dev)?.self_test)
    }

    fn start_self_test(
        &self,
        _drives: &LinuxDrives,
        dev: &BlockDevice,
        _kind: crate::model::SelfTestKind,
    ) -> Result<(), DriveError> {
        Err(super::self_test_only_through_smartctl(dev))
    }

    fn raw_pages(&self, file: &File, path: &Path, _dev: &BlockDevice) -> Vec<RawPage> {
        sg_raw_pages(file, path)
    }
}
