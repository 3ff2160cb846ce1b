//! The flush-honesty check (`disktriage flushcheck`): does the drive keep what it
//! acknowledged? Plain data and pure functions only; the device I/O is `sys::flush`.
//!
//! - `timing`: durable 4 KiB commits and the flush after dirty data, judged against the
//!   physical floor (one revolution per commit on a rotating disk).
//! - `records`: the power-cut check's sequence-numbered, checksummed records.
//! - `log`: the LOG file of acknowledged sequence numbers (on another device).
//! - `verify`: which acknowledged records came back after the power cut.

pub mod log;
pub mod records;
pub mod timing;
pub mod verify;
