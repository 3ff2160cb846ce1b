//! virtio-blk disks. No command reaches the device: the write cache is the `cache_type` sysfs
//! attribute, which the driver makes writable only when the device offered
//! VIRTIO_BLK_F_CONFIG_WCE. No SMART and no temperature.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;

use super::{CACHE, LinuxDrives, Seen, TransportDriver, TransportRow};
use crate::model::{BlockDevice, DriveCache, KernelWriteCache, Transport};
use crate::sys::drive_control::Applied;
use crate::sys::error::DriveError;
use crate::sys::sysfs::AttrReader;

/// virtio-blk disks: `vd<letters>`.
pub(super) const ROW: TransportRow = TransportRow {
    transport: Transport::Virtio,
    recognises: |seen: &Seen| seen.name_starts_with("vd"),
    read_identity,
    driver: &Virtio,
};

/// The serial the host gave the disk; virtio-blk has no model or firmware.
fn read_identity(_: &Seen, attrs: &mut AttrReader, d: &mut BlockDevice) {
    d.serial = attrs.clean("serial");
}

struct Virtio;

impl TransportDriver for Virtio {
    fn drive_cache(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<DriveCache, DriveError> {
        cache(drives, dev)
    }

    fn set_drive_cache(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
        enabled: bool,
    ) -> Result<Applied, DriveError> {
        let cache = cache(drives, dev)?;
        if !cache.changeable {
            return Err(DriveError::not_supported_because(
                CACHE,
                dev.transport,
                cache.fixed_reason.unwrap_or_default(),
            ));
        }
        let value = KernelWriteCache::from_enabled(enabled);
        drives.write_attr(dev, "cache_type", value.as_str())?;
        Ok(Applied::default())
    }
}

fn cache(drives: &LinuxDrives, dev: &BlockDevice) -> Result<DriveCache, DriveError> {
    let path = drives.attr_path(dev, "cache_type");
    let meta = match fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(DriveError::not_supported_because(
                CACHE,
                dev.transport,
                "no cache_type attribute",
            ));
        }
        Err(e) => return Err(DriveError::from_io("stat", &path, &e)),
    };
    let text = drives.read_attr(dev, "cache_type")?;
    // `cache_type` speaks the words of `queue/write_cache`, though it is the device's setting.
    let enabled = match text.parse::<KernelWriteCache>() {
        Ok(mode) => mode == KernelWriteCache::WriteBack,
        Err(_) => {
            return Err(DriveError::BadAnswer {
                op: "read".into(),
                path,
                detail: format!("cache_type {text:?}"),
            });
        }
    };
    // Writable only when VIRTIO_BLK_F_CONFIG_WCE was negotiated.
    let changeable = meta.permissions().mode() & 0o200 != 0;
    Ok(DriveCache {
        enabled: Some(enabled),
        changeable,
        fixed_reason: (!changeable).then(|| {
            "cache_type is read-only: the device did not offer VIRTIO_BLK_F_CONFIG_WCE".into()
        }),
        source: "virtio cache_type".into(),
    })
}
