//! USB disks behind a bridge (`usb-storage`, `uas`).
//!
//! Owns the choice a bridge forces: ATA through SAT when it can (the `sata` functions), else the
//! SCSI caching page (`scsi`) for the write cache and `smartctl`, which knows vendor
//! pass-throughs, for SMART. A refused temperature read is "no sensor", not an error. Every
//! cache change ends with a rescan: here `sd`, not libata, owns the kernel's view.

use std::fs::File;
use std::path::Path;

use super::{
    CACHE, LinuxDrives, RawPage, Seen, TransportDriver, TransportRow, sata, scsi, sg_raw_pages,
};
use crate::model::{BlockDevice, DriveCache, SmartReading, Transport};
use crate::sys::drive_control::Applied;
use crate::sys::error::DriveError;

/// Disks behind a USB bridge (`usb<N>` in the sysfs path). Asked before `sata`: a SAT bridge
/// reports the vendor "ATA" too.
pub(super) const ROW: TransportRow = TransportRow {
    transport: Transport::Usb,
    recognises: |seen: &Seen| seen.path_has_numbered("usb"),
    read_identity: scsi::read_identity,
    driver: &Usb,
};

struct Usb;

impl TransportDriver for Usb {
    fn drive_cache(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<DriveCache, DriveError> {
        let (file, path) = drives.open(dev)?;
        if let Ok(cache) = sata::cache(&file, &path)? {
            return Ok(cache);
        }
        scsi::cache(&file, &path)?.map_err(|_| {
            DriveError::not_supported_because(
                CACHE,
                dev.transport,
                "the bridge refuses ATA pass-through and has no caching mode page",
            )
        })
    }

    fn set_drive_cache(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
        enabled: bool,
    ) -> Result<Applied, DriveError> {
        let (file, path) = drives.open(dev)?;
        if sata::cache(&file, &path)?.is_ok() {
            sata::set_cache(dev, &file, &path, enabled)?;
        } else {
            scsi::set_cache(dev, &file, &path, enabled)?;
        }
        let mut applied = Applied::default();
        drives.rescan(dev, &mut applied);
        Ok(applied)
    }

    fn smart(&self, drives: &LinuxDrives, dev: &BlockDevice) -> Result<SmartReading, DriveError> {
        let (file, path) = drives.open(dev)?;
        match sata::smart(&file, &path) {
            Ok(Ok(smart)) => Ok(SmartReading::Ata(smart)),
            // The bridge does not do SAT: smartctl may know its vendor pass-through.
            Ok(Err(_)) | Err(DriveError::Device { .. }) => drives.smartctl_reading(dev),
            Err(e) => Err(e),
        }
    }

    fn temperature(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<Option<i64>, DriveError> {
        let (file, path) = drives.open(dev)?;
        match sata::smart_data_page(&file, &path) {
            Ok(page) => sata::temperature_from_page(&page, &path),
            Err(_) => Ok(None),
        }
    }

    fn drive_logs(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<crate::model::DriveLogs, DriveError> {
        let (file, path) = drives.open(dev)?;
        match sata::logs(dev, &file, &path) {
            Ok(Ok(logs)) => Ok(logs),
            // No SAT (see `smart`).
            Ok(Err(_)) | Err(DriveError::Device { .. }) => drives.smartctl_logs(dev),
            Err(e) => Err(e),
        }
    }

    fn self_test_status(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<crate::model::SelfTestStatus, DriveError> {
        let (file, path) = drives.open(dev)?;
        match sata::self_test_status(&file, &path) {
            Ok(status) => Ok(status),
            Err(DriveError::Device { .. }) => Ok(drives.smartctl_logs(dev)?.self_test),
            Err(e) => Err(e),
        }
    }

    fn start_self_test(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
        kind: crate::model::SelfTestKind,
    ) -> Result<(), DriveError> {
        let (file, path) = drives.open(dev)?;
        sata::start_self_test(dev, &file, &path, kind)
    }

    fn raw_pages(&self, file: &File, path: &Path, _dev: &BlockDevice) -> Vec<RawPage> {
        sg_raw_pages(file, path)
    }
}
