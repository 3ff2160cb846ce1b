//! What an I/O engine is to the common worker loop (`worker`), on the model of fio's
//! `ioengines.h`: the loop owns what is the same for every engine (warm-up, gate, measured
//! phase, samples, `Done`); an engine owns only how its I/O reaches the kernel. The engines
//! are in `engines/`, one file each; `engines::for_kind` picks one.
//!
//! The loop calls a thread's `run` once per phase and the engine keeps its I/Os in flight
//! inside it: one dynamic call per phase, never per I/O, so an engine's inner loop is plain
//! code the compiler sees whole.
//!
//! A worker works on blocks of the target (`Work::Blocks`), or for the metadata test on files
//! in a scratch directory (as fio's `engines/filestat.c`): one "I/O" is one create, stat or
//! delete.

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::bench::exec::gate::Gate;
use crate::bench::exec::io_sequence::Planner;
use crate::bench::exec::pattern::DataPattern;
use crate::bench::plan::Job;
use crate::bench::plan::OpKind;
use crate::bench::plan::params::EngineKind;
use crate::bench::plan::{MetaOp, PhaseTag};
use crate::bench::results::engine_choice::EngineChoice;
use crate::bench::results::failure::IoFailure;
use crate::bench::results::stats::{IoStats, LATENCY_DEFINITION, WorkerSample};
use crate::sys::dirops::ScratchDir;

/// An I/O engine: how a worker's I/O threads are made. One static value per engine; a
/// thread's state is in its `EngineThread`.
pub trait IoEngine: Sync {
    /// The engine's kind, for the results (`PhaseResult::engine`) and the labels.
    fn kind(&self) -> EngineKind;

    /// I/O threads per worker for `job`; the gate waits for `workers` x this many.
    fn threads_per_worker(&self, job: &Job) -> u32;

    /// Whether its threads may register their buffers (io_uring's fixed buffers).
    fn may_fix_buffers(&self) -> bool;

    /// Whether this process may use the engine here (a sysctl or a seccomp filter can forbid
    /// io_uring), and if not, why.
    fn available(&self) -> Result<(), String> {
        Ok(())
    }

    /// What its latencies measure (the JSON's and CSV's `latency_definition`).
    fn latency_definition(&self) -> &'static str {
        LATENCY_DEFINITION
    }

    /// Whether its jobs write bytes; the directory engine's "writes" create and delete files.
    fn writes_bytes(&self) -> bool {
        true
    }

    /// Sets up I/O thread `thread` of the worker (buffers, ring, its own open file), or says why
    /// it cannot run.
    fn open_thread(&self, ctx: &WorkerCtx, thread: u32) -> Result<Box<dyn EngineThread>, String>;
}

/// One I/O thread of an engine, set up. Dropped before the thread says `Done`, so its ring
/// and buffers are gone when the runner goes on.
pub trait EngineThread {
    /// The I/Os it keeps in flight: its queue depth with io_uring, one with a synchronous call.
    fn lanes(&self) -> u32;

    /// Whether it registered its buffers with the kernel.
    fn fixed_buffers(&self) -> bool;

    /// Does I/O until `bound`, `ctx.stop` or a failure, then drains. With a recorder (the
    /// measured phase) each completion is recorded; the warm-up has none. On a failure it sets
    /// `ctx.stop` so the other threads stop too, and returns it.
    fn run(
        &mut self,
        ctx: &WorkerCtx,
        bound: &Bound,
        rec: Option<&mut Recorder>,
    ) -> Option<IoFailure>;

    /// Why the thread stopped when that is not an I/O failure (a directory engine system call
    /// failed). Asked once, after the measured loop.
    fn error(&mut self) -> Option<String> {
        None
    }
}

/// A block engine's `open_thread` refuses a worker on files with this.
pub const NOT_BLOCKS: &str = "internal error: a block engine was given files to work on";

/// The engine a kind of phase always runs on, whatever the plan's: the directory engine for a
/// metadata phase. Chosen without a probe.
pub struct OwnEngine {
    pub engine: &'static dyn IoEngine,
    pub choice: EngineChoice,
}

/// What a worker works on.
pub enum Work {
    /// Blocks of the open target, in the planner's order (the block engines).
    Blocks(Planner),
    /// Files in a scratch directory (the directory engine).
    Files(FileWork),
}

/// One metadata phase's work: which system call, on which files, in which order.
pub struct FileWork {
    /// Shared with the runner, which removes it after the last phase.
    pub scratch: Arc<Mutex<ScratchDir>>,
    pub op: MetaOp,
    /// The file numbers in the order the phase visits them.
    pub order: Vec<usize>,
}

impl FileWork {
    /// The work of a metadata phase `tag` in `scratch`, else `None`. Each random phase (`index`)
    /// walks its own order.
    pub fn of(
        scratch: &Arc<Mutex<ScratchDir>>,
        tag: &PhaseTag,
        index: usize,
        job: &Job,
    ) -> Option<FileWork> {
        let PhaseTag::Metadata { op, random } = *tag else {
            return None;
        };
        let files = job.ops_per_worker.unwrap_or(0) as usize;
        let seed = job.seed.wrapping_add(index as u64 * 0x9E37_79B9);
        Some(FileWork {
            scratch: Arc::clone(scratch),
            op,
            order: file_order(files, random, seed),
        })
    }
}

