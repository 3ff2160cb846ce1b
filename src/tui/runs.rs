//! The TUI's test runs as jobs: one target (`RunJob`) or each of several (`SeveralJob`),
//! started through the run-starter on its thread, then relaying the session's events and
//! report (`bench::exec::session` is the run itself). A sweep's runs are made the same way
//! (`sweep_runner`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::bench::exec::session::{RunRequest, Session, TempPoll};
use crate::bench::results::outcome::TargetClass;
use crate::drive_state::temperature::{PollConfig, TempPoller};
use crate::event::{Msg, SeveralMsg, TaskError};
use crate::flow::job::{Job, JobContext};
use crate::flow::sweep_job::{RunOne, StepOutcome, SweepMsg, outcome_of};
use crate::sys::{DriveControl, SysRoot};

/// How often a relay passes a stop request on to the run it follows.
const STOP_POLL: Duration = Duration::from_millis(50);

/// How often the progress of a new test file's layout is sent to the UI.
pub(super) const LAYOUT_POLL: Duration = Duration::from_millis(250);

/// Starts a test run: `session::start_watched` in the program, a stand-in in tests. It runs
/// on a thread of its own (opening waits up to 2 s for a busy device, and a file test first
/// writes its whole test file), gives up when the flag is set, and keeps the bytes of a new
/// test file written so far in the counter.
pub type RunStarter = Arc<
    dyn Fn(&SysRoot, &RunRequest, &AtomicBool, &AtomicU64) -> anyhow::Result<Session> + Send + Sync,
>;

/// Checks a run's target before anything is started (`session::check` in the program and by
/// default; a stand-in in tests): a run on several devices starts none unless every one
/// passes.
pub type RunChecker = Arc<dyn Fn(&SysRoot, &RunRequest) -> anyhow::Result<()> + Send + Sync>;

/// A run on one target: started (its stop flag set up first, so a stop or a quit during the
/// start stops the start), then relayed.
pub struct RunJob {
    pub start: RunStarter,
    pub root: SysRoot,
    pub request: RunRequest,
    pub drives: Arc<dyn DriveControl>,
    /// Where the temperature poller's readings go (a thread of its own, stopped with the run).
    pub tx: Sender<Msg>,
}

impl Job for RunJob {
    type Msg = Msg;
    type Output = ();

    fn name(&self) -> &'static str {
        "run"
    }

    fn thread_name(&self) -> String {
        "run-events".into()
    }

    fn cannot_start(&self, error: &std::io::Error) -> Msg {
        Msg::RunRefused(format!("cannot start the run: {error}"))
    }

    /// A stopped metadata run deletes the files it created before it ends: removing many
    /// thousands on a slow disk takes more than a few seconds.
    fn stop_wait(&self) -> Duration {
        if self.request.test.info().family.runs_in_directory() {
            Duration::from_secs(300)
        } else {
            Duration::from_secs(5)
        }
    }

    fn run(self, ctx: &JobContext<'_, Msg>) {
        let RunJob {
            start,
            root,
            request,
            drives,
            tx,
        } = self;
        let session = match start_reporting_layout(&start, &root, &request, ctx) {
            Ok(s) => s,
            Err(e) => {
                ctx.send(Msg::RunRefused(format!("{e:#}")));
                return;
            }
        };
        ctx.send(Msg::RunStarted {
            target: Box::new(session.target.clone()),
            plan: Box::new(session.plan.clone()),
            notes: session.notes.clone(),
        });
        let poller = session
            .target
            .device
            .as_deref()
            .filter(|_| session.target.kind == TargetClass::BlockDevice)
            .and_then(|d| temperature_poller(&drives, &tx, d, request.temperature));
        forward(session, poller, ctx);
    }
}

