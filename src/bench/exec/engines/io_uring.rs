//! The io_uring engine: one thread per worker keeps the queue depth in flight through one
//! ring (`sys::uring::UringQueue`), each slot a lane with its own buffer. A rewrite
//! (`--preserve`) holds the slot from its read to its write (the rule is in `worker`).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::bench::exec::engine::{
    Bound, EngineThread, IoEngine, NOT_BLOCKS, Recorder, WorkerCtx, WriteData,
};
use crate::bench::exec::io_sequence::Planner;
use crate::bench::plan::Job;
use crate::bench::plan::OpKind;
use crate::bench::plan::engine_kind::{EngineKind, EngineRow, IoShape};
use crate::bench::results::failure::IoFailure;
use crate::sys::uring::{Completion, UringQueue, WriteSource};

/// Completions to wait for when none is ready: one per eight I/Os of the queue, at least one.
/// Each wait ending on one completion costs a wake-up of the submitter; waiting for an eighth
/// keeps the rest in flight and wakes it a quarter as often. At QD32 on an ext4 file over a
/// loop device: 3-5 % more IOPS than waiting for one (medians of three sets of 6-8 alternating
/// runs, 316k vs 306k), p50 no higher. Waiting for 16 was as fast with p50 up 8 %. fio's
/// equivalent is `--iodepth_batch_complete_min`.
pub fn completions_per_wait(qd: u32) -> u32 {
    (qd / 8).max(1)
}

/// Its words: `--engine uring`, "io_uring" in the reports, one ring per worker.
pub const ROW: EngineRow = EngineRow {
    arg: "uring",
    name: "io_uring",
    help: "io_uring: a real queue of --qd I/Os from one thread per worker",
    shape: IoShape::Ring,
};

/// The io_uring engine (`--engine uring`).
pub struct IoUring;

impl IoEngine for IoUring {
    fn kind(&self) -> EngineKind {
        EngineKind::of(&ROW)
    }

    /// One thread, whose ring keeps the queue depth in flight.
    fn threads_per_worker(&self, _job: &Job) -> u32 {
        1
    }

    fn may_fix_buffers(&self) -> bool {
        true
    }

    fn available(&self) -> Result<(), String> {
        crate::sys::uring::probe().map_err(|e| e.to_string())
    }

    fn open_thread(&self, ctx: &WorkerCtx, _thread: u32) -> Result<Box<dyn EngineThread>, String> {
        let job = &ctx.job;
        let planner = ctx.planner().ok_or(NOT_BLOCKS)?.clone();
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
        )
        .map_err(|e| format!("cannot set up io_uring: {e}"))?;
        Ok(Box::new(UringThread { queue, planner }))
    }
}

/// A worker's ring.
struct UringThread {
    queue: UringQueue,
    planner: Planner,
}

impl EngineThread for UringThread {
    /// The ring's slots.
    fn lanes(&self) -> u32 {
        self.queue.depth()
    }

    fn fixed_buffers(&self) -> bool {
        self.queue.uses_fixed_buffers()
    }

    fn run(
        &mut self,
        ctx: &WorkerCtx,
        bound: &Bound,
        rec: Option<&mut Recorder>,
    ) -> Option<IoFailure> {
        uring_loop(ctx, &self.planner, &mut self.queue, bound, rec)
    }
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
    planner: &Planner,
    queue: &mut UringQueue,
    bound: &Bound,
    mut rec: Option<&mut Recorder>,
) -> Option<IoFailure> {
    let bs = ctx.job.bs;
    let depth = queue.depth() as usize;
    // Per slot: its I/O, when it was handed over, and whether it is a rewrite's read.
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
            // Each I/O is handed over once the next is prepared (fio's default): a batch of SQEs
            // shares one block-layer plug that holds the first back until the last is ready; on a
            // file system over a loop device fio loses a fifth of its IOPS that way.
            if let Err(e) = hand_over(queue, &mut held, &mut meta) {
                failure.get_or_insert(submission_failure(ctx, e));
                ctx.stop.store(true, Ordering::Relaxed);
                free.push(slot);
                break;
            }
            let k = ctx.next_op.fetch_add(1, Ordering::Relaxed);
            let io = planner.op(k);
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
        // Total latency (`stats::LATENCY_DEFINITION`): stamped before the call, not after it
        // as fio's `clat`, which would hide an I/O completed inside the call.
        if let Some(h) = held.take() {
            meta[h as usize].2 = Instant::now();
        }
        // What `submit` could not hand over (a full completion queue) goes with the wait,
        // which is for `completions_per_wait` unless one is already there.
        let want = if queue.ready() > 0 { 1 } else { per_wait };
        if let Err(e) = queue.submit_and_wait(want, wait) {
            failure.get_or_insert(submission_failure(ctx, e));
            ctx.stop.store(true, Ordering::Relaxed);
            // Nothing more can be submitted or reaped reliably; leave it to Drop.
            break;
        }
        now = Instant::now();
        done.clear();
        // One completion at a time, its slot refilled before the next (fio's
        // iodepth_batch_complete_max=1): refilling a batch left the device a burst, then none. On
        // an ext4 file over a loop device: 5 % more IOPS (295k vs 281k, medians of 5 runs).
        queue.reap(&mut done, 1);
        for c in &done {
            let (kind, offset, at, read_back) = meta[c.slot as usize];
            let whole = c.result >= 0 && c.result as u64 == bs;
            if whole && read_back {
                // Write back exactly the block the device returned, from the same buffer,
                // unless the run is ending (then the block is left as it is: the same thing).
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
                // A failed or short read is never followed by its write: the buffer may hold
                // another block's bytes or part of this one's.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_uring_waits_for_an_eighth_of_the_queue_and_below_qd16_for_one() {
        let waits: Vec<u32> = [1, 2, 8, 15, 16, 32, 1024]
            .into_iter()
            .map(completions_per_wait)
            .collect();
        assert_eq!(waits, vec![1, 1, 1, 1, 2, 4, 128]);
    }
}