/// The order in which a phase visits files 0..n: ascending, or a permutation drawn from
/// `seed` (Fisher-Yates with SplitMix64, so a seed repeats its order).
pub fn file_order(n: usize, random: bool, seed: u64) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    if random {
        for i in (1..n).rev() {
            let r = crate::bench::plan::splitmix64(seed.wrapping_add(i as u64));
            let j = (r % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
    v
}

/// What a worker thread tells the runner.
#[derive(Debug)]
pub enum WorkerMsg {
    Sample(WorkerSample),
    /// The thread has finished; `failure` if an I/O failed.
    Done {
        worker: u32,
        failure: Option<IoFailure>,
        setup_error: Option<String>,
        fixed_buffers: bool,
        /// How long this thread waited for a CPU during the measured loop.
        cpu_wait: Duration,
        /// When its measured loop ended, by its own clock: the phase ends at the last of these,
        /// not when the coordinator reads the message (up to 0.2 s later on a CPU-bound device).
        ended: Option<Instant>,
    },
}

/// What a worker's writes put on the device.
#[derive(Debug, Clone)]
pub enum WriteData {
    /// The run's data (random or zeros) from the shared pattern buffer.
    Pattern(DataPattern),
    /// The block's own bytes: read first into the request's buffer, then written back.
    Rewrite,
}

/// Everything one worker thread needs.
pub struct WorkerCtx {
    pub worker: u32,
    pub fd: Arc<OwnedFd>,
    pub job: Job,
    pub work: Work,
    /// `None` for a job that only reads.
    pub write_data: Option<WriteData>,
    pub interval: Duration,
    /// Buffers in huge pages (`Plan::huge_pages`).
    pub huge_pages: bool,
    pub tx: Sender<WorkerMsg>,
    pub stop: Arc<AtomicBool>,
    /// Met between warm-up and measurement (see `worker`).
    pub gate: Arc<Gate>,
    /// Sequence numbers of planned I/Os; shared by the threads of a synchronous worker.
    pub next_op: Arc<AtomicU64>,
    /// Measured I/Os issued so far; shared like `next_op`, for `ops_per_worker`.
    pub issued: Arc<AtomicU64>,
}

impl WorkerCtx {
    /// The planner of a block engine's worker; `None` for a worker on files.
    pub fn planner(&self) -> Option<&Planner> {
        match &self.work {
            Work::Blocks(p) => Some(p),
            Work::Files(_) => None,
        }
    }
}

/// The bounds of one loop (warm-up or measured).
pub struct Bound {
    pub deadline: Option<Instant>,
    pub max_ops: Option<u64>,
}

/// Accumulates one interval at a time and sends it when the interval is over.
///
/// A time-bounded loop has no partial last interval: the rest before the deadline is folded
/// into the last whole one. Samples carry their real end when it is not a boundary.
///
/// In a rewrite it also sums the thread's write latencies for its write-busy time, divided
/// by its lanes in `send` (the rule is `TimeBase::WriteBusy`'s).
pub struct Recorder {
    worker: u32,
    thread: u32,
    /// Its queue depth with io_uring, 1 with sync.
    lanes: u32,
    /// Timed I/Os recorded so far: a lane that never carried one is not a busy lane.
    timed: u64,
    interval: Duration,
    t0: Instant,
    deadline: Option<Instant>,
    index: u64,
    next_boundary: Instant,
    stats: IoStats,
    tx: Sender<WorkerMsg>,
}

impl Recorder {
    pub(crate) fn new(
        worker: u32,
        (thread, lanes): (u32, u32),
        t0: Instant,
        interval: Duration,
        deadline: Option<Instant>,
        tx: Sender<WorkerMsg>,
    ) -> Self {
        Recorder {
            worker,
            thread,
            lanes: lanes.max(1),
            timed: 0,
            interval,
            t0,
            deadline,
            index: 0,
            next_boundary: t0 + interval,
            stats: IoStats::default(),
            tx,
        }
    }

    /// A block read in full to be rewritten: counted for the witness, not in the figures.
    pub fn record_read_back(&mut self, bytes: u64) {
        self.stats.record_read_back(bytes);
    }

    /// A timed I/O of a rewrite phase (`--preserve`): its latency counts in the busy time.
    pub fn record_busy(&mut self, latency: Duration) {
        self.timed += 1;
        self.stats
            .record_busy(latency.as_nanos().min(u128::from(u64::MAX)) as u64);
    }

    pub fn record(&mut self, kind: OpKind, bytes: u64, latency: Duration) {
        self.stats.record(
            kind,
            bytes,
            latency.as_nanos().min(u128::from(u64::MAX)) as u64,
        );
    }

    /// Sends every interval that ended before `now` (empty ones too: a stalled device shows
    /// as zero throughput, not as a gap).
    pub fn tick(&mut self, now: Instant) {
        while now >= self.next_boundary && !self.last_before_deadline() {
            self.send(None);
            self.next_boundary += self.interval;
        }
    }

    /// Is the current interval the last whole one before the deadline?
    fn last_before_deadline(&self) -> bool {
        self.deadline
            .is_some_and(|d| self.next_boundary + self.interval > d)
    }

    fn send(&mut self, end_s: Option<f64>) {
        // The mean busy time of the lanes that carried a timed I/O (see the type's doc).
        let lanes = u64::from(self.lanes).min(self.timed).max(1);
        self.stats.busy_ns /= lanes;
        let stats = self.stats.take_sample();
        let _ = self.tx.send(WorkerMsg::Sample(WorkerSample {
            worker: self.worker,
            thread: self.thread,
            interval: self.index,
            end_s,
            stats,
        }));
        self.index += 1;
    }

    /// Sends the last interval, ending now: partial when stopped or counted, folded when timed.
    pub(crate) fn finish(mut self, ended: Instant) {
        let end = ended.saturating_duration_since(self.t0).as_secs_f64();
        self.send(Some(end));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_file_orders_are_permutations_that_repeat_with_the_seed() {
        assert_eq!(file_order(5, false, 1), [0, 1, 2, 3, 4]);
        let a = file_order(1000, true, 7);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>());
        assert_ne!(a, (0..1000).collect::<Vec<_>>());
        assert_eq!(a, file_order(1000, true, 7));
        assert_ne!(a, file_order(1000, true, 8));
    }

    #[test]
    fn a_time_bounded_recorder_folds_the_rest_into_its_last_interval() {
        let (tx, rx) = std::sync::mpsc::channel();
        let interval = Duration::from_millis(250);
        let t0 = Instant::now();
        let deadline = t0 + Duration::from_millis(1100);
        let mut rec = Recorder::new(0, (0, 1), t0, interval, Some(deadline), tx);
        // Ticks past every boundary, then past the deadline while the queue drains.
        for ms in [250, 500, 750, 1000, 1100, 1250, 1300] {
            rec.record(OpKind::Read, 4096, Duration::from_micros(50));
            rec.tick(t0 + Duration::from_millis(ms));
        }
        rec.finish(Instant::now());
        let samples: Vec<(u64, Option<f64>, u64)> = rx
            .try_iter()
            .map(|m| match m {
                WorkerMsg::Sample(s) => (s.interval, s.end_s, s.stats.read.ops),
                WorkerMsg::Done { .. } => panic!("no Done from a recorder"),
            })
            .collect();
        // Intervals 0-2 are whole; 3 runs from 0.75 s to the end (1.1 s + draining), with
        // the I/O of its last 0.35 s; nothing comes after it.
        let intervals: Vec<u64> = samples.iter().map(|s| s.0).collect();
        assert_eq!(intervals, [0, 1, 2, 3], "{samples:?}");
        assert!(samples[..3].iter().all(|s| s.1.is_none()));
        assert_eq!(samples[3].2, 4);
        assert!(samples[3].1.is_some_and(|e| e > 0.0));
    }

    #[test]
    fn a_thread_is_write_busy_for_its_latencies_over_its_lanes() {
        let (tx, rx) = std::sync::mpsc::channel();
        let t0 = Instant::now();
        let interval = Duration::from_millis(250);
        // An io_uring thread at QD4: 8 writes of 10 ms each in the first interval, its 4
        // lanes each busy 20 ms of it. Then 2 writes of 6 ms in a partial last interval.
        let mut rec = Recorder::new(3, (0, 4), t0, interval, None, tx.clone());
        for _ in 0..8 {
            rec.record(OpKind::Write, 4096, Duration::from_millis(10));
            rec.record_busy(Duration::from_millis(10));
        }
        rec.tick(t0 + interval);
        for _ in 0..2 {
            rec.record(OpKind::Write, 4096, Duration::from_millis(6));
            rec.record_busy(Duration::from_millis(6));
        }
        rec.finish(Instant::now());
        // A pread/pwrite thread (one lane) that did 2 writes of 10 ms: busy 20 ms. A thread
        // with 4 lanes that only ever carried 2 writes had 2 busy lanes, not 4.
        let mut one = Recorder::new(3, (1, 1), t0, interval, None, tx.clone());
        let mut few = Recorder::new(4, (0, 4), t0, interval, None, tx);
        for r in [&mut one, &mut few] {
            for _ in 0..2 {
                r.record(OpKind::Write, 4096, Duration::from_millis(10));
                r.record_busy(Duration::from_millis(10));
            }
        }
        one.finish(Instant::now());
        few.finish(Instant::now());
        let busy: Vec<(u32, u32, u64)> = rx
            .try_iter()
            .map(|m| match m {
                WorkerMsg::Sample(s) => (s.worker, s.thread, s.stats.busy_ns),
                WorkerMsg::Done { .. } => panic!("no Done from a recorder"),
            })
            .collect();
        assert_eq!(
            busy,
            [
                (3, 0, 20_000_000),
                (3, 0, 3_000_000),
                (3, 1, 20_000_000),
                (4, 0, 10_000_000)
            ]
        );
    }
}
