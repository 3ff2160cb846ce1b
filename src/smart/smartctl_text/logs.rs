//! The logs in smartctl's text: ATA's extended or summary error log, NVMe's Error Information
//! table, SCSI's error counter log, the three self-test logs and the self-test execution
//! status, into the same `DriveLogs` as `smartctl -j` (`super::super::smartctl`).

use super::{PageError, Protocol, Text, collapse, count64, field, leading_int, text_of, words};
use crate::model::{
    DriveLogs, ErrorEntry, ErrorLog, LogRead, SelfTestEntry, SelfTestLog, SelfTestOutcome,
    SelfTestProgress, SelfTestStatus, Transport,
};

/// Lines that start another part of the report (and end an ATA log's block).
const SECTION_HEADS: [&str; 11] = [
    "SMART ",
    "SCT ",
    "Device Statistics",
    "Pending Defects",
    "SATA Phy",
    "=== ",
    "Selective ",
    "General Purpose Log",
    "Read ",
    "Warning:",
    "Warning!",
];

/// The lines from `start` up to the next section head.
fn block(t: &Text, start: usize) -> &[String] {
    let rest = t.lines.get(start + 1..).unwrap_or(&[]);
    let end = rest
        .iter()
        .position(|l| SECTION_HEADS.iter().any(|h| l.starts_with(h)))
        .unwrap_or(rest.len());
    rest.get(..end).unwrap_or(&[])
}

/// The lines after line `start` up to the first blank one.
fn paragraph(t: &Text, start: usize) -> &[String] {
    let rest = t.lines.get(start + 1..).unwrap_or(&[]);
    let end = rest
        .iter()
        .position(|l| l.trim().is_empty())
        .unwrap_or(rest.len());
    rest.get(..end).unwrap_or(&[])
}

fn not_supported(what: &str) -> LogRead<ErrorLog> {
    LogRead::NotSupported {
        reason: format!("the saved report: {what}"),
    }
}

/// An ATA error log block: the count and the entries, newest first.
fn ata_error_log(lines: &[String], source: &str) -> ErrorLog {
    let mut count: Option<u64> = None;
    let mut entries: Vec<ErrorEntry> = Vec::new();
    // Whether the next timestamped row is the failing command (listed first).
    let mut want_command = false;
    for l in lines {
        let line = l.trim();
        if let Some((key, value)) = field(line)
            && (key == "Device Error Count" || key == "ATA Error Count")
        {
            count = value.split_whitespace().next().and_then(count64);
            continue;
        }
        if line.starts_with("No Errors Logged") {
            count.get_or_insert(0);
            continue;
        }
        if let Some(rest) = line.strip_prefix("Error ")
            && let Some((head, lifetime)) = rest.split_once("occurred at disk power-on lifetime:")
        {
            let number = head
                .split_whitespace()
                .next()
                .and_then(count64)
                .unwrap_or(0);
            entries.push(ErrorEntry {
                number,
                power_on_hours: lifetime.split_whitespace().next().and_then(count64),
                lba: None,
                error: "not described".into(),
                command: None,
                state: None,
            });
            want_command = false;
            continue;
        }
        let Some(entry) = entries.last_mut() else {
            continue;
        };
        if let Some(state) =
            line.strip_prefix("When the command that caused the error occurred, the device was")
        {
            entry.state = text_of(state.trim().trim_end_matches('.'));
        } else if let Some((_, error)) = line.split_once("Error: ") {
            entry.error = text_of(error).unwrap_or_else(|| "not described".into());
            entry.lba = error
                .split_once("LBA = ")
                .and_then(|(_, at)| at.rsplit("= ").next())
                .and_then(|n| n.trim().parse::<u64>().ok());
        } else if line.starts_with("Commands leading to the command") {
            want_command = true;
        } else if want_command {
            let w = words(line);
            if let Some(i) = w.iter().position(|(_, word)| is_uptime(word))
                && let Some((at, _)) = w.get(i + 1)
            {
                entry.command = line.get(*at..).and_then(text_of);
                want_command = false;
            }
        }
    }
    ErrorLog {
        source: source.to_string(),
        count: count.unwrap_or(entries.len() as u64),
        entries,
    }
}

