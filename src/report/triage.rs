//! The triage's outputs: the 80-column table, the JSON report (a stable schema,
//! `docs/triage.md`), the Prometheus text for node_exporter's textfile collector, and the exit
//! status (the worst verdict).

use std::cmp::Reverse;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::table::{Column, render, wrap};
use crate::history::utc_rfc3339;
use crate::model::text::neutralize_controls;
use crate::smart::meaning::Meaning;
use crate::triage::rules::{nvme, smart};
use crate::triage::{Change, DiskFacts, Judgement, TriageVerdict};

/// One disk of a triage: what was gathered, the verdict, and what changed since the last one.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskReport {
    pub facts: DiskFacts,
    pub judgement: Judgement,
    pub changes: Vec<Change>,
}

impl DiskReport {
    /// The disk's line in the table and on screen: the worst finding, or why an unknown disk
    /// could not be judged, or "no finding".
    pub fn first_finding(&self) -> String {
        if let Some(f) = self.judgement.findings.first() {
            return f.sentence.clone();
        }
        match (self.judgement.verdict, self.facts.problems.first()) {
            (TriageVerdict::Unknown, Some(why)) => why.clone(),
            _ => "no finding".to_string(),
        }
    }
}

/// What a triage judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TriageOf {
    /// This host's disks (`disktriage triage`, `v` on Devices), recorded in the history.
    #[default]
    Disks,
    /// Saved smartctl reports (`triage --report`): SMART and logs only, named by file, never
    /// recorded in the history (no disks of this host).
    SavedReports,
}

impl TriageOf {
    /// The JSON's `source`.
    pub fn as_str(self) -> &'static str {
        match self {
            TriageOf::Disks => "disks",
            TriageOf::SavedReports => "saved-reports",
        }
    }
}

/// A whole triage.
#[derive(Debug, Clone, PartialEq)]
pub struct TriageReport {
    pub host: Option<String>,
    pub started_unix: u64,
    pub seconds: f64,
    pub bound_seconds: f64,
    pub disks: Vec<DiskReport>,
    pub of: TriageOf,
}

impl TriageReport {
    /// The worst verdict of the disks (healthy when there are none).
    pub fn worst(&self) -> TriageVerdict {
        self.disks
            .iter()
            .map(|d| d.judgement.verdict)
            .max()
            .unwrap_or(TriageVerdict::Healthy)
    }

    /// The disks worst first, then by device name: the order of every output.
    pub fn ordered(&self) -> Vec<&DiskReport> {
        let mut disks: Vec<&DiskReport> = self.disks.iter().collect();
        disks.sort_by(|a, b| {
            (Reverse(a.judgement.verdict), &a.facts.identity.device)
                .cmp(&(Reverse(b.judgement.verdict), &b.facts.identity.device))
        });
        disks
    }
}

/// The narrowest table `render_table` draws.
pub const MIN_WIDTH: usize = 80;

