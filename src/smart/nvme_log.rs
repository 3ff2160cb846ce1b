//! NVMe logs: the Error Information log (log page 0x01, 64-byte entries) and the Device
//! Self-test log (log page 0x06, 564 bytes: the running operation and 20 results).
//!
//! Layouts: NVMe base specification 2.0, figures 205-206 (Error Information) and 209-211
//! (Device Self-test), as nvme-cli's `nvme-types-base.h` lays them out.

use super::nvme::{ERROR_ENTRY_LEN, SELF_TEST_LOG_LEN, describe_status};
use super::{PageError, le_uint, le16};
use crate::model::{
    ErrorEntry, ErrorLog, SelfTestEntry, SelfTestLog, SelfTestOutcome, SelfTestProgress,
    SelfTestStatus,
};

const ERROR: &str = "NVMe Error Information log";
const SELF_TEST: &str = "NVMe Device Self-test log";

/// Parses 64-byte Error Information entries, newest first.
pub fn parse_error_log(page: &[u8]) -> Result<ErrorLog, PageError> {
    if page.len() < ERROR_ENTRY_LEN {
        return Err(PageError::short(ERROR, ERROR_ENTRY_LEN, page.len()));
    }
    let mut entries: Vec<ErrorEntry> = page
        .chunks_exact(ERROR_ENTRY_LEN)
        .filter_map(|e| {
            let number = le_uint(e, 0, 8) as u64;
            if number == 0 {
                return None;
            }
            let sqid = le16(e, 8);
            let cid = le16(e, 10);
            // Status field: bit 0 the phase tag, bits 15:1 the completion status.
            let status = u32::from(le16(e, 12) >> 1);
            let lba = le_uint(e, 16, 8) as u64;
            let nsid = le_uint(e, 24, 4) as u32;
            let queue = if sqid == 0 {
                "admin queue".to_string()
            } else {
                format!("I/O queue {sqid}")
            };
            let ns = match nsid {
                0 | 0xFFFF_FFFF => String::new(),
                n => format!(", namespace {n}"),
            };
            Some(ErrorEntry {
                number,
                power_on_hours: None,
                lba: (sqid != 0).then_some(lba),
                error: describe_status(status),
                command: Some(format!("{queue}, command id 0x{cid:04x}{ns}")),
                state: None,
            })
        })
        .collect();
    entries.sort_by_key(|e| std::cmp::Reverse(e.number));
    // Two entries of one count: one error a confused controller logged twice.
    entries.dedup_by_key(|e| e.number);
    Ok(ErrorLog {
        source: format!("{ERROR} (0x01)"),
        count: entries.first().map_or(0, |e| e.number),
        entries,
    })
}

/// The self-test code in a result or in the current operation.
fn kind(code: u8) -> String {
    match code {
        0x1 => "short".into(),
        0x2 => "extended".into(),
        0xE => "vendor".into(),
        c => format!("code 0x{c:x}"),
    }
}

/// A result's outcome (bits 3:0 of its first byte) in words.
fn result(code: u8) -> Option<(SelfTestOutcome, &'static str)> {
    use SelfTestOutcome as O;
    Some(match code {
        0x0 => (O::Passed, "completed without error"),
        0x1 => (O::Aborted, "aborted by a Device Self-test command"),
        0x2 => (O::Aborted, "aborted by a controller reset"),
        0x3 => (O::Aborted, "aborted: a namespace was removed"),
        0x4 => (O::Aborted, "aborted by a Format NVM command"),
        0x5 => (O::Failed, "fatal error or unknown test error"),
        0x6 => (O::Failed, "failed: unknown segment"),
        0x7 => (O::Failed, "failed: one or more segments"),
        0x8 => (O::Aborted, "aborted for an unknown reason"),
        0x9 => (O::Aborted, "aborted by a sanitize operation"),
        // 0xF: an unused entry.
        0xF => return None,
        _ => (O::Unknown, "reserved result"),
    })
}

