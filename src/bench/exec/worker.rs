//! The I/O loop of one worker. With io_uring a worker is one thread keeping `qd` I/Os in
//! flight; with the synchronous engine it is `qd` threads each doing one pread/pwrite at a
//! time. Either way the loop runs an optional warm-up (not recorded), drains, meets the other
//! workers at a gate while the runner snapshots the kernel's counters, then runs the
//! measured phase and sends one `WorkerSample` per interval, never one message per I/O.
//!
//! A rewrite of existing data (`--preserve`) makes each write two steps on the same buffer:
//! read the block, then, only when that read returned the whole block, write those bytes back.
//! The buffer is the request's own (the io_uring slot, or the thread's buffer), held from the
//! read to the write, so no other request can put other bytes in it. Requests of several
//! workers or slots may overlap on a block: every write puts back bytes read from the device,
//! and every write is such a write, so the device never holds anything but its own data and
//! any interleaving of reads and writes reads and writes that same data.
//!
//! Only a rewrite's writes are timed, and its rates are over the time they took. A thread's
//! write-busy time is the mean, over its lanes, of the time each lane's writes were in flight,
//! a lane being one outstanding I/O: a pread/pwrite thread is one lane, so its busy time is
//! the sum of its write latencies; an io_uring thread at QD N has N lanes (its slots), so its
//! busy time is the sum of its write latencies over N. Both engines thus give the same figure
//! for the same writes: requests over (lanes x mean write latency). At QD1 it is the sum of
//! the write latencies either way.

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use crate::bench::exec::gate::Gate;
use crate::bench::exec::io_sequence::Planner;
use crate::bench::exec::pattern::DataPattern;
use crate::bench::exec::probe::completions_per_wait;
use crate::bench::plan::Job;
use crate::bench::plan::OpKind;
use crate::bench::plan::params::EngineKind;
use crate::bench::results::failure::IoFailure;
use crate::bench::results::stats::{IoStats, WorkerSample};
use crate::sys::direct::{self, AlignedBuf};
pub use crate::sys::error::FailureFacts;
use crate::sys::privilege::thread_run_delay;
use crate::sys::uring::{Completion, UringQueue, WriteSource};

