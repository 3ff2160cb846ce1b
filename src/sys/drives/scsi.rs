//! SCSI disks (`sd` with a SCSI device behind it: SAS, iSCSI, virtual HBAs such as QEMU's
//! `scsi-hd`).
//!
//! Owns the caching mode page: the write cache is its WCE bit, read with MODE SENSE(10), set
//! with MODE SELECT(10), then a rescan so `sd` sees it. SMART and logs come from `smartctl`;
//! self-tests are left to `smartctl -t`. The caching-page functions are shared with `usb`, for
//! bridges without ATA pass-through.
//!
//! Disks of an unknown transport get the same driver without cache commands (`UNKNOWN`):
//! `smartctl` probes them itself, and `debug pages` tries the SG_IO pages.

use std::fs::File;
use std::path::Path;

use super::{
    CACHE, LinuxDrives, RawPage, Seen, TransportDriver, TransportRow, no_identity, sg_raw_pages,
};
use crate::model::{BlockDevice, DriveCache, SmartReading, Transport};
use crate::smart::scsi::PageControl;
use crate::smart::sense::Sense;
use crate::sys::drive_control::Applied;
use crate::sys::error::DriveError;
use crate::sys::parse::parse_vpd_serial;
use crate::sys::passthru::scsi::{select_caching, sense_caching};
use crate::sys::sysfs::AttrReader;

/// SCSI disks: `sd*` and `sr*`, or a SCSI target (`target<H>:<C>:<T>`) in the sysfs path.
/// Asked after `usb` and `sata`, whose disks are SCSI disks too.
pub(super) const ROW: TransportRow = TransportRow {
    transport: Transport::Scsi,
    recognises: |seen: &Seen| {
        seen.name_starts_with("sd")
            || seen.name_starts_with("sr")
            || seen.path_has(|s| s.starts_with("target"))
    },
    read_identity,
    driver: &SCSI,
};

/// Disks no other row recognised (`xvda`, `cciss!c0d0`): the last row of the table.
pub(super) const UNKNOWN_ROW: TransportRow = TransportRow {
    transport: Transport::Unknown,
    recognises: |_: &Seen| true,
    read_identity: no_identity,
    driver: &UNKNOWN,
};

/// A SCSI device's identity (libata's and USB bridges' disks too): vendor (read before the
/// transport was known), model, VPD 0x80 serial, firmware revision.
pub(super) fn read_identity(seen: &Seen, attrs: &mut AttrReader, d: &mut BlockDevice) {
    d.vendor = seen.scsi_vendor.map(str::to_string);
    d.model = attrs.clean("device/model");
    d.serial = attrs
        .bytes("device/vpd_pg80")
        .and_then(|p| parse_vpd_serial(&p));
    d.firmware = attrs.clean("device/rev");
}

/// The SCSI disk driver, with or without the caching mode page commands.
struct Scsi {
    cache_commands: bool,
}

const SCSI: Scsi = Scsi {
    cache_commands: true,
};

/// Disks of a transport sysfs does not tell: no cache command is sent to them.
const UNKNOWN: Scsi = Scsi {
    cache_commands: false,
};

impl TransportDriver for Scsi {
    fn drive_cache(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<DriveCache, DriveError> {
        if !self.cache_commands {
            return Err(DriveError::not_supported(CACHE, dev.transport));
        }
        let (file, path) = drives.open(dev)?;
        cache(&file, &path)?.map_err(|sense| {
            DriveError::not_supported_because(
                CACHE,
                dev.transport,
                format!("no caching mode page: {sense}"),
            )
        })
    }

    fn set_drive_cache(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
        enabled: bool,
    ) -> Result<Applied, DriveError> {
        if !self.cache_commands {
            return Err(DriveError::not_supported(CACHE, dev.transport));
        }
        let (file, path) = drives.open(dev)?;
        set_cache(dev, &file, &path, enabled)?;
        let mut applied = Applied::default();
        drives.rescan(dev, &mut applied);
        Ok(applied)
    }

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

/// The write cache per the caching mode page, or the refusal of a device without one.
pub(super) fn cache(file: &File, path: &Path) -> Result<Result<DriveCache, Sense>, DriveError> {
    let current = match sense_caching(file, path, PageControl::Current)? {
        Ok((page, _)) => page,
        Err(sense) => return Ok(Err(sense)),
    };
    // No changeable mask shown: not changeable.
    let changeable = matches!(
        sense_caching(file, path, PageControl::Changeable),
        Ok(Ok((mask, _))) if mask.wce
    );
    Ok(Ok(DriveCache {
        enabled: Some(current.wce),
        changeable,
        fixed_reason: (!changeable)
            .then(|| "WCE is not in the caching page's changeable mask".into()),
        source: "SCSI caching mode page (WCE)".into(),
    }))
}

/// Sets WCE when the changeable mask allows. The caller rescans: `sd` keeps a stale view of the
/// page until then.
pub(super) fn set_cache(
    dev: &BlockDevice,
    file: &File,
    path: &Path,
    enabled: bool,
) -> Result<(), DriveError> {
    let current = match sense_caching(file, path, PageControl::Current)? {
        Ok((page, _)) => page,
        Err(sense) => {
            return Err(DriveError::not_supported_because(
                CACHE,
                dev.transport,
                format!("no caching mode page: {sense}"),
            ));
        }
    };
    match sense_caching(file, path, PageControl::Changeable)? {
        Ok((mask, _)) if mask.wce => {}
        _ => {
            return Err(DriveError::not_supported_because(
                CACHE,
                dev.transport,
                "the drive does not report WCE as changeable",
            ));
        }
    }
    select_caching(file, path, &current, enabled)
}

/// The caching mode page (current values and changeable mask) for fixture capture.
pub(super) fn raw_pages(file: &File, path: &Path) -> Vec<RawPage> {
    [
        ("scsi-caching-current", PageControl::Current),
        ("scsi-caching-changeable", PageControl::Changeable),
    ]
    .into_iter()
    .map(|(name, pc)| {
        let bytes = match sense_caching(file, path, pc) {
            Ok(Ok((_, raw))) => Ok(raw),
            Ok(Err(sense)) => Err(format!("refused: {sense}")),
            Err(e) => Err(e.to_string()),
        };
        RawPage::new(name, bytes)
    })
    .collect()
}
