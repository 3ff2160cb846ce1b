//! The engine probe's rounds: each runs the phase's job with one engine for a short ramp and
//! a counted window, and `probe_engines` runs them in passes until it can pick io_uring or
//! sync (`probe::choose`). Nothing of a round is reported as the test's figures.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::bench::exec::engine::WorkerMsg;
use crate::bench::exec::engines::{self, SYNC, URING};
use crate::bench::exec::gate::Gate;
use crate::bench::exec::probe::{self, PROBE_RAMP_MS, PROBE_WINDOW_MS, ProbeRound, probe_figures};
use crate::bench::exec::run_input::RunInput;
use crate::bench::exec::spawn::{failure_facts, io_threads, spawn_workers};
use crate::bench::plan::Job;
use crate::bench::plan::params::EngineKind;
use crate::bench::results::engine_choice::{EngineChoice, EngineProbe};
use crate::bench::results::failure::IoFailure;
use crate::sys::privilege::process_cpu_time;

enum RoundEnd {
    /// The engine could not run (its set-up failed, or nothing was counted): the other
    /// candidate may still.
    NotRun,
    /// The admin stopped the run.
    Stopped,
    /// An I/O failed: the run's error, with the I/Os and bytes the round completed before it.
    Failed {
        failure: IoFailure,
        ops: u64,
        bytes: u64,
    },
}

