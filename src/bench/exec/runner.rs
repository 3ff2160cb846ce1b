//! Runs a plan, one phase after another, each with its workers on named threads. Between
//! warm-up and measurement and after the phase it snapshots the device's kernel counters (the
//! witness), folds the workers' samples into one bounded series, and streams events to the
//! CLI's progress line or the TUI's charts.

mod phase;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::bench::exec::engines;
use crate::bench::exec::engines::URING;
use crate::bench::exec::probe::{self, Decision, EngineMemory, ProbeKey, ProbeShape, TargetId};
use crate::bench::exec::run_input::{RunEvent, RunInput, StatSource};
use crate::bench::plan::Phase;
use crate::bench::plan::params::EngineKind;
use crate::bench::results::engine_choice::EngineChoice;
use crate::bench::results::outcome::{PhaseResult, RunOutcome};
use crate::bench::results::stats::LATENCY_DEFINITION;
use crate::model::activity::{BackgroundIo, busy_between};
use crate::sys::activity;
use crate::sys::direct;
use phase::run_phase;

/// The engine choices of the probes made in this process (the TUI's session, or one CLI
/// invocation). See `probe::EngineMemory`.
static ENGINE_MEMORY: Mutex<EngineMemory> = Mutex::new(EngineMemory::new());

fn with_memory<T>(f: impl FnOnce(&mut EngineMemory) -> T) -> T {
    // A panic under the lock left at worst a half-updated list of whole choices: usable.
    let mut memory = ENGINE_MEMORY.lock().unwrap_or_else(PoisonError::into_inner);
    f(&mut memory)
}

/// The target's identity for the memory of probes; `None` when unreadable (then every phase
/// that needs a probe makes its own).
fn target_id(input: &RunInput) -> Option<TargetId> {
    match direct::describe_fd(&input.fd).ok()? {
        direct::Opened::Block { dev, .. } => Some(TargetId::Block {
            dev,
            size: input.size_at_start,
        }),
        direct::Opened::File { id, .. } => Some(TargetId::File {
            id,
            size: input.size_at_start,
        }),
    }
}

/// What a run knows about engines: the target's identity and its choices, this run's own
/// (kept even without an identity) before the session's.
struct EngineBook {
    target: Option<TargetId>,
    uring: Result<(), String>,
    this_run: Vec<(ProbeShape, EngineChoice)>,
}

impl EngineBook {
    fn key(&self, shape: ProbeShape) -> Option<ProbeKey> {
        self.target.map(|target| ProbeKey { target, shape })
    }

    /// An earlier probe's choice for `shape`, in this run or the session.
    fn recall(&self, shape: ProbeShape) -> Option<EngineChoice> {
        let here = self
            .this_run
            .iter()
            .find(|(s, _)| *s == shape)
            .map(|(_, c)| EngineChoice {
                reused: true,
                ..c.clone()
            });
        here.or_else(|| self.key(shape).and_then(|k| with_memory(|m| m.recall(&k))))
    }

    fn decide(&self, input: &RunInput, phase: &Phase) -> (ProbeShape, Decision) {
        let shape = ProbeShape::of(&phase.tag, &phase.job, input.plan.direct);
        let known = self.recall(shape);
        let d = probe::decide(
            input.plan.engine,
            &phase.job,
            &self.uring,
            known,
            input.transport,
        );
        (shape, d)
    }

    fn remember(&mut self, shape: ProbeShape, choice: &EngineChoice) {
        if let Some(k) = self.key(shape) {
            with_memory(|m| m.remember(k, choice));
        }
        self.this_run.push((shape, choice.clone()));
    }
}

/// A running test: stop it, or wait for its outcome.
pub struct RunHandle {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<RunOutcome>,
}

impl RunHandle {
    /// Asks every worker to stop after its current I/O; what completed is still reported.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    pub fn join(self) -> anyhow::Result<RunOutcome> {
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("the test runner thread panicked"))
    }
}

/// Starts the run on its own thread.
pub fn start(input: RunInput) -> anyhow::Result<RunHandle> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let thread = std::thread::Builder::new()
        .name("io-runner".into())
        .spawn(move || run(input, &flag))?;
    Ok(RunHandle { stop, thread })
}

