//! The TUI's triage worker: checks that every name still holds the device the admin chose
//! (before any is read), gathers the disks' facts read-only within the bound
//! (`triage::gather`, one thread per disk inside it), relays each disk's progress to the screen
//! as it comes (`Msg::Triage`), then judges them and builds the report with each disk's
//! changes since its last triage (`flow::triage::assemble`, as `disktriage triage` does),
//! sends it, and adds it to the history. A stopped triage is shown with what was gathered
//! but not recorded: its facts are partial, and the next triage would compare against them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::event::{Msg, TriageMsg};
use crate::flow::triage::{TriageRun, assemble, record};
use crate::history::History;
use crate::model::ChosenDevice;
use crate::sys::{DriveControl, DriveError, SysRoot};
use crate::triage::{DiskFacts, GatherOptions, Progress};

/// Gathers the facts of the named disks, sending progress, ending early when the flag is set:
/// the real gathering in the program, a stand-in in tests.
pub type Gatherer = Arc<
    dyn Fn(
            &SysRoot,
            &[String],
            &GatherOptions,
            Option<Sender<Progress>>,
            &AtomicBool,
        ) -> Vec<DiskFacts>
        + Send
        + Sync,
>;

/// The program's gatherer: `triage::gather_until`, which ends at its bound or soon after the
/// stop flag is set, with what was gathered.
pub fn real_gatherer() -> Gatherer {
    Arc::new(crate::triage::gather_until)
}

/// What one triage needs besides its disks.
pub struct TriageJob {
    pub root: SysRoot,
    pub devices: Vec<String>,
    pub chosen: Vec<Option<ChosenDevice>>,
    pub options: GatherOptions,
    pub drives: Arc<dyn DriveControl>,
    pub history: Option<History>,
    pub gatherer: Gatherer,
}

/// The triage under way: its stop flag and its worker.
pub type Running = Option<(Arc<AtomicBool>, JoinHandle<()>)>;

/// Starts a triage on a thread of its own, after stopping and joining the one in `running`
/// (the app asks for a second only once the first has ended).
pub fn start(running: &mut Running, job: TriageJob, tx: &Sender<Msg>) {
    if let Some((stop, worker)) = running.take() {
        stop.store(true, Ordering::Relaxed);
        let _ = worker.join();
    }
    let stop = Arc::new(AtomicBool::new(false));
    match spawn(job, Arc::clone(&stop), tx.clone()) {
        Ok(worker) => *running = Some((stop, worker)),
        Err(e) => {
            let _ = tx.send(Msg::Triage(TriageMsg::Refused(format!(
                "cannot start the triage: {e}"
            ))));
        }
    }
}

/// Starts the triage on a thread of its own.
pub fn spawn(
    job: TriageJob,
    stop: Arc<AtomicBool>,
    tx: Sender<Msg>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("triage".into())
        .spawn(move || run(&job, &stop, &tx))
}

/// The whole triage, on the calling thread.
pub fn run(job: &TriageJob, stop: &AtomicBool, tx: &Sender<Msg>) {
    if let Err(why) = check_chosen(job) {
        let _ = tx.send(Msg::Triage(TriageMsg::Refused(why)));
        return;
    }
    let started = Instant::now();
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    // The history before this triage: each disk's changes are against its last one.
    let (earlier, mut notes) = match &job.history {
        Some(h) => match h.load() {
            Ok(loaded) => {
                let notes = loaded.problems.clone();
                (Some(loaded), notes)
            }
            Err(e) => (None, vec![format!("history not read: {e:#}")]),
        },
        None => (None, Vec::new()),
    };
    let identities: Vec<_> = job
        .devices
        .iter()
        .map(|d| job.root.disk_identity(d))
        .collect();
    let facts = gather_relaying(job, stop, tx);
    let report = assemble(
        facts,
        &identities,
        earlier.as_ref(),
        TriageRun {
            host: crate::sys::host::host_info().hostname,
            started_unix,
            seconds: started.elapsed().as_secs_f64(),
            bound_seconds: job.options.bound.as_secs_f64(),
        },
    );
    let stopped = stop.load(Ordering::Relaxed);
    if !stopped && let Some(history) = &job.history {
        notes.extend(record(history, &report, &identities, &|| false));
    }
    let _ = tx.send(Msg::Triage(TriageMsg::Finished(Box::new(report))));
    for note in notes {
        let _ = tx.send(Msg::HistoryNote(note));
    }
}

