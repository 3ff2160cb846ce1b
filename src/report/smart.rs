//! What `disktriage smart` prints within 80 columns: the verdict and its reasons, temperature,
//! power-on time, the ATA attributes or NVMe health log, and the drive's logs. The TUI's
//! health view shows the same text.

use serde::Serialize;

use super::table::{self, Column, wrap};
use crate::model::{
    AtaAttribute, Bytes, DriveLogs, ErrorEntry, LogRead, NvmeHealth, SelfTestKind, SelfTestStatus,
    SmartHealth, Verdict,
};

/// Version of the JSON layout.
pub const SMART_JSON_SCHEMA: u32 = 1;

const ATTR_COLUMNS: [Column; 8] = [
    Column::right("ID"),
    Column::left("ATTRIBUTE_NAME").shrink_to(12, 0),
    Column::left("FLAGS"),
    Column::right("VALUE"),
    Column::right("WORST"),
    Column::right("THRESH"),
    Column::left("FAIL"),
    Column::left("RAW_VALUE").shrink_to(10, 1),
];

/// smartctl's brief flag letters: P prefailure, O online, S speed, R error rate, C event
/// count, K auto-keep.
fn flag_letters(flags: u16) -> String {
    "POSRCK"
        .chars()
        .enumerate()
        .map(|(i, c)| if flags & (1 << i) != 0 { c } else { '-' })
        .collect()
}

fn attribute_row(a: &AtaAttribute) -> Vec<String> {
    let raw = match &a.decoded {
        Some(d) => d.clone(),
        // Vendor-specific: the raw 48 bits as they are.
        None if !a.known => format!("0x{:012x}", a.raw),
        None => a.raw.to_string(),
    };
    vec![
        a.id.to_string(),
        a.name.clone(),
        flag_letters(a.flags),
        format!("{:03}", a.value),
        format!("{:03}", a.worst),
        a.threshold
            .map(|t| format!("{t:03}"))
            .unwrap_or_else(|| "?".into()),
        a.state.when_failed().to_string(),
        raw,
    ]
}

fn nvme_lines(n: &NvmeHealth) -> String {
    let bytes = |units: u128| {
        let b = NvmeHealth::units_to_bytes(units);
        Bytes(u64::try_from(b).unwrap_or(u64::MAX)).iec()
    };
    let warnings = if n.critical_warnings.is_empty() {
        "none".to_string()
    } else {
        n.critical_warnings.join(", ")
    };
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("  {k:<20} {v}\n"));
    line(
        "Critical warning",
        format!("0x{:02x} ({warnings})", n.critical_warning),
    );
    line(
        "Available spare",
        format!(
            "{}% (threshold {}%)",
            n.available_spare_pct, n.available_spare_threshold_pct
        ),
    );
    line("Percentage used", format!("{}%", n.percentage_used));
    line(
        "Data read",
        format!("{} units ({})", n.data_units_read, bytes(n.data_units_read)),
    );
    line(
        "Data written",
        format!(
            "{} units ({})",
            n.data_units_written,
            bytes(n.data_units_written)
        ),
    );
    line("Power cycles", n.power_cycles.to_string());
    line("Unsafe shutdowns", n.unsafe_shutdowns.to_string());
    line("Media errors", n.media_errors.to_string());
    line("Error log entries", n.error_log_entries.to_string());
    out
}