/// The table: a heading, one line per disk worst first, then a block per disk not healthy
/// (findings, next steps, changes). Fits `width` columns (80 at least).
pub fn render_table(report: &TriageReport, width: usize) -> String {
    let width = width.max(MIN_WIDTH);
    let disks = report.ordered();
    let mut out = String::new();
    let host = report
        .host
        .as_deref()
        .map(|h| format!(" on {}", neutralize_controls(h)))
        .unwrap_or_default();
    match report.of {
        TriageOf::Disks => {
            let _ = writeln!(
                out,
                "Triage of {}{host}: {} (took {:.1} s, bound {:.0} s)",
                plural(disks.len(), "disk", "disks"),
                report.worst().as_str(),
                report.seconds,
                report.bound_seconds
            );
        }
        TriageOf::SavedReports => {
            let _ = writeln!(
                out,
                "Triage of {}: {}\n(SMART and the drive's logs only, nothing measured; not \
                 recorded in the history)",
                plural(
                    disks.len(),
                    "saved smartctl report",
                    "saved smartctl reports"
                ),
                report.worst().as_str(),
            );
        }
    }
    if disks.is_empty() {
        out.push_str("No disks to triage.\n");
        return out;
    }
    out.push('\n');
    let columns = [
        // A saved report's long file name gives way first, to 24 columns (cut with `~`; the
        // block below names it whole). Kernel names never reach that.
        Column::left("DEVICE").shrink_to(24, 0),
        Column::left("VERDICT"),
        Column::left("MODEL").shrink_to(8, 1),
        Column::left("FINDING").shrink_to(16, 0),
    ];
    let rows: Vec<Vec<String>> = disks
        .iter()
        .map(|d| {
            let first = neutralize_controls(&d.first_finding());
            vec![
                neutralize_controls(&d.facts.identity.device),
                d.judgement.verdict.as_str().to_string(),
                model_words(&d.facts),
                first,
            ]
        })
        .collect();
    // Cut to 18 before fitting: the finding needs the room more than a long model name.
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|mut r| {
            r[2] = super::table::fit(&r[2], 18);
            r
        })
        .collect();
    out.push_str(&render(&columns, &rows, width));
    for d in &disks {
        let shown = d.judgement.verdict != TriageVerdict::Healthy
            || !d.changes.is_empty()
            || !d.judgement.notes.is_empty();
        if !shown {
            continue;
        }
        out.push('\n');
        out.push_str(&disk_details(d, report.of, width));
    }
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

fn model_words(facts: &DiskFacts) -> String {
    facts
        .identity
        .model
        .as_deref()
        .map(neutralize_controls)
        .unwrap_or_else(|| "-".to_string())
}

/// A disk's block under the table: who, findings and next steps, what was not read, notes,
/// changes.
fn disk_details(d: &DiskReport, of: TriageOf, width: usize) -> String {
    let id = &d.facts.identity;
    let dev = match of {
        TriageOf::Disks => "/dev/",
        TriageOf::SavedReports => "",
    };
    let head = format!(
        "{dev}{}: {} ",
        neutralize_controls(&id.device),
        d.judgement.verdict.as_str()
    );
    let mut who = Vec::new();
    if let Some(model) = &id.model {
        who.push(neutralize_controls(model));
    }
    if let Some(serial) = &id.serial {
        who.push(format!("serial {}", neutralize_controls(serial)));
    }
    if id.capacity_bytes > 0 {
        who.push(crate::model::Bytes(id.capacity_bytes).to_string());
    }
    let who = if who.is_empty() {
        String::new()
    } else {
        format!("({})", who.join(", "))
    };
    let mut out = wrap(&head, &who, width);
    for f in &d.judgement.findings {
        let tag = format!("  [{}] ", f.severity.as_str());
        out.push_str(&wrap(&tag, &neutralize_controls(&f.sentence), width));
        out.push_str(&wrap(
            "      next: ",
            &neutralize_controls(&f.next_step),
            width,
        ));
    }
    // An unknown disk's finding already gives the reasons.
    if !matches!(
        d.judgement.verdict,
        TriageVerdict::Healthy | TriageVerdict::Unknown
    ) {
        for p in &d.facts.problems {
            out.push_str(&wrap("  not read: ", &neutralize_controls(p), width));
        }
    }
    for n in &d.judgement.notes {
        out.push_str(&wrap("  note: ", &neutralize_controls(n), width));
    }
    for c in &d.changes {
        out.push_str(&wrap(
            "  changed: ",
            &neutralize_controls(&c.to_string()),
            width,
        ));
    }
    out
}

