//! The I/O engines by name: `EngineKind`, which plans and results hold, and each engine's row
//! of words (`EngineRow`). An engine's row lives in its file in `bench::exec::engines`; only
//! `auto`'s is here.

use std::fmt;

use serde::{Serialize, Serializer};

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
    /// Its `--engine` value, and its name in the JSON and the history.
    pub arg: &'static str,
    /// Its name in the reports and on the Test screen.
    pub name: &'static str,
    /// Its line in `--help` and the man page.
    pub help: &'static str,
    pub shape: IoShape,
}

/// Which I/O engine drives the workers: an engine's row, so every layer can say its words
/// without the list of engines (`bench::exec::engines::ALL`). Serialized as its `--engine` value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EngineKind(&'static EngineRow);

/// Chosen per phase by the runner (`exec::probe`). Unresolved, it runs as the threads.
const AUTO_ROW: EngineRow = EngineRow {
    arg: "auto",
    name: "auto",
    help: "the faster of the two others on this target, found by a short probe of each at \
           the start of the warm-up (pread/pwrite alone for a run counted without warm-up, as \
           dd)",
    shape: IoShape::ThreadPerIo,
};

impl EngineKind {
    /// The runner's choice (the default).
    pub const AUTO: EngineKind = EngineKind(&AUTO_ROW);

    /// The engine whose row is `row`: an engine's file makes its kind from its own row.
    pub const fn of(row: &'static EngineRow) -> EngineKind {
        EngineKind(row)
    }

    /// The engine's row.
    pub const fn row(self) -> &'static EngineRow {
        self.0
    }

    /// Its name in the reports ("io_uring").
    pub fn as_str(self) -> &'static str {
        self.0.name
    }
}

impl Default for EngineKind {
    fn default() -> EngineKind {
        EngineKind::AUTO
    }
}

impl fmt::Debug for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EngineKind({})", self.0.arg)
    }
}

/// As its `--engine` value: "auto", "uring", "sync".
impl Serialize for EngineKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.arg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_its_row_and_serializes_as_its_value() {
        assert_eq!(EngineKind::default(), EngineKind::AUTO);
        assert_eq!(EngineKind::AUTO.row().arg, "auto");
        assert_eq!(
            serde_json::to_string(&EngineKind::AUTO).unwrap(),
            r#""auto""#
        );
        assert_eq!(format!("{:?}", EngineKind::AUTO), "EngineKind(auto)");
    }
}