/// What a worker thread tells the runner.
#[derive(Debug)]
pub enum WorkerMsg {
    Sample(WorkerSample),
    /// The thread has finished; `failure` if an I/O failed. `fixed_buffers` says whether
    /// io_uring used registered buffers.
    Done {
        worker: u32,
        failure: Option<IoFailure>,
        setup_error: Option<String>,
        fixed_buffers: bool,
        /// How long this thread waited for a CPU during the measured loop.
        cpu_wait: Duration,
        /// When the thread's measured loop ended, by its own clock: the phase ends at the
        /// last of these, not when the coordinator gets round to reading the message (on a
        /// CPU-bound device with more I/O threads than CPUs that was up to 0.2 s later).
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
    pub planner: Planner,
    /// `None` for a job that only reads.
    pub write_data: Option<WriteData>,
    pub interval: Duration,
    /// Buffers in huge pages (`Plan::huge_pages`).
    pub huge_pages: bool,
    pub tx: Sender<WorkerMsg>,
    pub stop: Arc<AtomicBool>,
    /// Met between warm-up and measurement (see the module doc).
    pub gate: Arc<Gate>,
    /// Sequence numbers of planned I/Os; shared by the threads of a synchronous worker.
    pub next_op: Arc<AtomicU64>,
    /// Measured I/Os issued so far; shared like `next_op`, for `ops_per_worker`.
    pub issued: Arc<AtomicU64>,
}

/// Accumulates one interval at a time and sends it when the interval is over.
///
/// A time-bounded loop has no partial last interval: the interval that the deadline would cut
/// short is folded into the one before it, so the last sample covers at least one whole
/// interval up to the real end (the deadline plus draining the queue). Samples carry their
/// real end when it is not the interval's boundary, so every rate over them is right.
struct Recorder {
    worker: u32,
    thread: u32,
    /// The thread's lanes (outstanding I/Os: its queue depth with io_uring, 1 with sync).
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
    fn new(
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
    fn record_read_back(&mut self, bytes: u64) {
        self.stats.record_read_back(bytes);
    }

    /// A timed I/O of a rewrite phase (`--preserve`): its latency counts in the thread's busy
    /// time, which `send` divides by the lanes that carried one.
    fn record_busy(&mut self, latency: Duration) {
        self.timed += 1;
        self.stats
            .record_busy(latency.as_nanos().min(u128::from(u64::MAX)) as u64);
    }

    fn record(&mut self, kind: OpKind, bytes: u64, latency: Duration) {
        self.stats.record(
            kind,
            bytes,
            latency.as_nanos().min(u128::from(u64::MAX)) as u64,
        );
    }

    /// Sends every interval that ended before `now` (empty ones too: a stalled device shows
    /// as zero throughput, not as a gap).
    fn tick(&mut self, now: Instant) {
        while now >= self.next_boundary && !self.last_before_deadline() {
            self.send(None);
            self.next_boundary += self.interval;
        }
    }

    /// Is the current interval the last whole one before the deadline (the rest of the run,
    /// less than an interval, is folded into it)?
    fn last_before_deadline(&self) -> bool {
        self.deadline
            .is_some_and(|d| self.next_boundary + self.interval > d)
    }

    fn send(&mut self, end_s: Option<f64>) {
        // The latencies summed over the interval, over the lanes that carried a timed I/O:
        // the mean busy time of the thread's lanes (see the module doc).
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

    /// Sends the last interval, ending now: a partial one when the loop was stopped or bounded
    /// by a count, the folded last one when bounded by time.
    fn finish(mut self, ended: Instant) {
        let end = ended.saturating_duration_since(self.t0).as_secs_f64();
        self.send(Some(end));
    }
}

/// The bounds of one loop (warm-up or measured).
struct Bound {
    deadline: Option<Instant>,
    max_ops: Option<u64>,
}

/// Runs one worker with the chosen engine; for the synchronous engine this spawns the worker's
/// other threads and runs the first one itself. Every thread sends `Done` exactly once.
pub fn run_worker(ctx: WorkerCtx, engine: EngineKind) {
    if ctx.job.writes() && ctx.write_data.is_none() {
        return setup_failed(
            &ctx,
            "internal error: a job that writes has no write data".into(),
        );
    }
    match engine {
        EngineKind::Uring => uring_worker(ctx),
        // The runner resolves `Auto` before it starts workers; pread/pwrite works everywhere.
        EngineKind::Sync | EngineKind::Auto => sync_worker(ctx),
    }
}

/// Tells the gate and the runner that this thread could not start.
fn setup_failed(ctx: &WorkerCtx, why: String) {
    // Not coming to the gate: tell it, so nobody waits for this thread.
    ctx.gate.forget();
    let _ = ctx.tx.send(WorkerMsg::Done {
        worker: ctx.worker,
        failure: None,
        setup_error: Some(why),
        fixed_buffers: false,
        cpu_wait: Duration::ZERO,
        ended: None,
    });
}

/// The phases every I/O thread goes through: an unrecorded warm-up, the gate, then the
/// measured loop with a recorder. `io` runs one loop within a bound. `lane` is the I/O
/// thread's number within its worker and its lanes (see the module doc).
/// Returns the first failure, how long the thread waited for a CPU while measured, and when
/// its measured loop ended (none if it never measured).
fn run_phases(
    ctx: &WorkerCtx,
    lane: (u32, u32),
    mut io: impl FnMut(&Bound, Option<&mut Recorder>) -> Option<IoFailure>,
) -> (Option<IoFailure>, Duration, Option<Instant>) {
    let job = &ctx.job;
    let mut failure = None;
    let mut cpu_wait = Duration::ZERO;
    let mut ended = None;
    if !job.warmup.is_zero() {
        let bound = Bound {
            deadline: Some(Instant::now() + job.warmup),
            max_ops: None,
        };
        failure = io(&bound, None);
    }
    // Every thread measures from the instant the gate opened, to one deadline: a thread the
    // scheduler runs late starts late, it does not run late.
    let t0 = ctx.gate.arrive_and_wait();
    if failure.is_none() && !ctx.stop.load(Ordering::Relaxed) {
        let deadline = job.time.map(|t| t0 + t);
        let mut rec = Recorder::new(ctx.worker, lane, t0, ctx.interval, deadline, ctx.tx.clone());
        let bound = Bound {
            deadline,
            max_ops: job.ops_per_worker,
        };
        let wait0 = thread_run_delay();
        failure = io(&bound, Some(&mut rec));
        let end = Instant::now();
        ended = Some(end);
        if let (Some(a), Some(b)) = (wait0, thread_run_delay()) {
            cpu_wait = b.saturating_sub(a);
        }
        rec.finish(end);
    }
    (failure, cpu_wait, ended)
}

fn uring_worker(ctx: WorkerCtx) {
    let job = &ctx.job;
    let pattern_buf = match &ctx.write_data {
        Some(WriteData::Pattern(p)) => Some(p.shared()),
        Some(WriteData::Rewrite) | None => None,
    };
    let queue = UringQueue::new(
        Arc::clone(&ctx.fd),
        job.qd,
        job.bs as usize,
        pattern_buf,
        job.sync,
        ctx.huge_pages,
    );
    let mut queue = match queue {
        Ok(q) => q,
        Err(e) => return setup_failed(&ctx, format!("cannot set up io_uring: {e}")),
    };
    let fixed = queue.uses_fixed_buffers();
    // One thread whose queue slots are its lanes.
    let lanes = queue.depth();
    let (failure, cpu_wait, ended) = run_phases(&ctx, (0, lanes), |bound, rec| {
        uring_loop(&ctx, &mut queue, bound, rec)
    });
    drop(queue);
    let _ = ctx.tx.send(WorkerMsg::Done {
        worker: ctx.worker,
        failure,
        setup_error: None,
        fixed_buffers: fixed,
        cpu_wait,
        ended,
    });
}

/// Hands the I/O held back (prepared, not submitted) to the kernel, its start stamped just
/// before the call.
fn hand_over(
    queue: &mut UringQueue,
    held: &mut Option<u32>,
    meta: &mut [(OpKind, u64, Instant, bool)],
) -> std::io::Result<()> {
    if let Some(h) = held.take() {
        meta[h as usize].2 = Instant::now();
        queue.submit()?;
    }
    Ok(())
}

/// A failed `io_uring_enter`: the ring, not one I/O, failed.
fn submission_failure(ctx: &WorkerCtx, e: std::io::Error) -> IoFailure {
    IoFailure {
        worker: ctx.worker,
        op: OpKind::Read,
        offset: 0,
        len: 0,
        errno: e.raw_os_error(),
        transferred: None,
        facts: None,
        submission: true,
        read_back: false,
    }
}

/// Keeps the ring full until a bound is reached, then drains it. Returns the first failure.
fn uring_loop(
    ctx: &WorkerCtx,
    queue: &mut UringQueue,
    bound: &Bound,
    mut rec: Option<&mut Recorder>,
) -> Option<IoFailure> {
    let bs = ctx.job.bs;
    let depth = queue.depth() as usize;
    // Per slot: the I/O it carries, when it was handed to the kernel, and whether it is the
    // read of a rewrite (its write is still to come).
    let mut meta: Vec<(OpKind, u64, Instant, bool)> =
        vec![(OpKind::Read, 0, Instant::now(), false); depth];
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut done: Vec<Completion> = Vec::with_capacity(depth);
    let mut failure: Option<IoFailure> = None;
    let mut issued = 0u64;
    // The I/O prepared last and not handed to the kernel yet.
    let mut held: Option<u32> = None;
    let mut now = Instant::now();
    let wait = Some(ctx.interval.min(Duration::from_millis(250)));
    let per_wait = completions_per_wait(depth as u32) as usize;

    loop {
        let accepting = failure.is_none()
            && !ctx.stop.load(Ordering::Relaxed)
            && bound.deadline.is_none_or(|d| now < d);
        while accepting && bound.max_ops.is_none_or(|m| issued < m) {
            let Some(slot) = free.pop() else { break };
            // Each I/O goes to the kernel as soon as the next one is prepared, and the last
            // with the wait (one system call per I/O, as fio's io_uring by default; at QD1 a
            // single call both submits and waits). A batch of SQEs submitted together goes
            // through one block-layer plug, which holds the first request back until the
            // last is prepared: on a file system over a loop device fio itself loses a fifth
            // of its IOPS that way.
            if let Err(e) = hand_over(queue, &mut held, &mut meta) {
                failure.get_or_insert(submission_failure(ctx, e));
                ctx.stop.store(true, Ordering::Relaxed);
                free.push(slot);
                break;
            }
            let k = ctx.next_op.fetch_add(1, Ordering::Relaxed);
            let io = ctx.planner.op(k);
            let read_back =
                io.kind == OpKind::Write && matches!(ctx.write_data, Some(WriteData::Rewrite));
            let pushed = match (io.kind, &ctx.write_data) {
                (OpKind::Read, _) => queue.push_read(slot, io.offset, bs as u32),
                (OpKind::Write, Some(WriteData::Pattern(p))) => queue.push_write(
                    slot,
                    io.offset,
                    bs as u32,
                    WriteSource::Pattern(p.start_for(io.offset)),
                ),
                // A rewrite starts with the read of its block into this slot's buffer.
                (OpKind::Write, Some(WriteData::Rewrite)) => {
                    queue.push_read(slot, io.offset, bs as u32)
                }
                (OpKind::Write, None) => Err(std::io::Error::other("no write data")),
            };
            if pushed.is_err() {
                free.push(slot);
                break;
            }
            issued += 1;
            // Stamped again just before the call that hands it over (`hand_over`).
            meta[slot as usize] = (io.kind, io.offset, now, read_back);
            held = Some(slot);
        }
        if queue.in_flight() == 0 {
            break;
        }
        // Total latency, as fio's `lat`: the I/O's time starts just before the system call
        // that hands it to the kernel and ends when its completion is seen. Starting after
        // the call returned (fio's `clat`) would hide an I/O the device completes inside it.
        if let Some(h) = held.take() {
            meta[h as usize].2 = Instant::now();
        }
        // Anything `submit` could not hand over (a full completion queue) goes with the wait.
        // A completion already seen is taken at once; otherwise the wait is for a few
        // (`completions_per_wait`), so the submitter sleeps and is woken less often.
        let want = if queue.ready() > 0 { 1 } else { per_wait };
        if let Err(e) = queue.submit_and_wait(want, wait) {
            failure.get_or_insert(submission_failure(ctx, e));
            ctx.stop.store(true, Ordering::Relaxed);
            // Nothing more can be submitted or reaped reliably; leave it to Drop.
            break;
        }
        now = Instant::now();
        done.clear();
        // One completion at a time, its slot refilled and handed over before the next is
        // looked at (fio's io_uring default, iodepth_batch_complete_max=1): reaping all that
        // are ready and refilling them together left the device a burst of work, then none;
        // on a file on ext4 over a loop device, one at a time gave 5 % more IOPS (295k vs 281k,
        // medians of 5 alternating runs). The next wait returns at once while others wait.
        queue.reap(&mut done, 1);
        for c in &done {
            let (kind, offset, at, read_back) = meta[c.slot as usize];
            let whole = c.result >= 0 && c.result as u64 == bs;
            if whole && read_back {
                // The slot's buffer holds the whole block as the device returned it: write
                // exactly that back, from the same buffer, unless the run is ending (then the
                // block is left as it is, which is the same thing).
                if let Some(r) = rec.as_deref_mut() {
                    r.record_read_back(bs);
                }
                let mut ending = failure.is_some() || ctx.stop.load(Ordering::Relaxed);
                // The I/O held back goes first: a submission hands over everything queued.
                if !ending && let Err(e) = hand_over(queue, &mut held, &mut meta) {
                    failure.get_or_insert(submission_failure(ctx, e));
                    ctx.stop.store(true, Ordering::Relaxed);
                    ending = true;
                }
                if !ending
                    && queue
                        .push_write(c.slot, offset, bs as u32, WriteSource::Slot)
                        .is_ok()
                {
                    // Handed over with the next call, like every other I/O.
                    meta[c.slot as usize] = (OpKind::Write, offset, now, false);
                    held = Some(c.slot);
                } else {
                    free.push(c.slot);
                }
                continue;
            }
            free.push(c.slot);
            if !whole {
                // A failed or short read of a rewrite is never followed by its write: the
                // buffer may hold another block's bytes or a part of this one's.
                if failure.is_none() {
                    failure = Some(IoFailure {
                        worker: ctx.worker,
                        op: if read_back { OpKind::Read } else { kind },
                        offset,
                        len: bs,
                        errno: (c.result < 0).then(|| -c.result),
                        transferred: (c.result >= 0).then_some(c.result as u64),
                        facts: None,
                        submission: false,
                        read_back,
                    });
                    // One failure ends the run for every worker: the device is suspect.
                    ctx.stop.store(true, Ordering::Relaxed);
                }
                continue;
            }
            if let Some(r) = rec.as_deref_mut() {
                let latency = now.saturating_duration_since(at);
                r.record(kind, bs, latency);
                if ctx.job.rewrite {
                    r.record_busy(latency);
                }
            }
        }
        if let Some(r) = rec.as_deref_mut() {
            r.tick(now);
        }
    }
    failure
}

fn sync_worker(ctx: WorkerCtx) {
    let threads = ctx.job.qd.max(1);
    let ctx = Arc::new(ctx);
    let mut handles = Vec::new();
    for t in 1..threads {
        let c = Arc::clone(&ctx);
        let spawned = std::thread::Builder::new()
            .name(format!("io-{}-{t}", ctx.worker))
            .spawn(move || sync_thread(&c, t));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => setup_failed(&ctx, format!("cannot start an I/O thread: {e}")),
        }
    }
    sync_thread(&ctx, 0);
    for h in handles {
        let _ = h.join();
    }
}

/// One synchronous I/O thread: one outstanding I/O at a time.
fn sync_thread(ctx: &WorkerCtx, thread: u32) {
    let mut buf = match AlignedBuf::for_requests(ctx.job.bs as usize, ctx.huge_pages) {
        Ok(b) => b,
        Err(e) => return setup_failed(ctx, format!("cannot allocate an I/O buffer: {e}")),
    };
    let mut ops = OpSequence::new(ctx.planner.order_free(), thread, ctx.job.qd.max(1));
    // Each I/O thread uses its own open file whenever more than one thread would share the
    // run's (several per worker, or several workers; see `reopen_for_thread`). If that fails
    // the shared one still does the same I/O, only a little slower, so it is used.
    let own_fd = (ctx.job.qd > 1 || ctx.job.workers > 1)
        .then(|| direct::reopen_for_thread(&ctx.fd).ok())
        .flatten();
    let fd = own_fd.as_ref().unwrap_or(&ctx.fd);
    // The I/O count bound is shared by the worker's threads, and only the measured phase counts.
    let (failure, cpu_wait, ended) = run_phases(ctx, (thread, 1), |bound, rec| {
        let issued = rec.is_some().then_some(&*ctx.issued);
        sync_loop(ctx, fd, &mut buf, bound, rec, issued, &mut ops)
    });
    let _ = ctx.tx.send(WorkerMsg::Done {
        worker: ctx.worker,
        failure,
        setup_error: None,
        fixed_buffers: false,
        cpu_wait,
        ended,
    });
}

/// Which of the worker's I/Os a synchronous thread issues next. Sequential plans share one
/// counter, so the worker's threads walk the region as one stream. Random plans, whose
/// offsets do not depend on the order, give each of the N threads every N-th I/O of the
/// sequence: no shared counter for the threads to fight over on every I/O.
struct OpSequence {
    shared: bool,
    next: u64,
    step: u64,
}

impl OpSequence {
    /// Thread `thread` of `threads`; `order_free` plans give each thread its own share.
    fn new(order_free: bool, thread: u32, threads: u32) -> Self {
        OpSequence {
            shared: !order_free,
            next: u64::from(thread),
            step: u64::from(threads.max(1)),
        }
    }

