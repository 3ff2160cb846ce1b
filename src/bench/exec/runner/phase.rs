//! One phase of a run: its engine settled (a probe if needed), its workers spawned behind the
//! gate, their reports gathered while they measure, and the result with the kernel's witness.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use super::EngineBook;
use crate::bench::exec::engine::{FileWork, IoEngine, WorkerMsg};
use crate::bench::exec::engines;
use crate::bench::exec::gate::Gate;
use crate::bench::exec::probe::{self, Decision, ProbeShape};
use crate::bench::exec::probe_rounds::{probe_engines, probe_failed_choice};
use crate::bench::exec::run_input::{RunEvent, RunInput, StatSource};
use crate::bench::exec::series::Aggregator;
use crate::bench::exec::spawn::{Spawned, failure_facts, io_threads, spawn_workers};
use crate::bench::plan::{Job, Phase, TimeBase};
use crate::bench::results::engine_choice::EngineChoice;
use crate::bench::results::failure::IoFailure;
use crate::bench::results::outcome::{DirTotals, PhaseResult, Witness, WorkerTotals};
use crate::bench::results::stats::{IntervalPoint, IoStats, per_second};
use crate::model::activity::{BusyProcess, ProcessIo, busy_between};
use crate::sys::activity;
use crate::sys::parse::DiskStat;
use crate::sys::privilege::process_cpu_time;

/// The processes with the device or a file on it open, and their I/O counters now.
fn others_at_start(stat: &Option<StatSource>) -> Vec<ProcessIo> {
    stat.as_ref().map_or_else(Vec::new, |s| {
        let openers = activity::openers(&activity::device_family(&s.root, s.dev));
        activity::io_counters(&openers)
    })
}

fn read_stat(stat: &Option<StatSource>) -> Option<DiskStat> {
    stat.as_ref().and_then(|s| s.root.dev_stat(s.dev).ok())
}

/// Runs one phase: its engine settled, its workers warmed up and measured, its result with
/// the kernel's witness.
pub(super) fn run_phase(
    input: &RunInput,
    book: &mut EngineBook,
    index: usize,
    count: usize,
    phase: &Phase,
    stop: &Arc<AtomicBool>,
) -> PhaseResult {
    let job = &phase.job;
    let picked = pick_engine(input, book, index, count, phase, stop);
    let (gate, rx, spawned) = start_workers(input, index, phase, &picked, stop);

    // Who else has the device open, and their counters, while the warm-up runs.
    let others0 = others_at_start(&input.stat);
    // Warm-up done and drained everywhere: read the counters, then let the workers measure.
    gate.wait_all();
    let before = read_stat(&input.stat);
    let cpu0 = process_cpu_time();
    let t0 = gate.open();
    if let Some(ev) = &input.events {
        let _ = ev.send(RunEvent::Measuring {
            index,
            engine: Box::new(picked.choice.clone()),
        });
    }

    let threads = spawned.alive;
    let mut g = Gathered::new(
        input,
        job,
        picked.engine,
        picked.probe_failure,
        spawned.alive,
        spawned.setup_error,
        t0,
    );
    g.gather(&rx, input, index, threads, t0, stop);
    let cpu = process_cpu_time().saturating_sub(cpu0);
    for h in spawned.handles {
        let _ = h.join();
    }
    if let Some(f) = g
        .failure
        .as_mut()
        .filter(|f| f.errno.is_some() && f.facts.is_none())
    {
        f.facts = Some(failure_facts(input));
    }
    let after = read_stat(&input.stat);
    let others = others_since(&others0);
    let seconds = (g.t_end - t0).as_secs_f64();
    g.agg.finish(seconds, &mut g.points);
    send_points(&input.events, index, &mut g.points);

    let (witness, witness_note) = witness_of(input, before, after, &g.agg.totals);
    // The rates' time base: the measured time, or a rewrite's write-busy time.
    let time_base = job.time_base();
    let rate_seconds = if time_base.is_busy() {
        g.agg.busy_seconds(None)
    } else {
        seconds
    };
    let dir = |d: &crate::bench::results::stats::DirStats| dir_totals(d, rate_seconds);
    let workers = worker_totals(job, time_base, &g.agg, &g.worker_end, t0);
    let choice = picked.choice;
    PhaseResult {
        label: phase.label.clone(),
        tag: phase.tag.clone(),
        job: job.clone(),
        engine: choice.used,
        engine_choice: choice,
        io_threads: threads as u32,
        fixed_buffers: g.fixed_buffers,
        seconds,
        time_base,
        rate_seconds,
        cpu_seconds: cpu.as_secs_f64(),
        cpu_wait_seconds: g.cpu_wait.as_secs_f64(),
        cpu_bound: crate::bench::results::outcome::cpu_bound(
            cpu.as_secs_f64() + g.cpu_wait.as_secs_f64(),
            seconds,
            threads as u32,
            crate::sys::host::usable_cpus(),
        ),
        read: dir(&g.agg.totals.read),
        write: dir(&g.agg.totals.write),
        workers,
        series: g.agg.series,
        witness,
        witness_note,
        others,
        stopped: stop.load(Ordering::Relaxed) && g.failure.is_none() && g.setup_error.is_none(),
        failure: g.failure,
        setup_error: g.setup_error,
    }
}

