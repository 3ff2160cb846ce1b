//! NVMe namespaces, through NVMe admin commands on the namespace's block device.
//!
//! Owns NVMe drive control: write cache (Identify Controller VWC, Get/Set Features 0x06), SMART
//! and temperature (SMART/Health log), the Error Information and Device Self-test logs,
//! self-tests (Device Self-test, where OACS bit 4 has it), and the NVMe raw pages.

use std::fs::File;
use std::path::Path;

use super::{LinuxDrives, RawPage, SELF_TEST, Seen, TransportDriver, TransportRow, bad_answer};
use crate::model::Transport;
use crate::model::{
    BlockDevice, DriveCache, DriveLogs, LogRead, NvmeHealth, SelfTestKind, SelfTestStatus,
    SmartReading,
};
use crate::smart::nvme::{
    AdminCommand, ERROR_ENTRY_LEN, HEALTH_LOG_LEN, IDENTIFY_LEN, NvmeController, SELF_TEST_LOG_LEN,
    STC_ABORT, STC_EXTENDED, STC_SHORT, Select, parse_health_log, parse_identify_controller,
};
use crate::smart::nvme_log;
use crate::sys::drive_control::Applied;
use crate::sys::error::DriveError;
use crate::sys::passthru::nvme::admin;
use crate::sys::sysfs::AttrReader;

/// NVMe namespaces: `nvme<C>n<N>`, read from the controller's attributes.
pub(super) const ROW: TransportRow = TransportRow {
    transport: Transport::Nvme,
    recognises: |seen: &Seen| seen.name_starts_with("nvme"),
    read_identity,
    driver: &Nvme,
};

/// Model, serial and firmware of the namespace's controller.
fn read_identity(_: &Seen, attrs: &mut AttrReader, d: &mut BlockDevice) {
    d.model = attrs.clean("device/model");
    d.serial = attrs.clean("device/serial");
    d.firmware = attrs.clean("device/firmware_rev");
}

struct Nvme;

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

    fn drive_logs(&self, drives: &LinuxDrives, dev: &BlockDevice) -> Result<DriveLogs, DriveError> {
        let (file, path) = drives.open(dev)?;
        let ctrl = controller(&file, &path)?;
        let entries = ctrl.error_entries();
        let mut page = vec![0u8; entries * ERROR_ENTRY_LEN];
        let error_log = match admin(
            &file,
            &path,
            &AdminCommand::error_log(entries),
            Some(&mut page),
        ) {
            Ok(_) => match nvme_log::parse_error_log(&page) {
                Ok(log) => LogRead::Read(log),
                Err(e) => LogRead::Failed {
                    error: e.to_string(),
                },
            },
            Err(e) => LogRead::Failed {
                error: e.to_string(),
            },
        };
        let (self_test_log, self_test) = match self_test(&file, &path, &ctrl) {
            Ok((log, status)) => (LogRead::Read(log), status),
            Err(Unsupported(reason)) => (
                LogRead::NotSupported {
                    reason: reason.clone(),
                },
                SelfTestStatus::unsupported(reason),
            ),
            Err(Failed(e)) => (
                LogRead::Failed {
                    error: e.to_string(),
                },
                SelfTestStatus::unsupported(format!("Device Self-test log unreadable: {e}")),
            ),
        };
        Ok(DriveLogs {
            device: dev.name.clone(),
            transport: dev.transport,
            source: "NVMe log pages".into(),
            error_log,
            self_test_log,
            self_test,
        })
    }

    fn self_test_status(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<SelfTestStatus, DriveError> {
        let (file, path) = drives.open(dev)?;
        let ctrl = controller(&file, &path)?;
        match self_test(&file, &path, &ctrl) {
            Ok((_, status)) => Ok(status),
            Err(Unsupported(reason)) => Ok(SelfTestStatus::unsupported(reason)),
            Err(Failed(e)) => Err(e),
        }
    }

    fn start_self_test(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
        kind: SelfTestKind,
    ) -> Result<(), DriveError> {
        let (file, path) = drives.open(dev)?;
        let ctrl = controller(&file, &path)?;
        if !ctrl.supports_self_test() {
            return Err(DriveError::not_supported_because(
                SELF_TEST,
                dev.transport,
                NO_SELF_TEST,
            ));
        }
        let code = match kind {
            SelfTestKind::Short => STC_SHORT,
            SelfTestKind::Long => STC_EXTENDED,
            SelfTestKind::Abort => STC_ABORT,
        };
        match admin(&file, &path, &AdminCommand::device_self_test(code), None) {
            Ok(_) => Ok(()),
            // A controller that sets OACS bit 4 and still does not know the opcode.
            Err(DriveError::Device { detail, .. }) if detail.contains("Invalid Command Opcode") => {
                Err(DriveError::not_supported_because(
                    SELF_TEST,
                    dev.transport,
                    format!("not supported by this drive ({detail})"),
                ))
            }
            Err(e) => Err(e),
        }
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
            (
                "nvme-error-log",
                AdminCommand::error_log(4),
                4 * ERROR_ENTRY_LEN,
            ),
            (
                "nvme-self-test-log",
                AdminCommand::self_test_log(),
                SELF_TEST_LOG_LEN,
            ),
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

/// Why a controller's self-test state could not be read.
enum SelfTestProblem {
    /// The controller has no Device Self-test: the reason.
    Unsupported(String),
    Failed(DriveError),
}
use SelfTestProblem::{Failed, Unsupported};

const NO_SELF_TEST: &str =
    "not supported by this drive (Identify Controller: OACS bit 4, Device Self-test, is clear)";

/// The Device Self-test log and the state it gives, where the controller has self-tests.
fn self_test(
    file: &File,
    path: &Path,
    ctrl: &NvmeController,
) -> Result<(crate::model::SelfTestLog, SelfTestStatus), SelfTestProblem> {
    if !ctrl.supports_self_test() {
        return Err(Unsupported(NO_SELF_TEST.into()));
    }
    let mut page = vec![0u8; SELF_TEST_LOG_LEN];
    admin(file, path, &AdminCommand::self_test_log(), Some(&mut page)).map_err(Failed)?;
    let (log, running) = nvme_log::parse_self_test_log(&page)
        .map_err(|e| Failed(bad_answer("NVMe Device Self-test log", path, &e)))?;
    let status = nvme_log::self_test_status(&log, running, ctrl.edstt_minutes);
    Ok((log, status))
}

impl LinuxDrives {
    /// The controller's warning temperature (Identify Controller WCTEMP, °C) for the triage's
    /// temperature rule; `None` for other transports, none reported (0) or no answer.
    pub fn nvme_warning_temperature(&self, dev: &BlockDevice) -> Option<i64> {
        if dev.transport != Transport::Nvme {
            return None;
        }
        let (file, path) = self.open(dev).ok()?;
        let kelvin = controller(&file, &path).ok()?.warning_temp_kelvin;
        crate::smart::nvme::plausible_warning_c(i64::from(kelvin))
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
    // Capabilities bit 2: changeable. Without SEL support assume so: with VWC, Set Features
    // 0x06 is mandatory.
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
