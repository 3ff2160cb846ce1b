//! One test on several targets: a row per target (MB/s, IOPS, p99, noise, distance from the
//! others, the kernel witness) and the verdict naming the outlier, as text and as JSON with
//! every full report. The TUI shows the same rows and verdict.

use serde::Serialize;

use super::table::{self, Column};
use crate::bench::analysis::compare::Stat;
use crate::bench::analysis::figures::PhaseFigures;
use crate::bench::analysis::several_disks::{Role, SeveralVerdict};
use crate::bench::plan::test_name::TestName;
use crate::bench::results::outcome::{RunReport, TargetClass};
use crate::model::text::neutralize_controls;
use crate::report::run::MIN_RATE_SECONDS;

/// Version of the several-targets JSON layout.
pub const MULTI_JSON_SCHEMA: u32 = 1;

/// How the targets ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// All at the same time.
    Parallel,
    /// One after the other.
    OneByOne,
}

/// What the kernel's own counters said about a target's runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum WitnessMark {
    /// Every phase's bytes agree with the kernel's within the tolerance.
    Agrees,
    /// A phase differs: the largest byte difference in percent.
    Differs { bytes_diff_pct: f64 },
    /// No counters to compare (a file on tmpfs, or nothing ran).
    Absent,
}

/// One target's figures over its repeats, from the first phase, as `bench::analysis::figures`
/// gives them to Results and every report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetRow {
    /// The path as given (`/dev/sdb`).
    pub target: String,
    /// The kernel name of a block device target.
    pub device: Option<String>,
    pub role: Role,
    /// Repeats whose first phase completed without an error.
    pub repeats: usize,
    /// MB/s (10^6 B/s), mean and spread; None when no I/O completed in a measured time.
    pub mbps: Option<Stat>,
    /// The MB/s the verdict weighs: `mbps`, also for a target too slow for 100 I/Os in the time.
    pub verdict_mbps: Option<Stat>,
    /// The rates rest on few I/Os or little time (`outcome::low_count`): shown, marked.
    pub low_count: bool,
    /// "19 I/Os in 1.00 s: low count" when `low_count`.
    pub low_count_note: Option<String>,
    pub iops: Option<Stat>,
    /// Mean p99 latency over the repeats, ms.
    pub p99_ms: Option<f64>,
    pub witness: WitnessMark,
    /// What ended the target's run early (a device error), or why it did not start.
    pub error: Option<String>,
}

impl TargetRow {
    /// The row from the repeats' reports and an error that ended it early.
    pub fn from_reports(
        target: &str,
        role: Role,
        reports: &[RunReport],
        error: Option<String>,
    ) -> Self {
        // The figures every other screen shows: rules of its own would show another MB/s
        // for the same runs whenever a repeat was thin or empty.
        let first = crate::bench::analysis::figures::figures(reports)
            .into_iter()
            .next();
        let shown = first.as_ref().filter(|f| f.rates_measured());
        let repeats = reports
            .iter()
            .filter_map(|r| r.outcome.phases.first())
            .filter(|p| p.ok())
            .count();
        let witnesses: Vec<_> = reports
            .iter()
            .flat_map(|r| &r.outcome.phases)
            .filter_map(|p| p.witness.as_ref())
            .collect();
        let witness = match witnesses
            .iter()
            .filter(|w| !w.agrees)
            .map(|w| w.bytes_diff_pct)
            .reduce(|a, b| if b.abs() > a.abs() { b } else { a })
        {
            Some(bytes_diff_pct) => WitnessMark::Differs { bytes_diff_pct },
            None if witnesses.is_empty() => WitnessMark::Absent,
            None => WitnessMark::Agrees,
        };
        TargetRow {
            target: target.to_string(),
            device: reports
                .iter()
                .find(|r| r.target.kind == TargetClass::BlockDevice)
                .and_then(|r| r.target.device.clone()),
            role,
            repeats,
            mbps: shown.map(|f| f.mbps),
            verdict_mbps: first
                .as_ref()
                .filter(|f| f.ops > 0 && f.seconds >= MIN_RATE_SECONDS)
                .map(|f| f.mbps),
            low_count: first.as_ref().is_some_and(PhaseFigures::low_count),
            low_count_note: first.as_ref().and_then(PhaseFigures::low_count_note),
            iops: shown.map(|f| f.iops),
            p99_ms: first.as_ref().and_then(|f| f.p99_ms).map(|s| s.mean),
            witness,
            error: error.or_else(|| reports.iter().find_map(RunReport::error)),
        }
    }