/// The text report.
pub fn render_text(h: &SmartHealth, partition: Option<&str>, width: usize) -> String {
    let mut out = String::new();
    if let Some(p) = partition {
        out.push_str(&format!(
            "{p} is a partition: SMART belongs to its disk {}.\n",
            h.device
        ));
    }
    if h.verdict == Verdict::Unavailable {
        out.push_str(&wrap(
            &format!("{} ({}): ", h.device, h.transport),
            h.unavailable_reason
                .as_deref()
                .unwrap_or("SMART not available"),
            width,
        ));
        for note in &h.notes {
            out.push_str(&wrap("  Note: ", note, width));
        }
        return out;
    }
    out.push_str(&format!(
        "{} ({}): SMART {} (from {})\n",
        h.device, h.transport, h.verdict, h.source
    ));
    for f in &h.findings {
        out.push_str(&wrap(&format!("  {}: ", f.severity), &f.text, width));
    }
    for note in &h.notes {
        out.push_str(&wrap("  Note: ", note, width));
    }
    let temp = h
        .temperature_c
        .map(|t| format!("{t} C"))
        .unwrap_or_else(|| "not reported".into());
    out.push_str(&format!("  {:<20} {temp}\n", "Temperature"));
    if let Some(hours) = h.power_on_hours {
        out.push_str(&format!("  {:<20} {hours} h\n", "Power-on time"));
    }
    if let Some(n) = &h.nvme {
        out.push_str(&nvme_lines(n));
    }
    if let Some(a) = &h.ata {
        if let Some(problem) = &a.attribute_problem {
            out.push_str(&wrap("  Attribute table: ", problem, width));
        }
        if !a.attributes.is_empty() {
            let rows: Vec<Vec<String>> = a.attributes.iter().map(attribute_row).collect();
            out.push('\n');
            out.push_str(&table::render(&ATTR_COLUMNS, &rows, width));
            out.push_str(&wrap(
                "FLAGS: ",
                "P prefailure, O online, S speed, R error rate, C events, K auto-keep.",
                width,
            ));
            if a.attributes.iter().any(|a| !a.known) {
                out.push_str(&wrap(
                    "",
                    "Vendor-specific attributes show their raw bytes in hex and are not \
                     judged.",
                    width,
                ));
            }
        }
    }
    out
}

/// Error log entries the text shows (the JSON has every entry read).
pub const SHOWN_ERRORS: usize = 8;

const SELF_TEST_COLUMNS: [Column; 5] = [
    Column::right("#"),
    Column::left("TYPE"),
    Column::left("RESULT").shrink_to(12, 0),
    Column::right("HOURS"),
    Column::right("FIRST FAILING LBA"),
];

/// What a self-test costs, said before one starts: no data changed, the drive slower, a long
/// test hours.
pub fn self_test_warning(kind: SelfTestKind, status: Option<&SelfTestStatus>) -> String {
    let minutes = |m: Option<u32>| match m {
        Some(m) if m >= 120 => {
            format!("about {:.1} hours by the drive's estimate", m as f64 / 60.0)
        }
        Some(m) => format!("about {m} min by the drive's estimate"),
        None => "a time the drive does not estimate".into(),
    };
    match kind {
        SelfTestKind::Short => format!(
            "A short self-test takes {}. The drive tests itself in the background: it changes \
             no data and keeps serving I/O, somewhat slower while it runs.",
            minutes(status.and_then(|s| s.short_minutes))
        ),
        SelfTestKind::Long => format!(
            "A long (extended) self-test reads the whole surface: it takes {}, hours on a \
             large disk. It changes no data and the drive keeps serving I/O, but reads and \
             writes are slower until it ends, and a benchmark run meanwhile measures the test \
             too. It stops at power off; --self-test abort stops it.",
            minutes(status.and_then(|s| s.long_minutes))
        ),
        SelfTestKind::Abort => "Stops the running self-test; the log records it as aborted by \
             the host."
            .into(),
    }
}

/// The self-test state in one line: running with its progress, or the last result.
pub fn self_test_line(st: &SelfTestStatus) -> String {
    if !st.supported {
        return st
            .unsupported_reason
            .clone()
            .unwrap_or_else(|| "not supported".into());
    }
    match (&st.running, &st.last) {
        (Some(r), _) => format!(
            "{} self-test running, {}% done",
            r.kind.as_deref().unwrap_or("a"),
            r.percent_done
        ),
        (None, Some(last)) => format!("none running; the last one: {last}"),
        (None, None) => "none running".into(),
    }
}

fn error_entry_line(e: &ErrorEntry) -> String {
    let mut parts = vec![e.error.clone()];
    if let Some(lba) = e.lba {
        parts.push(format!("LBA {lba}"));
    }
    if let Some(c) = &e.command {
        parts.push(format!("during {c}"));
    }
    if let Some(s) = &e.state {
        parts.push(format!("drive {s}"));
    }
    let when = e
        .power_on_hours
        .map(|h| format!(" at {h} h"))
        .unwrap_or_default();
    format!("#{}{when}: {}", e.number, parts.join(", "))
}