/// The JSON report (schema in `docs/triage.md`), disks in `ordered` order.
pub fn to_json(report: &TriageReport) -> Value {
    let worst = report.worst();
    json!({
        "schema": 1,
        "source": report.of.as_str(),
        "host": report.host,
        "started": utc_rfc3339(report.started_unix),
        "seconds": report.seconds,
        // Saved reports are judged, not gathered: no bound applies.
        "bound_seconds": (report.of == TriageOf::Disks).then_some(report.bound_seconds),
        "verdict": worst.as_str(),
        "exit_status": worst.exit_status(),
        "disks": report.ordered().into_iter().map(disk_json).collect::<Vec<_>>(),
    })
}

fn disk_json(d: &DiskReport) -> Value {
    let f = &d.facts;
    let id = &f.identity;
    json!({
        "device": id.device,
        // The saved report's path (`--report`); null for a disk of this host.
        "report": f.saved_report,
        "verdict": d.judgement.verdict.as_str(),
        "identity": {
            "model": id.model,
            "serial": id.serial,
            "wwn": id.wwn,
            "firmware": id.firmware,
            "capacity_bytes": id.capacity_bytes,
            "logical_block_size": id.logical_block_size,
            "transport": id.transport.map(|t| t.as_str()),
            "rotation_rpm": id.rotation_rpm,
        },
        "findings": d.judgement.findings,
        "notes": d.judgement.notes,
        "problems": f.problems,
        "smart": smart_json(f),
        "logs": logs_json(f),
        "link": f.link,
        "fitness": fitness_json(f),
        "measurements": measurements_json(f),
        "changes": d.changes.iter().map(Change::to_json).collect::<Vec<_>>(),
        "seconds": f.seconds,
    })
}

/// A disk's fitness for an array (`triage::facts::FitnessFacts`; ERC timers in 100 ms units).
/// Power-loss protection is "not-stated" on every disk: no standard ATA, SCSI or NVMe field
/// states it, and a model name is not read.
fn fitness_json(f: &DiskFacts) -> Value {
    let fit = &f.fitness;
    json!({
        "write_cache": fit.drive.write_cache,
        "power_loss_protection": "not-stated",
        "erc": fit.drive.erc,
        "drive_zoned": fit.drive.zoned,
        "trim": fit.drive.trim,
        "farm_power_on_hours": fit.drive.farm_power_on_hours,
        "farm_recording": fit.drive.farm_recording,
        "kernel_zoned": fit.kernel_zoned,
        "nr_zones": fit.nr_zones,
        "timeout_s": fit.timeout_s,
        "arrays": fit.arrays,
    })
}

fn smart_json(f: &DiskFacts) -> Value {
    let Some(h) = &f.smart else {
        return Value::Null;
    };
    let n = nvme(f);
    json!({
        "verdict": h.verdict,
        "reallocated_sectors": f.ata_count(Meaning::ReallocatedSectors),
        "retired_blocks": f.ata_count(Meaning::RetiredBlocks),
        "pending_sectors": f.ata_count(Meaning::PendingSectors),
        "offline_uncorrectable": f.ata_count(Meaning::OfflineUncorrectable),
        "crc_errors": f.ata_count(Meaning::CrcErrors),
        "reported_uncorrect": f.ata_count(Meaning::ReportedUncorrect),
        "critical_warning": n.map(|n| n.critical_warning),
        "media_errors": n.map(|n| u64::try_from(n.media_errors).unwrap_or(u64::MAX)),
        "available_spare": n.map(|n| n.available_spare_pct),
        "available_spare_threshold": n.map(|n| n.available_spare_threshold_pct),
        "percentage_used": n.map(|n| n.percentage_used),
        "warning_temp_minutes": n.map(|n| n.warning_temp_minutes),
        "critical_temp_minutes": n.map(|n| n.critical_temp_minutes),
        "power_on_hours": smart(f).and_then(|h| h.power_on_hours),
        "temperature_c": smart(f).and_then(|h| h.temperature_c),
    })
}

