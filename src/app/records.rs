//! The session's results: one record per test started from the TUI, holding every repeat's
//! report, the figures averaged over the repeats with their spread (the run-to-run noise), and
//! the comparison of two records.

use super::keys::Action;
use super::{App, Overlay, Screen, scroll, step};
use crate::bench::catalog::TestName;
pub use crate::bench::compare::{Delta, Significance, Stat, delta};
use crate::bench::outcome::PhaseResult;
use crate::bench::outcome::RunReport;
use crate::bench::session::RunRequest;
use crate::bench::spec::PhaseTag;
use crate::event::Cmd;
use crate::model::KernelWriteCache;
use crate::report::export::ExportFormat;

/// One test as the admin started it, with all its repeats.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    pub id: usize,
    pub device: String,
    pub test: TestName,
    pub request: RunRequest,
    /// "bs 4k, QD32, 1 worker, random read" once known.
    pub params: String,
    pub scheduler: Option<String>,
    pub kernel_cache: Option<KernelWriteCache>,
    /// The drive's own write cache when the run started ("on", "off", "n/a").
    pub drive_cache: Option<String>,
    pub repeats_wanted: u32,
    pub runs: Vec<RunReport>,
    pub error: Option<String>,
    /// Written to a file (JSON, CSV or fio) since its last repeat finished.
    pub exported: bool,
}

/// A phase's figures over the repeats.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseFigures {
    pub label: String,
    pub tag: PhaseTag,
    /// Request size in bytes.
    pub bs: u64,
    /// I/Os and measured seconds of a repeat (the mean over the repeats): the time base of
    /// the rates.
    pub ops: u64,
    pub seconds: f64,
    /// MB/s (10^6 bytes per second).
    pub mbps: Stat,
    pub iops: Stat,
    pub mean_ms: Option<Stat>,
    pub p50_ms: Option<Stat>,
    pub p99_ms: Option<Stat>,
    pub p999_ms: Option<Stat>,
}

impl RunRecord {
    pub fn new(id: usize, device: String, request: RunRequest, repeats: u32) -> Self {
        RunRecord {
            id,
            device,
            test: request.test,
            request,
            params: String::new(),
            scheduler: None,
            kernel_cache: None,
            drive_cache: None,
            repeats_wanted: repeats,
            runs: Vec::new(),
            error: None,
            exported: false,
        }
    }

    /// Per phase (in plan order), the figures over the completed repeats.
    pub fn figures(&self) -> Vec<PhaseFigures> {
        let Some(first) = self.runs.first() else {
            return Vec::new();
        };
        first
            .outcome
            .phases
            .iter()
            .filter_map(|p0| {
                let phases: Vec<&PhaseResult> = self
                    .runs
                    .iter()
                    .filter_map(|r| r.outcome.phases.iter().find(|p| p.label == p0.label))
                    .filter(|p| p.ok())
                    .collect();
                let pick = |f: &dyn Fn(&PhaseResult) -> Option<f64>| {
                    Stat::of(&phases.iter().filter_map(|p| f(p)).collect::<Vec<_>>())
                };
                let n = phases.len().max(1);
                Some(PhaseFigures {
                    label: p0.label.clone(),
                    tag: p0.tag.clone(),
                    bs: p0.job.bs,
                    ops: phases.iter().map(|p| p.read.ops + p.write.ops).sum::<u64>() / n as u64,
                    seconds: phases.iter().map(|p| p.seconds).sum::<f64>() / n as f64,
                    mbps: pick(&|p| Some(p.bytes_per_sec() / 1e6))?,
                    iops: pick(&|p| Some(p.iops()))?,
                    mean_ms: pick(&|p| p.latency().map(|l| l.mean_ns / 1e6)),
                    p50_ms: pick(&|p| p.latency().map(|l| l.p50_ns as f64 / 1e6)),
                    p99_ms: pick(&|p| p.latency().map(|l| l.p99_ns as f64 / 1e6)),
                    p999_ms: pick(&|p| p.latency().map(|l| l.p999_ns as f64 / 1e6)),
                })
            })
            .collect()
    }

