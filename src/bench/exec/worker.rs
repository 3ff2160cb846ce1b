//! The common worker loop, the same for every engine (fio's `thread_main`/`do_io`): it starts
//! the engine's I/O threads, sets each up, and takes each through an optional unrecorded
//! warm-up, the gate (the runner snapshots the kernel's counters), and the measured phase,
//! whose `Recorder` sends one `WorkerSample` per interval, never one message per I/O. Every
//! thread ends with one `Done`.
//!
//! A rewrite of existing data (`--preserve`) makes each write two steps on the request's own
//! buffer (an io_uring slot, or the thread's buffer): read the block, then, only when the read
//! returned the whole block, write those bytes back. The buffer is held from read to write.
//! Requests of several workers may overlap on a block, but every write puts back bytes read
//! from the device, so the device never holds anything but its own data. Only a rewrite's
//! writes are timed, its rates over their busy time (`TimeBase::WriteBusy`).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::bench::exec::engine::{Bound, EngineThread, IoEngine, Recorder, WorkerCtx, WorkerMsg};
use crate::bench::results::failure::IoFailure;
use crate::sys::privilege::thread_run_delay;

/// Runs one worker with `engine`: starts the worker's other I/O threads and runs the first
/// one itself. Every thread sends `Done` exactly once.
pub fn run_worker(ctx: WorkerCtx, engine: &'static dyn IoEngine) {
    if engine.writes_bytes() && ctx.job.writes() && ctx.write_data.is_none() {
        return setup_failed(
            &ctx,
            "internal error: a job that writes has no write data".into(),
        );
    }
    let threads = engine.threads_per_worker(&ctx.job).max(1);
    let ctx = Arc::new(ctx);
    let mut handles = Vec::new();
    for t in 1..threads {
        let c = Arc::clone(&ctx);
        let spawned = std::thread::Builder::new()
            .name(format!("io-{}-{t}", ctx.worker))
            .spawn(move || io_thread(&c, engine, t));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => setup_failed(&ctx, format!("cannot start an I/O thread: {e}")),
        }
    }
    io_thread(&ctx, engine, 0);
    for h in handles {
        let _ = h.join();
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

/// I/O thread `thread` of the worker: set up by the engine, taken through its phases, and
/// its end told to the runner.
fn io_thread(ctx: &WorkerCtx, engine: &dyn IoEngine, thread: u32) {
    let mut io = match engine.open_thread(ctx, thread) {
        Ok(io) => io,
        Err(why) => return setup_failed(ctx, why),
    };
    let fixed_buffers = io.fixed_buffers();
    let (failure, cpu_wait, ended) = run_phases(ctx, thread, io.as_mut());
    // A failure that is not an I/O's (a directory engine's system call), in words.
    let error = io.error();
    // The ring and buffers go before the runner hears of the end.
    drop(io);
    let _ = ctx.tx.send(WorkerMsg::Done {
        worker: ctx.worker,
        failure,
        setup_error: error,
        fixed_buffers,
        cpu_wait,
        ended,
    });
}

/// The phases every I/O thread goes through: an unrecorded warm-up, the gate, the measured
/// loop. Returns the first failure, the thread's CPU wait while measured, and when its measured
/// loop ended (none if it never measured).
fn run_phases(
    ctx: &WorkerCtx,
    thread: u32,
    io: &mut dyn EngineThread,
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
        failure = io.run(ctx, &bound, None);
    }
    // Every thread measures from the gate's opening to one deadline: a thread scheduled late
    // starts late, it does not run late.
    let t0 = ctx.gate.arrive_and_wait();
    if failure.is_none() && !ctx.stop.load(Ordering::Relaxed) {
        let deadline = job.time.map(|t| t0 + t);
        let lane = (thread, io.lanes());
        let mut rec = Recorder::new(ctx.worker, lane, t0, ctx.interval, deadline, ctx.tx.clone());
        let bound = Bound {
            deadline,
            max_ops: job.ops_per_worker,
        };
        let wait0 = thread_run_delay();
        failure = io.run(ctx, &bound, Some(&mut rec));
        let end = Instant::now();
        ended = Some(end);
        if let (Some(a), Some(b)) = (wait0, thread_run_delay()) {
            cpu_wait = b.saturating_sub(a);
        }
        rec.finish(end);
    }
    (failure, cpu_wait, ended)
}

#[cfg(test)]
mod tests {
    use crate::bench::plan::OpKind;
    use crate::bench::results::failure::IoFailure;
    use crate::sys::error::{FailureFacts, errno_hint};

    mod common_loop {
        use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
        use std::sync::{Arc, mpsc};
        use std::time::{Duration, Instant};

