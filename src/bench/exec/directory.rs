//! The directory engine: the metadata test's runner (bonnie++'s `-n`). It does no block I/O:
//! one thread makes one system call at a time in a scratch directory of the test's own
//! (`sys::dirops::ScratchDir`, removed afterwards with whatever it still holds), timed as the
//! engine times an I/O (from just before the call to its return), with the same histograms,
//! interval series and events, so every screen and export reads it like any other run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use crate::bench::exec::run_input::{DirectoryRun, RunEvent};
use crate::bench::plan::params::EngineKind;
use crate::bench::plan::{MetaOp, Phase, PhaseTag, TimeBase, splitmix64};
use crate::bench::results::engine_choice::EngineChoice;
use crate::bench::results::outcome::{DirTotals, PhaseResult, RunOutcome, WorkerTotals};
use crate::bench::results::stats::{
    BoundedSeries, DirStats, IntervalPoint, IoStats, SERIES_CAPACITY,
};
use crate::sys::dirops::ScratchDir;
use crate::sys::privilege::{process_cpu_time, thread_run_delay};

/// What the metadata test's latencies measure (the JSON's and CSV's `latency_definition`).
pub const METADATA_LATENCY: &str = "total: from just before the create (open O_CREAT|O_EXCL and \
     close), stat (fstatat) or delete (unlinkat) system call to its return";