/// A time since power-up as the error log prints it (`3d+08:28:41.000`).
fn is_uptime(word: &str) -> bool {
    word.contains(':')
        && word.contains('.')
        && word
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ':' | '.' | 'd' | '+'))
}

/// NVMe's Error Information table, newest first.
fn nvme_error_log(t: &Text) -> LogRead<ErrorLog> {
    // "Read Error Information Log failed", "Read 1 entries from Error Information Log failed".
    if let Some(failed) = t
        .lines
        .iter()
        .find(|l| l.starts_with("Read ") && l.contains("Error Information Log failed"))
    {
        return LogRead::Failed {
            error: text_of(failed).unwrap_or_default(),
        };
    }
    let lifetime =
        t.line_starting("SMART/Health Information (NVMe")
            .and_then(|(i, _)| {
                let health = t.fields.get(i + 1..i + 1 + paragraph(t, i).len())?;
                health.iter().flatten().find_map(|(k, v)| {
                    (k == "Error Information Log Entries").then(|| count64(v))?
                })
            });
    let Some((start, _)) = t.line_starting("Error Information (NVMe Log 0x01") else {
        return match lifetime {
            Some(count) => LogRead::Read(ErrorLog {
                source: "NVMe Error Information log (smartctl text)".into(),
                count,
                entries: Vec::new(),
            }),
            None => not_supported("no NVMe Error Information log in it"),
        };
    };
    let mut entries: Vec<ErrorEntry> = paragraph(t, start)
        .iter()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            // A row starts with the entry's index and its error count, both numbers.
            w.first()?.parse::<u64>().ok()?;
            let number = w.get(1)?.parse::<u64>().ok()?;
            let hex = |s: &&str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
            let sqid = w.get(2).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
            let cid = w.get(3).and_then(hex).unwrap_or(0);
            // smartctl prints the Status Field with its phase tag in bit 0.
            let status = w.get(4).and_then(hex).unwrap_or(0) >> 1;
            let lba = w.get(6).and_then(|s| {
                s.parse::<u64>().ok().or_else(|| {
                    s.strip_prefix("0x")
                        .and_then(|h| u64::from_str_radix(h, 16).ok())
                })
            });
            let queue = if sqid == 0 {
                "admin queue".to_string()
            } else {
                format!("I/O queue {sqid}")
            };
            Some(ErrorEntry {
                number,
                power_on_hours: None,
                lba,
                error: super::super::nvme::describe_status(u32::try_from(status).unwrap_or(0)),
                command: Some(format!("{queue}, command id 0x{cid:04x}")),
                state: None,
            })
        })
        .collect();
    entries.sort_by_key(|e| std::cmp::Reverse(e.number));
    let newest = entries.first().map_or(0, |e| e.number);
    LogRead::Read(ErrorLog {
        source: "NVMe Error Information log (smartctl text)".into(),
        count: lifetime.unwrap_or(newest).max(newest),
        entries,
    })
}

/// SCSI's error counter log: uncorrected read, write and verify errors.
fn scsi_error_log(t: &Text) -> LogRead<ErrorLog> {
    if t.line_starting("Error Counter logging not supported")
        .is_some()
    {
        return not_supported("Error Counter logging not supported");
    }
    let Some((start, _)) = t.line_starting("Error counter log") else {
        return not_supported("no error counter log in it");
    };
    let mut count = 0u64;
    let mut entries = Vec::new();
    for l in paragraph(t, start) {
        let line = l.trim();
        let Some((op, rest)) = ["read:", "write:", "verify:"]
            .iter()
            .find_map(|op| line.strip_prefix(op).map(|r| (op.trim_end_matches(':'), r)))
        else {
            continue;
        };
        let w: Vec<&str> = rest.split_whitespace().collect();
        let uncorrected = w.last().and_then(|s| count64(s)).unwrap_or(0);
        let corrected = w.get(3).and_then(|s| count64(s)).unwrap_or(0);
        count = count.saturating_add(uncorrected);
        entries.push(ErrorEntry {
            number: uncorrected,
            power_on_hours: None,
            lba: None,
            error: format!("{op}: {uncorrected} uncorrected, {corrected} corrected"),
            command: None,
            state: None,
        });
    }
    LogRead::Read(ErrorLog {
        source: "SCSI error counter log (smartctl text)".into(),
        count,
        entries,
    })
}

