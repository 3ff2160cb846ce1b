//! The I/O test engine: the catalogue, plans, workers, statistics and the runner.

pub mod catalog;
pub mod curve;
pub mod engine;
pub mod family;
pub mod figures;
pub mod gate;
pub mod guards;
pub mod multi;
pub mod outcome;
pub mod params;
pub mod pattern;
pub mod plan;
pub mod rewrite_guard;
pub mod runner;
pub mod safety;
pub mod session;
pub mod spec;
pub mod stats;
pub mod sweep;
pub mod target;
pub mod worker;
