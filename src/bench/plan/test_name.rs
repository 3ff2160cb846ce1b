//! The name of a test, and whether a test writes: the words every floor of `bench` knows a
//! test by. What each test is (its summary, family, defaults, phases) is its row in the
//! catalogue (`bench::catalog`).

use serde::Serialize;

use crate::model::variants::with_all;

with_all! {
    /// A test users can ask for by name. `TestName::ALL` lists them; each has one catalogue
    /// row (`bench::catalog::CATALOG`, in this order, checked when the crate builds).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum TestName {
        SeqRead,
        SeqWrite,
        SeqReadQ8,
        SeqWriteQ8,
        ConcurrentRead,
        ConcurrentWrite,
        SyncLatency,
        RandRead,
        RandWrite,
        RandMixed,
        SizeSweep,
        QdSweep,
        Cdm,
        CdmNvme,
        Metadata,
    }
}

/// Whether a test writes to its target. The catalogue's `writes` says what a test can do;
/// whether one run writes is decided by `TestName::writes_with`, from its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    Never,
    Always,
    /// Writes are part of the test but can be left out (sweeps, CrystalDiskMark presets).
    Optional,
}