/// The order in which a phase visits files 0..n: ascending, or a permutation drawn from
/// `seed` (Fisher-Yates with SplitMix64, so a seed repeats its order).
pub fn order(n: usize, random: bool, seed: u64) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    if random {
        for i in (1..n).rev() {
            let r = splitmix64(seed.wrapping_add(i as u64));
            let j = (r % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
    v
}

/// Runs the six phases in the scratch directory, then removes it.
pub fn run(input: DirectoryRun, stop: &AtomicBool) -> RunOutcome {
    let DirectoryRun {
        plan,
        mut scratch,
        events,
    } = input;
    let count = plan.phases.len();
    let mut phases = Vec::with_capacity(count);
    for (index, phase) in plan.phases.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let PhaseTag::Metadata { op, random } = phase.tag else {
            continue;
        };
        let files = phase.job.ops_per_worker.unwrap_or(0) as usize;
        // Each random phase walks its own order.
        let seed = phase.job.seed.wrapping_add(index as u64 * 0x9E37_79B9);
        let result = run_phase(
            &mut scratch,
            PhaseRun {
                index,
                count,
                phase,
                op,
                order: order(files, random, seed),
                interval: plan.interval,
            },
            &events,
            stop,
        );
        let failed = !result.ok();
        if let Some(tx) = &events {
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
    let mut notes = Vec::new();
    let path = scratch.path().display().to_string();
    if let Err(e) = scratch.remove() {
        notes.push(format!(
            "could not remove the scratch directory {path}: {} - remove it by hand",
            crate::sys::error::describe_io(&e)
        ));
    }
    RunOutcome {
        // The name its outputs give it: one system call at a time, as the threads engine.
        engine: EngineKind::Sync,
        latency_definition: METADATA_LATENCY,
        notes,
        background: None,
        stopped: stop.load(Ordering::Relaxed) && phases.iter().all(PhaseResult::ok),
        phases,
    }
}

struct PhaseRun<'a> {
    index: usize,
    count: usize,
    phase: &'a Phase,
    op: MetaOp,
    order: Vec<usize>,
    interval: Duration,
}

fn run_phase(
    scratch: &mut ScratchDir,
    r: PhaseRun,
    events: &Option<Sender<RunEvent>>,
    stop: &AtomicBool,
) -> PhaseResult {
    let send = |e: RunEvent| {
        if let Some(tx) = events {
            let _ = tx.send(e);
        }
    };
    let choice = EngineChoice {
        reused: false,
        asked: EngineKind::Sync,
        used: EngineKind::Sync,
        reason: format!(
            "one {} system call at a time ({}), as bonnie++ -n",
            r.op.as_str(),
            match r.op {
                MetaOp::Create => "open O_CREAT|O_EXCL, close",
                MetaOp::Stat => "fstatat",
                MetaOp::Delete => "unlinkat",
            }
        ),
        probe: None,
    };
    send(RunEvent::PhaseStarted {
        index: r.index,
        count: r.count,
        label: r.phase.label.clone(),
        job: Box::new(r.phase.job.clone()),
        probing: false,
    });
    send(RunEvent::Measuring {
        index: r.index,
        engine: Box::new(choice.clone()),
    });
    let kind = r.op.kind();
    let mut totals = IoStats::default();
    let mut interval_stats = IoStats::default();
    let mut series = BoundedSeries::new(SERIES_CAPACITY);
    let mut error = None;
    let cpu0 = process_cpu_time();
    let wait0 = thread_run_delay();
    let t0 = Instant::now();
    let mut point_start = 0.0f64;
    let interval = r.interval.as_secs_f64().max(0.001);
    let mut emit = |stats: &mut IoStats, start: &mut f64, end: f64| {
        let sample = stats.take_sample();
        let mut folded = IoStats::default();
        folded.add_sample(&sample);
        let point = IntervalPoint::from_stats(*start, end, &folded, None);
        series.push(point);
        send(RunEvent::Point {
            index: r.index,
            point,
        });
        *start = end;
    };
    for &i in &r.order {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let before = Instant::now();
        let done = match r.op {
            MetaOp::Create => scratch.create_file(i),
            MetaOp::Stat => scratch.stat_file(i),
            MetaOp::Delete => scratch.delete_file(i),
        };
        let after = Instant::now();
        if let Err(e) = done {
            error = Some(format!(
                "{} of {} in {} failed: {}",
                r.op.as_str(),
                crate::sys::dirops::file_name(i).to_string_lossy(),
                scratch.path().display(),
                crate::sys::error::describe_io(&e)
            ));
            break;
        }
        let ns = u64::try_from((after - before).as_nanos()).unwrap_or(u64::MAX);
        totals.record(kind, 0, ns);
        interval_stats.record(kind, 0, ns);
        let now = (after - t0).as_secs_f64();
        if now - point_start >= interval {
            emit(&mut interval_stats, &mut point_start, now);
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
    if interval_stats.ops() > 0 {
        emit(&mut interval_stats, &mut point_start, seconds);
    }
    series.finish();
    let cpu = process_cpu_time().saturating_sub(cpu0);
    let cpu_wait = match (wait0, thread_run_delay()) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => Duration::ZERO,
    };
    // No bytes move: files per second are the IOPS.
    let dir = |d: &DirStats| DirTotals {
        bytes: 0,
        bytes_per_sec: 0.0,
        ..DirTotals::over(d, seconds)
    };
    PhaseResult {
        label: r.phase.label.clone(),
        tag: r.phase.tag.clone(),
        job: r.phase.job.clone(),
        engine: EngineKind::Sync,
        engine_choice: choice,
        io_threads: 1,
        fixed_buffers: false,
        seconds,
        time_base: TimeBase::Elapsed,
        rate_seconds: seconds,
        cpu_seconds: cpu.as_secs_f64(),
        cpu_wait_seconds: cpu_wait.as_secs_f64(),
        cpu_bound: crate::bench::results::outcome::cpu_bound(
            (cpu + cpu_wait).as_secs_f64(),
            seconds,
            1,
            crate::sys::host::usable_cpus(),
        ),
        read: dir(&totals.read),
        write: dir(&totals.write),
        workers: vec![WorkerTotals {
            worker: 0,
            region_start: 0,
            region_len: 0,
            bytes: 0,
            ops: totals.ops(),
            seconds,
            rate_seconds: seconds,
            bytes_per_sec: 0.0,
        }],
        series,
        witness: None,
        witness_note: Some(
            "the metadata test counts files, not bytes: no kernel byte counters to compare".into(),
        ),
        others: Vec::new(),
        failure: None,
        stopped: stop.load(Ordering::Relaxed) && error.is_none(),
        setup_error: error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::catalog::family::tests::plan;
    use crate::bench::plan::params::TestParams;
    use crate::bench::plan::test_name::TestName;

    #[test]
    fn random_orders_are_permutations_that_repeat_with_the_seed() {
        assert_eq!(order(5, false, 1), [0, 1, 2, 3, 4]);
        let a = order(1000, true, 7);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>());
        assert_ne!(a, (0..1000).collect::<Vec<_>>());
        assert_eq!(a, order(1000, true, 7));
        assert_ne!(a, order(1000, true, 8));
    }

    fn run_in(dir: &std::path::Path, files: u64, stop: &AtomicBool) -> RunOutcome {
        let p = plan(
            TestName::Metadata,
            &TestParams {
                files: Some(files),
                ..TestParams::default()
            },
        )
        .unwrap();
        let scratch = ScratchDir::create(dir).unwrap();
        run(
            DirectoryRun {
                plan: p,
                scratch,
                events: None,
            },
            stop,
        )
    }

    #[test]
    fn a_run_counts_every_file_and_leaves_nothing_behind() {
        let top = tempfile::tempdir().unwrap();
        let out = run_in(top.path(), 300, &AtomicBool::new(false));
        assert_eq!(out.phases.len(), 6);
        for p in &out.phases {
            assert!(p.ok(), "{}: {:?}", p.label, p.setup_error);
            assert_eq!(p.read.ops + p.write.ops, 300, "{}", p.label);
            let l = p.latency().unwrap();
            assert_eq!(l.count, 300);
            assert!(l.p50_ns <= l.p99_ns && l.p99_ns <= l.max_ns);
            assert!(p.iops() > 0.0, "files/s");
            assert_eq!(p.series.totals().1, 300, "{}", p.label);
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
        let out = run_in(top.path(), 50, &AtomicBool::new(true));
        assert!(out.phases.is_empty() && out.stopped);
        assert_eq!(std::fs::read_dir(top.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_failing_phase_is_reported_and_cleaned_up() {
        let top = tempfile::tempdir().unwrap();
        let p = plan(
            TestName::Metadata,
            &TestParams {
                files: Some(20),
                ..TestParams::default()
            },
        )
        .unwrap();
        let mut scratch = ScratchDir::create(top.path()).unwrap();
        // A file already there: the create of file 5 fails with EEXIST (O_EXCL).
        std::fs::write(scratch.path().join("f0000000005"), b"").unwrap();
        scratch.create_file(19).unwrap();
        scratch.delete_file(19).unwrap();
        let out = run(
            DirectoryRun {
                plan: p,
                scratch,
                events: None,
            },
            &AtomicBool::new(false),
        );
        assert_eq!(out.phases.len(), 1);
        let err = out.error().unwrap();
        assert!(
            err.contains("create of f0000000005") && err.contains("EEXIST"),
            "{err}"
        );
        assert_eq!(out.phases[0].write.ops, 5);
        // The stray file is not ours: the directory stays, and the report says so.
        assert!(
            out.notes[0].contains("could not remove the scratch directory"),
            "{:?}",
            out.notes
        );
    }
}
