//! `disktriage triage`: one verdict per disk, read-only and within a time bound.
//!
//! The disks named (or every whole disk of the inventory) are resolved first: a name that is
//! no block device is an error before anything is read. Then the screen's triage job
//! (`flow::triage::TriageJob`) reads them all at once within the bound (a signal ends it early,
//! unrecorded), the rules judge them, and the history says what changed since each disk's last
//! triage and records this one. The exit status is the worst verdict (0, 3, 4, 5), or 128 +
//! the signal. `--report PATH...` judges saved smartctl reports instead (`reports`).

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::job::run_job;
use crate::cli::TriageArgs;
use crate::flow;
use crate::flow::scan_progress::WIDTH;
use crate::flow::triage::{TriageJob, TriageMsg, TriageNews};
use crate::history::History;
use crate::model::clock;
use crate::model::text::neutralize_controls;
use crate::report::output::{output_width, write_stderr, write_stdout};
use crate::report::triage::{TriageReport, prom_text, render_table, to_json};
use crate::sys::output_file::OutputFile;
use crate::sys::signals::{Catch, StopSignals};
use crate::sys::{LinuxDrives, SysRoot};
use crate::triage::{self, GatherOptions};

mod reports;

/// The default bound of a triage, and of a quick one.
pub const DEFAULT_BOUND: Duration = Duration::from_secs(60);
pub const QUICK_BOUND: Duration = Duration::from_secs(10);

/// How often the progress line is redrawn.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// Runs the command.
pub fn triage(
    root: &SysRoot,
    history_dir: &std::path::Path,
    args: &TriageArgs,
) -> anyhow::Result<ExitCode> {
    if !args.reports.is_empty() {
        return reports::triage_reports(args);
    }
    // The bound and the time reported count from here: finding a thousand disks takes time
    // too.
    let started = Instant::now();
    let devices = disks(root, &args.devices)?;
    let prom_out = prom_output(args)?;
    let options = GatherOptions {
        bound: args.bound.unwrap_or(if args.quick {
            QUICK_BOUND
        } else {
            DEFAULT_BOUND
        }),
        quick: args.quick,
        since: Some(started),
    };
    let signals = StopSignals::catch(Catch::Command)?;
    // A captured tree (--root) holds no disk of this machine: the history keeps this
    // machine's only.
    let history = (root.root() == std::path::Path::new("/")).then(|| History::new(history_dir));
    let job = TriageJob {
        root: root.clone(),
        chosen: vec![None; devices.len()],
        options,
        drives: Arc::new(LinuxDrives::new(root.clone())),
        history,
        gatherer: flow::real_gatherer(),
        devices: devices.clone(),
    };
    let mut follow = Follow::new(devices);
    run_job(job, &signals, &mut follow)?;
    for note in &follow.notes {
        write_stderr(&format!("disktriage: {}\n", neutralize_controls(note)));
    }
    let report = match (follow.report, follow.refused) {
        (Some(report), _) => report,
        (None, why) => bail!(
            "{}",
            neutralize_controls(&why.unwrap_or_else(|| "the triage ended without a report".into()))
        ),
    };
    write_outputs(&report, args, prom_out.as_ref())?;
    if let Some(code) = signals.exit_code() {
        return Ok(ExitCode::from(code));
    }
    Ok(ExitCode::from(report.worst().exit_status()))
}

/// --prom's file, checked before anything is read: its directory opened, and a link, a FIFO
/// or a directory at its name refused now, not after the reads.
fn prom_output(args: &TriageArgs) -> anyhow::Result<Option<OutputFile>> {
    let prom_out = args
        .prom
        .as_deref()
        .map(|p| {
            OutputFile::at(p).with_context(|| {
                format!(
                    "cannot open the directory of --prom {}",
                    neutralize_controls(&p.display().to_string())
                )
            })
        })
        .transpose()?;
    if let Some(out) = &prom_out {
        out.refuse_unless_replaceable().with_context(|| {
            format!(
                "cannot write --prom {}",
                neutralize_controls(&out.path.display().to_string())
            )
        })?;
    }
    Ok(prom_out)
}

/// Replaces --prom's file and prints the table or the JSON; a --prom that could not be
/// written is the error, after the report is printed.
fn write_outputs(
    report: &TriageReport,
    args: &TriageArgs,
    prom_out: Option<&OutputFile>,
) -> anyhow::Result<()> {
    let mut failed = None;
    if let Some(out) = prom_out
        && let Err(e) = out.replace(&prom_text(report))
    {
        failed = Some(format!(
            "cannot write --prom {}: {e}",
            neutralize_controls(&out.path.display().to_string())
        ));
    }
    let text = if args.json {
        let mut t = serde_json::to_string_pretty(&to_json(report))
            .context("cannot encode the JSON report")?;
        t.push('\n');
        t
    } else {
        render_table(report, output_width())
    };
    write_stdout(&text)?;
    if let Some(e) = failed {
        bail!(e);
    }
    Ok(())
}

/// The kernel names of the disks to triage: each DEV resolved to its whole disk (a partition
/// means its disk; a disk named twice is triaged once), or every disk of the inventory.
pub fn disks(root: &SysRoot, args: &[String]) -> anyhow::Result<Vec<String>> {
    if args.is_empty() {
        let all = triage::every_disk(root).context("cannot list the disks")?;
        if all.is_empty() {
            bail!("no disks to triage (the inventory lists none with a size)");
        }
        return Ok(all);
    }
    let mut out: Vec<String> = Vec::new();
    for arg in args {
        let (disk, _partition) = root.resolve_disk(arg)?;
        if !out.contains(&disk) {
            out.push(disk);
        }
    }
    Ok(out)
}

