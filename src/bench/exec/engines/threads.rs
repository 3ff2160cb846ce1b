//! The threads engine (`--engine sync`, fio's psync with `numjobs`): a worker is `qd`
//! threads, each one lane with its own buffer doing one pread/pwrite at a time. A rewrite
//! (`--preserve`) reads into that buffer and writes it back (the rule is in `worker`).

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::bench::exec::engine::{
    Bound, EngineThread, IoEngine, NOT_BLOCKS, Recorder, WorkerCtx, WriteData,
};
use crate::bench::exec::io_sequence::Planner;
use crate::bench::plan::Job;
use crate::bench::plan::OpKind;
use crate::bench::plan::engine_kind::{EngineKind, EngineRow, IoShape};
use crate::bench::results::failure::IoFailure;
use crate::sys::direct::{self, AlignedBuf};

/// Its words: `--engine sync`, "sync" in the reports, a thread per outstanding I/O.
pub const ROW: EngineRow = EngineRow {
    arg: "sync",
    name: "sync",
    help: "pread/pwrite: one thread per outstanding I/O",
    shape: IoShape::ThreadPerIo,
};

/// The threads engine.
pub struct Threads;

impl IoEngine for Threads {
    fn kind(&self) -> EngineKind {
        EngineKind::of(&ROW)
    }

    /// One thread per outstanding I/O.
    fn threads_per_worker(&self, job: &Job) -> u32 {
        job.qd
    }

    fn may_fix_buffers(&self) -> bool {
        false
    }

    fn open_thread(&self, ctx: &WorkerCtx, thread: u32) -> Result<Box<dyn EngineThread>, String> {
        let buf = AlignedBuf::for_requests(ctx.job.bs as usize, ctx.huge_pages)
            .map_err(|e| format!("cannot allocate an I/O buffer: {e}"))?;
        let planner = ctx.planner().ok_or(NOT_BLOCKS)?.clone();
        let ops = OpSequence::new(planner.order_free(), thread, ctx.job.qd.max(1));
        // A thread uses its own open file when more than one would share the run's (see
        // `reopen_for_thread`); if that fails, the shared one does the same I/O a little slower.
        let own_fd = (ctx.job.qd > 1 || ctx.job.workers > 1)
            .then(|| direct::reopen_for_thread(&ctx.fd).ok())
            .flatten();
        Ok(Box::new(SyncThread {
            buf,
            ops,
            own_fd,
            planner,
        }))
    }
}

/// One synchronous I/O thread: one outstanding I/O at a time.
struct SyncThread {
    buf: AlignedBuf,
    ops: OpSequence,
    own_fd: Option<OwnedFd>,
    planner: Planner,
}

impl EngineThread for SyncThread {
    fn lanes(&self) -> u32 {
        1
    }

    fn fixed_buffers(&self) -> bool {
        false
    }

    fn run(
        &mut self,
        ctx: &WorkerCtx,
        bound: &Bound,
        rec: Option<&mut Recorder>,
    ) -> Option<IoFailure> {
        let fd = self.own_fd.as_ref().unwrap_or(&ctx.fd);
        // The count bound is shared by the worker's threads; only the measured phase counts.
        let issued = rec.is_some().then_some(&*ctx.issued);
        sync_loop(
            ctx,
            &self.planner,
            fd,
            &mut self.buf,
            bound,
            rec,
            issued,
            &mut self.ops,
        )
    }
}

/// Which of the worker's I/Os a synchronous thread issues next. Sequential plans share one
/// counter, so the threads walk the region as one stream; random plans give each of N threads
/// every N-th I/O, so no counter is fought over on every I/O.
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

#[allow(clippy::too_many_arguments)]
fn sync_loop(
    ctx: &WorkerCtx,
    planner: &Planner,
    fd: &OwnedFd,
    buf: &mut AlignedBuf,
    bound: &Bound,
    mut rec: Option<&mut Recorder>,
    issued: Option<&AtomicU64>,
    ops: &mut OpSequence,
) -> Option<IoFailure> {
    let bs = ctx.job.bs;
    // Two clock reads per I/O, around the system call: total latency
    // (`stats::LATENCY_DEFINITION`); the first also checks the deadline.
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
        let io = planner.op(k);
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
                // Only a read of the whole block (the buffer is one request long) is written back.
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