/// The processes among `others0` that did I/O since.
fn others_since(others0: &[ProcessIo]) -> Vec<BusyProcess> {
    let openers: Vec<(u32, String)> = others0.iter().map(|p| (p.pid, p.name.clone())).collect();
    busy_between(others0, &activity::io_counters(&openers))
}

/// The engine a phase runs on, and a probe's I/O error if choosing it failed.
struct Picked {
    choice: EngineChoice,
    probe_failure: Option<IoFailure>,
    engine: &'static dyn IoEngine,
    /// When the warm-up began: a probe is its start.
    warmup_started: Instant,
}

/// Announces the phase and settles its engine: its own, an earlier probe's choice, or a probe
/// made now.
fn pick_engine(
    input: &RunInput,
    book: &mut EngineBook,
    index: usize,
    count: usize,
    phase: &Phase,
    stop: &Arc<AtomicBool>,
) -> Picked {
    let job = &phase.job;
    let plan = &input.plan;
    // A phase with its own engine (a metadata phase) needs no choice and no probe.
    let own = engines::own_engine(&phase.tag);
    let (shape, decision) = match &own {
        Some(o) => (
            ProbeShape::of(&phase.tag, job, plan.direct),
            Decision::Known(o.choice.clone()),
        ),
        None => book.decide(input, phase),
    };
    if let Some(ev) = &input.events {
        let _ = ev.send(RunEvent::PhaseStarted {
            index,
            count,
            label: phase.label.clone(),
            job: Box::new(job.clone()),
            probing: decision == Decision::Probe,
        });
    }
    let warmup_started = Instant::now();
    let (choice, probe_failure) = match decision {
        Decision::Known(c) => (c, None),
        Decision::Probe => {
            // A sweep's shape is probed once, with the phase where the engine weighs most.
            let probed = probe::probe_job(&plan.phases, plan.direct, &shape).unwrap_or(job);
            let outcome = probe_engines(input, probed, stop);
            if let Some(ev) = &input.events {
                let _ = ev.send(RunEvent::Probed { index });
            }
            match outcome {
                Ok(c) => {
                    book.remember(shape, &c);
                    (c, None)
                }
                Err(f) => (probe_failed_choice(&f), Some(f.failure)),
            }
        }
    };
    let engine: &'static dyn IoEngine = match &own {
        Some(o) => o.engine,
        None => engines::for_kind(choice.used),
    };
    Picked {
        choice,
        probe_failure,
        engine,
        warmup_started,
    }
}

/// Spawns the phase's workers behind a closed gate; none after a probe's I/O error.
fn start_workers(
    input: &RunInput,
    index: usize,
    phase: &Phase,
    picked: &Picked,
    stop: &Arc<AtomicBool>,
) -> (Arc<Gate>, Receiver<WorkerMsg>, Spawned) {
    let job = &phase.job;
    let engine = picked.engine;
    let files = input
        .scratch
        .as_ref()
        .and_then(|s| FileWork::of(s, &phase.tag, index, job));
    // The probe is the start of the warm-up; the warm-up still lasts at least as configured.
    let mut run_job = job.clone();
    run_job.warmup = job.warmup.saturating_sub(picked.warmup_started.elapsed());
    // After an I/O error in the probe nothing more is done: the error is the run's.
    let threads = if picked.probe_failure.is_some() {
        0
    } else {
        io_threads(engine, job)
    };
    let gate = Arc::new(Gate::new(threads));
    let (tx, rx) = mpsc::channel::<WorkerMsg>();
    let spawned = if picked.probe_failure.is_some() {
        Spawned {
            handles: Vec::new(),
            alive: 0,
            setup_error: None,
        }
    } else {
        spawn_workers(input, (&run_job, files), engine, &gate, &tx, stop)
    };
    drop(tx);
    (gate, rx, spawned)
}

/// What the workers of a measuring phase report, gathered until the last is done.
struct Gathered {
    agg: Aggregator,
    /// Threads that have not sent `Done` yet.
    alive: usize,
    failure: Option<IoFailure>,
    setup_error: Option<String>,
    fixed_buffers: bool,
    /// Points of the series not sent yet.
    points: Vec<IntervalPoint>,
    t_end: Instant,
    worker_end: Vec<Instant>,
    cpu_wait: Duration,
}