        use super::super::run_worker;
        use crate::bench::exec::engine::{
            Bound, EngineThread, IoEngine, Recorder, Work, WorkerCtx, WorkerMsg,
        };
        use crate::bench::exec::engines::SYNC;
        use crate::bench::exec::gate::Gate;
        use crate::bench::exec::io_sequence::Planner;
        use crate::bench::plan::params::EngineKind;
        use crate::bench::plan::{Access, Job, Mix, OpKind};
        use crate::bench::results::failure::IoFailure;
        use crate::sys::direct::SyncMode;

        /// Calls of `FakeThread::run`, by phase: without a recorder (warm-up), with one.
        static WARM_RUNS: AtomicU32 = AtomicU32::new(0);
        static MEASURED_RUNS: AtomicU32 = AtomicU32::new(0);

        /// Three threads per worker; the third cannot be set up.
        struct Fake;

        impl IoEngine for Fake {
            fn kind(&self) -> EngineKind {
                SYNC
            }
            fn threads_per_worker(&self, _job: &Job) -> u32 {
                3
            }
            fn may_fix_buffers(&self) -> bool {
                false
            }
            fn open_thread(
                &self,
                _ctx: &WorkerCtx,
                thread: u32,
            ) -> Result<Box<dyn EngineThread>, String> {
                if thread == 2 {
                    return Err("no buffer for thread 2".into());
                }
                Ok(Box::new(FakeThread))
            }
        }

        /// One I/O per phase, of 4 KiB in 1 ms.
        struct FakeThread;

        impl EngineThread for FakeThread {
            fn lanes(&self) -> u32 {
                1
            }
            fn fixed_buffers(&self) -> bool {
                false
            }
            fn run(
                &mut self,
                _ctx: &WorkerCtx,
                _bound: &Bound,
                rec: Option<&mut Recorder>,
            ) -> Option<IoFailure> {
                match rec {
                    Some(r) => {
                        MEASURED_RUNS.fetch_add(1, Ordering::Relaxed);
                        r.record(OpKind::Read, 4096, Duration::from_millis(1));
                    }
                    None => {
                        WARM_RUNS.fetch_add(1, Ordering::Relaxed);
                    }
                }
                None
            }
        }

        #[test]
        fn the_common_loop_takes_each_engine_thread_through_warm_up_and_measurement() {
            let job = Job {
                bs: 4096,
                qd: 3,
                workers: 1,
                access: Access::Random,
                mix: Mix::Read,
                region_start: 0,
                region_len: 1 << 20,
                split_region: false,
                time: Some(Duration::from_millis(10)),
                warmup: Duration::from_millis(1),
                ops_per_worker: None,
                sync: SyncMode::None,
                seed: 1,
                rewrite: false,
            };
            let fd = std::fs::File::open("/dev/null").unwrap().into();
            let gate = Arc::new(Gate::new(3));
            let (tx, rx) = mpsc::channel();
            let ctx = WorkerCtx {
                worker: 0,
                fd: Arc::new(fd),
                work: Work::Blocks(
                    Planner::new(0, 1 << 20, 4096, Access::Random, Mix::Read, 1).unwrap(),
                ),
                job,
                write_data: None,
                interval: Duration::from_millis(250),
                huge_pages: false,
                tx,
                stop: Arc::new(AtomicBool::new(false)),
                gate: Arc::clone(&gate),
                next_op: Arc::new(AtomicU64::new(0)),
                issued: Arc::new(AtomicU64::new(0)),
            };
            let worker = std::thread::spawn(move || run_worker(ctx, &Fake));
            // The thread that could not start does not hold the gate.
            gate.wait_all();
            gate.open();
            worker.join().unwrap();
            let (mut ops, mut done, mut errors) = (0, 0, Vec::new());
            for m in rx.try_iter() {
                match m {
                    WorkerMsg::Sample(s) => ops += s.stats.read.ops,
                    WorkerMsg::Done {
                        setup_error, ended, ..
                    } => {
                        done += 1;
                        match setup_error {
                            Some(e) => errors.push(e),
                            None => assert!(ended.is_some_and(|e| e <= Instant::now())),
                        }
                    }
                }
            }
            assert_eq!(done, 3, "one Done per thread");
            assert_eq!(errors, ["no buffer for thread 2"]);
            assert_eq!(WARM_RUNS.load(Ordering::Relaxed), 2);
            assert_eq!(MEASURED_RUNS.load(Ordering::Relaxed), 2);
            assert_eq!(ops, 2, "each measured I/O recorded once");
        }
    }

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
}
