//! What `disktriage history` prints: one block per past run, oldest first, in the Results
//! screen's figures and formats; or the records as JSON.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::run::rewrite_rates_note;
use super::table::{count, ms, rate};
use crate::bench::analysis::figures::row;
use crate::history::{HISTORY_SCHEMA, HistoryEntry};
use crate::model::text::neutralize_controls;
use crate::model::{Bytes, DiskIdentity};

/// The text listing. `filter` is the disk asked for and its kernel name now, if any.
pub fn render_text(
    entries: &[&HistoryEntry],
    file: &Path,
    filter: Option<(&DiskIdentity, Option<&str>)>,
) -> String {
    let mut out = String::new();
    let file = neutralize_controls(&file.display().to_string());
    match filter {
        Some((disk, now)) => {
            let now = now.map_or(String::new(), |n| format!(" ({n} now)"));
            let _ = writeln!(out, "Runs of the disk with {disk}{now}: {}", entries.len());
        }
        None => {
            let _ = writeln!(out, "Runs: {}", entries.len());
        }
    }
    let _ = writeln!(out, "(history: {file})");
    if entries.is_empty() {
        out.push_str(
            "No runs recorded yet: every finished `disktriage run` and TUI run adds one.\n",
        );
        return out;
    }
    let _ = writeln!(
        out,
        "{:<16}  {:<8} {:<12} {:<11} {:<3} {:>8} {:>7} {:>7} {:>2}",
        "WHEN (UTC)", "DEVICE", "TEST", "SCHED", "WC", "MB/s", "IOPS", "p99 ms", "n"
    );
    for e in entries {
        let r = row(&e.figures);
        let cell = |v: Option<f64>, f: fn(f64) -> String| v.map_or("-".to_string(), f);
        let s = &e.settings;
        let when = e.when();
        // A rate over few I/Os is shown, marked; the facts below say how few.
        let low_count = r.is_some_and(|r| r.low_count && r.mbps.is_some());
        let low = if low_count { "*" } else { "" };
        let _ = writeln!(
            out,
            "{:<16}  {:<8} {:<12} {:<11} {:<3} {:>8} {:>7} {:>7} {:>2}",
            when.trim_end_matches(" UTC"),
            neutralize_controls(&e.device),
            neutralize_controls(&e.test),
            neutralize_controls(s.scheduler.as_deref().unwrap_or("-")),
            // A scan, a triage or a flush check switched nothing and read no cache state.
            if record_line(e).is_some() {
                "-".to_string()
            } else {
                neutralize_controls(crate::model::cache::drive_cache_shown(
                    s.drive_cache.as_deref(),
                ))
            },
            cell(r.and_then(|r| r.mbps), rate) + low,
            cell(r.and_then(|r| r.iops), count) + low,
            cell(r.and_then(|r| r.p99_ms), ms),
            e.repeats,
        );
        // A scan, a triage and a flush check have no rates: their line says what they found.
        if let Some(found) = record_line(e) {
            let _ = writeln!(out, "  {}", neutralize_controls(&found));
            if filter.is_none() {
                let _ = writeln!(out, "  disk: {}", e.disk);
            }
            continue;
        }
        let mut facts = vec![
            s.params.clone(),
            format!("engine {}", s.engine),
            crate::bench::plan::io_path_label(s.direct, s.huge_pages).to_string(),
        ];
        if let Some(k) = &s.kernel_cache {
            facts.push(format!("kernel {k}"));
        }
        if let Some(spread) = r.and_then(|r| r.noise_pct) {
            facts.push(format!("noise {spread:.1}%"));
        }
        if e.figures.len() > 1 {
            facts.push("peak MB/s and IOPS, worst p99 of the phases".into());
        }
        if low_count {
            facts.extend(
                e.figures
                    .iter()
                    .filter_map(|f| f.low_count_note())
                    .map(|n| format!("* {n}")),
            );
        }
        // A rewrite's rates are over the time its writes took, as its Results said.
        if let Some(note) = e
            .figures
            .iter()
            .map(|f| f.time_base)
            .find(|b| b.is_busy())
            .and_then(rewrite_rates_note)
        {
            facts.push(note);
        }
        let _ = writeln!(out, "  {}", neutralize_controls(&facts.join("; ")));
        if filter.is_none() {
            let _ = writeln!(out, "  disk: {}", e.disk);
        }
        if e.stopped {
            out.push_str("  stopped before the end: the figures cover what completed\n");
        }
        if let Some(err) = &e.error {
            let _ = writeln!(out, "  error: {}", neutralize_controls(err));
        }
    }
    out
}

/// What a scan, triage, flush check, capacity probe or TRIM check found, in one line; `None`
/// for a test.
fn record_line(e: &HistoryEntry) -> Option<String> {
    if let Some(scan) = &e.scan {
        let sectors = if scan.bytes_bad > 0 {
            format!(
                " in {} range{}",
                scan.unreadable_ranges,
                if scan.unreadable_ranges == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        return Some(format!(
            "read {} of {}; unreadable {}{sectors}; slow ranges {}, TIME {}; {} in {:.0} s: {}",
            Bytes(scan.bytes_read).iec(),
            Bytes(scan.planned).iec(),
            Bytes(scan.bytes_bad).iec(),
            scan.slow_ranges,
            scan.time_ranges,
            scan.end,
            scan.seconds,
            scan.verdict
        ));
    }
    if let Some(t) = &e.triage {
        let first = t
            .rules
            .first()
            .map_or("no finding".to_string(), |r| format!("first finding {r}"));
        return Some(format!("verdict {}; {first}", t.verdict));
    }
    if let Some(c) = &e.check {
        return Some(format!("verdict {}: {}", c.verdict, c.sentence));
    }
    e.flush
        .as_ref()
        .map(|f| format!("verdict {}: {}", f.verdict, f.sentence))
}

#[derive(Serialize)]
struct HistoryJson<'a> {
    schema: u32,
    runs: &'a [&'a HistoryEntry],
}

/// The records as JSON, in the history's own layout.
pub fn render_json(entries: &[&HistoryEntry]) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(&HistoryJson {
        schema: HISTORY_SCHEMA,
        runs: entries,
    })?;
    text.push('\n');
    Ok(text)
}