/// Parses the Device Self-test log: results, newest first, and the running test.
pub fn parse_self_test_log(
    page: &[u8],
) -> Result<(SelfTestLog, Option<SelfTestProgress>), PageError> {
    if page.len() < SELF_TEST_LOG_LEN {
        return Err(PageError::short(SELF_TEST, SELF_TEST_LOG_LEN, page.len()));
    }
    let running = match page[0] & 0x0F {
        0 => None,
        op => Some(SelfTestProgress {
            kind: Some(kind(op)),
            percent_done: (page[1] & 0x7F).min(100),
        }),
    };
    let entries = page[4..SELF_TEST_LOG_LEN]
        .chunks_exact(28)
        .filter_map(|r| {
            let (outcome, text) = result(r[0] & 0x0F)?;
            // Valid Diagnostic Information bit 1: the failing LBA field is valid.
            let lba = (r[2] & 0x02 != 0).then(|| le_uint(r, 16, 8) as u64);
            Some(SelfTestEntry {
                kind: kind(r[0] >> 4),
                outcome,
                result: if r[0] & 0x0F == 0x7 && r[1] != 0 {
                    format!("failed: segment {}", r[1])
                } else {
                    text.to_string()
                },
                power_on_hours: le_uint(r, 4, 8) as u64,
                first_failing_lba: lba.filter(|_| outcome == SelfTestOutcome::Failed),
                remaining_pct: None,
            })
        })
        .collect();
    Ok((
        SelfTestLog {
            source: format!("{SELF_TEST} (0x06)"),
            entries,
        },
        running,
    ))
}

/// The self-test state from the Device Self-test log.
pub fn self_test_status(
    log: &SelfTestLog,
    running: Option<SelfTestProgress>,
    edstt_minutes: u16,
) -> SelfTestStatus {
    SelfTestStatus {
        supported: true,
        unsupported_reason: None,
        last: running
            .is_none()
            .then(|| {
                log.entries
                    .first()
                    .map(|e| format!("{}: {}", e.kind, e.result))
            })
            .flatten(),
        running,
        // The short test takes at most two minutes (NVMe base 2.0, 5.8).
        short_minutes: Some(2),
        long_minutes: (edstt_minutes != 0).then_some(u32::from(edstt_minutes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_entries_newest_first_and_unused_skipped() {
        let mut p = vec![0u8; 4 * 64];
        // entry 0: count 3, I/O queue 1, status 0x0281 (unrecovered read error)
        p[0] = 3;
        p[8] = 1;
        p[10] = 0x34;
        p[12..14].copy_from_slice(&((0x0281u16) << 1).to_le_bytes());
        p[16] = 0x99;
        p[24] = 1;
        // entry 2: count 5, admin queue
        p[128] = 5;
        let log = parse_error_log(&p).unwrap();
        assert_eq!(log.count, 5);
        assert_eq!(log.entries.len(), 2);
        assert_eq!(log.entries[0].number, 5);
        assert_eq!(log.entries[0].lba, None);
        assert_eq!(
            log.entries[0].command.as_deref(),
            Some("admin queue, command id 0x0000")
        );
        let e = &log.entries[1];
        assert_eq!(e.lba, Some(0x99));
        assert!(e.error.contains("0x0281"), "{}", e.error);
        assert_eq!(
            e.command.as_deref(),
            Some("I/O queue 1, command id 0x0034, namespace 1")
        );
    }

    #[test]
    fn self_test_log_running_and_results() {
        let mut p = vec![0u8; SELF_TEST_LOG_LEN];
        p[0] = 0x2;
        p[1] = 42;
        for r in p[4..].chunks_exact_mut(28) {
            r[0] = 0x0F; // unused
        }
        p[4] = 0x17; // short, failed segments
        p[5] = 3;
        p[6] = 0x02;
        p[8] = 10; // hours
        p[20] = 0x55; // failing LBA
        p[32] = 0x20; // extended, passed
        let (log, running) = parse_self_test_log(&p).unwrap();
        assert_eq!(
            running,
            Some(SelfTestProgress {
                kind: Some("extended".into()),
                percent_done: 42
            })
        );
        assert_eq!(log.entries.len(), 2);
        assert_eq!(log.entries[0].result, "failed: segment 3");
        assert_eq!(log.entries[0].first_failing_lba, Some(0x55));
        assert_eq!(log.entries[0].power_on_hours, 10);
        assert_eq!(log.entries[1].outcome, SelfTestOutcome::Passed);
        let st = self_test_status(&log, running, 30);
        assert!(st.is_running());
        assert_eq!(st.long_minutes, Some(30));
    }

    #[test]
    fn truncated() {
        assert!(parse_error_log(&[0u8; 63]).is_err());
        assert!(parse_self_test_log(&[0u8; 563]).is_err());
        // A completion byte over 100 is garbage, capped.
        let mut p = vec![0xFFu8; SELF_TEST_LOG_LEN];
        p[0] = 1;
        let (_, running) = parse_self_test_log(&p).unwrap();
        assert_eq!(running.unwrap().percent_done, 100);
    }
}