    /// The headline phase (the first one).
    pub fn headline(&self) -> Option<PhaseFigures> {
        self.figures().into_iter().next()
    }

    /// What the record's row in Results shows: a single phase's figures, or for several the
    /// peak MB/s and IOPS and the worst p99 over all of them, with the largest spread.
    pub fn row(&self) -> Option<RowFigures> {
        let all = self.figures();
        let figures: Vec<&PhaseFigures> = all.iter().filter(|f| f.rates_meaningful()).collect();
        if figures.is_empty() {
            return all.first().map(|f| RowFigures {
                phases: all.len(),
                mbps: None,
                iops: None,
                p99_ms: f.p99_ms.map(|s| s.mean),
                noise_pct: None,
            });
        }
        let max = |v: &mut dyn Iterator<Item = f64>| v.reduce(f64::max);
        Some(RowFigures {
            phases: figures.len(),
            mbps: max(&mut figures.iter().map(|f| f.mbps.mean)),
            iops: max(&mut figures.iter().map(|f| f.iops.mean)),
            p99_ms: max(&mut figures.iter().filter_map(|f| f.p99_ms.map(|s| s.mean))),
            noise_pct: max(&mut figures.iter().filter_map(|f| f.mbps.spread_pct)),
        })
    }
}

impl RunRecord {
    /// The full report: the figures the Results table uses (per phase, the mean over the
    /// repeats and each repeat's value), then every repeat's own report.
    pub fn report_text(&self) -> String {
        use std::fmt::Write as _;
        let n = self.runs.len();
        if n <= 1 {
            return self
                .runs
                .first()
                .map(crate::report::run::render_text)
                .unwrap_or_default();
        }
        let mut out = format!("mean of {n} repeats, as Results and Compare show it:\n");
        for f in self.figures() {
            let each: Vec<String> = self
                .runs
                .iter()
                .filter_map(|r| r.outcome.phases.iter().find(|p| p.label == f.label))
                .filter(|p| p.ok())
                .map(|p| format!("{:.1}", p.bytes_per_sec() / 1e6))
                .collect();
            let _ = writeln!(
                out,
                "  {}: {:.1} MB/s = mean of {}{}",
                f.label,
                f.mbps.mean,
                each.join(", "),
                f.mbps
                    .spread_pct
                    .map_or(String::new(), |s| format!(" (spread {s:.1} %)")),
            );
            let _ = writeln!(
                out,
                "    {:.0} IOPS{}",
                f.iops.mean,
                f.p99_ms
                    .map_or(String::new(), |p| format!(", p99 {:.3} ms", p.mean))
            );
        }
        for (i, r) in self.runs.iter().enumerate() {
            let _ = write!(
                out,
                "\n--- repeat {} of {n} ---\n{}",
                i + 1,
                crate::report::run::render_text(r)
            );
        }
        out
    }
}

impl PhaseFigures {
    /// Are MB/s and IOPS worth showing (enough I/Os over enough time)?
    pub fn rates_meaningful(&self) -> bool {
        crate::report::run::rate_meaningful(self.ops, self.seconds)
    }

    /// "1 I/O in 0.90 ms": what the rates are computed over.
    pub fn time_base(&self) -> String {
        crate::report::run::time_base(self.ops, self.seconds)
    }
}

/// A record's figures in one row (see `RunRecord::row`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowFigures {
    pub phases: usize,
    /// None when no phase had enough I/Os for a rate.
    pub mbps: Option<f64>,
    pub iops: Option<f64>,
    pub p99_ms: Option<f64>,
    pub noise_pct: Option<f64>,
}

/// The session's records and what the Results and Compare screens have selected.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Results {
    pub records: Vec<RunRecord>,
    /// Selected row of Results.
    pub row: usize,
    /// Records marked for comparison (at most two, in marking order).
    pub marks: Vec<usize>,
    /// First row of the Compare table shown (it scrolls when longer than the screen).
    pub compare_scroll: u16,
    /// The record an export was asked for, until the loop says how it went.
    exporting: Option<usize>,
}

