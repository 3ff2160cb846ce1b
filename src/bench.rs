//! The I/O test engine, in floors that only point down (each uses only those listed before it):
//!
//! - `plan`: the plan types: a test's name, its parameters (without the Test screen's
//!   semantics, which are `app`'s), the plan, its phases and jobs, the engine kind, the errors.
//! - `catalog`: one row per test; each family owns its tests' parameters, defaults and phases,
//!   and `build_plan` turns a request into a plan.
//! - `results`: what a run produces: live statistics, each phase's figures, the result file,
//!   and the honesty guards beside them.
//! - `exec`: running a plan: the target, the safety checks, the engine probe, the workers, the
//!   gate, the runner and the session that ties them.
//! - `analysis`: what is made of results afterwards: comparison, figures over repeats,
//!   curves, several-disk verdicts, setting sweeps.

pub mod analysis;
pub mod catalog;
pub mod exec;
pub mod plan;
pub mod results;

// The library's surface, reached as `disktriage::bench::Item` (the integration tests check it).
pub use analysis::compare::Stat;
pub use analysis::figures::PhaseFigures;
pub use analysis::setting_sweep::SweepKind;
pub use analysis::several_disks::Role;
pub use catalog::CATALOG;
pub use catalog::build::build_plan;
pub use exec::engines::{SYNC, URING};
pub use exec::pattern::DataPattern;
pub use exec::probe::choose as choose_engine;
pub use exec::run_input::RunEvent;
pub use exec::session::{
    RunRequest, TempPoll, start as start_session, start_watched as start_session_watched,
};
pub use exec::test_file::test_file_size;
pub use plan::params::{DEFAULT_SEED, EngineKind, TestParams};
pub use plan::test_name::TestName;
pub use plan::{DataKind, Phase, PhaseTag, Plan, TargetFacts, TimeBase};
pub use results::engine_choice::{EngineChoice, EngineProbe, ProbeFigures};
pub use results::guards::{faster_than_link, sata_ceiling, usb_ceiling};
pub use results::outcome::{
    DirTotals, PhaseResult, RUN_JSON_SCHEMA, RunOutcome, RunReport, TargetClass, TargetInfo,
};
pub use results::stats::{
    BoundedSeries, DirPoint, DirStats, IntervalPoint, LATENCY_DEFINITION, LatencyPoint,
    LatencySummary,
};
