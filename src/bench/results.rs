//! What a run produces: the live statistics workers fill in (`stats`), each phase's figures and
//! the result file (`outcome`), the engine and why (`engine_choice`), a failed I/O
//! (`failure`), and the honesty guards beside a figure (`guards`). Plain data below the
//! execution floor, which fills it.

pub mod engine_choice;
pub mod failure;
pub mod guards;
pub mod outcome;
pub mod stats;
