//! The I/O test engine, in floors that only point down (each uses only those listed before
//! it):
//!
//! - `plan`: the leaf of plan types: a test's name, its parameters (without the Test screen's
//!   semantics, which are `app`'s), the plan, its phases and jobs, the engine kind, the
//!   errors. Pure data and the checks on it.
//! - `catalog`: one row per test carrying everything about that test; each family owns its
//!   tests' parameters, defaults and phases, and `build_plan` turns a request into a plan.
//! - `results`: what a run produces: the live statistics workers fill in, each phase's
//!   figures, the result file, and the honesty guards said beside them.
//! - `exec`: running a plan: the target, the safety checks, the engine probe, the workers,
//!   the gate, the runner and the session that ties them.
//! - `analysis`: what is made of results afterwards: run-to-run comparison, figures over
//!   repeats, curves, several-disk verdicts, setting sweeps.

pub mod analysis;
pub mod catalog;
pub mod exec;
pub mod plan;
pub mod results;