/// The runs of a sweep (`flow::sweep_job::SweepOrder`) as `RunJob` makes a run: started
/// through `start` (a new test file's layout told as it goes), the device's temperature
/// polled, the events relayed, the test file removed; each told as the sweep's messages.
pub fn sweep_runner(
    start: RunStarter,
    root: SysRoot,
    drives: Arc<dyn DriveControl>,
    tx: Sender<Msg>,
) -> RunOne {
    Arc::new(move |request, stop, say| {
        let tell = |m: Msg| {
            if let Msg::LaidOut(bytes) = m {
                say(SweepMsg::LaidOut(bytes));
            }
            true
        };
        let session = match start_watching_layout(&start, &root, request, stop, &tell) {
            Ok(s) => s,
            Err(_) if stop.load(Ordering::Relaxed) => return StepOutcome::Stopped,
            Err(e) => {
                let e = format!("{e:#}");
                say(SweepMsg::RunFailed(e.clone()));
                return StepOutcome::Failed(e);
            }
        };
        say(SweepMsg::Started {
            plan: Box::new(session.plan.clone()),
            target: Box::new(session.target.clone()),
            notes: session.notes.clone(),
        });
        let poller = session
            .target
            .device
            .as_deref()
            .filter(|_| session.target.kind == TargetClass::BlockDevice)
            .and_then(|d| temperature_poller(&drives, &tx, d, request.temperature));
        session.relay(stop, STOP_POLL, |ev| {
            say(SweepMsg::Event(ev));
            true
        });
        if let Some(p) = poller {
            p.stop();
        }
        match session.finish_removing_test_file() {
            Ok(report) => {
                let outcome = outcome_of(request.test, &report);
                say(SweepMsg::Finished(Box::new(report)));
                outcome
            }
            Err(e) => {
                let e = format!("{e:#}");
                say(SweepMsg::RunFailed(e.clone()));
                StepOutcome::Failed(e)
            }
        }
    })
}

/// Target `index` of a run on several devices. The first to run checks every target (in use
/// on the live system, read-only, plan, memory); the others wait for its verdict: when one is
/// refused none starts, and each is told why. One that passes the checks and then cannot
/// start (a failing device) is reported and the others go on.
pub struct SeveralJob {
    pub index: usize,
    pub request: RunRequest,
    pub start: RunStarter,
    pub check: RunChecker,
    /// The verdict of the checks, shared by the batch.
    pub gate: Arc<OnceLock<Result<(), (usize, String)>>>,
    /// Every target of the batch.
    pub all: Arc<Vec<(usize, RunRequest)>>,
    pub root: SysRoot,
}

impl Job for SeveralJob {
    type Msg = Msg;
    type Output = ();

    fn name(&self) -> &'static str {
        "several"
    }

    fn thread_name(&self) -> String {
        format!("run-events-{}", self.index)
    }

    fn cannot_start(&self, error: &std::io::Error) -> Msg {
        Msg::Several(SeveralMsg::Refused {
            index: self.index,
            error: format!("cannot start the run: {error}"),
        })
    }

    fn run(self, ctx: &JobContext<'_, Msg>) {
        let SeveralJob {
            index,
            request,
            start,
            check,
            gate,
            all,
            root,
        } = self;
        // The checks read the device list and open devices, which is not done on the UI's
        // thread.
        let verdict = gate.get_or_init(|| {
            all.iter()
                .try_for_each(|(i, r)| check(&root, r).map_err(|e| (*i, format!("{e:#}"))))
        });
        if let Err((refused, why)) = verdict {
            let error = if *refused == index {
                why.clone()
            } else {
                let name = all
                    .iter()
                    .find(|(i, _)| i == refused)
                    .map(|(_, r)| r.target.display().to_string())
                    .unwrap_or_default();
                format!("not started: {name} was refused ({why})")
            };
            ctx.send(Msg::Several(SeveralMsg::Refused { index, error }));
            return;
        }
        // Several devices: block devices, never a new test file to lay out.
        let session = match start(&root, &request, ctx.stop_flag(), &AtomicU64::new(0)) {
            Ok(s) => s,
            Err(e) => {
                ctx.send(Msg::Several(SeveralMsg::Refused {
                    index,
                    error: format!("{e:#}"),
                }));
                return;
            }
        };
        ctx.send(Msg::Several(SeveralMsg::Started {
            index,
            target: Box::new(session.target.clone()),
            plan: Box::new(session.plan.clone()),
        }));
        forward_several(index, session, ctx);
    }
}

