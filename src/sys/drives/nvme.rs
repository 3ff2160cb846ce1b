//! NVMe namespaces, through NVMe admin commands on the namespace's block device.
//!
//! Owns NVMe drive control: the write cache from Identify Controller's VWC bit and Get/Set
//! Features 0x06 (Volatile Write Cache), SMART and the temperature from the SMART/Health log,
//! and the NVMe raw pages.

use std::fs::File;
use std::path::Path;

use super::{LinuxDrives, RawPage, TransportDriver, bad_answer};
use crate::model::{BlockDevice, DriveCache, NvmeHealth, SmartReading};
use crate::smart::nvme::{
    AdminCommand, HEALTH_LOG_LEN, IDENTIFY_LEN, NvmeController, Select, parse_health_log,
    parse_identify_controller,
};
use crate::sys::error::DriveError;
use crate::sys::passthru::nvme::admin;
use crate::sys::platform::Applied;

/// The NVMe driver.
pub(super) struct Nvme;

impl TransportDriver for Nvme {
    fn drive_cache(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<DriveCache, DriveError> {
        let (file, path) = drives.open(dev)?;
        cache(&file, &path)
    }

    fn set_drive_cache(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
        enabled: bool,
    ) -> Result<Applied, DriveError> {
        let (file, path) = drives.open(dev)?;
        admin(&file, &path, &AdminCommand::set_write_cache(enabled), None)?;
        Ok(Applied {
            notes: vec![
                "the NVMe driver does not update the kernel's flush policy after Set \
                 Features; it set it once, from VWC presence, at probe"
                    .into(),
            ],
        })
    }

    fn smart(&self, drives: &LinuxDrives, dev: &BlockDevice) -> Result<SmartReading, DriveError> {
        let (file, path) = drives.open(dev)?;
        Ok(SmartReading::Nvme(health(&file, &path)?))
    }

    fn temperature(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<Option<i64>, DriveError> {
        let (file, path) = drives.open(dev)?;
        Ok(health(&file, &path)?.temperature_c())
    }

    fn raw_pages(&self, file: &File, path: &Path, _dev: &BlockDevice) -> Vec<RawPage> {
        let mut pages = Vec::new();
        for (name, cmd, len) in [
            (
                "nvme-identify-controller",
                AdminCommand::identify_controller(),
                IDENTIFY_LEN,
            ),
            ("nvme-smart-log", AdminCommand::smart_log(), HEALTH_LOG_LEN),
        ] {
            let mut page = vec![0u8; len];
            let r = admin(file, path, &cmd, Some(&mut page));
            pages.push(RawPage::new(
                name,
                r.map(|_| page).map_err(|e| e.to_string()),
            ));
        }
        let r = admin(
            file,
            path,
            &AdminCommand::get_write_cache(Select::Current),
            None,
        );
        pages.push(RawPage::new(
            "nvme-get-features-vwc-result",
            r.map(|v| v.to_le_bytes().to_vec())
                .map_err(|e| e.to_string()),
        ));
        pages
    }
}

fn controller(file: &File, path: &Path) -> Result<NvmeController, DriveError> {
    let mut page = vec![0u8; IDENTIFY_LEN];
    admin(
        file,
        path,
        &AdminCommand::identify_controller(),
        Some(&mut page),
    )?;
    parse_identify_controller(&page).map_err(|e| bad_answer("NVMe Identify", path, &e))
}

fn cache(file: &File, path: &Path) -> Result<DriveCache, DriveError> {
    let ctrl = controller(file, path)?;
    if !ctrl.vwc_present {
        return Ok(DriveCache {
            enabled: None,
            changeable: false,
            fixed_reason: Some("Identify Controller: no volatile write cache (VWC)".into()),
            source: "NVMe Identify Controller VWC".into(),
        });
    }
    let current = admin(
        file,
        path,
        &AdminCommand::get_write_cache(Select::Current),
        None,
    )?;
    // Capabilities bit 2: changeable. Without SEL support assume so: VWC present means Set
    // Features 0x06 is mandatory.
    let changeable = if ctrl.supports_select() {
        admin(
            file,
            path,
            &AdminCommand::get_write_cache(Select::Capabilities),
            None,
        )
        .map(|caps| caps & 0x4 != 0)
        .unwrap_or(true)
    } else {
        true
    };
    Ok(DriveCache {
        enabled: Some(current & 1 != 0),
        changeable,
        fixed_reason: (!changeable)
            .then(|| "Get Features capabilities: feature 0x06 not changeable".into()),
        source: "NVMe Get Features 0x06 (Volatile Write Cache)".into(),
    })
}

fn health(file: &File, path: &Path) -> Result<NvmeHealth, DriveError> {
    let mut page = vec![0u8; HEALTH_LOG_LEN];
    admin(file, path, &AdminCommand::smart_log(), Some(&mut page))?;
    parse_health_log(&page).map_err(|e| bad_answer("NVMe SMART log", path, &e))
}
