//! The module paths from before the floors, for the files other branches are rewriting now
//! (`src/report/run.rs`, `src/commands/*`, `src/app/sweep.rs`, `src/tui.rs`): nothing else uses
//! them. Delete this file (and `catalog`'s re-export of `TestName` and `Writes`) once those
//! files name the floors' paths.

pub use super::analysis::curve;
pub use super::analysis::figures;
pub use super::analysis::several_disks as multi;
pub use super::exec::{runner, safety, session, target};
pub use super::results::outcome;

pub mod spec {
    pub use crate::bench::catalog::build::build_plan;
    pub use crate::bench::catalog::family::size_sweep::sweep_column;
    pub use crate::bench::exec::memory::check_memory;
    pub use crate::bench::plan::params::{EngineKind, TestParams};
    pub use crate::bench::plan::*;
}

pub mod pattern {
    pub use crate::bench::exec::pattern::*;
    pub use crate::bench::plan::DataKind;
}

pub mod stats {
    pub use crate::bench::plan::TimeBase;
    pub use crate::bench::results::stats::*;
}

pub mod family {
    pub use crate::bench::catalog::family::*;
    pub mod metadata {
        pub use crate::bench::catalog::family::metadata::*;
        pub use crate::bench::plan::MetaOp;
    }
}

pub mod engine {
    pub use crate::bench::exec::probe::*;
    pub use crate::bench::results::engine_choice::*;
}

pub mod sweep {
    pub use crate::bench::analysis::setting_sweep::*;
    pub use crate::bench::plan::metric::Metric;
}
