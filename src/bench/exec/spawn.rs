//! Starting a job's worker threads, and looking at the target right after an I/O failed.
//! Used by the phases and the probe's rounds alike.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

use crate::bench::exec::engine::{FileWork, IoEngine, Work, WorkerCtx, WorkerMsg, WriteData};
use crate::bench::exec::gate::Gate;
use crate::bench::exec::io_sequence::Planner;
use crate::bench::exec::run_input::RunInput;
use crate::bench::exec::worker::run_worker;
use crate::bench::plan::Job;
use crate::sys::direct;
use crate::sys::error::FailureFacts;

/// Looks at the target right after an I/O failed: whether its device is still there, its
/// size now, its read-only flag.
pub(crate) fn failure_facts(input: &RunInput) -> FailureFacts {
    let size_now = if input.block_device {
        direct::block_geometry(&input.fd)
            .ok()
            .map(|(size, _, _)| size)
    } else {
        direct::file_len(&input.fd).ok()
    };
    FailureFacts {
        block_device: input.block_device,
        device_gone: input.block_device
            && input
                .stat
                .as_ref()
                .is_some_and(|s| !s.root.dev_present(s.dev)),
        size_at_start: input.size_at_start,
        size_now,
        read_only: input
            .block_device
            .then(|| direct::read_only_fd(&input.fd).ok())
            .flatten(),
        root: crate::sys::privilege::is_root(),
    }
}

/// Threads doing I/O for a job: the gate waits for as many.
pub(crate) fn io_threads(engine: &dyn IoEngine, job: &Job) -> usize {
    job.workers as usize * engine.threads_per_worker(job) as usize
}

/// The worker threads of one job, started and waiting at the gate after their warm-up.
pub(crate) struct Spawned {
    pub(crate) handles: Vec<JoinHandle<()>>,
    /// Threads that will send `Done`.
    pub(crate) alive: usize,
    pub(crate) setup_error: Option<String>,
}

/// The workers of `job` with `engine`; with `files`, the first works on them (a job on
/// files has one worker), else each on its blocks.
pub(crate) fn spawn_workers(
    input: &RunInput,
    (job, mut files): (&Job, Option<FileWork>),
    engine: &'static dyn IoEngine,
    gate: &Arc<Gate>,
    tx: &Sender<WorkerMsg>,
    stop: &Arc<AtomicBool>,
) -> Spawned {
    let per_worker = engine.threads_per_worker(job) as usize;
    let mut spawned = Spawned {
        handles: Vec::new(),
        alive: io_threads(engine, job),
        setup_error: None,
    };
    for w in 0..job.workers {
        let (start, len) = job.worker_region(w);
        let seed = job.seed ^ u64::from(w).wrapping_mul(0x9E37_79B9);
        let work = match files.take() {
            Some(f) => Work::Files(f),
            None => match Planner::new(start, len, job.bs, job.access, job.mix, seed) {
                Some(planner) => Work::Blocks(planner),
                None => {
                    spawned.setup_error =
                        Some(format!("worker {w}: region too small for one request"));
                    for _ in 0..per_worker {
                        gate.forget();
                    }
                    spawned.alive -= per_worker;
                    continue;
                }
            },
        };
        let ctx = WorkerCtx {
            worker: w,
            fd: Arc::clone(&input.fd),
            job: job.clone(),
            work,
            write_data: match (job.writes(), job.rewrite, &input.pattern) {
                (false, _, _) => None,
                (true, true, _) => Some(WriteData::Rewrite),
                (true, false, Some(p)) => Some(WriteData::Pattern(p.clone())),
                // Refused by the worker before any I/O: a write needs its data.
                (true, false, None) => None,
            },
            interval: input.plan.interval,
            huge_pages: input.plan.huge_pages,
            tx: tx.clone(),
            stop: Arc::clone(stop),
            gate: Arc::clone(gate),
            next_op: Arc::new(AtomicU64::new(0)),
            issued: Arc::new(AtomicU64::new(0)),
        };
        match std::thread::Builder::new()
            .name(format!("io-worker-{w}"))
            .spawn(move || run_worker(ctx, engine))
        {
            Ok(h) => spawned.handles.push(h),
            Err(e) => {
                spawned.setup_error = Some(format!("cannot start worker thread {w}: {e}"));
                for _ in 0..per_worker {
                    gate.forget();
                }
                spawned.alive -= per_worker;
            }
        }
    }
    spawned
}
