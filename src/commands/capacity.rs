//! `disktriage capacity DEV --confirm NAME | --destroy-data NAME [--journal FILE] [--json]`:
//! the fake-capacity probe (`flow::capacity::CapacityJob`) with its progress line and report;
//! and `restore --capacity JOURNAL`, the put-back a crash left.
//!
//! Exit status: 0 real, 4 fake (data written past its real end is lost), 5 unknown (stopped
//! or failed before a verdict), 1 when a sector could not be put back (the journal is kept),
//! 128 + N after signal N (what was written is put back first).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use super::job::run_job;
use crate::bench::exec::safety::WriteRefusal;
use crate::capacity::ProbeEnd;
use crate::cli::CapacityArgs;
use crate::flow::capacity::{
    CapacityJob, CapacityMsg, CapacityRequest, default_journal, progress_words, restore_journal,
};
use crate::flow::scan_progress::WIDTH;
use crate::history::History;
use crate::model::clock;
use crate::model::text::neutralize_controls;
use crate::model::{UsageError, exit};
use crate::report::capacity::{render_json, render_text};
use crate::report::output::{output_width, write_stderr, write_stdout};
use crate::sys::signals::{Catch, StopSignals};

/// How often the progress line is redrawn.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// The progress line: "capacity /dev/sdb: reading back 12.0 of 64.0 MiB  0:03".
struct Follow {
    shown: String,
}

impl super::job::Follow<CapacityMsg> for Follow {
    fn every(&self) -> Duration {
        PROGRESS_EVERY
    }

    fn hear(&mut self, msg: CapacityMsg) -> Option<String> {
        let CapacityMsg::Progress { progress, elapsed } = msg else {
            return None;
        };
        let text = format!(
            "capacity {}: {}  {}",
            self.shown,
            progress_words(&progress),
            clock(elapsed)
        );
        Some(text.chars().take(WIDTH).collect())
    }
}

/// Runs the probe.
pub fn capacity(history_dir: &Path, args: &CapacityArgs) -> anyhow::Result<ExitCode> {
    let (typed, destroy) = match (&args.confirm, &args.destroy_data) {
        (Some(name), None) => (name.clone(), false),
        (None, Some(name)) => (name.clone(), true),
        _ => {
            return Err(UsageError(format!(
                "the capacity probe writes to {shown} and puts back every sector it wrote: pass \
                 --confirm NAME with the device's own name (or --destroy-data NAME to save \
                 nothing and put nothing back)",
                shown = neutralize_controls(&args.device.display().to_string())
            ))
            .into());
        }
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
            default_journal(history_dir, "capacity", &name)
        }
    };
    let request = CapacityRequest {
        path: args.device.clone(),
        confirmation: typed.clone(),
        destroy,
        journal,
        expect: None,
    };
    let mut follow = Follow {
        shown: neutralize_controls(&args.device.display().to_string()),
    };
    let run = run_job(
        CapacityJob {
            request,
            // made above, with the CLI's own words
            state_dir: None,
            history: Some(History::new(history_dir)),
        },
        &signals,
        &mut follow,
    )?;
    let run = run.map_err(|e| reword_confirmation(e, destroy, &typed))?;
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
    if run.restored.as_ref().is_some_and(|r| r.error.is_some()) {
        return Ok(ExitCode::from(exit::ERROR));
    }
    if let Some(code) = signals.exit_code() {
        return Ok(ExitCode::from(code));
    }
    Ok(ExitCode::from(match &run.end {
        ProbeEnd::Done(c) if c.is_real() => 0,
        ProbeEnd::Done(_) => exit::FAILING,
        ProbeEnd::Stopped | ProbeEnd::Failed(_) => exit::UNKNOWN,
    }))
}

/// The write guard's words name --destroy-data; under --confirm they name --confirm.
pub(super) fn reword_confirmation(e: anyhow::Error, destroy: bool, typed: &str) -> anyhow::Error {
    if destroy {
        return e;
    }
    match e.downcast_ref::<WriteRefusal>() {
        Some(WriteRefusal::WrongName { name, .. }) => anyhow::anyhow!(
            "--confirm {} does not name the target {name}: type the target's own name to \
             confirm",
            neutralize_controls(typed)
        ),
        _ => e,
    }
}

/// `restore --capacity JOURNAL`: puts back what the journal saved and says how each sector
/// reads now.
pub fn restore(path: &Path) -> anyhow::Result<ExitCode> {
    let done = restore_journal(path)?;
    let p = &done.put_back;
    let mut text = format!(
        "{}: {} sectors written back, {} read back as saved",
        done.header.device, p.sectors, p.as_saved
    );
    if p.shared > 0 {
        text.push_str(&format!(
            ", {} as another saved sector (the device stores both in one place)",
            p.shared
        ));
    }
    if let Some(first) = p.not_back.first() {
        text.push_str(&format!(
            ", {} not (the first at LBA {first})",
            p.not_back.len()
        ));
    }
    if let Some(e) = &p.error {
        text.push_str(&format!("; {e}"));
    }
    if done.torn_bytes > 0 {
        text.push_str(&format!(
            "; the journal's last {} bytes were a record cut short (never written over)",
            done.torn_bytes
        ));
    }
    text.push_str(if done.removed {
        "; the journal is removed\n"
    } else {
        "; the journal is kept\n"
    });
    write_stdout(&text)?;
    Ok(ExitCode::from(if done.removed { 0 } else { exit::ERROR }))
}