impl Gathered {
    /// Nothing gathered yet from the `alive` threads; a probe's I/O error is the phase's.
    fn new(
        input: &RunInput,
        job: &Job,
        engine: &'static dyn IoEngine,
        probe_failure: Option<IoFailure>,
        alive: usize,
        setup_error: Option<String>,
        t0: Instant,
    ) -> Self {
        Gathered {
            agg: Aggregator::new(
                input.plan.interval.as_secs_f64(),
                job.workers as usize,
                job.rewrite,
            ),
            alive,
            setup_error,
            // No I/O thread ran after a probe's error: no buffers were registered for the phase.
            fixed_buffers: engine.may_fix_buffers() && probe_failure.is_none(),
            failure: probe_failure,
            points: Vec::new(),
            t_end: t0,
            worker_end: vec![t0; job.workers as usize],
            cpu_wait: Duration::ZERO,
        }
    }

    /// Receives the workers' messages until every thread is done, streaming the series as its
    /// intervals complete.
    fn gather(
        &mut self,
        rx: &Receiver<WorkerMsg>,
        input: &RunInput,
        index: usize,
        threads: usize,
        t0: Instant,
        stop: &AtomicBool,
    ) {
        while self.alive > 0 {
            match rx.recv_timeout(input.plan.interval) {
                Ok(msg) => self.take(msg, stop),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.agg
                .emit_ready(threads, t0.elapsed().as_secs_f64(), &mut self.points);
            send_points(&input.events, index, &mut self.points);
        }
    }

    /// Folds in one worker's message; the first setup error stops the run.
    fn take(&mut self, msg: WorkerMsg, stop: &AtomicBool) {
        match msg {
            WorkerMsg::Sample(s) => {
                self.agg
                    .add((s.worker, s.thread), s.interval, s.end_s, &s.stats)
            }
            WorkerMsg::Done {
                worker,
                failure: f,
                setup_error: e,
                fixed_buffers: fixed,
                cpu_wait: waited,
                ended,
            } => {
                self.alive -= 1;
                self.cpu_wait += waited;
                // The thread's own end, not this message's arrival (see `WorkerMsg::Done`).
                let thread_end = ended.unwrap_or_else(Instant::now);
                self.t_end = self.t_end.max(thread_end);
                if let Some(end) = self.worker_end.get_mut(worker as usize) {
                    *end = (*end).max(thread_end);
                }
                self.fixed_buffers &= fixed;
                if self.failure.is_none() {
                    self.failure = f;
                }
                if e.is_some() && self.setup_error.is_none() {
                    self.setup_error = e;
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
    }
}

/// The kernel's counters compared with ours, or a note saying why there is no witness.
fn witness_of(
    input: &RunInput,
    before: Option<DiskStat>,
    after: Option<DiskStat>,
    ours: &IoStats,
) -> (Option<Witness>, Option<String>) {
    match (&input.stat, before, after) {
        // Counters never go down on one device: it was removed or replaced meanwhile.
        (Some(s), Some(b), Some(a))
            if a.read_sectors < b.read_sectors || a.write_sectors < b.write_sectors =>
        {
            (
                None,
                Some(format!(
                    "the counters of {} went backwards: the device was removed or replaced \
                     during the run",
                    s.name
                )),
            )
        }
        (Some(s), Some(b), Some(a)) => (
            Some(Witness::compare(
                format!("/sys/dev/block/{}/stat ({})", s.dev, s.name),
                &b,
                &a,
                ours,
            )),
            None,
        ),
        (Some(s), _, _) => (
            None,
            Some(format!(
                "could not read /sys/dev/block/{}/stat ({} removed?)",
                s.dev, s.name
            )),
        ),
        (None, _, _) => (None, input.no_stat_reason.clone()),
    }
}

/// Each worker's totals over its own time, its rates over its time base.
fn worker_totals(
    job: &Job,
    time_base: TimeBase,
    agg: &Aggregator,
    worker_end: &[Instant],
    t0: Instant,
) -> Vec<WorkerTotals> {
    agg.per_worker
        .iter()
        .enumerate()
        .map(|(w, s)| {
            let (region_start, region_len) = job.worker_region(w as u32);
            let secs = (worker_end[w] - t0).as_secs_f64();
            let rate_secs = if time_base.is_busy() {
                agg.busy_seconds(Some(w as u32))
            } else {
                secs
            };
            WorkerTotals {
                worker: w as u32,
                region_start,
                region_len,
                bytes: s.bytes(),
                ops: s.ops(),
                seconds: secs,
                rate_seconds: rate_secs,
                bytes_per_sec: per_second(s.bytes() as f64, rate_secs),
            }
        })
        .collect()
}

/// One direction's totals, its rates over `rate_seconds` (the phase's time base).
fn dir_totals(d: &crate::bench::results::stats::DirStats, rate_seconds: f64) -> DirTotals {
    DirTotals::over(d, rate_seconds)
}

fn send_points(events: &Option<Sender<RunEvent>>, index: usize, points: &mut Vec<IntervalPoint>) {
    for point in points.drain(..) {
        if let Some(ev) = events {
            let _ = ev.send(RunEvent::Point { index, point });
        }
    }
}