/// The ATA error log: the extended one, else the summary.
fn ata_error(t: &Text) -> LogRead<ErrorLog> {
    let find = |head: &str, source: &str| {
        t.line_starting(head)
            .map(|(i, _)| LogRead::Read(ata_error_log(block(t, i), source)))
    };
    if let Some(log) = find(
        "SMART Extended Comprehensive Error Log Version",
        "ATA extended comprehensive error log (smartctl text)",
    ) {
        return log;
    }
    if let Some(log) = find(
        "SMART Error Log Version",
        "ATA SMART summary error log (smartctl text)",
    ) {
        return log;
    }
    if let Some(failed) = t
        .lines
        .iter()
        .find(|l| l.starts_with("Read SMART Error Log failed"))
    {
        return LogRead::Failed {
            error: text_of(failed).unwrap_or_default(),
        };
    }
    match t.line_starting("SMART Error Log not supported") {
        Some(_) => not_supported("SMART Error Log not supported"),
        None => not_supported("no ATA error log in it"),
    }
}

/// ATA self-test status words, by status nibble.
const ATA_STATUSES: [(&str, SelfTestOutcome); 10] = [
    ("Completed without error", SelfTestOutcome::Passed),
    ("Aborted by host", SelfTestOutcome::Aborted),
    ("Interrupted (host reset)", SelfTestOutcome::Aborted),
    ("Fatal or unknown error", SelfTestOutcome::Failed),
    ("Completed: unknown failure", SelfTestOutcome::Failed),
    ("Completed: electrical failure", SelfTestOutcome::Failed),
    ("Completed: servo/seek failure", SelfTestOutcome::Failed),
    ("Completed: read failure", SelfTestOutcome::Failed),
    ("Completed: handling damage??", SelfTestOutcome::Failed),
    ("Self-test routine in progress", SelfTestOutcome::InProgress),
];

/// A test's kind from smartctl's description ("Short offline" is short).
fn kind_of(description: &str) -> String {
    let d = crate::model::text::neutralize_controls(&collapse(description));
    match d.split_whitespace().next() {
        Some(first @ ("Short" | "Extended" | "Conveyance" | "Selective" | "Offline")) => {
            first.to_lowercase()
        }
        Some("Background" | "Foreground") => d.to_lowercase(),
        _ if d.is_empty() => "self-test".into(),
        _ => d.to_lowercase(),
    }
}

/// One row of ATA's self-test log (`# 1  Short offline  Completed: read failure  90% ...`).
fn ata_self_test_row(line: &str) -> Option<SelfTestEntry> {
    let rest = line.trim_start().strip_prefix('#')?;
    let w = words(rest);
    // "#10" and "# 1": the number, then the words.
    let body_start = w.get(1)?.0;
    let body = rest.get(body_start..)?;
    let bw = words(body);
    let pct = bw.iter().position(|(_, s)| {
        s.strip_suffix('%')
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    })?;
    let (pct_at, pct_word) = *bw.get(pct)?;
    let text = collapse(body.get(..pct_at)?);
    let (description, status, outcome) = ATA_STATUSES
        .iter()
        .find_map(|(s, o)| {
            text.strip_suffix(s)
                .map(|d| (d.trim().to_string(), (*s).to_string(), *o))
        })
        .unwrap_or_else(|| {
            let mut it = text.splitn(3, ' ');
            let first = it.next().unwrap_or("").to_string();
            let second = it.next().unwrap_or("");
            let rest = it.next().unwrap_or("");
            if matches!(second, "offline" | "captive") {
                (
                    format!("{first} {second}"),
                    rest.to_string(),
                    SelfTestOutcome::Unknown,
                )
            } else {
                (
                    first,
                    format!("{second} {rest}").trim().to_string(),
                    SelfTestOutcome::Unknown,
                )
            }
        });
    let hours = bw.get(pct + 1).and_then(|(_, s)| count64(s)).unwrap_or(0);
    let lba = bw.get(pct + 2).and_then(|(_, s)| s.parse::<u64>().ok());
    let remaining = pct_word
        .trim_end_matches('%')
        .parse::<u8>()
        .ok()
        .map(|p| p.min(100));
    Some(SelfTestEntry {
        kind: kind_of(&description),
        outcome,
        result: text_of(&status).unwrap_or_else(|| "unknown".into()),
        power_on_hours: hours,
        first_failing_lba: lba.filter(|_| outcome == SelfTestOutcome::Failed),
        remaining_pct: remaining.filter(|_| outcome == SelfTestOutcome::InProgress),
    })
}