    /// The name the table and the verdict use: the device's kernel name, else the path.
    pub fn name(&self) -> String {
        neutralize_controls(self.device.as_deref().unwrap_or(&self.target))
    }
}

/// One target's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetResult {
    pub target: String,
    pub role: Role,
    /// Every repeat that ran, in order.
    pub reports: Vec<RunReport>,
    /// Why the target stopped early or never started (its reports say what completed).
    pub error: Option<String>,
}

/// The same test on several targets.
#[derive(Debug, Clone, PartialEq)]
pub struct SeveralResult {
    pub test: TestName,
    pub mode: Mode,
    pub repeats: u32,
    pub targets: Vec<TargetResult>,
    /// The admin stopped it (a signal): what completed is reported.
    pub stopped: bool,
}

impl SeveralResult {
    pub fn rows(&self) -> Vec<TargetRow> {
        self.targets
            .iter()
            .map(|t| TargetRow::from_reports(&t.target, t.role, &t.reports, t.error.clone()))
            .collect()
    }

    pub fn verdict(&self) -> SeveralVerdict {
        verdict_of_rows(&self.rows())
    }

    /// Any target failed (a device error, or it could not start).
    pub fn failed(&self) -> Vec<String> {
        self.rows()
            .iter()
            .filter(|r| r.error.is_some())
            .map(TargetRow::name)
            .collect()
    }
}

/// The verdict over rows with figures and no error; a members run's array is no peer of its
/// members, so left out.
pub fn verdict_of_rows(rows: &[TargetRow]) -> SeveralVerdict {
    let figures: Vec<(String, Stat)> = rows
        .iter()
        .filter(|r| r.role != Role::Array && r.error.is_none())
        .filter_map(|r| r.verdict_mbps.map(|s| (r.name(), s)))
        .collect();
    crate::bench::analysis::several_disks::outlier_verdict(&figures)
}

/// "x1.9 of a member": the array's MB/s against the median of its members'.
pub fn array_ratio(rows: &[TargetRow]) -> Option<f64> {
    let array = rows.iter().find(|r| r.role == Role::Array)?.mbps?.mean;
    let mut members: Vec<f64> = rows
        .iter()
        .filter(|r| r.role == Role::Member && r.error.is_none())
        .filter_map(|r| r.mbps.map(|s| s.mean))
        .collect();
    let median = crate::bench::analysis::several_disks::median(&mut members)?;
    (median > 0.0).then(|| array / median)
}

/// The table's cells of one row: name, role, MB/s, IOPS, p99, noise, vs others, kernel.
pub fn row_cells(row: &TargetRow, verdict: &SeveralVerdict, ratio: Option<f64>) -> Vec<String> {
    let standing = verdict.standings.iter().find(|s| s.name == row.name());
    let vs = match (row.role, standing, ratio) {
        (Role::Array, _, Some(r)) => format!("x{r:.1} member"),
        (_, Some(s), _) => format!("{:+.1} %", s.diff_pct),
        _ => "-".into(),
    };
    // Without a noise figure the mark asks, as the verdict does.
    let flag = if verdict.outliers.contains(&row.name()) && verdict.tentative {
        "SLOWER?"
    } else if verdict.outliers.contains(&row.name()) {
        "SLOWER"
    } else if row.error.is_some() {
        "FAILED"
    } else {
        ""
    };
    // The note under the table says how few.
    let low = if row.low_count { "*" } else { "" };
    vec![
        row.name(),
        row.role.label().to_string(),
        row.mbps
            .map_or("-".into(), |s| format!("{:.1}{low}", s.mean)),
        row.iops
            .map_or("-".into(), |s| format!("{:.0}{low}", s.mean)),
        row.p99_ms.map_or("-".into(), |p| format!("{p:.3}")),
        row.mbps
            .and_then(|s| s.spread_pct)
            .map_or("-".into(), |n| format!("{n:.1} %")),
        vs,
        match row.witness {
            WitnessMark::Agrees => "ok".into(),
            WitnessMark::Differs { bytes_diff_pct } => format!("{bytes_diff_pct:+.1} %"),
            WitnessMark::Absent => "-".into(),
        },
        flag.to_string(),
    ]
}

/// The note for a "*" row: "loop1: * 97 I/Os in 3.03 s: low count: its MB/s and IOPS rest on
/// few I/Os", wrapped; None for settled rates.
pub fn low_count_line(row: &TargetRow, width: usize) -> Option<String> {
    row.low_count_note.as_ref().map(|note| {
        table::wrap(
            &format!("{}: ", row.name()),
            &format!("* {note}: its MB/s and IOPS rest on few I/Os"),
            width,
        )
    })
}

