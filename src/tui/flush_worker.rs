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

use crate::changes::guard::SharedChanger;
use crate::event::{FlushDone, FlushMsg, Msg};
use crate::history::History;
use crate::model::ChosenDevice;

/// What one flush check needs.
pub struct FlushJob {
    pub device: String,
    pub path: PathBuf,
    /// The name the admin typed.
    pub confirmation: String,
    /// The device as the admin chose it: refused when the name holds another device now.
    pub chosen: Option<ChosenDevice>,
    /// The session's changer (the write-cache switch), or none: the cache stays as found.
    pub changer: Option<SharedChanger>,
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

/// The program's checker (filled in when the timing check lands).
pub fn real_checker() -> FlushChecker {
    Arc::new(|_job, _progress, _stop| Err("the timing check is not built yet".to_string()))
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
