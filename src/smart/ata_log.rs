//! ATA SMART logs: the summary error log (0x01, SMART READ LOG), the extended comprehensive
//! error log (0x03, READ LOG EXT), the self-test log (0x06) and the extended self-test log
//! (0x07), the General Purpose log directory (0x00), and the self-test execution status byte
//! of SMART READ DATA.
//!
//! Layouts: ACS-3 sections 9.4, 9.8, 9.10 and A.10, as smartmontools lays them out in
//! `atacmds.h` (`ata_smart_errorlog`, `ata_smart_exterrlog`, `ata_smart_selftestlog`,
//! `ata_smart_extselftestlog`). Every log is a ring: the page says which entry is the newest.

use super::ata::SECTOR;
use super::{PageError, le_uint, le16};
use crate::model::{
    ErrorEntry, ErrorLog, SelfTestEntry, SelfTestLog, SelfTestOutcome, SelfTestProgress,
    SelfTestStatus,
};

/// Log addresses.
pub const LOG_DIRECTORY: u8 = 0x00;
pub const LOG_SUMMARY_ERROR: u8 = 0x01;
pub const LOG_EXT_COMPREHENSIVE_ERROR: u8 = 0x03;
pub const LOG_SELF_TEST: u8 = 0x06;
pub const LOG_EXT_SELF_TEST: u8 = 0x07;

/// Pages of an extended log read at most: the newest entries are what counts.
pub const MAX_EXT_PAGES: u16 = 8;

const SUMMARY: &str = "ATA SMART summary error log";
const EXT_ERROR: &str = "ATA extended comprehensive error log";
const SELF_TEST: &str = "ATA SMART self-test log";
const EXT_SELF_TEST: &str = "ATA extended self-test log";
const DIRECTORY: &str = "ATA General Purpose log directory";

/// A log sector sums to zero; unlike the data pages, all zeros is valid (empty).
fn log_checksum(what: &'static str, page: &[u8]) -> Result<(), PageError> {
    if page.len() < SECTOR {
        return Err(PageError::short(what, SECTOR, page.len()));
    }
    let sum = page[..SECTOR].iter().fold(0u8, |a, b| a.wrapping_add(*b));
    if sum != 0 {
        return Err(PageError::new(
            what,
            format!("checksum mismatch (bytes sum to 0x{sum:02x}, not 0)"),
        ));
    }
    Ok(())
}

/// The pages of log `address` in the GP log directory (word n: pages of log n).
pub fn directory_pages(directory: &[u8], address: u8) -> Result<u16, PageError> {
    if directory.len() < SECTOR {
        return Err(PageError::short(DIRECTORY, SECTOR, directory.len()));
    }
    Ok(le16(directory, 2 * usize::from(address)))
}

/// The error register in words (ACS-3 error bits).
fn error_bits(error: u8) -> String {
    const BITS: [(u8, &str); 7] = [
        (0x80, "ICRC: interface CRC error"),
        (0x40, "UNC: uncorrectable data"),
        (0x20, "MC: media changed"),
        (0x10, "IDNF: address not found"),
        (0x08, "MCR: media change request"),
        (0x04, "ABRT: command aborted"),
        (0x02, "NM: no media"),
    ];
    let names: Vec<&str> = BITS
        .iter()
        .filter(|(bit, _)| error & bit != 0)
        .map(|(_, name)| *name)
        .collect();
    if names.is_empty() {
        format!("error register 0x{error:02x}")
    } else {
        format!("{} (error register 0x{error:02x})", names.join(", "))
    }
}

/// The drive's state when an error happened (bits 3:0 of the state byte).
fn state_name(state: u8) -> Option<String> {
    Some(
        match state & 0x0F {
            0 => return None,
            1 => "sleep",
            2 => "standby",
            3 => "active or idle",
            4 => "running SMART off-line or self-test",
            0x0B..=0x0F => "vendor-specific state",
            _ => "reserved state",
        }
        .to_string(),
    )
}