fn run(mut input: RunInput, stop: &Arc<AtomicBool>) -> RunOutcome {
    let mut notes = Vec::new();
    // Whether io_uring is usable (see `IoEngine::available`); asked only when the plan may
    // run on it.
    let uring = engines::candidates(input.plan.engine)
        .iter()
        .map(|e| e.available())
        .find(Result::is_err)
        .unwrap_or(Ok(()));
    // When a missing io_uring deserves a note (`probe::decide`'s policy). Only block phases
    // choose an engine; the metadata test's have their own.
    let mut choosing = input
        .plan
        .phases
        .iter()
        .filter(|p| engines::own_engine(&p.tag).is_none());
    let wants_uring = match input.plan.engine {
        URING => choosing.next().is_some(),
        EngineKind::AUTO => choosing.any(|p| p.job.qd > 1),
        // Any other engine asked for does not use io_uring.
        _ => false,
    };
    if let Err(e) = &uring
        && wants_uring
    {
        notes.push(format!(
            "io_uring is not available ({e}): using the synchronous engine, one thread per \
             outstanding I/O"
        ));
    }
    let background = input
        .stat
        .as_ref()
        .and_then(|s| look_for_background_io(s, stop));
    if let Some(b) = &background {
        notes.push(b.describe());
    }
    let mut book = EngineBook {
        target: target_id(&input),
        uring,
        this_run: Vec::new(),
    };
    if let Some(tx) = &input.events {
        let phases = probe::probing_phases(&input.plan, |p| {
            engines::own_engine(&p.tag).is_none() && book.decide(&input, p).1 == Decision::Probe
        });
        let _ = tx.send(RunEvent::Probes { phases });
    }
    let count = input.plan.phases.len();
    let mut phases = Vec::with_capacity(count);
    for (index, phase) in input.plan.phases.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let result = run_phase(&input, &mut book, index, count, phase, stop);
        let failed = !result.ok();
        if let Some(tx) = &input.events {
            let _ = tx.send(RunEvent::PhaseFinished {
                index,
                result: Box::new(result.clone()),
            });
        }
        phases.push(result);
        if failed {
            break;
        }
    }
    // A plan of phases with their own engine (the metadata test's) is defined by it, even if
    // no phase ran.
    let own = input
        .plan
        .phases
        .first()
        .and_then(|p| engines::own_engine(&p.tag));
    let engine = match phases.first().map(|p| p.engine) {
        Some(first) if phases.iter().all(|p| p.engine == first) => first,
        Some(_) => EngineKind::AUTO,
        None => own.as_ref().map_or(input.plan.engine, |o| o.engine.kind()),
    };
    if let Some(note) = remove_scratch(input.scratch.take()) {
        notes.push(note);
    }
    RunOutcome {
        engine,
        latency_definition: own
            .as_ref()
            .map_or(LATENCY_DEFINITION, |o| o.engine.latency_definition()),
        notes,
        background,
        stopped: stop.load(Ordering::Relaxed) && phases.iter().all(PhaseResult::ok),
        phases,
    }
}

/// Removes a directory test's scratch directory with whatever it still holds; says what
/// could not be removed.
fn remove_scratch(scratch: Option<Arc<Mutex<crate::sys::dirops::ScratchDir>>>) -> Option<String> {
    // Every worker is joined: the run holds the only reference.
    let scratch = Arc::try_unwrap(scratch?)
        .ok()?
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    let path = scratch.path().display().to_string();
    scratch.remove().err().map(|e| {
        format!(
            "could not remove the scratch directory {path}: {} - remove it by hand",
            crate::sys::error::describe_io(&e)
        )
    })
}

/// How long the device is watched for other I/O before the first phase.
const BACKGROUND_LOOK: Duration = Duration::from_millis(200);