fn logs_json(f: &DiskFacts) -> Value {
    let Some(logs) = &f.logs else {
        return Value::Null;
    };
    let errors = logs.error_log.read();
    let last_self_test = logs
        .last_finished_self_test()
        .map(|t| format!("{}: {} (at {} h)", t.kind, t.result, t.power_on_hours))
        .or_else(|| logs.self_test.last.clone());
    json!({
        "errors": errors.map(|e| e.count),
        "last_error_power_on_hours": errors
            .and_then(|e| e.entries.first())
            .and_then(|e| e.power_on_hours),
        "last_self_test": last_self_test,
    })
}

fn measurements_json(f: &DiskFacts) -> Value {
    let m = &f.measurements;
    let block = u64::from(f.identity.logical_block_size.max(1));
    let surface = m.surface.as_ref().map(|s| {
        json!({
            "reads": s.reads,
            "read_bytes": s.read_bytes,
            "buckets": s.buckets.iter().map(|(b, blocks)| json!({
                "label": b.label(), "upto_ms": b.upto_ms(), "blocks": blocks,
            })).collect::<Vec<_>>(),
            // `sectors` above 1: a range (`triage::Unreadable::at`).
            "unreadable": s.unreadable.iter().map(|u| {
                let (lba, sectors) = u.lbas(block);
                json!({
                    "offset": u.at.offset, "lba": lba, "sectors": sectors, "errno": u.errno,
                    "sample_lba": u.sample.offset / block,
                })
            }).collect::<Vec<_>>(),
            "slow_once": s.slow_once,
            "slow": s.slow.iter().map(|(offset, ms)| json!({
                "offset": offset, "ms": ms,
            })).collect::<Vec<_>>(),
        })
    });
    let random = (m.random_read_p50_ms.is_some() || m.random_read_p99_ms.is_some())
        .then(|| json!({"p50_ms": m.random_read_p50_ms, "p99_ms": m.random_read_p99_ms}));
    let temperature = (m.temperature_min_c.is_some() || m.temperature_max_c.is_some())
        .then(|| json!({"min": m.temperature_min_c, "max": m.temperature_max_c}));
    json!({
        "surface": surface,
        "seq_read": m.seq,
        "random_read_qd1": random,
        "temperature_c": temperature,
    })
}

/// A label value escaped per the Prometheus text format (backslash, double quote, line feed).
pub fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// One metric family of (labels, value) samples; written, with HELP and TYPE, only if any.
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(String, f64)>,
}

impl Family {
    fn new(name: &'static str, help: &'static str) -> Self {
        Family {
            name,
            help,
            samples: Vec::new(),
        }
    }

    fn add(&mut self, labels: &str, value: Option<f64>) {
        if let Some(v) = value.filter(|v| v.is_finite()) {
            self.samples.push((labels.to_string(), v));
        }
    }

    fn write(&self, out: &mut String) {
        if self.samples.is_empty() {
            return;
        }
        let _ = writeln!(out, "# HELP {} {}", self.name, self.help);
        let _ = writeln!(out, "# TYPE {} gauge", self.name);
        for (labels, v) in &self.samples {
            if labels.is_empty() {
                let _ = writeln!(out, "{} {v}", self.name);
            } else {
                let _ = writeln!(out, "{}{{{labels}}} {v}", self.name);
            }
        }
    }
}

/// The verdict as the `disktriage_verdict` series gives it.
pub fn verdict_number(v: TriageVerdict) -> f64 {
    match v {
        TriageVerdict::Healthy => 0.0,
        TriageVerdict::Suspect => 1.0,
        TriageVerdict::Failing => 2.0,
        TriageVerdict::Unknown => 3.0,
    }
}

