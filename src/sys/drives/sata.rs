//! SATA (and PATA) drives through libata: ATA commands in ATA PASS-THROUGH(16) over SG_IO.
//!
//! Owns the ATA side of drive control: write cache (IDENTIFY words 82/85, SET FEATURES as
//! `hdparm -W`), SMART (IDENTIFY, RETURN STATUS, READ DATA, READ THRESHOLDS), temperature,
//! error and self-test logs (SMART READ LOG, READ LOG EXT), self-tests (EXECUTE OFF-LINE
//! IMMEDIATE), SCT Error Recovery Control and the ATA raw pages. The functions below the driver
//! are shared with `usb`, whose bridges often speak ATA through SAT.

use std::fs::File;
use std::path::Path;

use super::{
    CACHE, LinuxDrives, RawPage, SELF_TEST, Seen, TransportDriver, TransportRow, bad_answer, scsi,
    sg_raw_pages,
};
use crate::model::{
    AtaSmart, AtaSmartStatus, BlockDevice, DriveCache, DriveLogs, ErrorLog, LogRead, SelfTestKind,
    SelfTestLog, SelfTestStatus, SmartReading, Transport,
};
use crate::smart::ata::{
    AtaCommand, AtaIdentity, SELF_TEST_ABORT, SELF_TEST_EXTENDED, SELF_TEST_SHORT, SmartData,
    attribute_table, attribute_temperature, parse_identify, parse_smart_data,
    parse_smart_thresholds, smart_status,
};
use crate::smart::ata_log::{
    self, LOG_DIRECTORY, LOG_EXT_COMPREHENSIVE_ERROR, LOG_EXT_SELF_TEST, LOG_SELF_TEST,
    LOG_SUMMARY_ERROR, MAX_EXT_PAGES,
};
use crate::smart::sense::Sense;
use crate::sys::drive_control::Applied;
use crate::sys::error::DriveError;
use crate::sys::passthru::ata::{self, AtaAnswer};
use crate::sys::passthru::sgio::{self, TIMEOUT_MS, Transfer};

impl super::LinuxDrives {
    /// The drive's decoded IDENTIFY DEVICE page, for the triage (highest SATA generation,
    /// rotation rate); `None` for other transports or when the drive cannot be asked.
    pub fn sata_identity(&self, dev: &BlockDevice) -> Option<crate::smart::ata::AtaIdentity> {
        if dev.transport != Transport::Sata {
            return None;
        }
        let (file, path) = self.open(dev).ok()?;
        identify(&file, &path).ok()?.ok()
    }

    /// The drive's SCT ERC timers (`passthru::ata::sct_erc`); `None` for other transports,
    /// `Some(Err(why))` when there was no answer to trust.
    pub fn sct_erc(&self, dev: &BlockDevice) -> Option<Result<crate::model::Erc, String>> {
        if dev.transport != Transport::Sata {
            return None;
        }
        let answer = self
            .open(dev)
            .and_then(|(file, path)| ata::sct_erc(&file, &path));
        Some(answer.unwrap_or_else(|e| Err(e.to_string())))
    }
}

/// Disks behind libata: `ata<N>` in the sysfs path, or vendor "ATA" from its SCSI translation.
pub(super) const ROW: TransportRow = TransportRow {
    transport: Transport::Sata,
    recognises: |seen: &Seen| seen.path_has_numbered("ata") || seen.scsi_vendor == Some("ATA"),
    read_identity: scsi::read_identity,
    driver: &Sata,
};

struct Sata;

