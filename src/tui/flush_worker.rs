//! The TUI's flush check worker: the timing check of `disktriage flushcheck` on one device,
//! on a thread of its own. The checker checks the device as every write test does (the typed
//! name, in use, read-only, the device the admin chose), runs the check with the session's
//! changer for the write-cache switch (put back at the end of the check, and by the session's
//! guard whatever the exit), records it in the history and hands back the report; the worker
//! relays the step under way (`Msg::Flush`) and the end.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

use crate::commands::flushcheck::timing::{TimingRequest, check};
use crate::event::{FlushDone, FlushMsg, Msg};
use crate::flow::flushcheck::{Phase, Progress};
use crate::history::History;
use crate::model::ChosenDevice;
use crate::report::flushcheck::timing::render_text;

/// What one flush check needs.
pub struct FlushJob {
    pub device: String,
    pub path: PathBuf,
    /// The name the admin typed.
    pub confirmation: String,
    /// The device as the admin chose it: refused when the name holds another device now.
    pub chosen: Option<ChosenDevice>,
    /// The session's journal, where the check's write-cache switch is journaled (none: the
    /// session has no journal, and the cache stays as found).
    pub journal_dir: Option<PathBuf>,
    pub history: Option<History>,
    /// The width the report's lines are laid out for.
    pub width: usize,
}

/// Runs the check, telling `progress` each step (its words and how far the whole check
/// is), ending early when the flag is set: the real check in the program, a stand-in in
/// tests.
pub type FlushChecker = Arc<
    dyn Fn(&FlushJob, &dyn Fn(String, f64), &AtomicBool) -> Result<FlushDone, String> + Send + Sync,
>;

/// The program's checker: `disktriage flushcheck`'s own timing check (the write guard, the
/// journaled cache switch put back at its end, the history), its report laid out for the
/// screen.
pub fn real_checker() -> FlushChecker {
    Arc::new(|job, progress, stop| {
        let Some(journal_dir) = job.journal_dir.as_deref() else {
            return Err(
                "the session has no change journal, so the write cache could not be put back \
                 after the check: nothing was written"
                    .into(),
            );
        };
        let history_dir = job.history.as_ref().map(|h| h.dir().to_path_buf());
        // One message per interval (and at each phase's end), never one per write.
        let mut last: Option<(Phase, std::time::Instant)> = None;
        let mut relay = |p: Progress| {
            let due = match last {
                Some((phase, at)) => {
                    phase != p.phase || at.elapsed() >= PROGRESS_EVERY || p.done >= p.total
                }
                None => true,
            };
            if !due {
                return;
            }
            last = Some((p.phase, std::time::Instant::now()));
            let (base, share) = phase_share(p.phase);
            let within = p.done as f64 / p.total.max(1) as f64;
            progress(
                format!("{} {}/{}", p.phase.label(), p.done, p.total),
                base + share * within,
            );
        };
        let run = check(
            &TimingRequest {
                path: &job.path,
                confirmation: Some(&job.confirmation),
                rpm: None,
                journal_dir,
                history_dir: history_dir.as_deref(),
                expect: job.chosen.as_ref(),
            },
            false,
            &mut relay,
            stop,
        )
        .map_err(|e| format!("{e:#}"))?;
        if let Some(e) = &run.restore_error {
            return Err(format!(
                "the write cache of {} could not be put back: {e}; `disktriage restore` puts \
                 it back",
                run.disk_name
            ));
        }
        // The figures; the verdict and the next step are the screen's own first lines.
        let lines: Vec<String> = render_text(&run.report(), job.width)
            .lines()
            .take_while(|l| !l.trim_start().starts_with("Verdict:"))
            .map(str::to_string)
            .collect();
        match (&run.judgement, &run.ended) {
            (Some(j), _) => Ok(FlushDone {
                verdict: j.verdict.as_str().to_string(),
                sentence: j.sentence.clone(),
                next_step: j.next_step.clone(),
                lines,
            }),
            (None, ended) => Err(format!(
                "the flush check of {} ended before its verdict: {}; the write cache is as \
                 found",
                run.name,
                ended.as_deref().unwrap_or("stopped")
            )),
        }
    })
}

/// How often the screen hears of the check's progress.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// Where each phase starts in the whole check's progress, and its share (the commits and
/// the flushes are quick; the dirty data and the cache-off commits take longer).
fn phase_share(phase: Phase) -> (f64, f64) {
    match phase {
        Phase::Commits => (0.0, 0.2),
        Phase::WriteFlush => (0.2, 0.2),
        Phase::Dirty => (0.4, 0.3),
        Phase::CacheOffCommits => (0.7, 0.3),
    }
}

/// The check under way: its stop flag and its worker.
pub type Running = Option<(Arc<AtomicBool>, JoinHandle<()>)>;

/// Starts a check on a thread of its own, after stopping and joining the one in `running`
/// (the app asks for a second only once the first has ended).
pub fn start(running: &mut Running, job: FlushJob, checker: FlushChecker, tx: &Sender<Msg>) {
    if let Some((stop, worker)) = running.take() {
        stop.store(true, Ordering::Relaxed);
        let _ = worker.join();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let out = tx.clone();
    let spawned = std::thread::Builder::new()
        .name("flushcheck".into())
        .spawn(move || run(&job, &checker, &flag, &out));
    match spawned {
        Ok(worker) => *running = Some((stop, worker)),
        Err(e) => {
            let _ = tx.send(Msg::Flush(FlushMsg::Failed(format!(
                "cannot start the flush check: {e}"
            ))));
        }
    }
}

/// The whole check, on the calling thread.
pub fn run(job: &FlushJob, checker: &FlushChecker, stop: &AtomicBool, tx: &Sender<Msg>) {
    let progress = |step: String, fraction: f64| {
        let _ = tx.send(Msg::Flush(FlushMsg::Progress { step, fraction }));
    };
    let msg = match checker(job, &progress, stop) {
        Ok(done) => FlushMsg::Finished(Box::new(done)),
        Err(why) => FlushMsg::Failed(why),
    };
    let _ = tx.send(Msg::Flush(msg));
}
