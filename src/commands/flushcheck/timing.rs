//! `disktriage flushcheck DEV --destroy-data NAME [--rpm N] [--json]`: the timing check.
//!
//! The check itself is the TUI's, `flow::flushcheck::timing::check` (guard, plan, rotation
//! rate, journaled cache switch, run, judgement, history), run as a job (`TimingJob`). This is
//! its command line: the arguments, the progress line, the report and the exit status. A stop
//! signal ends the run between writes, the cache put back first (`changes::guard`), with exit
//! status 128 + the signal.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::bail;

use super::{EXIT_UNKNOWN, EXIT_VOLATILE_CACHE};
use crate::cli::FlushcheckArgs;
use crate::commands::job::run_job;
use crate::flow::flushcheck::Progress;
use crate::flow::flushcheck::timing::{TimingJob, TimingMsg, check_rpm};
use crate::flow::scan_progress::WIDTH;
use crate::flush::timing::Verdict;
use crate::model::clock;
use crate::model::text::neutralize_controls;
use crate::report::flushcheck::timing::{render_json, render_text};
use crate::report::output::{output_width, write_stdout};
use crate::sys::SysRoot;
use crate::sys::signals::{Catch, StopSignals};

/// How often the progress line is redrawn.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// A wait with no progress this long says so: a commit of a healthy disk takes milliseconds.
const WAIT_SHOWN_AFTER: Duration = Duration::from_secs(2);

/// "flushcheck /dev/sdb: O_DSYNC commits 120/200  0:12" and, once nothing has completed for
/// `WAIT_SHOWN_AFTER`, "  waiting 6 s": at most `width` columns, the phase's label cut with a
/// `~` first.
fn progress_line(
    shown: &str,
    p: &Progress,
    elapsed: Duration,
    since: Duration,
    width: usize,
) -> String {
    let mut tail = format!(" {}/{}  {}", p.done, p.total, clock(elapsed));
    if since >= WAIT_SHOWN_AFTER {
        tail.push_str(&format!("  waiting {} s", since.as_secs()));
    }
    let head = format!("flushcheck {shown}: {}", p.phase.label());
    let room = width.saturating_sub(tail.chars().count());
    if head.chars().count() <= room {
        return format!("{head}{tail}");
    }
    let mut cut: String = head.chars().take(room.saturating_sub(1)).collect();
    cut.push('~');
    let line = format!("{cut}{tail}");
    line.chars().take(width).collect()
}

/// The progress line, redrawn on its own timer from the latest progress and when it came,
/// so the clock runs and a write or flush that hangs says so.
struct Follow {
    shown: String,
    started: Instant,
    latest: Option<(Progress, Instant)>,
}

impl super::super::job::Follow<TimingMsg> for Follow {
    fn every(&self) -> Duration {
        PROGRESS_EVERY
    }

    fn hear(&mut self, msg: TimingMsg) -> Option<String> {
        if let TimingMsg::Progress(p) = msg {
            self.latest = Some((p, Instant::now()));
        }
        None
    }

    fn tick(&mut self) -> Option<String> {
        let (p, at) = self.latest?;
        Some(progress_line(
            &self.shown,
            &p,
            self.started.elapsed(),
            at.elapsed(),
            WIDTH,
        ))
    }
}

/// Runs the timing check. The `--root` tree is not used: a write is checked against the
/// live system, whatever `--root` says.
pub fn timing(
    _root: &SysRoot,
    journal_dir: &Path,
    history_dir: &Path,
    args: &FlushcheckArgs,
) -> anyhow::Result<ExitCode> {
    check_rpm(args.rpm)?;
    let signals = StopSignals::catch(Catch::Command)?;
    let job = TimingJob {
        path: args.device.clone(),
        confirmation: args.destroy_data.clone(),
        rpm: args.rpm,
        journal_dir: journal_dir.to_path_buf(),
        history_dir: Some(history_dir.to_path_buf()),
        panic_hook: true,
    };
    let mut follow = Follow {
        shown: neutralize_controls(&args.device.display().to_string()),
        started: Instant::now(),
        latest: None,
    };
    let run = run_job(job, &signals, &mut follow)?;
    let mut run = run?;
    if run.ended.as_deref() == Some("stopped")
        && let Some(sig) = signals.signal()
    {
        run.ended = Some(format!("stopped by {}", sig.as_str()));
    }
    let text = if args.json {
        render_json(&run.report())?
    } else {
        render_text(&run.report(), output_width())
    };
    write_stdout(&text)?;
    if let Some(e) = &run.restore_error {
        bail!(
            "the write cache of {} could not be put back: {}; run `disktriage restore`",
            run.disk_name,
            neutralize_controls(e)
        );
    }
    if let Some(code) = signals.exit_code() {
        return Ok(ExitCode::from(code));
    }
    if let Some(e) = &run.failed {
        bail!(
            "the flush check of {} ended: {}",
            run.name,
            neutralize_controls(e)
        );
    }
    Ok(match run.judgement.as_ref().map(|j| j.verdict) {
        Some(Verdict::WaitsForMedium) => ExitCode::SUCCESS,
        Some(Verdict::VolatileCache) => ExitCode::from(EXIT_VOLATILE_CACHE),
        _ => ExitCode::from(EXIT_UNKNOWN),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_says_a_hanging_flush_waits_and_fits_80_columns() {
        let p = Progress {
            phase: crate::flow::flushcheck::Phase::Commits,
            done: 120,
            total: 200,
        };
        let at = |since| progress_line("/dev/sdb", &p, Duration::from_secs(12), since, WIDTH);
        assert_eq!(
            at(Duration::from_millis(300)),
            "flushcheck /dev/sdb: O_DSYNC commits 120/200  0:12"
        );
        assert_eq!(
            at(Duration::from_secs(6)),
            "flushcheck /dev/sdb: O_DSYNC commits 120/200  0:12  waiting 6 s"
        );
        let long = "/dev/disk/by-id/ata-ST16000NM001G-2KK103_ZL2ABCDE-part1";
        let p = Progress {
            phase: crate::flow::flushcheck::Phase::CacheOffCommits,
            done: 123_456,
            total: 1_000_000,
        };
        let line = progress_line(
            long,
            &p,
            Duration::from_secs(36_000),
            Duration::from_secs(999),
            WIDTH,
        );
        assert!(line.chars().count() <= WIDTH, "{line}");
        assert!(
            line.ends_with("123456/1000000  10:00:00  waiting 999 s"),
            "{line}"
        );
        assert!(line.contains('~'), "cut with a mark: {line}");
    }
}