/// One row of NVMe's self-test log: ` 0   Short   Completed without error   3441   -  ...`.
fn nvme_self_test_row(line: &str) -> Option<SelfTestEntry> {
    let w: Vec<&str> = line.split_whitespace().collect();
    w.first()?.parse::<u32>().ok()?;
    let hours_at = w
        .iter()
        .skip(2)
        .position(|s| s.chars().all(|c| c.is_ascii_digit() || c == ','))?
        + 2;
    let description = w.get(1)?;
    let status = w.get(2..hours_at)?.join(" ");
    let outcome = if status.starts_with("Completed without error") {
        SelfTestOutcome::Passed
    } else if status.starts_with("Aborted") {
        SelfTestOutcome::Aborted
    } else if status.starts_with("Fatal") || status.starts_with("Completed:") {
        SelfTestOutcome::Failed
    } else {
        SelfTestOutcome::Unknown
    };
    Some(SelfTestEntry {
        kind: kind_of(description),
        outcome,
        result: text_of(&status).unwrap_or_else(|| "unknown".into()),
        power_on_hours: w.get(hours_at).and_then(|s| count64(s)).unwrap_or(0),
        first_failing_lba: w
            .get(hours_at + 1)
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|_| outcome == SelfTestOutcome::Failed),
        remaining_pct: None,
    })
}

/// One row of SCSI's self-test log: `# 1  Background short  Completed  -  302  -  [-  -  -]`.
fn scsi_self_test_row(line: &str) -> Option<SelfTestEntry> {
    let rest = line.trim_start().strip_prefix('#')?;
    let before_sense = rest.split('[').next()?;
    let w: Vec<&str> = before_sense.split_whitespace().collect();
    // Number, two words of description, status, segment, hours and LBA.
    if w.len() < 6 {
        return None;
    }
    let tail = w.len() - 3;
    let description = w.get(1..3)?.join(" ");
    let status = w.get(3..tail)?.join(" ");
    let outcome = if status.starts_with("Completed, segment failed")
        || status.starts_with("Failed")
        || status.starts_with("Unknown error")
    {
        SelfTestOutcome::Failed
    } else if status.starts_with("Completed") {
        SelfTestOutcome::Passed
    } else if status.starts_with("Aborted") {
        SelfTestOutcome::Aborted
    } else if status.contains("in progress") {
        SelfTestOutcome::InProgress
    } else {
        SelfTestOutcome::Unknown
    };
    Some(SelfTestEntry {
        kind: kind_of(&description),
        outcome,
        result: text_of(&status).unwrap_or_else(|| "unknown".into()),
        power_on_hours: w.get(tail + 1).and_then(|s| count64(s)).unwrap_or(0),
        first_failing_lba: w
            .get(tail + 2)
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|_| outcome == SelfTestOutcome::Failed),
        remaining_pct: None,
    })
}