/// An ATA command opcode in words, for the command an error happened on.
pub fn command_name(op: u8) -> String {
    let name = match op {
        0x06 => "DATA SET MANAGEMENT",
        0x20 => "READ SECTOR(S)",
        0x24 => "READ SECTOR(S) EXT",
        0x25 => "READ DMA EXT",
        0x2F => "READ LOG EXT",
        0x30 => "WRITE SECTOR(S)",
        0x34 => "WRITE SECTOR(S) EXT",
        0x35 => "WRITE DMA EXT",
        0x40 => "READ VERIFY SECTOR(S)",
        0x42 => "READ VERIFY SECTOR(S) EXT",
        0x47 => "READ LOG DMA EXT",
        0x60 => "READ FPDMA QUEUED",
        0x61 => "WRITE FPDMA QUEUED",
        0xB0 => "SMART",
        0xC8 => "READ DMA",
        0xCA => "WRITE DMA",
        0xE0 => "STANDBY IMMEDIATE",
        0xE7 => "FLUSH CACHE",
        0xEA => "FLUSH CACHE EXT",
        0xEC => "IDENTIFY DEVICE",
        0xEF => "SET FEATURES",
        _ => return format!("command 0x{op:02x}"),
    };
    format!("{name} (0x{op:02x})")
}

/// Slot indices of a ring of `n`, newest (`newest`, 0-based) first.
fn ring_newest_first(newest: usize, n: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |k| (newest + n - k) % n)
}

/// Parses the summary error log (0x01): count and five entries, 28-bit LBAs.
pub fn parse_summary_error_log(page: &[u8]) -> Result<ErrorLog, PageError> {
    log_checksum(SUMMARY, page)?;
    // Byte 1: the newest entry, 1..=5; 0 when the log is empty.
    let pointer = usize::from(page[1]);
    if pointer > 5 {
        return Err(PageError::new(
            SUMMARY,
            format!("error log pointer {pointer} outside 0..=5"),
        ));
    }
    let count = u64::from(le16(page, 452));
    let mut entries = Vec::new();
    if pointer > 0 {
        for slot in ring_newest_first(pointer - 1, 5) {
            // Five 12-byte command structures, then the 30-byte error structure.
            let e = &page[2 + 90 * slot..2 + 90 * (slot + 1)];
            if e.iter().all(|&b| b == 0) {
                continue;
            }
            let err = &e[60..90];
            let lba = u64::from(err[6] & 0x0F) << 24
                | u64::from(err[5]) << 16
                | u64::from(err[4]) << 8
                | u64::from(err[3]);
            let command = (0..5)
                .rev()
                .map(|i| &e[12 * i..12 * (i + 1)])
                .find(|c| c.iter().any(|&b| b != 0))
                .map(|c| command_name(c[7]));
            let number = count.saturating_sub(entries.len() as u64);
            entries.push(ErrorEntry {
                number,
                power_on_hours: Some(u64::from(le16(err, 28))),
                lba: Some(lba),
                error: error_bits(err[1]),
                command,
                state: state_name(err[27]),
            });
        }
    }
    Ok(ErrorLog {
        source: format!("{SUMMARY} (0x01)"),
        count,
        entries,
    })
}

/// Parses the extended error log (0x03): 4 entries a sector, 48-bit LBAs.
pub fn parse_ext_error_log(pages: &[u8]) -> Result<ErrorLog, PageError> {
    let sectors = pages.len() / SECTOR;
    if sectors == 0 {
        return Err(PageError::short(EXT_ERROR, SECTOR, pages.len()));
    }
    for s in 0..sectors {
        log_checksum(EXT_ERROR, &pages[s * SECTOR..(s + 1) * SECTOR])?;
    }
    let slots = 4 * sectors;
    let index = usize::from(le16(pages, 2));
    if index > slots {
        return Err(PageError::new(
            EXT_ERROR,
            format!("error log index {index} outside the {slots} entries read"),
        ));
    }
    let count = u64::from(le16(pages, 500));
    let mut entries = Vec::new();
    if index > 0 {
        for slot in ring_newest_first(index - 1, slots) {
            let sector = slot / 4;
            let off = sector * SECTOR + 4 + 124 * (slot % 4);
            let e = &pages[off..off + 124];
            if e.iter().all(|&b| b == 0) {
                continue;
            }
            // Five 18-byte command structures, then the 34-byte error structure.
            let err = &e[90..124];
            let low = u64::from(err[8]) << 16 | u64::from(err[6]) << 8 | u64::from(err[4]);
            let high = u64::from(err[9]) << 16 | u64::from(err[7]) << 8 | u64::from(err[5]);
            let command = (0..5)
                .rev()
                .map(|i| &e[18 * i..18 * (i + 1)])
                .find(|c| c.iter().any(|&b| b != 0))
                .map(|c| command_name(c[12]));
            let number = count.saturating_sub(entries.len() as u64);
            entries.push(ErrorEntry {
                number,
                power_on_hours: Some(u64::from(le16(err, 32))),
                lba: Some(high << 24 | low),
                error: error_bits(err[1]),
                command,
                state: state_name(err[31]),
            });
        }
    }
    Ok(ErrorLog {
        source: format!("{EXT_ERROR} (0x03)"),
        count,
        entries,
    })
}

