//! The metadata test, bonnie++'s `-n`: create, stat and delete `--files` empty files (16,384 by
//! default, bonnie++ -n 16) in sequential order, then again in random order: six phases, each
//! reported as files per second with the latency of each operation. It runs on a directory, in a
//! scratch directory of its own (`sys::dirops::ScratchDir`) that is removed afterwards with
//! whatever it still holds, whether the run ends, fails or is stopped.
//!
//! Unlike the other families it does no block I/O, so it brings its own runner
//! (`Family::directory_runner`): one thread, one system call at a time, timed as the engine
//! times an I/O (from just before the call to its return), with the same histograms, interval
//! series and events, so every screen and export reads it like any other run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{DirectoryRun, DirectoryRunner, Family, PlanContext};
use crate::bench::catalog::{TestName, Writes};
use crate::bench::exec::probe::EngineChoice;
use crate::bench::exec::runner::{RunEvent, SERIES_CAPACITY};
use crate::bench::plan::params::{Defaults, Param, TestParams};
use crate::bench::plan::{Access, Mix, OpKind, splitmix64};
use crate::bench::results::outcome::{DirTotals, PhaseResult, RunOutcome, WorkerTotals};
use crate::bench::results::stats::{BoundedSeries, DirStats, IntervalPoint, IoStats, TimeBase};
use crate::bench::spec::{EngineKind, Job, Phase, PhaseTag, SpecError, check_range};
use crate::sys::direct::SyncMode;
use crate::sys::dirops::ScratchDir;
use crate::sys::privilege::{process_cpu_time, thread_run_delay};

pub struct Metadata;

/// What the metadata test's latencies measure (the JSON's and CSV's `latency_definition`).
pub const METADATA_LATENCY: &str = "total: from just before the create (open O_CREAT|O_EXCL and \
     close), stat (fstatat) or delete (unlinkat) system call to its return";

/// The most files a run may create (bonnie++ allows -n up to 1024 x 1024 too).
pub const MAX_FILES: u64 = 1 << 20;

/// What a phase does to each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MetaOp {
    Create,
    Stat,
    Delete,
}

impl MetaOp {
    pub fn as_str(self) -> &'static str {
        match self {
            MetaOp::Create => "create",
            MetaOp::Stat => "stat",
            MetaOp::Delete => "delete",
        }
    }

    /// Which direction of the statistics counts it: a stat reads, a create or delete writes.
    fn kind(self) -> OpKind {
        match self {
            MetaOp::Stat => OpKind::Read,
            MetaOp::Create | MetaOp::Delete => OpKind::Write,
        }
    }
}

/// The six phases in bonnie++'s order.
const PHASES: [(MetaOp, bool); 6] = [
    (MetaOp::Create, false),
    (MetaOp::Stat, false),
    (MetaOp::Delete, false),
    (MetaOp::Create, true),
    (MetaOp::Stat, true),
    (MetaOp::Delete, true),
];

/// "create sequential", "stat random": a phase's label.
pub fn phase_label(op: MetaOp, random: bool) -> String {
    format!(
        "{} {}",
        op.as_str(),
        if random { "random" } else { "sequential" }
    )
}

impl Family for Metadata {
    fn defaults(&self, _test: TestName) -> Defaults {
        Defaults {
            time: None,
            warmup: Duration::ZERO,
            ..Defaults::BASE
        }
    }

    fn params(&self, _test: TestName) -> &'static [Param] {
        &[Param::Files]
    }

    fn common_params(&self) -> &'static [Param] {
        // No engine and no I/O path: it makes system calls on a directory, one at a time.
        &[Param::Repeats, Param::TempPoll]
    }

    fn writes(&self, _test: TestName, _params: &TestParams) -> Writes {
        // It creates files, but only in a new directory of its own: the target module lets
        // it do so without a confirmation, as it lets a run create a new test file.
        Writes::Always
    }

    fn phases(&self, _test: TestName, ctx: &PlanContext) -> Result<Vec<Phase>, SpecError> {
        let files = ctx.resolved.files;
        check_range("file count (--files)", files, 1, MAX_FILES)?;
        Ok(PHASES
            .iter()
            .map(|&(op, random)| Phase {
                label: phase_label(op, random),
                tag: PhaseTag::Metadata { op, random },
                job: Job {
                    bs: 0,
                    qd: 1,
                    workers: 1,
                    access: if random {
                        Access::Random
                    } else {
                        Access::Forward
                    },
                    mix: match op.kind() {
                        OpKind::Read => Mix::Read,
                        OpKind::Write => Mix::Write,
                    },
                    region_start: 0,
                    region_len: 0,
                    split_region: false,
                    time: None,
                    warmup: Duration::ZERO,
                    ops_per_worker: Some(files),
                    sync: SyncMode::None,
                    rewrite: false,
                    seed: ctx.resolved.seed ^ (PHASES.len() as u64),
                },
            })
            .collect())
    }

    fn lower_hint(&self) -> &'static str {
        "the file count (--files)"
    }

    fn directory_runner(&self) -> Option<DirectoryRunner> {
        Some(run)
    }
}

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
fn run(input: DirectoryRun, stop: &AtomicBool) -> RunOutcome {
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

    #[test]
    fn six_phases_in_bonnies_order() {
        let p = plan(TestName::Metadata, &TestParams::default()).unwrap();
        let labels: Vec<&str> = p.phases.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "create sequential",
                "stat sequential",
                "delete sequential",
                "create random",
                "stat random",
                "delete random"
            ]
        );
        assert!(
            p.phases
                .iter()
                .all(|p| p.job.ops_per_worker == Some(16 * 1024))
        );
        assert!(p.writes());
        let few = plan(
            TestName::Metadata,
            &TestParams {
                files: Some(100),
                ..TestParams::default()
            },
        )
        .unwrap();
        assert_eq!(few.phases[4].job.ops_per_worker, Some(100));
        let none = plan(
            TestName::Metadata,
            &TestParams {
                files: Some(0),
                ..TestParams::default()
            },
        )
        .unwrap_err();
        assert!(none.to_string().contains("file count"), "{none}");
    }

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