/// Every name must still hold the device the admin chose, checked before any is read: a
/// verdict about another disk under the chosen name would be the worst kind of wrong.
fn check_chosen(job: &TriageJob) -> Result<(), String> {
    for (i, device) in job.devices.iter().enumerate() {
        let chosen = job.chosen.get(i).and_then(Option::as_ref);
        match job.drives.chosen_device(device, chosen) {
            Ok(_) => {}
            Err(e @ DriveError::NotChosen(_)) => return Err(e.to_string()),
            Err(e) if chosen.is_some() => return Err(format!("{device}: {e}")),
            // No identity to check (a name typed, not chosen): the gathering says what it
            // can and cannot read.
            Err(_) => {}
        }
    }
    Ok(())
}

/// Runs the gatherer on a thread of this scope and relays its progress meanwhile. A disk's
/// thread stuck in the kernel may keep the progress channel open after the gathering has
/// returned at its bound, so the relay ends when the gathering does, not when the channel
/// closes.
fn gather_relaying(job: &TriageJob, stop: &AtomicBool, tx: &Sender<Msg>) -> Vec<DiskFacts> {
    let (ptx, prx) = mpsc::channel::<Progress>();
    std::thread::scope(|scope| {
        let gathering = scope
            .spawn(move || (job.gatherer)(&job.root, &job.devices, &job.options, Some(ptx), stop));
        let forward = |p: Progress| {
            let _ = tx.send(Msg::Triage(TriageMsg::Progress(Box::new(p))));
        };
        loop {
            match prx.recv_timeout(Duration::from_millis(100)) {
                Ok(p) => forward(p),
                Err(RecvTimeoutError::Timeout) if gathering.is_finished() => break,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        while let Ok(p) = prx.try_recv() {
            forward(p);
        }
        match gathering.join() {
            Ok(facts) => facts,
            // A panic in the gathering is a bug: every disk is unknown, and says so.
            Err(_) => job
                .devices
                .iter()
                .map(|d| DiskFacts {
                    identity: crate::triage::DiskIdentityFacts {
                        device: d.clone(),
                        ..Default::default()
                    },
                    problems: vec!["the gathering failed (a bug in disktriage)".into()],
                    ..Default::default()
                })
                .collect(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::FakeDrives;

    fn job(gatherer: Gatherer, history: Option<History>) -> TriageJob {
        TriageJob {
            root: SysRoot::new("/nonexistent-root"),
            devices: vec!["loop0".into(), "loop1".into()],
            chosen: Vec::new(),
            options: GatherOptions::default(),
            drives: Arc::new(FakeDrives::default()),
            history,
            gatherer,
        }
    }

    /// Reports each disk half done, then done, and returns plain facts; waits for the stop
    /// flag when `wait_for_stop`.
    fn fake(wait_for_stop: bool) -> Gatherer {
        Arc::new(move |_, devices, _, progress, stop| {
            let progress = progress.unwrap();
            for (i, d) in devices.iter().enumerate() {
                let _ = progress.send(Progress {
                    disk: i,
                    device: d.clone(),
                    step: "surface 1/2".into(),
                    fraction: 0.5,
                    done: None,
                });
            }
            while wait_for_stop && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
            devices
                .iter()
                .map(|d| DiskFacts {
                    identity: crate::triage::DiskIdentityFacts {
                        device: d.clone(),
                        ..Default::default()
                    },
                    ..Default::default()
                })
                .collect()
        })
    }

    #[test]
    fn progress_is_relayed_then_the_report_and_it_is_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::new(dir.path());
        let (tx, rx) = mpsc::channel();
        run(
            &job(fake(false), Some(history.clone())),
            &AtomicBool::new(false),
            &tx,
        );
        drop(tx);
        let msgs: Vec<Msg> = rx.iter().collect();
        let progress = msgs
            .iter()
            .filter(|m| matches!(m, Msg::Triage(TriageMsg::Progress(_))))
            .count();
        assert_eq!(progress, 2);
        let Some(Msg::Triage(TriageMsg::Finished(report))) = msgs
            .iter()
            .find(|m| matches!(m, Msg::Triage(TriageMsg::Finished(_))))
        else {
            panic!("no report: {msgs:?}")
        };
        assert_eq!(report.disks.len(), 2);
        assert_eq!(history.load().unwrap().entries.len(), 2);
    }

    #[test]
    fn a_stopped_triage_ends_promptly_and_is_not_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::new(dir.path());
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let worker = spawn(
            job(fake(true), Some(history.clone())),
            Arc::clone(&stop),
            tx,
        )
        .unwrap();
        // The first progress line, then the stop.
        assert!(matches!(
            rx.recv_timeout(Duration::from_secs(5)).unwrap(),
            Msg::Triage(TriageMsg::Progress(_))
        ));
        let asked = Instant::now();
        stop.store(true, Ordering::Relaxed);
        worker.join().unwrap();
        assert!(asked.elapsed() < Duration::from_secs(2));
        assert!(
            rx.iter()
                .any(|m| matches!(m, Msg::Triage(TriageMsg::Finished(_))))
        );
        assert!(history.load().unwrap().entries.is_empty());
    }
}