/// A temperature poller for the run's device as the request asks: by default where the
/// transport is worth polling (`PollConfig::default_for` says why), at the admin's interval on
/// any drive, or none. Each reading is a message on `tx`.
fn temperature_poller(
    drives: &Arc<dyn DriveControl>,
    tx: &Sender<Msg>,
    device: &str,
    poll: TempPoll,
) -> Option<TempPoller> {
    let dev = drives.device(device).ok()?;
    let config = match poll {
        TempPoll::Off => return None,
        TempPoll::Default => PollConfig::default_for(dev.transport)?,
        TempPoll::Every(d) => PollConfig::every(d),
    };
    let tx = tx.clone();
    let name = dev.name.clone();
    TempPoller::spawn(
        Arc::clone(drives),
        dev,
        config,
        Instant::now(),
        move |s| match s.celsius {
            Some(celsius) => tx
                .send(Msg::Temperature {
                    device: name.clone(),
                    at: s.at.as_secs_f64(),
                    celsius,
                })
                .is_ok(),
            None => true,
        },
    )
    .ok()
}

/// Starts a run with `start`, sending the bytes of a new test file written so far to the UI
/// every `LAYOUT_POLL` while it is laid out (a file of some GiB takes minutes on a slow disk).
fn start_reporting_layout(
    start: &RunStarter,
    root: &SysRoot,
    request: &RunRequest,
    ctx: &JobContext<'_, Msg>,
) -> anyhow::Result<Session> {
    start_watching_layout(start, root, request, ctx.stop_flag(), &|m| ctx.send(m))
}

/// `start_reporting_layout` with its stop flag and where its `Msg::LaidOut` go.
fn start_watching_layout(
    start: &RunStarter,
    root: &SysRoot,
    request: &RunRequest,
    stop: &AtomicBool,
    send: &(dyn Fn(Msg) -> bool + Sync),
) -> anyhow::Result<Session> {
    let laid_out = AtomicU64::new(0);
    let started = AtomicBool::new(false);
    std::thread::scope(|s| {
        let watcher = std::thread::Builder::new()
            .name("layout-progress".into())
            .spawn_scoped(s, || {
                let mut sent = 0;
                while !started.load(Ordering::Relaxed) {
                    std::thread::park_timeout(LAYOUT_POLL);
                    let now = laid_out.load(Ordering::Relaxed);
                    if now != sent && !started.load(Ordering::Relaxed) {
                        sent = now;
                        send(Msg::LaidOut(now));
                    }
                }
            });
        let result = start(root, request, stop, &laid_out);
        started.store(true, Ordering::Relaxed);
        if let Ok(w) = watcher {
            w.thread().unpark();
        }
        result
    })
}

/// Relays a session's events to the main loop, then its report; the temperature poller stops
/// with the run. A test file the run created is removed (the TUI leaves nothing behind).
fn forward(session: Session, poller: Option<TempPoller>, ctx: &JobContext<'_, Msg>) {
    session.relay(ctx.stop_flag(), STOP_POLL, |ev| {
        ctx.send(Msg::Run(Box::new(ev)))
    });
    if let Some(p) = poller {
        p.stop();
    }
    let result = session.finish_removing_test_file().map_err(TaskError::from);
    ctx.send(Msg::RunFinished(Box::new(result)));
}

/// Relays the events of target `index` of a run on several devices, then its report.
fn forward_several(index: usize, session: Session, ctx: &JobContext<'_, Msg>) {
    session.relay(ctx.stop_flag(), STOP_POLL, |ev| {
        ctx.send(Msg::Several(SeveralMsg::Event {
            index,
            ev: Box::new(ev),
        }))
    });
    let result = session.finish().map_err(TaskError::from);
    ctx.send(Msg::Several(SeveralMsg::Finished {
        index,
        result: Box::new(result),
    }));
}
