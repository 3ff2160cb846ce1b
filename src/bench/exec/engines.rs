//! The I/O engines, one file each, and their registration: `ENGINES` has one line per engine
//! `--engine` may name (its row of words and its `IoEngine`), from which come the list every
//! face offers (`ALL`), the parser (`from_arg`) and the one place that picks an engine for a
//! kind (`for_kind`, fio's `load_ioengine`). `directory` runs the phases it owns
//! (`own_engine`) whatever the plan's engine. Everything else reaches an engine through
//! `IoEngine`.

pub mod directory;
pub mod io_uring;
pub mod threads;

use crate::bench::exec::engine::{IoEngine, OwnEngine};
use crate::bench::plan::PhaseTag;
use crate::bench::plan::engine_kind::{EngineKind, EngineRow};

/// One registered engine: its row and its engine, both from its file.
pub struct Registered {
    pub row: &'static EngineRow,
    pub engine: &'static dyn IoEngine,
}

/// An engine's line in `ENGINES`.
const fn register(row: &'static EngineRow, engine: &'static dyn IoEngine) -> Registered {
    Registered { row, engine }
}

/// Every engine `--engine` may name besides `auto`, in the order `--help` and the Test screen
/// offer them. Each file under `engines/` with a `ROW` has its line here, once (checked by
/// `every_engine_file_is_registered_once` in `src/shape.rs`).
pub const ENGINES: &[Registered] = &[
    register(&io_uring::ROW, &io_uring::IoUring),
    register(&threads::ROW, &threads::Threads),
];

/// `auto`, then every registered engine: what `--engine` takes and the Test screen cycles.
pub const ALL: &[EngineKind] = &{
    let mut all = [EngineKind::AUTO; ENGINES.len() + 1];
    let mut i = 0;
    while i < ENGINES.len() {
        all[i + 1] = EngineKind::of(ENGINES[i].row);
        i += 1;
    }
    all
};

/// The two engines `auto` chooses between (`exec::probe`, whose policy names them).
pub const URING: EngineKind = EngineKind::of(&io_uring::ROW);
pub const SYNC: EngineKind = EngineKind::of(&threads::ROW);

/// The engine named `arg` on the command line; an unknown name is refused with the known.
pub fn from_arg(arg: &str) -> Result<EngineKind, String> {
    ALL.iter()
        .copied()
        .find(|k| k.row().arg == arg)
        .ok_or_else(|| {
            let known: Vec<&str> = ALL.iter().map(|k| k.row().arg).collect();
            format!(
                "unknown engine {arg:?}; known engines: {}",
                known.join(", ")
            )
        })
}

/// The engine a phase with `tag` always runs on (a metadata phase: the directory engine), with
/// the choice its results show; `None` for a phase of blocks.
pub fn own_engine(tag: &PhaseTag) -> Option<OwnEngine> {
    directory::own_engine(tag)
}

/// The engine that runs `kind`. The runner resolves `auto` before it starts workers; an
/// unresolved `auto` would run on the threads, as pread/pwrite work everywhere.
pub fn for_kind(kind: EngineKind) -> &'static dyn IoEngine {
    ENGINES
        .iter()
        .find(|r| EngineKind::of(r.row) == kind)
        .map_or(&threads::Threads, |r| r.engine)
}

/// The engines a plan asking for `kind` may run on: `auto` may pick io_uring or the threads.
pub fn candidates(kind: EngineKind) -> Vec<&'static dyn IoEngine> {
    if kind == EngineKind::AUTO {
        vec![for_kind(URING), for_kind(SYNC)]
    } else {
        vec![for_kind(kind)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_has_a_complete_row_its_engine_and_its_name_round_trips() {
        // The Test screen and the flag start from the default.
        assert_eq!(ALL[0], EngineKind::default());
        assert_eq!(ALL.len(), ENGINES.len() + 1);
        let mut args = Vec::new();
        for &k in ALL {
            let row = k.row();
            assert!(!row.arg.is_empty() && !row.name.is_empty() && !row.help.is_empty());
            assert_eq!(from_arg(row.arg), Ok(k));
            args.push(row.arg);
        }
        args.sort_unstable();
        args.dedup();
        assert_eq!(args.len(), ALL.len(), "two engines share a name");
        for r in ENGINES {
            let kind = EngineKind::of(r.row);
            assert_eq!(
                r.engine.kind(),
                kind,
                "{}'s line pairs its row with its engine",
                r.row.arg
            );
            assert_eq!(for_kind(kind).kind(), kind);
        }
        let err = from_arg("libaio").unwrap_err();
        assert_eq!(
            err,
            r#"unknown engine "libaio"; known engines: auto, uring, sync"#
        );
    }

    #[test]
    fn each_kind_gets_its_engine_and_auto_may_get_either() {
        assert_eq!(for_kind(URING).kind(), URING);
        assert_eq!(for_kind(SYNC).kind(), SYNC);
        assert_eq!(for_kind(EngineKind::AUTO).kind(), SYNC);
        let auto: Vec<EngineKind> = candidates(EngineKind::AUTO)
            .iter()
            .map(|e| e.kind())
            .collect();
        assert_eq!(auto, [URING, SYNC]);
        assert_eq!(candidates(SYNC).len(), 1);
        assert_eq!(
            serde_json::to_string(&ALL).unwrap(),
            r#"["auto","uring","sync"]"#
        );
    }
}
