//! `disktriage smrcheck DEV --confirm NAME [--journal FILE] [--minutes N] [--json]`: the
//! write-cliff probe (`flow::smrcheck`) and its report.
//!
//! Exit status: 0 no write cliff, 3 a write cliff (suspect, as the triage's `smr-in-array`
//! rule: a behaviour to look at, no data lost), 5 unknown (stopped, failed, too short, no
//! scratch range), 1 a sector not put back (the journal is kept) or a write refused, 128 + N
//! after signal N (what was written is put back first).

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;

use super::capacity::reword_confirmation;
use super::job::{Follow, run_job};
use crate::cli::SmrcheckArgs;
use crate::flow::capacity::default_journal;
use crate::flow::flushcheck::target::add_to_history;
use crate::flow::smrcheck::SmrRun;
use crate::flow::smrcheck::{SmrMsg, SmrRequest, SmrStep, SmrcheckJob};
use crate::history::{History, HistoryEntry, SmrRecord};
use crate::model::text::neutralize_controls;
use crate::model::{Bytes, UsageError, clock, exit};
use crate::report::output::{output_width, write_stderr, write_stdout};
use crate::report::smrcheck::{render_json, render_text, verdict_sentence, verdict_word};
use crate::smr::{Finding, Medium, SmrEnd};
use crate::sys::SysRoot;

/// The longest run asked for: a day.
const MAX_MINUTES: f64 = 24.0 * 60.0;

/// The one progress line: the step, the latest second's MB/s and the clock.
struct Steps {
    shown: String,
    started: Instant,
    now: String,
}

impl Follow<SmrMsg> for Steps {
    fn every(&self) -> Duration {
        Duration::from_millis(250)
    }

    fn hear(&mut self, msg: SmrMsg) -> Option<String> {
        if let SmrMsg::Step(step) = msg {
            self.now = match step {
                SmrStep::Saving { done, of } => format!(
                    "saving the range {} of {}",
                    Bytes(done).iec(),
                    Bytes(of).iec()
                ),
                SmrStep::Writing { last, written } => format!(
                    "writing: {} written, {:.2} MB/s, slowest {:.0} ms",
                    Bytes(written).iec(),
                    last.mbps(),
                    last.worst_s() * 1e3
                ),
                SmrStep::PuttingBack => "putting the range back".into(),
            };
        }
        self.tick()
    }

    fn tick(&mut self) -> Option<String> {
        Some(format!(
            "smrcheck {}: {}  {}",
            self.shown,
            self.now,
            clock(self.started.elapsed())
        ))
    }
}

/// Runs the probe.
pub fn smrcheck(history_dir: &Path, args: &SmrcheckArgs) -> anyhow::Result<ExitCode> {
    let shown = neutralize_controls(&args.device.display().to_string());
    if !args.minutes.is_finite() || args.minutes <= 0.0 || args.minutes > MAX_MINUTES {
        return Err(UsageError(format!(
            "--minutes {} is not a time to write for: give more than 0 and at most {MAX_MINUTES}",
            args.minutes
        ))
        .into());
    }
    let Some(typed) = args.confirm.clone() else {
        return Err(UsageError(format!(
            "the write-cliff probe writes random blocks to a scratch range of {shown} and puts \
             back what was there: pass --confirm NAME with the device's own name"
        ))
        .into());
    };
    let signals = crate::sys::signals::StopSignals::catch(crate::sys::signals::Catch::Command)?;
    let journal = match &args.journal {
        Some(j) => j.clone(),
        None => {
            let name = args
                .device
                .file_name()
                .map_or_else(|| "device".into(), |n| n.to_string_lossy().into_owned());
            History::new(history_dir)
                .prepare_dir()
                .context("the journal's directory (--journal FILE names another)")?;
            default_journal(history_dir, "smrcheck", &name)
        }
    };
    let request = SmrRequest {
        path: args.device.clone(),
        confirmation: typed.clone(),
        journal,
        duration: Duration::from_secs_f64(args.minutes * 60.0),
    };
    let mut steps = Steps {
        shown,
        started: Instant::now(),
        now: "checking".into(),
    };
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let run = run_job(SmrcheckJob { request }, &signals, &mut steps)?;
    let run = run.map_err(|e| reword_confirmation(e, false, &typed))?;
    for w in &run.warnings {
        write_stderr(&format!(
            "disktriage: warning: {}\n",
            neutralize_controls(w)
        ));
    }
    record(history_dir, &run, started_unix);
    let report = run.report();
    if args.json {
        write_stdout(&render_json(&report))?;
    } else {
        write_stdout(&render_text(&report, output_width()))?;
    }
    if run.journal_kept.is_some() {
        return Ok(ExitCode::from(exit::ERROR));
    }
    if let Some(code) = signals.exit_code() {
        return Ok(ExitCode::from(code));
    }
    Ok(ExitCode::from(match &run.end {
        SmrEnd::Judged(Finding::Steady { .. }) => 0,
        SmrEnd::Judged(Finding::Cliff { .. }) => exit::SUSPECT,
        SmrEnd::Judged(Finding::TooShort { .. })
        | SmrEnd::NoRange(_)
        | SmrEnd::Stopped
        | SmrEnd::Failed(_) => exit::UNKNOWN,
    }))
}

/// Adds a probe that reached a verdict (cliff or none) to the history, under the disk's
/// identity: the triage's `smr-in-array` rule reads the newest one.
fn record(history_dir: &Path, run: &SmrRun, started_unix: u64) {
    if !matches!(
        run.end,
        SmrEnd::Judged(Finding::Steady { .. } | Finding::Cliff { .. })
    ) {
        return;
    }
    let record = SmrRecord {
        verdict: verdict_word(&run.end).to_string(),
        sentence: verdict_sentence(&run.end, run.medium, run.minutes),
        medium: match run.medium {
            Medium::Rotating => "rotating",
            Medium::SolidState => "solid-state",
            Medium::Unknown => "unknown",
        }
        .to_string(),
        minutes: run.minutes,
    };
    let range = run.scratch.map_or(0, |s| s.len);
    let entry = HistoryEntry::of_smrcheck(
        SysRoot::host().disk_identity(&run.name),
        &run.name,
        started_unix,
        format!(
            "{} min, random {}-byte writes in {}",
            run.minutes,
            run.block,
            Bytes(range).iec()
        ),
        run.block,
        record,
    );
    add_to_history(history_dir, &entry, &|| false);
}