impl Results {
    pub fn selected(&self) -> Option<&RunRecord> {
        self.records.get(self.row)
    }

    /// Records with results that were not exported (lost on quitting).
    pub fn unsaved(&self) -> impl Iterator<Item = usize> + '_ {
        self.records
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.runs.is_empty() && !r.exported)
            .map(|(i, _)| i)
    }

    /// The two records the Compare screen shows: the marked ones, else the last two.
    pub fn comparison(&self) -> Option<(usize, usize)> {
        let done: Vec<usize> = (0..self.records.len())
            .filter(|&i| !self.records[i].runs.is_empty())
            .collect();
        match self.marks.as_slice() {
            // A is the first marked, as Results shows it.
            [a, b] => Some((*a, *b)),
            _ if done.len() >= 2 => Some((done[done.len() - 2], done[done.len() - 1])),
            _ => None,
        }
    }

    /// Marks the selected record for comparison, or unmarks it; the oldest of two goes.
    fn toggle_mark(&mut self) {
        let r = self.row;
        if let Some(pos) = self.marks.iter().position(|&m| m == r) {
            self.marks.remove(pos);
        } else {
            if self.marks.len() == 2 {
                self.marks.remove(0);
            }
            self.marks.push(r);
        }
    }

    /// The command that exports a record, remembered until the loop answers.
    pub(super) fn export(&mut self, record: usize, format: ExportFormat) -> Option<Cmd> {
        let rec = self.records.get(record)?;
        self.exporting = Some(record);
        Some(Cmd::Export {
            reports: rec.runs.clone(),
            format,
            stem: format!("disktriage-{}-{}-{}", rec.device, rec.test.id(), rec.id + 1),
        })
    }

    /// The loop wrote the export: the record is safe to discard.
    pub(super) fn exported(&mut self) {
        if let Some(rec) = self.exporting.take().and_then(|i| self.records.get_mut(i)) {
            rec.exported = true;
        }
    }

    /// The export failed: nothing is marked exported.
    pub(super) fn export_failed(&mut self) {
        self.exporting = None;
    }
}

impl App {
    /// The Results screen's keys (see `keys::BINDINGS`).
    pub(super) fn results_act(&mut self, action: Action, dir: i32) {
        let n = self.results.records.len();
        let has_runs = self.results.selected().is_some_and(|r| !r.runs.is_empty());
        let row = self.results.row;
        match action {
            Action::Move => self.results.row = step(row, dir, n.saturating_sub(1)),
            Action::Mark if n > 0 => self.results.toggle_mark(),
            Action::Export if n > 0 && !has_runs => {
                self.error("this run has no results to export");
            }
            Action::Export if n > 0 => self.overlay = Some(Overlay::Export { record: row }),
            Action::Report if has_runs => {
                self.overlay = Some(Overlay::Report {
                    record: row,
                    scroll: 0,
                });
            }
            _ => {}
        }
    }

    /// The Compare screen's keys (see `keys::BINDINGS`).
    pub(super) fn compare_act(&mut self, action: Action, dir: i32) {
        let s = self.results.compare_scroll;
        match action {
            Action::Move => self.results.compare_scroll = scroll(s, dir, 1),
            Action::Page => self.results.compare_scroll = scroll(s, dir, 10),
            Action::Ends => self.results.compare_scroll = 0,
            Action::Back => self.screen = Screen::Results,
            _ => {}
        }
    }

    /// `c`: the Compare screen, when there are two runs to compare.
    pub(super) fn compare_latest(&mut self) -> Vec<Cmd> {
        if self.results.comparison().is_some() {
            self.results.compare_scroll = 0;
            self.screen = Screen::Compare;
        } else {
            self.error("comparing needs two finished runs: run a test, switch, rerun (R)");
        }
        Vec::new()
    }
}
