//! The module paths from before the floors, for the files other branches are rewriting now
//! (`src/report/run.rs`, `src/commands/*`, `src/app/sweep.rs`): nothing else uses them. Delete
//! this file once those files name the floors' paths.

pub use super::analysis::curve;
pub use super::analysis::figures;
pub use super::analysis::setting_sweep as sweep;
pub use super::analysis::several_disks as multi;
pub use super::catalog::family;
pub use super::exec::pattern;
pub use super::exec::probe as engine;
pub use super::exec::{runner, safety, session, target};
pub use super::results::{outcome, stats};
