//! `disktriage trimcheck DEV --confirm NAME [--journal FILE] [--json]`: the TRIM check
//! (`flow::trimcheck`) and its report.
//!
//! Exit status: 0 the discard reads as claimed (or nothing is claimed, or the device does not
//! discard), 4 a broken claim, 3 a discard refused though the kernel says it discards, 5
//! unknown (stopped, failed, no scratch range), 1 a sector not put back (the journal is kept),
//! 128 + N after signal N (what was written is put back first).

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::capacity::reword_confirmation;
use super::job::{Follow, run_job};
use crate::cli::TrimcheckArgs;
use crate::flow::capacity::default_journal;
use crate::flow::scan_progress::WIDTH;
use crate::flow::trimcheck::{TrimMsg, TrimRequest, TrimStep, TrimcheckJob};
use crate::history::History;
use crate::model::clock;
use crate::model::text::neutralize_controls;
use crate::model::{UsageError, exit};
use crate::report::output::{output_width, write_stderr, write_stdout};
use crate::report::trimcheck::{render_json, render_text};
use crate::sys::signals::{Catch, StopSignals};
use crate::trim::{TrimEnd, Verdict};

/// The one progress line: the step under way and the clock.
struct Steps {
    shown: String,
    started: Instant,
    step: Option<TrimStep>,
}

impl Follow<TrimMsg> for Steps {
    fn every(&self) -> Duration {
        Duration::from_millis(250)
    }

    fn hear(&mut self, msg: TrimMsg) -> Option<String> {
        let TrimMsg::Step(step) = msg else {
            return None;
        };
        self.step = Some(step);
        self.tick()
    }

    fn tick(&mut self) -> Option<String> {
        let step = self
            .step
            .map_or_else(|| "checking the device".to_string(), TrimStep::words);
        let text = format!(
            "trimcheck {}: {step}  {}",
            self.shown,
            clock(self.started.elapsed())
        );
        Some(text.chars().take(WIDTH).collect())
    }
}

/// Runs the check.
pub fn trimcheck(history_dir: &Path, args: &TrimcheckArgs) -> anyhow::Result<ExitCode> {
    let shown = neutralize_controls(&args.device.display().to_string());
    let Some(typed) = args.confirm.clone() else {
        return Err(UsageError(format!(
            "the TRIM check writes a pattern to a scratch range of {shown}, discards it and \
             puts back what was there: pass --confirm NAME with the device's own name"
        ))
        .into());
    };
    let signals = StopSignals::catch(Catch::Command)?;
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
            default_journal(history_dir, "trimcheck", &name)
        }
    };
    let request = TrimRequest {
        path: args.device.clone(),
        confirmation: typed.clone(),
        journal,
        expect: None,
    };
    let mut steps = Steps {
        shown,
        started: Instant::now(),
        step: None,
    };
    let job = TrimcheckJob {
        request,
        history: Some(History::new(history_dir)),
        // made above, with the CLI's own words
        state_dir: None,
    };
    let run = run_job(job, &signals, &mut steps)?;
    let run = run.map_err(|e| reword_confirmation(e, false, &typed))?;
    for w in &run.warnings {
        write_stderr(&format!(
            "disktriage: warning: {}\n",
            neutralize_controls(w)
        ));
    }
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
        TrimEnd::NoDiscard => 0,
        TrimEnd::Judged { verdict, .. } => match verdict {
            Verdict::Works | Verdict::Kept => 0,
            Verdict::Broken => exit::FAILING,
        },
        TrimEnd::Refused(_) => exit::SUSPECT,
        TrimEnd::NoRange(_) | TrimEnd::Stopped | TrimEnd::Failed(_) => exit::UNKNOWN,
    }))
}