/// The Prometheus text for node_exporter's textfile collector: gauges, one sample per disk
/// labelled by device, model and serial; an unknown value leaves its sample out.
pub fn prom_text(report: &TriageReport) -> String {
    let mut verdict = Family::new(
        "disktriage_verdict",
        "The disk's triage verdict: 0 healthy, 1 suspect, 2 failing, 3 unknown.",
    );
    let mut findings = Family::new(
        "disktriage_findings",
        "The number of findings of the disk's triage.",
    );
    let mut pending = Family::new(
        "disktriage_smart_pending_sectors",
        "ATA 197 Current_Pending_Sector: sectors the drive could not read.",
    );
    let mut reallocated = Family::new(
        "disktriage_smart_reallocated_sectors",
        "ATA 5 Reallocated_Sector_Ct: sectors remapped to spares.",
    );
    let mut media = Family::new(
        "disktriage_smart_media_errors",
        "NVMe media and data integrity errors.",
    );
    let mut critical = Family::new(
        "disktriage_smart_critical_warning",
        "The NVMe critical-warning byte (0: no warning).",
    );
    let mut used = Family::new(
        "disktriage_smart_percentage_used",
        "NVMe percentage used of the rated endurance.",
    );
    let mut seq = Family::new(
        "disktriage_seq_read_bytes_per_second",
        "Sequential read speed at the start, middle and end of the disk.",
    );
    let mut p99 = Family::new(
        "disktriage_random_read_p99_seconds",
        "QD1 random read latency, 99th percentile.",
    );
    let mut temperature = Family::new(
        "disktriage_temperature_celsius",
        "The highest drive temperature seen during the triage.",
    );
    let mut unreadable = Family::new(
        "disktriage_surface_unreadable_samples",
        "Sampled surface reads that failed.",
    );
    for d in report.ordered() {
        let f = &d.facts;
        let id = &f.identity;
        let labels = format!(
            "device=\"{}\",model=\"{}\",serial=\"{}\"",
            escape_label(&id.device),
            escape_label(id.model.as_deref().unwrap_or("")),
            escape_label(id.serial.as_deref().unwrap_or(""))
        );
        verdict.add(&labels, Some(verdict_number(d.judgement.verdict)));
        findings.add(&labels, Some(d.judgement.findings.len() as f64));
        pending.add(
            &labels,
            f.ata_count(Meaning::PendingSectors).map(|v| v as f64),
        );
        reallocated.add(
            &labels,
            f.ata_count(Meaning::ReallocatedSectors).map(|v| v as f64),
        );
        let n = nvme(f);
        media.add(&labels, n.map(|n| n.media_errors as f64));
        critical.add(&labels, n.map(|n| f64::from(n.critical_warning)));
        used.add(&labels, n.map(|n| f64::from(n.percentage_used)));
        for s in &f.measurements.seq {
            let position = match s.position {
                crate::triage::SeqPosition::Start => "start",
                crate::triage::SeqPosition::Middle => "middle",
                crate::triage::SeqPosition::End => "end",
            };
            seq.add(
                &format!("{labels},position=\"{position}\""),
                Some(s.mb_per_s * 1e6),
            );
        }
        p99.add(
            &labels,
            f.measurements.random_read_p99_ms.map(|ms| ms / 1000.0),
        );
        temperature.add(
            &labels,
            f.measurements
                .temperature_max_c
                .or_else(|| smart(f).and_then(|h| h.temperature_c))
                .map(|t| t as f64),
        );
        unreadable.add(
            &labels,
            f.measurements
                .surface
                .as_ref()
                .map(|s| s.unreadable.len() as f64),
        );
    }
    let mut last = Family::new(
        "disktriage_last_triage_timestamp_seconds",
        "When the last triage started, in seconds since the Unix epoch.",
    );
    last.add("", Some(report.started_unix as f64));
    let mut duration = Family::new(
        "disktriage_triage_duration_seconds",
        "How long the last triage took.",
    );
    duration.add("", Some(report.seconds));
    let mut out = String::new();
    for family in [
        &verdict,
        &findings,
        &pending,
        &reallocated,
        &media,
        &critical,
        &used,
        &seq,
        &p99,
        &temperature,
        &unreadable,
        &last,
        &duration,
    ] {
        family.write(&mut out);
    }
    out
}

#[cfg(test)]
mod tests;