/// The progress line (`progress_line`), redrawn on its own timer so that a disk hanging in a
/// read shows it; it also keeps the report and the history's notes.
struct Follow {
    names: Vec<String>,
    started: Instant,
    /// Each disk's step, when it began, and whether the disk is done.
    steps: BTreeMap<usize, (String, Instant, bool)>,
    report: Option<TriageReport>,
    notes: Vec<String>,
    refused: Option<String>,
}

impl Follow {
    fn new(names: Vec<String>) -> Self {
        let started = Instant::now();
        let steps = (0..names.len())
            .map(|i| (i, ("starting".to_string(), started, false)))
            .collect();
        Follow {
            names,
            started,
            steps,
            report: None,
            notes: Vec::new(),
            refused: None,
        }
    }
}

impl super::job::Follow<TriageNews> for Follow {
    fn every(&self) -> Duration {
        PROGRESS_EVERY
    }

    fn hear(&mut self, msg: TriageNews) -> Option<String> {
        match msg {
            TriageNews::Triage(TriageMsg::Progress(p)) => {
                let done = p.done.is_some();
                let since = match self.steps.get(&p.disk) {
                    Some((step, since, _)) if *step == p.step => *since,
                    _ => Instant::now(),
                };
                self.steps.insert(p.disk, (p.step, since, done));
            }
            TriageNews::Triage(TriageMsg::Finished(report)) => self.report = Some(*report),
            TriageNews::Triage(TriageMsg::Refused(why)) => self.refused = Some(why),
            TriageNews::HistoryNote(note) => self.notes.push(note),
        }
        None
    }

    fn tick(&mut self) -> Option<String> {
        let busy: Vec<(String, String, Duration)> = self
            .steps
            .iter()
            .filter(|(_, (_, _, done))| !done)
            .map(|(i, (step, since, _))| {
                let name = self.names.get(*i).map_or("?", String::as_str);
                (name.to_string(), step.clone(), since.elapsed())
            })
            .collect();
        (!busy.is_empty()).then(|| progress_line(&busy, self.started.elapsed(), WIDTH))
    }
}

/// A step that has lasted this long says so: no step of a healthy disk's triage waits that
/// long on one read.
const STEP_SHOWN_AFTER: Duration = Duration::from_secs(2);

/// "triage 0:12: sda SMART | sdb seq read middle 6 s": the clock, then each disk still busy
/// with its step (and how long it has lasted, once `STEP_SHOWN_AFTER`), at most `width`
/// columns: what does not fit is cut with a `~`.
fn progress_line(busy: &[(String, String, Duration)], elapsed: Duration, width: usize) -> String {
    let disks: Vec<String> = busy
        .iter()
        .map(|(name, step, lasted)| {
            if *lasted >= STEP_SHOWN_AFTER {
                format!("{name} {step} {} s", lasted.as_secs())
            } else {
                format!("{name} {step}")
            }
        })
        .collect();
    let line = neutralize_controls(&format!("triage {}: {}", clock(elapsed), disks.join(" | ")));
    if line.chars().count() <= width {
        return line;
    }
    let mut cut: String = line.chars().take(width.saturating_sub(1)).collect();
    cut.push('~');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab() -> SysRoot {
        SysRoot::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sysfs/qemu-lab"
        ))
    }

    #[test]
    fn the_progress_line_says_how_long_a_step_waits_and_fits_80_columns() {
        let busy = vec![
            (
                "sda".to_string(),
                "SMART".to_string(),
                Duration::from_millis(300),
            ),
            (
                "sdb".to_string(),
                "seq read middle".to_string(),
                Duration::from_secs(6),
            ),
        ];
        assert_eq!(
            progress_line(&busy, Duration::from_secs(12), WIDTH),
            "triage 0:12: sda SMART | sdb seq read middle 6 s"
        );
        let many: Vec<_> = (0..40)
            .map(|i| {
                (
                    format!("sd{i}"),
                    "surface 1200/4000".to_string(),
                    Duration::from_secs(99),
                )
            })
            .collect();
        let line = progress_line(&many, Duration::from_secs(3 * 3600), WIDTH);
        assert_eq!(line.chars().count(), WIDTH, "{line}");
        assert!(
            line.starts_with("triage 3:00:00: sd0 surface 1200/4000 99 s |"),
            "{line}"
        );
        assert!(line.ends_with('~'), "cut with a mark: {line}");
    }

    #[test]
    fn named_disks_resolve_to_whole_disks_once() {
        let root = lab();
        assert_eq!(
            disks(&root, &["sda".into(), "/dev/sda".into()]).unwrap(),
            ["sda"]
        );
        let err = disks(&root, &["nope".into()]).unwrap_err().to_string();
        assert!(err.contains("no block device"), "{err}");
    }

    #[test]
    fn no_dev_means_every_disk_of_the_inventory() {
        let root = lab();
        let all = disks(&root, &[]).unwrap();
        assert_eq!(all, triage::every_disk(&root).unwrap());
        assert!(all.iter().all(|d| !d.starts_with("ram")));
    }
}