/// The columns of the several-targets table.
pub const COLUMNS: [Column; 9] = [
    Column::left("TARGET").shrink_to(8, 0),
    Column::left("ROLE"),
    Column::right("MB/s"),
    Column::right("IOPS"),
    Column::right("p99 ms"),
    Column::right("noise"),
    Column::right("vs others"),
    Column::right("kernel"),
    Column::left(""),
];

/// What the first line says: the test, how many targets, how they ran.
pub fn headline(r: &SeveralResult) -> String {
    let how = match r.mode {
        Mode::Parallel => "in parallel",
        Mode::OneByOne => "one by one",
    };
    let members = if r.targets.iter().any(|t| t.role == Role::Array) {
        " (the array alone first, then its members)"
    } else {
        ""
    };
    let repeats = if r.repeats == 1 {
        "1 repeat".to_string()
    } else {
        format!("{} repeats", r.repeats)
    };
    format!(
        "{} on {} targets {how}{members}, {repeats} each",
        r.test,
        r.targets.len()
    )
}

/// The text report: headline, table, failures, disagreeing witnesses, verdict.
pub fn render_text(r: &SeveralResult, width: usize) -> String {
    let rows = r.rows();
    let verdict = verdict_of_rows(&rows);
    let ratio = array_ratio(&rows);
    let mut out = String::new();
    out.push_str(&table::wrap("", &headline(r), width));
    let mut cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row_cells(row, &verdict, ratio))
        .collect();
    let mut columns = COLUMNS.to_vec();
    // The ROLE column only speaks in a members run.
    if rows.iter().all(|r| r.role == Role::Target) {
        columns.remove(1);
        for c in &mut cells {
            c.remove(1);
        }
    }
    out.push_str(&table::render(&columns, &cells, width));
    out.push_str(&table::wrap(
        "",
        "MB/s and IOPS of the first phase, mean over the repeats; noise = their spread; vs \
         others = against the median of the other targets; kernel = bytes the device counted \
         against the test's.",
        width,
    ));
    for row in &rows {
        if let Some(e) = &row.error {
            out.push_str(&table::wrap(
                &format!("{} FAILED: ", row.name()),
                &neutralize_controls(e),
                width,
            ));
        }
        if let Some(note) = low_count_line(row, width) {
            out.push_str(&note);
        }
        if let WitnessMark::Differs { bytes_diff_pct } = row.witness {
            out.push_str(&table::wrap(
                &format!("{}: ", row.name()),
                &format!(
                    "the kernel counted {bytes_diff_pct:+.1} % bytes against the test's own: a \
                     cache or another program answered part of it (see --json)"
                ),
                width,
            ));
        }
    }
    if r.stopped {
        out.push_str("Stopped: the figures are what completed.\n");
    }
    out.push_str(&table::wrap("Verdict: ", &verdict.sentence(), width));
    out
}

/// JSON: each target's row and full reports (one per repeat, as `run --json`), the verdict.
pub fn render_json(r: &SeveralResult) -> anyhow::Result<String> {
    #[derive(Serialize)]
    struct Target {
        target: String,
        role: Role,
        row: TargetRow,
        error: Option<String>,
        reports: Vec<serde_json::Value>,
    }
    #[derive(Serialize)]
    struct Verdict {
        sentence: String,
        #[serde(flatten)]
        verdict: SeveralVerdict,
    }
    #[derive(Serialize)]
    struct Doc {
        schema: u32,
        test: TestName,
        mode: Mode,
        repeats: u32,
        stopped: bool,
        targets: Vec<Target>,
        array_vs_member: Option<f64>,
        verdict: Verdict,
    }
    let rows = r.rows();
    let verdict = verdict_of_rows(&rows);
    let mut targets = Vec::new();
    for (t, row) in r.targets.iter().zip(&rows) {
        let reports = t
            .reports
            .iter()
            .map(|rep| Ok(serde_json::from_str(&super::run::render_json(rep)?)?))
            .collect::<anyhow::Result<Vec<serde_json::Value>>>()?;
        targets.push(Target {
            target: t.target.clone(),
            role: t.role,
            row: row.clone(),
            error: row.error.clone(),
            reports,
        });
    }
    let doc = Doc {
        schema: MULTI_JSON_SCHEMA,
        test: r.test,
        mode: r.mode,
        repeats: r.repeats,
        stopped: r.stopped,
        targets,
        array_vs_member: array_ratio(&rows),
        verdict: Verdict {
            sentence: verdict.sentence(),
            verdict,
        },
    };
    let mut s = serde_json::to_string_pretty(&doc)?;
    s.push('\n');
    Ok(s)
}
