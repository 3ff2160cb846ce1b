//! The I/O engines, one file each, and the one place that picks an engine from an
//! `EngineKind` (fio's `load_ioengine`): `io_uring` (one thread per worker keeping the queue
//! depth in flight through a ring) and `threads` (one pread/pwrite thread per outstanding
//! I/O, fio's psync with `numjobs`), and `directory` (the metadata test's system calls on
//! files, fio's `filestat`), which runs the phases it owns (`own_engine`) whatever the plan's
//! engine. Everything else reaches an engine through `IoEngine`.

pub mod directory;
pub mod io_uring;
pub mod threads;

use crate::bench::exec::engine::{IoEngine, OwnEngine};
use crate::bench::plan::PhaseTag;
use crate::bench::plan::params::EngineKind;

/// The engine a phase with `tag` runs on whatever the plan asks (a metadata phase, on the
/// directory engine), with the choice its results show; `None` for a phase of blocks.
pub fn own_engine(tag: &PhaseTag) -> Option<OwnEngine> {
    directory::own_engine(tag)
}

/// The engine that runs `kind`. The runner resolves `Auto` (`probe::decide`) before it starts
/// workers; should an unresolved `Auto` get here, the threads run it, as pread/pwrite work
/// everywhere.
pub fn for_kind(kind: EngineKind) -> &'static dyn IoEngine {
    match kind {
        EngineKind::Uring => &io_uring::IoUring,
        EngineKind::Sync | EngineKind::Auto => &threads::Threads,
    }
}

/// The engines a plan asking for `kind` may run on: `Auto` may pick either.
pub fn candidates(kind: EngineKind) -> Vec<&'static dyn IoEngine> {
    match kind {
        EngineKind::Auto => vec![&io_uring::IoUring, &threads::Threads],
        k => vec![for_kind(k)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_gets_its_engine_and_auto_may_get_either() {
        assert_eq!(for_kind(EngineKind::Uring).kind(), EngineKind::Uring);
        assert_eq!(for_kind(EngineKind::Sync).kind(), EngineKind::Sync);
        let auto: Vec<EngineKind> = candidates(EngineKind::Auto)
            .iter()
            .map(|e| e.kind())
            .collect();
        assert_eq!(auto, [EngineKind::Uring, EngineKind::Sync]);
        assert_eq!(candidates(EngineKind::Sync).len(), 1);
    }
}
