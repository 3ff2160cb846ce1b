//! What a run produces: the live statistics its workers fill in (`stats`), each phase's
//! figures and the result file (`outcome`), the engine a phase ran with and why
//! (`engine_choice`), an I/O that failed (`failure`), and the honesty guards said beside a
//! figure that cannot mean what it seems (`guards`). Plain data below the execution floor,
//! which fills it.

pub mod engine_choice;
pub mod failure;
pub mod guards;
pub mod outcome;
pub mod stats;