/// The drive's logs as text: the self-test state, the error log and the self-test log.
pub fn render_logs_text(logs: &DriveLogs, width: usize) -> String {
    render_self_test_text(logs, width) + &render_log_entries_text(logs, width)
}

/// The self-test state and the drive's time estimates.
pub fn render_self_test_text(logs: &DriveLogs, width: usize) -> String {
    let mut out = String::new();
    out.push_str(&wrap(
        "Self-test: ",
        &self_test_line(&logs.self_test),
        width,
    ));
    if logs.self_test.supported {
        let est = |m: Option<u32>| m.map_or("?".into(), |m| format!("about {m} min"));
        out.push_str(&wrap(
            "  ",
            &format!(
                "short {}, long {} (--self-test short|long|abort)",
                est(logs.self_test.short_minutes),
                est(logs.self_test.long_minutes)
            ),
            width,
        ));
    }
    out
}

/// The error log and the self-test log.
pub fn render_log_entries_text(logs: &DriveLogs, width: usize) -> String {
    let mut out = String::new();
    match &logs.error_log {
        LogRead::Read(log) => {
            let shown = log.entries.len().min(SHOWN_ERRORS);
            out.push_str(&wrap(
                "Error log: ",
                &format!(
                    "{} error(s) over the drive's life, {} entr{} kept{} ({})",
                    log.count,
                    log.entries.len(),
                    if log.entries.len() == 1 { "y" } else { "ies" },
                    if shown < log.entries.len() {
                        format!(", the last {shown} shown")
                    } else {
                        String::new()
                    },
                    log.source
                ),
                width,
            ));
            for e in log.entries.iter().take(shown) {
                out.push_str(&wrap("  ", &error_entry_line(e), width));
            }
        }
        LogRead::NotSupported { reason } => out.push_str(&wrap("Error log: ", reason, width)),
        LogRead::Failed { error } => {
            out.push_str(&wrap("Error log: ", &format!("unreadable: {error}"), width))
        }
    }
    match &logs.self_test_log {
        LogRead::Read(log) => {
            out.push_str(&wrap(
                "Self-test log: ",
                &format!(
                    "{} entr{} ({})",
                    log.entries.len(),
                    if log.entries.len() == 1 { "y" } else { "ies" },
                    log.source
                ),
                width,
            ));
            if !log.entries.is_empty() {
                let rows: Vec<Vec<String>> = log
                    .entries
                    .iter()
                    .enumerate()
                    .map(|(i, e)| {
                        vec![
                            (i + 1).to_string(),
                            e.kind.clone(),
                            match e.remaining_pct {
                                Some(r) => format!("{} ({r}% left)", e.result),
                                None => e.result.clone(),
                            },
                            e.power_on_hours.to_string(),
                            e.first_failing_lba.map_or("-".into(), |l| l.to_string()),
                        ]
                    })
                    .collect();
                out.push_str(&table::render(&SELF_TEST_COLUMNS, &rows, width));
            }
        }
        LogRead::NotSupported { reason } => out.push_str(&wrap("Self-test log: ", reason, width)),
        LogRead::Failed { error } => out.push_str(&wrap(
            "Self-test log: ",
            &format!("unreadable: {error}"),
            width,
        )),
    }
    out
}

#[derive(Serialize)]
struct SmartJson<'a> {
    schema: u32,
    partition: Option<&'a str>,
    #[serde(flatten)]
    health: &'a SmartHealth,
    /// The drive's logs, or why they could not be read.
    logs: Option<&'a DriveLogs>,
    logs_error: Option<String>,
}

pub fn render_json(
    h: &SmartHealth,
    logs: Result<&DriveLogs, String>,
    partition: Option<&str>,
) -> anyhow::Result<String> {
    let (logs, logs_error) = match logs {
        Ok(l) => (Some(l), None),
        Err(e) => (None, Some(e)),
    };
    let mut text = serde_json::to_string_pretty(&SmartJson {
        schema: SMART_JSON_SCHEMA,
        partition,
        health: h,
        logs,
        logs_error,
    })?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags() {
        assert_eq!(flag_letters(0x0003), "PO----");
        assert_eq!(flag_letters(0x0032), "-O--CK");
        assert_eq!(flag_letters(0), "------");
    }
}
