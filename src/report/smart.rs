//! What `disktriage smart` prints: the verdict and its reasons first, then temperature,
//! power-on time, and the ATA attribute table or the NVMe health log, within 80 columns.

use serde::Serialize;

use super::table::{self, Column, wrap};
use crate::model::{AtaAttribute, Bytes, NvmeHealth, SmartHealth, Verdict};

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

#[derive(Serialize)]
struct SmartJson<'a> {
    schema: u32,
    partition: Option<&'a str>,
    #[serde(flatten)]
    health: &'a SmartHealth,
}

pub fn render_json(h: &SmartHealth, partition: Option<&str>) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(&SmartJson {
        schema: SMART_JSON_SCHEMA,
        partition,
        health: h,
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
