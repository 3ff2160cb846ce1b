//! The I/O engines by name: `EngineKind` and its one row of words (`EngineKind::row`), which
//! the `--engine` parser and help, the Test screen's list, the reports' labels and the fio
//! lines read. What an engine does is its file in `bench::exec::engines`.

use serde::Serialize;

use crate::model::variants::with_all;

with_all! {
    /// Which I/O engine drives the workers. `ALL` is the order the Test screen and `--help`
    /// offer them in.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
    #[serde(rename_all = "lowercase")]
    pub enum EngineKind {
        /// Chosen per phase by the runner: pread/pwrite at QD1, and at higher depths whichever of
        /// the two others a short probe at the start of the warm-up finds faster on this target.
        #[default]
        Auto,
        /// io_uring: one ring per worker keeps QD I/Os in flight from one thread.
        Uring,
        /// pread/pwrite: one thread per outstanding I/O.
        Sync,
    }
}

/// How an engine keeps a worker's I/Os in flight: the shape of its report label and of the
/// fio line that repeats it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoShape {
    /// One thread per worker with a queue of QD I/Os (fio's io_uring, `iodepth` = QD).
    Ring,
    /// One thread per outstanding I/O (fio's psync, `numjobs` = workers x QD).
    ThreadPerIo,
}

/// Everything said about an engine by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineRow {
    /// Its `--engine` value.
    pub arg: &'static str,
    /// Its name in the reports and on the Test screen.
    pub name: &'static str,
    /// Its line in `--help` and the man page.
    pub help: &'static str,
    pub shape: IoShape,
}

impl EngineKind {
    /// The engine's row (exhaustive: a new engine does not build without one).
    pub const fn row(self) -> &'static EngineRow {
        match self {
            // Unresolved, auto runs as the threads (`engines::for_kind`).
            EngineKind::Auto => &EngineRow {
                arg: "auto",
                name: "auto",
                help: "the faster of the two others on this target, found by a short probe of \
                       each at the start of the warm-up (pread/pwrite alone for a run counted \
                       without warm-up, as dd)",
                shape: IoShape::ThreadPerIo,
            },
            EngineKind::Uring => &EngineRow {
                arg: "uring",
                name: "io_uring",
                help: "io_uring: a real queue of --qd I/Os from one thread per worker",
                shape: IoShape::Ring,
            },
            EngineKind::Sync => &EngineRow {
                arg: "sync",
                name: "sync",
                help: "pread/pwrite: one thread per outstanding I/O",
                shape: IoShape::ThreadPerIo,
            },
        }
    }

    pub fn as_str(self) -> &'static str {
        self.row().name
    }

    /// The engine named `arg` on the command line; an unknown name is refused with the known.
    pub fn from_arg(arg: &str) -> Result<EngineKind, String> {
        EngineKind::ALL
            .iter()
            .copied()
            .find(|k| k.row().arg == arg)
            .ok_or_else(|| {
                let known: Vec<&str> = EngineKind::ALL.iter().map(|k| k.row().arg).collect();
                format!(
                    "unknown engine {arg:?}; known engines: {}",
                    known.join(", ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_has_a_complete_row_and_its_names_round_trip() {
        // The Test screen and the flag start from the default.
        assert_eq!(EngineKind::ALL[0], EngineKind::default());
        let mut args = Vec::new();
        for &k in EngineKind::ALL {
            let row = k.row();
            assert!(!row.arg.is_empty() && !row.name.is_empty() && !row.help.is_empty());
            assert_eq!(EngineKind::from_arg(row.arg), Ok(k));
            args.push(row.arg);
        }
        args.sort_unstable();
        args.dedup();
        assert_eq!(
            args.len(),
            EngineKind::ALL.len(),
            "two engines share a name"
        );
        let err = EngineKind::from_arg("libaio").unwrap_err();
        assert_eq!(
            err,
            r#"unknown engine "libaio"; known engines: auto, uring, sync"#
        );
    }
}