/// Watches the device for `BACKGROUND_LOOK` before the run does any I/O: what the kernel
/// counts meanwhile is someone else's, and the processes with it open that did I/O are named.
/// `None` when idle.
fn look_for_background_io(s: &StatSource, stop: &AtomicBool) -> Option<BackgroundIo> {
    let family = activity::device_family(&s.root, s.dev);
    let openers = activity::openers(&family);
    let io0 = activity::io_counters(&openers);
    let before = s.root.dev_stat(s.dev).ok()?;
    let t0 = Instant::now();
    while t0.elapsed() < BACKGROUND_LOOK && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let after = s.root.dev_stat(s.dev).ok()?;
    let window_s = t0.elapsed().as_secs_f64();
    let read = after.read_sectors.saturating_sub(before.read_sectors) * 512;
    let written = after.write_sectors.saturating_sub(before.write_sectors) * 512;
    (read + written > 0).then(|| BackgroundIo {
        device: s.name.clone(),
        window_s,
        read_bytes: read,
        written_bytes: written,
        processes: busy_between(&io0, &activity::io_counters(&openers)),
    })
}

#[cfg(test)]
mod tests {
    use crate::bench::results::outcome::Witness;
    use crate::bench::results::stats::IoStats;
    use crate::sys::parse::DiskStat;

    /// The metadata test, on the directory engine in this runner.
    mod directory {
        use std::sync::{Arc, Mutex};

        use super::super::run;
        use crate::bench::catalog::family::tests::plan;
        use crate::bench::exec::engines::SYNC;
        use crate::bench::exec::engines::directory::{METADATA_LATENCY, METADATA_NO_WITNESS};
        use crate::bench::exec::run_input::RunInput;
        use crate::bench::plan::params::TestParams;
        use crate::bench::plan::test_name::TestName;
        use crate::bench::results::outcome::RunOutcome;
        use crate::sys::dirops::ScratchDir;

        fn run_on(scratch: ScratchDir, files: u64, stop: bool) -> RunOutcome {
            let p = plan(
                TestName::Metadata,
                &TestParams {
                    files: Some(files),
                    ..TestParams::default()
                },
            )
            .unwrap();
            let input = RunInput {
                plan: p,
                fd: Arc::new(scratch.dir_fd().unwrap()),
                pattern: None,
                stat: None,
                no_stat_reason: Some(METADATA_NO_WITNESS.into()),
                events: None,
                block_device: false,
                size_at_start: 0,
                transport: None,
                scratch: Some(Arc::new(Mutex::new(scratch))),
            };
            run(input, &Arc::new(std::sync::atomic::AtomicBool::new(stop)))
        }

        #[test]
        fn a_run_counts_every_file_and_leaves_nothing_behind() {
            let top = tempfile::tempdir().unwrap();
            let out = run_on(ScratchDir::create(top.path()).unwrap(), 300, false);
            assert_eq!(out.phases.len(), 6);
            assert_eq!(out.engine, SYNC);
            assert_eq!(out.latency_definition, METADATA_LATENCY);
            for p in &out.phases {
                assert!(p.ok(), "{}: {:?}", p.label, p.setup_error);
                assert_eq!(p.read.ops + p.write.ops, 300, "{}", p.label);
                assert_eq!(p.read.bytes + p.write.bytes, 0, "{}", p.label);
                let l = p.latency().unwrap();
                assert_eq!(l.count, 300);
                assert!(l.p50_ns <= l.p99_ns && l.p99_ns <= l.max_ns);
                assert!(p.iops() > 0.0, "files/s");
                assert_eq!(p.series.totals().1, 300, "{}", p.label);
                assert_eq!(p.io_threads, 1);
                assert!(p.engine_choice.reason.contains("as bonnie++ -n"));
                assert!(p.engine_choice.probe.is_none());
                assert!(p.witness.is_none());
                assert_eq!(p.witness_note.as_deref(), Some(METADATA_NO_WITNESS));
            }
            // A stat reads, a create or a delete writes.
            assert_eq!(out.phases[1].read.ops, 300);
            assert_eq!(out.phases[0].write.ops, 300);
            assert!(out.notes.is_empty(), "{:?}", out.notes);
            assert_eq!(std::fs::read_dir(top.path()).unwrap().count(), 0);
        }