/// The self-test a log entry's number (the LBA low that started it) names.
fn self_test_kind(number: u8) -> String {
    match number {
        0x00 => "offline".into(),
        0x01 | 0x81 => "short".into(),
        0x02 | 0x82 => "extended".into(),
        0x03 | 0x83 => "conveyance".into(),
        0x04 | 0x84 => "selective".into(),
        n => format!("vendor (0x{n:02x})"),
    }
}

/// A self-test status byte: the outcome, and the percentage left if running.
pub fn decode_self_test_status(byte: u8) -> (SelfTestOutcome, &'static str, Option<u8>) {
    use SelfTestOutcome as O;
    let (outcome, text) = match byte >> 4 {
        0x0 => (O::Passed, "completed without error"),
        0x1 => (O::Aborted, "aborted by the host"),
        0x2 => (O::Aborted, "interrupted by a reset"),
        0x3 => (O::Failed, "fatal error: the test could not complete"),
        0x4 => (O::Failed, "failed: unknown element"),
        0x5 => (O::Failed, "failed: electrical element"),
        0x6 => (O::Failed, "failed: servo or seek element"),
        0x7 => (O::Failed, "failed: read element"),
        0x8 => (O::Failed, "failed: handling damage"),
        0xF => (O::InProgress, "in progress"),
        _ => (O::Unknown, "reserved status"),
    };
    let remaining = (outcome == O::InProgress).then(|| (byte & 0x0F).min(10) * 10);
    (outcome, text, remaining)
}

fn self_test_entry(number: u8, status: u8, hours: u16, lba: Option<u64>) -> SelfTestEntry {
    let (outcome, text, remaining_pct) = decode_self_test_status(status);
    SelfTestEntry {
        kind: self_test_kind(number),
        outcome,
        result: text.to_string(),
        power_on_hours: u64::from(hours),
        // The log fills the failing LBA only for a failed test; all ones means none.
        first_failing_lba: lba.filter(|_| outcome == SelfTestOutcome::Failed),
        remaining_pct,
    }
}

/// Parses the self-test log (0x06): 21 entries of 24 bytes.
pub fn parse_self_test_log(page: &[u8]) -> Result<SelfTestLog, PageError> {
    log_checksum(SELF_TEST, page)?;
    let newest = usize::from(page[508]);
    if newest > 21 {
        return Err(PageError::new(
            SELF_TEST,
            format!("newest entry {newest} outside 0..=21"),
        ));
    }
    let mut entries = Vec::new();
    if newest > 0 {
        for slot in ring_newest_first(newest - 1, 21) {
            let e = &page[2 + 24 * slot..2 + 24 * (slot + 1)];
            if e.iter().all(|&b| b == 0) {
                continue;
            }
            let lba = le_uint(e, 5, 4) as u64;
            let lba = (lba != 0xFFFF_FFFF).then_some(lba);
            entries.push(self_test_entry(e[0], e[1], le16(e, 2), lba));
        }
    }
    Ok(SelfTestLog {
        source: format!("{SELF_TEST} (0x06)"),
        entries,
    })
}