/// The self-test log of the report's protocol.
fn self_test_log(t: &Text, protocol: Protocol) -> LogRead<SelfTestLog> {
    let none = |what: &str| LogRead::NotSupported {
        reason: format!("the saved report: {what}"),
    };
    let heads: &[(&str, &str)] = match protocol {
        Protocol::Ata => &[
            (
                "SMART Extended Self-test Log Version",
                "ATA extended self-test log (smartctl text)",
            ),
            (
                "SMART Self-test log structure",
                "ATA SMART self-test log (smartctl text)",
            ),
        ],
        Protocol::Nvme => &[(
            "Self-test Log (NVMe Log 0x06",
            "NVMe Device Self-test log (smartctl text)",
        )],
        Protocol::Scsi => &[(
            "SMART Self-test log",
            "SCSI self-test results (smartctl text)",
        )],
    };
    for (head, source) in heads {
        let Some((start, _)) = t.line_starting(head) else {
            continue;
        };
        let entries = paragraph(t, start)
            .iter()
            .filter_map(|l| match protocol {
                Protocol::Ata => ata_self_test_row(l),
                Protocol::Nvme => nvme_self_test_row(l),
                Protocol::Scsi => scsi_self_test_row(l),
            })
            .collect();
        return LogRead::Read(SelfTestLog {
            source: (*source).to_string(),
            entries,
        });
    }
    if let Some(failed) = t
        .lines
        .iter()
        .find(|l| l.starts_with("Read ") && l.contains("Self-test Log failed"))
    {
        return LogRead::Failed {
            error: text_of(failed).unwrap_or_default(),
        };
    }
    // A "none yet" line without its head (some captures drop it).
    if let Some((_, source)) = heads.first()
        && t.lines.iter().any(|l| {
            let l = l.trim_start().to_lowercase();
            l.starts_with("no self-tests have been logged") || l.starts_with("no self-tests logged")
        })
    {
        return LogRead::Read(SelfTestLog {
            source: (*source).to_string(),
            entries: Vec::new(),
        });
    }
    match t
        .lines
        .iter()
        .find(|l| l.contains("Self-test Log") && l.contains("not supported"))
        .or_else(|| {
            t.lines
                .iter()
                .find(|l| l.contains("does not support Self Test"))
        }) {
        Some(l) => none(&collapse(l)),
        None => none("no self-test log in it"),
    }
}

/// The self-test now: ATA's status byte and polling times, NVMe's status.
fn self_test_status(t: &Text) -> SelfTestStatus {
    let mut status = SelfTestStatus::unsupported(
        "a saved smartctl report: disktriage starts self-tests on the drives it reads",
    );
    if let Some((_, line)) = t.line_starting("Self-test execution status:") {
        let byte = line
            .split_once('(')
            .and_then(|(_, r)| r.split_once(')'))
            .and_then(|(n, _)| n.trim().parse::<u8>().ok());
        if let Some(byte) = byte {
            let (outcome, text, remaining) = super::super::ata_log::decode_self_test_status(byte);
            if outcome == SelfTestOutcome::InProgress {
                status.running = Some(SelfTestProgress {
                    kind: None,
                    percent_done: 100 - remaining.unwrap_or(100).min(100),
                });
            } else {
                status.last = Some(text.to_string());
            }
        }
    }
    if let Some((_, line)) = t.line_starting("Self-test status:")
        && let Some((_, rest)) = line.split_once(':')
        && rest.contains("in progress")
    {
        let done = rest
            .split_once('(')
            .and_then(|(_, r)| leading_int(r))
            .and_then(|p| u8::try_from(p).ok())
            .unwrap_or(0)
            .min(100);
        status.running = Some(SelfTestProgress {
            kind: rest.split_whitespace().next().map(|k| k.to_lowercase()),
            percent_done: done,
        });
    }
    // "Short self-test routine" / "recommended polling time: (   2) minutes."
    for (i, l) in t.lines.iter().enumerate() {
        if !l.trim_start().starts_with("recommended polling time") {
            continue;
        }
        let minutes = l
            .split_once('(')
            .and_then(|(_, r)| r.split_once(')'))
            .and_then(|(n, _)| n.trim().parse::<u32>().ok());
        let what = i.checked_sub(1).and_then(|p| t.lines.get(p));
        match what.map(|w| w.trim_start()) {
            Some(w) if w.starts_with("Short") => status.short_minutes = minutes,
            Some(w) if w.starts_with("Extended") => status.long_minutes = minutes,
            _ => {}
        }
    }
    status
}

/// Reads the logs out of `smartctl -x`/`-a` text ("not supported" if missing).
pub fn parse_smartctl_text_logs(
    text: &str,
    device: &str,
    transport: Transport,
) -> Result<DriveLogs, PageError> {
    let t = Text::read(text)?;
    let protocol = t.protocol();
    let error_log = match protocol {
        Protocol::Ata => ata_error(&t),
        Protocol::Nvme => nvme_error_log(&t),
        Protocol::Scsi => scsi_error_log(&t),
    };
    Ok(DriveLogs {
        device: device.to_string(),
        transport,
        source: match &t.version {
            Some(v) => format!("smartctl {v} (text)"),
            None => "smartctl (text)".into(),
        },
        error_log,
        self_test_log: self_test_log(&t, protocol),
        self_test: self_test_status(&t),
    })
}