        #[test]
        fn a_stopped_run_still_removes_its_files() {
            let top = tempfile::tempdir().unwrap();
            let out = run_on(ScratchDir::create(top.path()).unwrap(), 50, true);
            assert!(out.phases.is_empty() && out.stopped);
            assert_eq!(out.latency_definition, METADATA_LATENCY);
            assert_eq!(std::fs::read_dir(top.path()).unwrap().count(), 0);
        }

        #[test]
        fn a_failing_phase_is_reported_and_cleaned_up() {
            let top = tempfile::tempdir().unwrap();
            let mut scratch = ScratchDir::create(top.path()).unwrap();
            // A file already there: the create of file 5 fails with EEXIST (O_EXCL).
            std::fs::write(scratch.path().join("f0000000005"), b"").unwrap();
            scratch.create_file(19).unwrap();
            scratch.delete_file(19).unwrap();
            let out = run_on(scratch, 20, false);
            assert_eq!(out.phases.len(), 1);
            let err = out.error().unwrap();
            assert!(
                err.contains("create of f0000000005") && err.contains("EEXIST"),
                "{err}"
            );
            assert_eq!(out.phases[0].write.ops, 5);
            assert!(!out.stopped && !out.phases[0].stopped);
            // The stray file is not ours: the directory stays, and the report says so.
            assert!(
                out.notes[0].contains("could not remove the scratch directory"),
                "{:?}",
                out.notes
            );
        }
    }

    fn stat(read_sectors: u64, read_ios: u64, merges: u64) -> DiskStat {
        DiskStat {
            read_sectors,
            read_ios,
            read_merges: merges,
            ..DiskStat::default()
        }
    }

    fn ours(bytes: u64, ops: u64) -> IoStats {
        let mut s = IoStats::default();
        s.read.bytes = bytes;
        s.read.ops = ops;
        s
    }

    #[test]
    fn witness_agrees_and_flags() {
        let cmp = |after: DiskStat, bytes, ops| {
            Witness::compare("x".into(), &stat(0, 0, 0), &after, &ours(bytes, ops))
        };
        let w = cmp(stat(2048, 1, 0), 1 << 20, 1);
        assert!(w.agrees);
        assert_eq!(w.read_bytes, 1 << 20);
        // 3 % more bytes on the device than we moved: someone else used it.
        let w = cmp(stat(2110, 1, 0), 1 << 20, 1);
        assert!(!w.agrees);
        assert!(
            (w.bytes_diff_pct - 3.03).abs() < 0.01,
            "{}",
            w.bytes_diff_pct
        );
        // 3 % fewer: part of our I/O never reached the device (a cache answered).
        assert!(!cmp(stat(1986, 1, 0), 1 << 20, 1).agrees);
        // Merged requests count as ours; split ones are more device I/Os for the same bytes.
        assert!(cmp(stat(2048, 4, 4), 1 << 20, 8).agrees);
        let split = cmp(stat(2048, 8, 0), 1 << 20, 1);
        assert!(split.agrees);
        assert_eq!(split.ios_diff_pct, 700.0);
        // Fewer device I/Os than ours with the same bytes cannot be explained by splitting.
        assert!(!cmp(stat(2048, 4, 0), 1 << 20, 8).agrees);
        // A rewrite (--preserve): the kernel also counted the read of every block written
        // back. Compared with those reads the counts agree; without them they would not.
        let mut rewrite = IoStats::default();
        rewrite.write.bytes = 1 << 20;
        rewrite.write.ops = 256;
        let kernel = DiskStat {
            read_sectors: 2048,
            read_ios: 256,
            write_sectors: 2048,
            write_ios: 256,
            ..DiskStat::default()
        };
        let w = Witness::compare("x".into(), &DiskStat::default(), &kernel, &rewrite);
        assert!(!w.agrees, "the reads are missing from ours: {w:?}");
        for _ in 0..256 {
            rewrite.record_read_back(4096);
        }
        let w = Witness::compare("x".into(), &DiskStat::default(), &kernel, &rewrite);
        assert!(w.agrees, "{w:?}");
        assert_eq!((w.read_back_bytes, w.read_back_ios), (1 << 20, 256));
        assert_eq!(w.bytes_diff_pct, 0.0);
    }
}