/// Parses the extended self-test log (0x07): 19 entries a sector.
pub fn parse_ext_self_test_log(pages: &[u8]) -> Result<SelfTestLog, PageError> {
    let sectors = pages.len() / SECTOR;
    if sectors == 0 {
        return Err(PageError::short(EXT_SELF_TEST, SECTOR, pages.len()));
    }
    for s in 0..sectors {
        log_checksum(EXT_SELF_TEST, &pages[s * SECTOR..(s + 1) * SECTOR])?;
    }
    let slots = 19 * sectors;
    let index = usize::from(le16(pages, 2));
    if index > slots {
        return Err(PageError::new(
            EXT_SELF_TEST,
            format!("descriptor index {index} outside the {slots} entries read"),
        ));
    }
    let mut entries = Vec::new();
    if index > 0 {
        for slot in ring_newest_first(index - 1, slots) {
            let off = (slot / 19) * SECTOR + 4 + 26 * (slot % 19);
            let e = &pages[off..off + 26];
            if e.iter().all(|&b| b == 0) {
                continue;
            }
            let lba = le_uint(e, 5, 6) as u64;
            let lba = (lba != 0xFFFF_FFFF_FFFF).then_some(lba);
            entries.push(self_test_entry(e[0], e[1], le16(e, 2), lba));
        }
    }
    Ok(SelfTestLog {
        source: format!("{EXT_SELF_TEST} (0x07)"),
        entries,
    })
}

