//! The directory engine: the metadata test (bonnie++'s `-n`), in the common loop as fio runs
//! `engines/filestat.c`. No block I/O: one thread makes one system call at a time in the
//! test's scratch directory (`sys::dirops::ScratchDir`), timed and recorded as an I/O, so
//! every screen and export reads it like any other run. A create or delete counts as a write,
//! a stat as a read; none moves a byte.

use std::time::Instant;

use crate::bench::exec::engine::{
    Bound, EngineThread, FileWork, IoEngine, OwnEngine, Recorder, Work, WorkerCtx,
};
use crate::bench::exec::engines::SYNC;
use crate::bench::plan::params::EngineKind;
use crate::bench::plan::{Job, MetaOp, PhaseTag};
use crate::bench::results::engine_choice::EngineChoice;
use crate::bench::results::failure::IoFailure;

/// What the metadata test's latencies measure (the JSON's and CSV's `latency_definition`).
pub const METADATA_LATENCY: &str = "total: from just before the create (open O_CREAT|O_EXCL and \
     close), stat (fstatat) or delete (unlinkat) system call to its return";

/// Why a metadata phase has no witness.
pub const METADATA_NO_WITNESS: &str =
    "the metadata test counts files, not bytes: no kernel byte counters to compare";

/// The directory engine.
pub struct Directory;

/// The engine of a phase only one engine runs (a metadata phase), with the choice its results
/// show.
pub fn own_engine(tag: &PhaseTag) -> Option<OwnEngine> {
    let PhaseTag::Metadata { op, .. } = *tag else {
        return None;
    };
    Some(OwnEngine {
        engine: &Directory,
        choice: EngineChoice {
            reused: false,
            asked: SYNC,
            used: SYNC,
            reason: format!(
                "one {} system call at a time ({}), as bonnie++ -n",
                op.as_str(),
                match op {
                    MetaOp::Create => "open O_CREAT|O_EXCL, close",
                    MetaOp::Stat => "fstatat",
                    MetaOp::Delete => "unlinkat",
                }
            ),
            probe: None,
        },
    })
}

impl IoEngine for Directory {
    /// The name its outputs give it: one system call at a time, as the threads engine.
    fn kind(&self) -> EngineKind {
        SYNC
    }

    fn threads_per_worker(&self, _job: &Job) -> u32 {
        1
    }

    fn may_fix_buffers(&self) -> bool {
        false
    }

    fn latency_definition(&self) -> &'static str {
        METADATA_LATENCY
    }

    fn writes_bytes(&self) -> bool {
        false
    }

    fn open_thread(&self, ctx: &WorkerCtx, _thread: u32) -> Result<Box<dyn EngineThread>, String> {
        match &ctx.work {
            Work::Files(_) => Ok(Box::new(DirectoryThread { error: None })),
            Work::Blocks(_) => {
                Err("internal error: the directory engine was given blocks to work on".into())
            }
        }
    }
}

/// The one thread of the directory engine; the work is the worker's (`Work::Files`).
struct DirectoryThread {
    /// The failed system call, in words.
    error: Option<String>,
}

impl EngineThread for DirectoryThread {
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
        // A metadata phase has no warm-up: every call is measured.
        let (Work::Files(work), Some(rec)) = (&ctx.work, rec) else {
            return None;
        };
        self.error = file_loop(ctx, work, bound, rec);
        if self.error.is_some() {
            ctx.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        None
    }

    fn error(&mut self) -> Option<String> {
        self.error.take()
    }
}

/// Makes the phase's system calls in its order until the bound or a stop; the failed one, in
/// words.
fn file_loop(
    ctx: &WorkerCtx,
    work: &FileWork,
    bound: &Bound,
    rec: &mut Recorder,
) -> Option<String> {
    // One thread per scratch directory: the lock is the runner's way to get it back.
    let mut scratch = work
        .scratch
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let kind = work.op.kind();
    let max = bound.max_ops.map_or(usize::MAX, |m| m as usize);
    for &i in work.order.iter().take(max) {
        if ctx.stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let before = Instant::now();
        if bound.deadline.is_some_and(|d| before >= d) {
            break;
        }
        let done = match work.op {
            MetaOp::Create => scratch.create_file(i),
            MetaOp::Stat => scratch.stat_file(i),
            MetaOp::Delete => scratch.delete_file(i),
        };
        let after = Instant::now();
        if let Err(e) = done {
            return Some(format!(
                "{} of {} in {} failed: {}",
                work.op.as_str(),
                crate::sys::dirops::file_name(i).to_string_lossy(),
                scratch.path().display(),
                crate::sys::error::describe_io(&e)
            ));
        }
        rec.record(kind, 0, after - before);
        rec.tick(after);
    }
    None
}