/// Runs `job` with `engine` for a short ramp and a counted window, and measures it.
fn probe_round(
    input: &RunInput,
    job: &Job,
    engine: EngineKind,
    stop: &Arc<AtomicBool>,
) -> Result<ProbeRound, RoundEnd> {
    let mut probe_job = job.clone();
    probe_job.warmup = Duration::from_millis(PROBE_RAMP_MS);
    probe_job.time = Some(Duration::from_millis(PROBE_WINDOW_MS));
    probe_job.ops_per_worker = None;
    // The probe's own stop flag: an I/O error in it must not end the run as an admin's stop.
    let local_stop = Arc::new(AtomicBool::new(stop.load(Ordering::Relaxed)));
    let engine = engines::for_kind(engine);
    let gate = Arc::new(Gate::new(io_threads(engine, job)));
    let (tx, rx) = mpsc::channel::<WorkerMsg>();
    let spawned = spawn_workers(input, (&probe_job, None), engine, &gate, &tx, &local_stop);
    drop(tx);
    let mut ok = spawned.setup_error.is_none();
    if !ok {
        local_stop.store(true, Ordering::Relaxed);
    }
    gate.wait_all();
    let cpu0 = process_cpu_time();
    let t0 = gate.open();
    let mut alive = spawned.alive;
    let mut ops = 0u64;
    // Everything that completed, the ramp's I/O included: what a failure is reported with.
    let mut all_ops = 0u64;
    let mut all_bytes = 0u64;
    let mut io_failure: Option<IoFailure> = None;
    let mut t_end = t0;
    while alive > 0 {
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(WorkerMsg::Sample(s)) => {
                ops += s.stats.read.ops + s.stats.write.ops;
                all_ops += s.stats.read.ops + s.stats.write.ops;
                all_bytes += s.stats.read.bytes + s.stats.write.bytes;
            }
            Ok(WorkerMsg::Done {
                failure,
                setup_error,
                ended,
                ..
            }) => {
                alive -= 1;
                t_end = t_end.max(ended.unwrap_or_else(Instant::now));
                if failure.is_some() || setup_error.is_some() {
                    ok = false;
                    local_stop.store(true, Ordering::Relaxed);
                }
                if io_failure.is_none() {
                    io_failure = failure;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if stop.load(Ordering::Relaxed) {
            local_stop.store(true, Ordering::Relaxed);
        }
    }
    let cpu = process_cpu_time().saturating_sub(cpu0);
    for h in spawned.handles {
        let _ = h.join();
    }
    let seconds = (t_end - t0).as_secs_f64();
    if let Some(mut failure) = io_failure {
        if failure.errno.is_some() {
            failure.facts = Some(failure_facts(input));
        }
        return Err(RoundEnd::Failed {
            failure,
            ops: all_ops,
            bytes: all_bytes,
        });
    }
    if stop.load(Ordering::Relaxed) {
        return Err(RoundEnd::Stopped);
    }
    if ok && ops > 0 && seconds > 0.0 {
        Ok(ProbeRound {
            ops,
            seconds,
            cpu_seconds: cpu.as_secs_f64(),
        })
    } else {
        Err(RoundEnd::NotRun)
    }
}

/// A probe that met an I/O error: the error, which engine met it, and what completed in
/// the probe before it.
pub(crate) struct ProbeFailure {
    pub(crate) failure: IoFailure,
    engine: EngineKind,
    ops: u64,
    bytes: u64,
    seconds: f64,
}

/// Probes both engines in the order io_uring, sync, sync, io_uring (so a load that grows or
/// fades favours neither) and picks one (`probe::choose`). A tie or rounds that disagree get
/// a second pass (`probe::another_pass`): there 200 ms of each is least able to tell, and a
/// wrong pick costs the whole run its speed.
pub(crate) fn probe_engines(
    input: &RunInput,
    job: &Job,
    stop: &Arc<AtomicBool>,
) -> Result<EngineChoice, ProbeFailure> {
    const ORDER: [EngineKind; 4] = [URING, SYNC, SYNC, URING];
    let per_pass = ORDER.iter().filter(|e| **e == URING).count();
    let started = Instant::now();
    // A candidate's rounds so far; `None` once a round of it failed.
    let mut uring: Option<Vec<ProbeRound>> = Some(Vec::new());
    let mut sync: Option<Vec<ProbeRound>> = Some(Vec::new());
    let mut passes = 0u32;
    // I/O the probe completed before a failure, over all its rounds.
    let (mut ops, mut bytes) = (0u64, 0u64);
    let stopped = || EngineChoice {
        asked: EngineKind::AUTO,
        used: SYNC,
        reason: "auto: the run was stopped during the probe".into(),
        probe: None,
        reused: false,
    };
    loop {
        passes += 1;
        for engine in ORDER {
            let rounds = if engine == URING {
                &mut uring
            } else {
                &mut sync
            };
            if let Some(done) = rounds {
                match probe_round(input, job, engine, stop) {
                    Ok(r) => {
                        // The ramp's I/O is not in `r`; it is counted below, with a failure.
                        ops += r.ops;
                        bytes += r.ops * job.bs;
                        done.push(r);
                    }
                    Err(RoundEnd::NotRun) => *rounds = None,
                    Err(RoundEnd::Stopped) => return Ok(stopped()),
                    // An I/O error is the device's answer, not the engine's: the run's error.
                    Err(RoundEnd::Failed {
                        failure,
                        ops: o,
                        bytes: b,
                    }) => {
                        return Err(ProbeFailure {
                            failure,
                            engine,
                            ops: ops + o,
                            bytes: bytes + b,
                            seconds: started.elapsed().as_secs_f64(),
                        });
                    }
                }
            }
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(stopped());
        }
        if !probe::another_pass(uring.as_deref(), sync.as_deref(), per_pass, passes) {
            break;
        }
    }
    let figures = |rounds: &Option<Vec<ProbeRound>>| rounds.as_deref().and_then(probe_figures);
    let (u, s) = (figures(&uring), figures(&sync));
    Ok(probe::choose(EngineProbe {
        window_s: f64::from(per_pass as u32 * passes) * PROBE_WINDOW_MS as f64 / 1e3,
        total_s: started.elapsed().as_secs_f64(),
        set_aside: u.map_or(0, |f| f.1) + s.map_or(0, |f| f.1),
        uring: u.map(|f| f.0),
        sync: s.map(|f| f.0),
    }))
}

/// The engine line of a phase whose probe met an I/O error: which engine met it, when, and
/// what completed before it (the failure itself, with its offset, is the phase's error).
pub(crate) fn probe_failed_choice(f: &ProbeFailure) -> EngineChoice {
    EngineChoice {
        asked: EngineKind::AUTO,
        used: f.engine,
        reason: format!(
            "auto: the engine probe ({} round) met an I/O error after {:.2} s, {} I/Os ({}) \
             completed before it; nothing was measured",
            f.engine.as_str(),
            f.seconds,
            f.ops,
            crate::model::Bytes(f.bytes).iec()
        ),
        probe: None,
        reused: false,
    }
}