/// The self-test state in SMART READ DATA.
pub fn self_test_status(data: &super::ata::SmartData) -> SelfTestStatus {
    if !data.self_test_supported {
        return SelfTestStatus::unsupported(
            "not supported by this drive (SMART READ DATA: no self-test capability)",
        );
    }
    let (outcome, text, remaining) = decode_self_test_status(data.self_test_status);
    let running = (outcome == SelfTestOutcome::InProgress).then(|| SelfTestProgress {
        kind: None,
        percent_done: 100 - remaining.unwrap_or(100),
    });
    SelfTestStatus {
        supported: true,
        unsupported_reason: None,
        last: running.is_none().then(|| text.to_string()),
        running,
        short_minutes: (data.short_minutes != 0).then(|| u32::from(data.short_minutes)),
        long_minutes: (data.extended_minutes != 0).then(|| u32::from(data.extended_minutes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(page: &mut [u8]) {
        let sum = page[..511].iter().fold(0u8, |a, b| a.wrapping_add(*b));
        page[511] = 0u8.wrapping_sub(sum);
    }

    #[test]
    fn status_bytes() {
        assert_eq!(
            decode_self_test_status(0x00),
            (SelfTestOutcome::Passed, "completed without error", None)
        );
        assert_eq!(
            decode_self_test_status(0xF3),
            (SelfTestOutcome::InProgress, "in progress", Some(30))
        );
        assert_eq!(decode_self_test_status(0x73).0, SelfTestOutcome::Failed);
        assert_eq!(decode_self_test_status(0x10).0, SelfTestOutcome::Aborted);
        assert_eq!(decode_self_test_status(0x90).0, SelfTestOutcome::Unknown);
        // A low nibble above 9 is garbage: at most 100 % left.
        assert_eq!(decode_self_test_status(0xFF).2, Some(100));
    }

    #[test]
    fn summary_log_ring_order_and_lba() {
        let mut p = vec![0u8; 512];
        p[0] = 1;
        p[1] = 1; // newest is entry 1; entry 5 is older
        p[452] = 7; // seven errors over the drive's life
        for (slot, lba_low, hours) in [(0usize, 0x10u8, 100u16), (4, 0x20, 90)] {
            let e = &mut p[2 + 90 * slot..2 + 90 * (slot + 1)];
            e[12 * 4 + 7] = 0x25; // READ DMA EXT was the command
            let err = &mut e[60..90];
            err[1] = 0x40;
            err[3] = lba_low;
            err[6] = 0xE1; // LBA bits 27:24 = 1
            err[27] = 3;
            err[28..30].copy_from_slice(&hours.to_le_bytes());
        }
        fix(&mut p);
        let log = parse_summary_error_log(&p).unwrap();
        assert_eq!(log.count, 7);
        assert_eq!(log.entries.len(), 2);
        let e = &log.entries[0];
        assert_eq!(
            (e.number, e.power_on_hours, e.lba),
            (7, Some(100), Some(0x0100_0010))
        );
        assert!(e.error.starts_with("UNC"), "{}", e.error);
        assert_eq!(e.command.as_deref(), Some("READ DMA EXT (0x25)"));
        assert_eq!(e.state.as_deref(), Some("active or idle"));
        assert_eq!(log.entries[1].number, 6);
        assert_eq!(log.entries[1].power_on_hours, Some(90));
    }

    #[test]
    fn ext_error_log_48_bit_lba_over_two_sectors() {
        let mut p = vec![0u8; 1024];
        p[0] = 1;
        p[2] = 5; // the newest entry is the first of the second sector
        p[500] = 2;
        let off = 512 + 4;
        let err = &mut p[off + 90..off + 124];
        err[1] = 0x40;
        err[4] = 0x01; // LBA 7:0
        err[5] = 0x02; // LBA 31:24
        err[9] = 0x03; // LBA 47:40
        err[32..34].copy_from_slice(&500u16.to_le_bytes());
        p[off + 18 * 4 + 12] = 0x60;
        let (a, b) = p.split_at_mut(512);
        fix(a);
        fix(b);
        let log = parse_ext_error_log(&p).unwrap();
        assert_eq!(log.count, 2);
        assert_eq!(log.entries.len(), 1);
        assert_eq!(log.entries[0].lba, Some(0x0300_0200_0001));
        assert_eq!(
            log.entries[0].command.as_deref(),
            Some("READ FPDMA QUEUED (0x60)")
        );
        // An index past the entries read is refused, not wrapped.
        p[2] = 9;
        let (a, _) = p.split_at_mut(512);
        fix(a);
        assert!(parse_ext_error_log(&p).is_err());
    }

    #[test]
    fn self_test_log_newest_first_and_failing_lba() {
        let mut p = vec![0u8; 512];
        p[0] = 1;
        p[508] = 2;
        let e1 = &mut p[2..26];
        e1[0] = 0x01;
        e1[1] = 0x00;
        e1[2] = 10;
        e1[5..9].copy_from_slice(&[0xFF; 4]);
        let e2 = &mut p[26..50];
        e2[0] = 0x02;
        e2[1] = 0x73;
        e2[2] = 20;
        e2[5..9].copy_from_slice(&1234u32.to_le_bytes());
        fix(&mut p);
        let log = parse_self_test_log(&p).unwrap();
        assert_eq!(log.entries.len(), 2);
        assert_eq!(log.entries[0].kind, "extended");
        assert_eq!(log.entries[0].outcome, SelfTestOutcome::Failed);
        assert_eq!(log.entries[0].first_failing_lba, Some(1234));
        assert_eq!(log.entries[0].power_on_hours, 20);
        assert_eq!(log.entries[1].kind, "short");
        assert_eq!(log.entries[1].first_failing_lba, None);
        p[508] = 22;
        fix(&mut p);
        assert!(parse_self_test_log(&p).is_err());
    }

    #[test]
    fn ext_self_test_log() {
        let mut p = vec![0u8; 512];
        p[0] = 1;
        p[2] = 1;
        p[4] = 0x01;
        p[5] = 0xF4;
        fix(&mut p);
        let log = parse_ext_self_test_log(&p).unwrap();
        assert_eq!(log.entries[0].outcome, SelfTestOutcome::InProgress);
        assert_eq!(log.entries[0].remaining_pct, Some(40));
    }

    #[test]
    fn garbage_and_truncated() {
        assert!(parse_summary_error_log(&[]).is_err());
        let mut bad = [0u8; 512];
        bad[7] = 1;
        assert!(parse_summary_error_log(&bad).is_err(), "checksum");
        assert!(parse_ext_error_log(&[0u8; 100]).is_err());
        assert!(parse_self_test_log(&[0u8; 511]).is_err());
        assert!(parse_ext_self_test_log(&[]).is_err());
        // Empty logs are logs without entries.
        assert!(
            parse_summary_error_log(&[0u8; 512])
                .unwrap()
                .entries
                .is_empty()
        );
        assert!(parse_self_test_log(&[0u8; 512]).unwrap().entries.is_empty());
        assert_eq!(directory_pages(&[0u8; 10], 3).ok(), None);
    }
}