impl TransportDriver for Sata {
    fn drive_cache(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<DriveCache, DriveError> {
        let (file, path) = drives.open(dev)?;
        cache(&file, &path)?.map_err(|sense| {
            DriveError::not_supported_because(
                CACHE,
                dev.transport,
                format!("ATA pass-through refused: {sense}"),
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
        set_cache(dev, &file, &path, enabled)?;
        let mut applied = Applied::default();
        drives.wait_for_kernel_view(dev, enabled, &mut applied);
        Ok(applied)
    }

    fn smart(&self, drives: &LinuxDrives, dev: &BlockDevice) -> Result<SmartReading, DriveError> {
        let (file, path) = drives.open(dev)?;
        match smart(&file, &path)? {
            Ok(smart) => Ok(SmartReading::Ata(smart)),
            Err(sense) => Ok(SmartReading::Unavailable {
                reason: format!("SMART not available on sata: ATA pass-through refused ({sense})"),
            }),
        }
    }

    fn temperature(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<Option<i64>, DriveError> {
        let (file, path) = drives.open(dev)?;
        let page = match smart_data_page(&file, &path) {
            Ok(page) => page,
            Err(e) => {
                return Err(DriveError::Device {
                    op: "ATA SMART READ DATA".into(),
                    path,
                    detail: e,
                });
            }
        };
        temperature_from_page(&page, &path)
    }

    fn drive_logs(&self, drives: &LinuxDrives, dev: &BlockDevice) -> Result<DriveLogs, DriveError> {
        let (file, path) = drives.open(dev)?;
        Ok(match logs(dev, &file, &path)? {
            Ok(logs) => logs,
            Err(sense) => DriveLogs::unavailable(
                &dev.name,
                dev.transport,
                &format!("no drive logs on sata: ATA pass-through refused ({sense})"),
            ),
        })
    }

    fn self_test_status(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
    ) -> Result<SelfTestStatus, DriveError> {
        let (file, path) = drives.open(dev)?;
        self_test_status(&file, &path)
    }

    fn start_self_test(
        &self,
        drives: &LinuxDrives,
        dev: &BlockDevice,
        kind: SelfTestKind,
    ) -> Result<(), DriveError> {
        let (file, path) = drives.open(dev)?;
        start_self_test(dev, &file, &path, kind)
    }

    fn raw_pages(&self, file: &File, path: &Path, _dev: &BlockDevice) -> Vec<RawPage> {
        sg_raw_pages(file, path)
    }
}

/// The self-test state from SMART READ DATA's execution status byte.
pub(super) fn self_test_status(file: &File, path: &Path) -> Result<SelfTestStatus, DriveError> {
    let page = smart_data_page(file, path).map_err(|detail| DriveError::Device {
        op: "ATA SMART READ DATA".into(),
        path: path.to_path_buf(),
        detail,
    })?;
    let data = parse_smart_data(&page).map_err(|e| bad_answer("SMART READ DATA", path, &e))?;
    Ok(ata_log::self_test_status(&data))
}

/// SMART EXECUTE OFF-LINE IMMEDIATE in off-line mode (the drive keeps serving commands), or
/// the abort. Refused when SMART is off or there are no self-tests.
pub(super) fn start_self_test(
    dev: &BlockDevice,
    file: &File,
    path: &Path,
    kind: SelfTestKind,
) -> Result<(), DriveError> {
    let id = match identify(file, path)? {
        Ok(id) => id,
        Err(sense) => {
            return Err(DriveError::not_supported_because(
                SELF_TEST,
                dev.transport,
                format!("ATA pass-through refused: {sense}"),
            ));
        }
    };
    if !(id.smart_supported && id.smart_enabled) {
        return Err(DriveError::not_supported_because(
            SELF_TEST,
            dev.transport,
            "SMART is not supported or not enabled on this drive",
        ));
    }
    if !self_test_status(file, path)?.supported {
        return Err(DriveError::not_supported_because(
            SELF_TEST,
            dev.transport,
            "not supported by this drive (SMART READ DATA: no self-test capability)",
        ));
    }
    let cmd = match kind {
        SelfTestKind::Short => AtaCommand::smart_execute("SMART short self-test", SELF_TEST_SHORT),
        SelfTestKind::Long => {
            AtaCommand::smart_execute("SMART extended self-test", SELF_TEST_EXTENDED)
        }
        SelfTestKind::Abort => AtaCommand::smart_execute("SMART self-test abort", SELF_TEST_ABORT),
    };
    match ata::run(file, path, &cmd, None) {
        Ok(AtaAnswer::Done(_)) => Ok(()),
        Ok(AtaAnswer::Refused(sense)) => Err(DriveError::not_supported_because(
            SELF_TEST,
            dev.transport,
            format!("{} refused: {sense}", cmd.name),
        )),
        // A drive with nothing to abort may abort the abort (QEMU's ide-hd does).
        Err(DriveError::Device { op, path, detail }) if kind == SelfTestKind::Abort => {
            Err(DriveError::Device {
                op,
                path,
                detail: format!(
                    "{detail}: no self-test was running, or the drive cannot abort one"
                ),
            })
        }
        Err(e) => Err(e),
    }
}

/// The error log, self-test log and self-test state: the extended logs (READ LOG EXT, 48-bit
/// LBAs) where the drive has GP Logging and them, else SMART logs 0x01 and 0x06. Only a refused
/// IDENTIFY is a refusal; an unreadable log is `LogRead::Failed` in the answer.
pub(super) fn logs(
    dev: &BlockDevice,
    file: &File,
    path: &Path,
) -> Result<Result<DriveLogs, Sense>, DriveError> {
    let id = match identify(file, path)? {
        Ok(id) => id,
        Err(sense) => return Ok(Err(sense)),
    };
    let mut logs = DriveLogs::unavailable(
        &dev.name,
        dev.transport,
        "SMART is not supported or not enabled on this drive",
    );
    logs.source = "ATA SMART logs".into();
    if !(id.smart_supported && id.smart_enabled) {
        return Ok(Ok(logs));
    }
    let data = match smart_data_page(file, path)
        .and_then(|p| parse_smart_data(&p).map_err(|e| e.to_string()))
    {
        Ok(data) => data,
        Err(error) => {
            logs.error_log = LogRead::Failed {
                error: error.clone(),
            };
            logs.self_test_log = LogRead::Failed {
                error: error.clone(),
            };
            logs.self_test = SelfTestStatus::unsupported(format!("SMART READ DATA: {error}"));
            return Ok(Ok(logs));
        }
    };
    let directory = if id.gpl_supported {
        read_page(
            file,
            path,
            &AtaCommand::read_log_ext("READ LOG EXT (log directory)", LOG_DIRECTORY, 1),
        )
        .ok()
    } else {
        None
    };
    logs.error_log = error_log(file, path, &data, directory.as_deref());
    logs.self_test_log = self_test_log(file, path, &data, directory.as_deref());
    logs.self_test = ata_log::self_test_status(&data);
    Ok(Ok(logs))
}

/// Pages of extended log `address` worth reading, from the GP log directory (0: none).
fn ext_pages(directory: Option<&[u8]>, address: u8) -> u8 {
    directory
        .and_then(|d| ata_log::directory_pages(d, address).ok())
        .map_or(0, |n| n.min(MAX_EXT_PAGES) as u8)
}

fn error_log(
    file: &File,
    path: &Path,
    data: &SmartData,
    directory: Option<&[u8]>,
) -> LogRead<ErrorLog> {
    if !data.error_log_supported {
        return LogRead::NotSupported {
            reason: "not supported by this drive (SMART READ DATA: no error logging)".into(),
        };
    }
    let pages = ext_pages(directory, LOG_EXT_COMPREHENSIVE_ERROR);
    if pages > 0 {
        let cmd = AtaCommand::read_log_ext(
            "READ LOG EXT (extended comprehensive error log)",
            LOG_EXT_COMPREHENSIVE_ERROR,
            pages,
        );
        // On any failure the summary log below still says what the drive logged.
        if let Ok(log) = read_page(file, path, &cmd)
            .and_then(|p| ata_log::parse_ext_error_log(&p).map_err(|e| e.to_string()))
        {
            return LogRead::Read(log);
        }
    }
    let cmd =
        AtaCommand::smart_read_log("SMART READ LOG (summary error log)", LOG_SUMMARY_ERROR, 1);
    match read_page(file, path, &cmd)
        .and_then(|p| ata_log::parse_summary_error_log(&p).map_err(|e| e.to_string()))
    {
        Ok(log) => LogRead::Read(log),
        Err(error) => LogRead::Failed { error },
    }
}

fn self_test_log(
    file: &File,
    path: &Path,
    data: &SmartData,
    directory: Option<&[u8]>,
) -> LogRead<SelfTestLog> {
    if !data.self_test_supported {
        return LogRead::NotSupported {
            reason: "not supported by this drive (SMART READ DATA: no self-test capability)".into(),
        };
    }
    let pages = ext_pages(directory, LOG_EXT_SELF_TEST);
    if pages > 0 {
        let cmd = AtaCommand::read_log_ext(
            "READ LOG EXT (extended self-test log)",
            LOG_EXT_SELF_TEST,
            pages,
        );
        if let Ok(log) = read_page(file, path, &cmd)
            .and_then(|p| ata_log::parse_ext_self_test_log(&p).map_err(|e| e.to_string()))
        {
            return LogRead::Read(log);
        }
    }
    let cmd = AtaCommand::smart_read_log("SMART READ LOG (self-test log)", LOG_SELF_TEST, 1);
    match read_page(file, path, &cmd)
        .and_then(|p| ata_log::parse_self_test_log(&p).map_err(|e| e.to_string()))
    {
        Ok(log) => LogRead::Read(log),
        Err(error) => LogRead::Failed { error },
    }
}

/// IDENTIFY DEVICE, or the refusal of a device that does not take ATA PASS-THROUGH.
pub(super) fn identify(file: &File, path: &Path) -> Result<Result<AtaIdentity, Sense>, DriveError> {
    match ata::read_sector(file, path, &AtaCommand::identify())? {
        Ok(page) => parse_identify(&page)
            .map(Ok)
            .map_err(|e| bad_answer("ATA IDENTIFY DEVICE", path, &e)),
        Err(sense) => Ok(Err(sense)),
    }
}

/// The write cache as IDENTIFY words 82/85 report it.
pub(super) fn cache(file: &File, path: &Path) -> Result<Result<DriveCache, Sense>, DriveError> {
    Ok(identify(file, path)?.map(|id| DriveCache {
        enabled: id.write_cache_supported.then_some(id.write_cache_enabled),
        changeable: id.write_cache_supported,
        fixed_reason: (!id.write_cache_supported)
            .then(|| "IDENTIFY word 82: no write cache the host can control".into()),
        source: "ATA IDENTIFY words 82/85".into(),
    }))
}

/// hdparm -W: flush before and after turning the cache off, SET FEATURES in between. The
/// caller then updates the kernel's view (per transport).
pub(super) fn set_cache(
    dev: &BlockDevice,
    file: &File,
    path: &Path,
    enabled: bool,
) -> Result<(), DriveError> {
    let id = match identify(file, path)? {
        Ok(id) => id,
        Err(sense) => {
            return Err(DriveError::not_supported_because(
                CACHE,
                dev.transport,
                format!("ATA pass-through refused: {sense}"),
            ));
        }
    };
    if !id.write_cache_supported {
        return Err(DriveError::not_supported_because(
            CACHE,
            dev.transport,
            "the drive reports no volatile write cache",
        ));
    }
    let flush = if id.flush_ext_supported {
        AtaCommand::flush_cache_ext()
    } else {
        AtaCommand::flush_cache()
    };
    if !enabled {
        ata::run(file, path, &flush, None)?;
    }
    if let AtaAnswer::Refused(sense) =
        ata::run(file, path, &AtaCommand::set_write_cache(enabled), None)?
    {
        return Err(DriveError::not_supported_because(
            CACHE,
            dev.transport,
            format!("SET FEATURES refused: {sense}"),
        ));
    }
    if !enabled {
        ata::run(file, path, &flush, None)?;
    }
    Ok(())
}

/// ATA SMART: support and state from IDENTIFY, then RETURN STATUS and the attribute table.
/// Only a refused IDENTIFY is a refusal; later failures become notes in the reading.
pub(super) fn smart(file: &File, path: &Path) -> Result<Result<AtaSmart, Sense>, DriveError> {
    let id = match identify(file, path)? {
        Ok(id) => id,
        Err(sense) => return Ok(Err(sense)),
    };
    let mut smart = AtaSmart {
        smart_supported: id.smart_supported,
        smart_enabled: id.smart_enabled,
        status: AtaSmartStatus::Unknown,
        status_note: None,
        attributes: Vec::new(),
        drive: id.drive(),
        attribute_problem: None,
    };
    if !(id.smart_supported && id.smart_enabled) {
        return Ok(Ok(smart));
    }
    match ata::smart_return_status(file, path) {
        Ok((AtaAnswer::Done(Some(regs)), _)) => {
            (smart.status, smart.status_note) = smart_status(regs.lba_mid, regs.lba_high);
        }
        Ok((AtaAnswer::Done(None), _)) => {
            smart.status_note =
                Some("the transport returned no registers for SMART RETURN STATUS".into());
        }
        Ok((AtaAnswer::Refused(sense), _)) => {
            smart.status_note = Some(format!("SMART RETURN STATUS refused: {sense}"));
        }
        Err(e) => smart.status_note = Some(format!("SMART RETURN STATUS failed: {e}")),
    }
    let data = read_page(file, path, &AtaCommand::smart_read_data())
        .and_then(|p| parse_smart_data(&p).map_err(|e| e.to_string()));
    let thresholds = read_page(file, path, &AtaCommand::smart_read_thresholds())
        .and_then(|p| parse_smart_thresholds(&p).map_err(|e| e.to_string()));
    match (&data, &thresholds) {
        (Ok(d), Ok(t)) => smart.attributes = attribute_table(d, Some(t)),
        (Ok(d), Err(e)) => {
            smart.attributes = attribute_table(d, None);
            smart.attribute_problem = Some(format!("thresholds unreadable: {e}"));
        }
        (Err(e), _) => smart.attribute_problem = Some(e.clone()),
    }
    Ok(Ok(smart))
}

/// SMART READ DATA, the one page a temperature read costs; a refusal or error in words.
pub(super) fn smart_data_page(file: &File, path: &Path) -> Result<Vec<u8>, String> {
    read_page(file, path, &AtaCommand::smart_read_data())
}

/// The temperature in a SMART READ DATA page, by the rule the SMART verdict uses
/// (`crate::smart::ata::attribute_temperature`).
pub(super) fn temperature_from_page(page: &[u8], path: &Path) -> Result<Option<i64>, DriveError> {
    let data = parse_smart_data(page).map_err(|e| bad_answer("SMART READ DATA", path, &e))?;
    Ok(attribute_temperature(&attribute_table(&data, None)))
}

/// Reads one SMART sector; refusals and errors in words.
fn read_page(file: &File, path: &Path, cmd: &AtaCommand) -> Result<Vec<u8>, String> {
    match ata::read_sector(file, path, cmd) {
        Ok(Ok(page)) => Ok(page),
        Ok(Err(sense)) => Err(format!("{} refused: {sense}", cmd.name)),
        Err(e) => Err(e.to_string()),
    }
}

/// The ATA pages for fixture capture, each with the status and sense bytes it came back with.
pub(super) fn raw_pages(file: &File, path: &Path) -> Vec<RawPage> {
    let mut pages = Vec::new();
    for (name, cmd) in [
        ("ata-identify", AtaCommand::identify()),
        ("ata-smart-data", AtaCommand::smart_read_data()),
        ("ata-smart-thresholds", AtaCommand::smart_read_thresholds()),
        ("ata-smart-status", AtaCommand::smart_return_status()),
        (
            "ata-smart-log-error",
            AtaCommand::smart_read_log("SMART READ LOG 0x01", LOG_SUMMARY_ERROR, 1),
        ),
        (
            "ata-smart-log-selftest",
            AtaCommand::smart_read_log("SMART READ LOG 0x06", LOG_SELF_TEST, 1),
        ),
        (
            "ata-gp-log-directory",
            AtaCommand::read_log_ext("READ LOG EXT 0x00", LOG_DIRECTORY, 1),
        ),
    ] {
        let mut buf = [0u8; 512];
        let transfer = if cmd.reads_sector() {
            Transfer::FromDevice(&mut buf)
        } else {
            Transfer::None
        };
        match sgio::execute(file, path, cmd.name, &cmd.cdb(), transfer, TIMEOUT_MS) {
            Ok(reply) => {
                pages.push(RawPage::new(
                    &format!("{name}-sense"),
                    Ok(std::iter::once(reply.status)
                        .chain(reply.sense.iter().copied())
                        .collect()),
                ));
                if cmd.reads_sector() && reply.status == 0 {
                    pages.push(RawPage::new(name, Ok(buf.to_vec())));
                }
            }
            Err(e) => pages.push(RawPage::new(name, Err(e.to_string()))),
        }
    }
    pages
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Transport, Verdict};
    use crate::smart::verdict::assess;

    /// A SMART READ DATA page holding `attrs` (id, raw value), with its checksum.
    fn smart_data(attrs: &[(u8, u64)]) -> Vec<u8> {
        let mut page = vec![0u8; 512];
        page[0] = 0x10;
        for (slot, &(id, raw)) in attrs.iter().enumerate() {
            let s = &mut page[2 + 12 * slot..2 + 12 * (slot + 1)];
            s[0] = id;
            s[3] = 100;
            s[4] = 100;
            s[5..11].copy_from_slice(&raw.to_le_bytes()[..6]);
        }
        let sum = page[..511].iter().fold(0u8, |a, b| a.wrapping_add(*b));
        page[511] = 0u8.wrapping_sub(sum);
        page
    }

    /// What `disktriage smart` shows for the same page.
    fn verdict_temperature(page: &[u8]) -> Option<i64> {
        let data = parse_smart_data(page).unwrap();
        let reading = SmartReading::Ata(AtaSmart {
            smart_supported: true,
            smart_enabled: true,
            status: AtaSmartStatus::Good,
            status_note: None,
            attributes: attribute_table(&data, None),
            drive: Default::default(),
            attribute_problem: None,
        });
        let health = assess("sda", Transport::Sata, reading);
        assert_eq!(health.verdict, Verdict::Passed);
        health.temperature_c
    }

    #[test]
    fn the_poller_and_the_smart_report_read_the_same_temperature() {
        let path = Path::new("/dev/sda");
        for (attrs, want) in [
            (vec![(194, 36)], Some(36)),
            (vec![(190, 0x1f1f_001f)], Some(31)),
            (vec![(190, 31), (194, 0x002d_0014_0024)], Some(36)),
            (vec![(194, 0), (190, 31)], Some(31)),
            (vec![(194, 200), (190, 31)], Some(31)),
            (vec![(194, 0xff)], None),
            (vec![(9, 36)], None),
        ] {
            let page = smart_data(&attrs);
            let polled = temperature_from_page(&page, path).unwrap();
            assert_eq!(polled, want, "{attrs:?}");
            assert_eq!(verdict_temperature(&page), want, "{attrs:?}");
        }
    }

    #[test]
    fn a_garbled_page_is_a_bad_answer_not_a_reading() {
        let mut page = smart_data(&[(194, 36)]);
        page[100] ^= 1;
        let e = temperature_from_page(&page, Path::new("/dev/sda")).unwrap_err();
        assert!(matches!(e, DriveError::BadAnswer { .. }), "{e:?}");
    }
}