    /// The next I/O's index in the worker's sequence; `shared` is the worker's counter.
    fn take(&mut self, shared: &AtomicU64) -> u64 {
        if self.shared {
            return shared.fetch_add(1, Ordering::Relaxed);
        }
        let k = self.next;
        self.next += self.step;
        k
    }
}

fn sync_loop(
    ctx: &WorkerCtx,
    fd: &OwnedFd,
    buf: &mut AlignedBuf,
    bound: &Bound,
    mut rec: Option<&mut Recorder>,
    issued: Option<&AtomicU64>,
    ops: &mut OpSequence,
) -> Option<IoFailure> {
    let bs = ctx.job.bs;
    // Two clock reads per I/O, around the system call: its latency is total latency (the
    // call is where the kernel gets the I/O and where it completes), and the first read also
    // checks the deadline. Nothing here allocates or sends a message per I/O.
    loop {
        if ctx.stop.load(Ordering::Relaxed) {
            return None;
        }
        if let (Some(max), Some(counter)) = (bound.max_ops, issued)
            && counter.fetch_add(1, Ordering::Relaxed) >= max
        {
            return None;
        }
        let k = ops.take(&ctx.next_op);
        let io = ctx.planner.op(k);
        let mut started = Instant::now();
        if bound.deadline.is_some_and(|d| started >= d) {
            return None;
        }
        let result = match (io.kind, &ctx.write_data) {
            (OpKind::Read, _) => direct::read_at(fd, buf.as_mut_slice(), io.offset),
            (OpKind::Write, Some(WriteData::Pattern(p))) => {
                direct::write_at(fd, p.expected(io.offset, bs as usize), io.offset)
            }
            (OpKind::Write, Some(WriteData::Rewrite)) => {
                // Read the block into this thread's buffer (the buffer is exactly one
                // request long); only a read of all of it is written back, untouched.
                match direct::read_at(fd, buf.as_mut_slice(), io.offset) {
                    Ok(n) if n as u64 == bs => {}
                    other => {
                        ctx.stop.store(true, Ordering::Relaxed);
                        return Some(IoFailure {
                            worker: ctx.worker,
                            op: OpKind::Read,
                            offset: io.offset,
                            len: bs,
                            errno: other.as_ref().err().and_then(std::io::Error::raw_os_error),
                            transferred: other.ok().map(|n| n as u64),
                            facts: None,
                            submission: false,
                            read_back: true,
                        });
                    }
                }
                if let Some(r) = rec.as_deref_mut() {
                    r.record_read_back(bs);
                }
                if ctx.stop.load(Ordering::Relaxed) {
                    return None;
                }
                // Only the write is timed.
                started = Instant::now();
                direct::write_at(fd, buf.as_slice(), io.offset)
            }
            (OpKind::Write, None) => Err(std::io::Error::other("no write data")),
        };
        let finished = Instant::now();
        match result {
            Ok(n) if n as u64 == bs => {
                if let Some(r) = rec.as_deref_mut() {
                    r.record(io.kind, bs, finished - started);
                    if ctx.job.rewrite {
                        r.record_busy(finished - started);
                    }
                    r.tick(finished);
                }
            }
            other => {
                ctx.stop.store(true, Ordering::Relaxed);
                return Some(IoFailure {
                    worker: ctx.worker,
                    op: io.kind,
                    offset: io.offset,
                    len: bs,
                    errno: other.as_ref().err().and_then(std::io::Error::raw_os_error),
                    transferred: other.ok().map(|n| n as u64),
                    facts: None,
                    submission: false,
                    read_back: false,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::error::errno_hint;

    #[test]
    fn a_failed_submission_is_not_described_as_an_empty_read() {
        let f = IoFailure {
            worker: 0,
            op: OpKind::Read,
            offset: 0,
            len: 0,
            errno: Some(libc::EBUSY),
            transferred: None,
            facts: None,
            submission: true,
            read_back: false,
        };
        assert_eq!(
            f.describe(),
            "submitting I/O to the kernel (io_uring_enter) failed: Device or resource busy (EBUSY)"
        );
    }

    #[test]
    fn failures_read_well() {
        let f = IoFailure {
            worker: 0,
            op: OpKind::Read,
            offset: 1048576,
            len: 4096,
            errno: Some(libc::EIO),
            transferred: None,
            facts: None,
            submission: false,
            read_back: false,
        };
        assert_eq!(
            f.describe(),
            "read of 4096 bytes at offset 1048576 failed: I/O error (EIO)"
        );
        // The read of a rewrite says so, and that its block was not written.
        let back = IoFailure {
            read_back: true,
            ..f.clone()
        };
        assert_eq!(
            back.describe(),
            "read of 4096 bytes at offset 1048576 (to rewrite them; they were not written) \
             failed: I/O error (EIO)"
        );
        let g = IoFailure {
            op: OpKind::Write,
            errno: Some(libc::ENOSPC),
            ..f.clone()
        };
        assert!(g.describe().ends_with("(ENOSPC) - the file system is full"));
        let short = IoFailure {
            errno: None,
            transferred: Some(512),
            ..f
        };
        assert!(
            short
                .describe()
                .ends_with("short transfer: 512 of 4096 bytes")
        );
    }

    #[test]
    fn enospc_means_a_full_file_system_only_for_files() {
        use nix::errno::Errno;
        let block = FailureFacts {
            block_device: true,
            device_gone: false,
            size_at_start: 1 << 30,
            size_now: Some(1 << 30),
            read_only: Some(false),
            root: true,
        };
        let file = FailureFacts {
            block_device: false,
            ..block
        };
        let hint = |e, f: &FailureFacts| errno_hint(e, Some(f));
        assert_eq!(hint(Errno::ENOSPC, &file), " - the file system is full");
        // Removed: sysfs entry gone (the size read on the fd may already be 0 or fail).
        let gone = FailureFacts {
            device_gone: true,
            size_now: Some(0),
            ..block
        };
        assert_eq!(
            hint(Errno::ENOSPC, &gone),
            " - the device is gone (removed during the run)"
        );
        assert!(hint(Errno::EIO, &gone).contains("the device is gone"));
        // Still in sysfs but its size changed: gone or shrank, with both sizes.
        let shrank = FailureFacts {
            size_now: Some(0),
            ..block
        };
        let h = hint(Errno::ENOSPC, &shrank);
        assert!(h.contains("the device is gone or shrank"), "{h}");
        assert!(h.contains("now 0 bytes, was 1073741824"), "{h}");
        // Same device, same size: past its end, never "the file system is full".
        let h = hint(Errno::ENOSPC, &block);
        assert!(!h.contains("file system"), "{h}");
        // An EIO on a device that is still there says nothing more than EIO.
        assert_eq!(hint(Errno::EIO, &block), "");
        // Nothing could be checked: the errno's usual meaning.
        assert_eq!(
            errno_hint(Errno::ENOSPC, None),
            " - the file system is full"
        );
        // Permission: as root on a read-only device, the flag is the reason.
        let ro = FailureFacts {
            read_only: Some(true),
            ..block
        };
        assert!(hint(Errno::EPERM, &ro).contains("the device is read-only"));
        assert!(!hint(Errno::EPERM, &block).contains("needs root"));
        assert!(
            hint(
                Errno::EACCES,
                &FailureFacts {
                    root: false,
                    ..block
                }
            )
            .contains("needs root")
        );
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

    #[test]
    fn random_plans_give_each_thread_its_own_share_and_sequential_ones_share_one_stream() {
        // Four threads of a random plan take every fourth I/O each: together each index
        // exactly once, without touching the shared counter.
        let counter = AtomicU64::new(0);
        let mut taken: Vec<u64> = (0..4)
            .flat_map(|t| {
                let mut ops = OpSequence::new(true, t, 4);
                (0..3).map(|_| ops.take(&counter)).collect::<Vec<_>>()
            })
            .collect();
        taken.sort_unstable();
        assert_eq!(taken, (0..12).collect::<Vec<u64>>());
        assert_eq!(counter.load(Ordering::Relaxed), 0);
        // Sequential: one stream through the shared counter, whichever thread asks.
        let mut a = OpSequence::new(false, 0, 2);
        let mut b = OpSequence::new(false, 1, 2);
        assert_eq!(
            [
                a.take(&counter),
                b.take(&counter),
                b.take(&counter),
                a.take(&counter)
            ],
            [0, 1, 2, 3]
        );
    }
}
