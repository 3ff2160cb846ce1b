//! Root tests that need the machine to themselves, one test binary (cargo runs one test binary
//! at a time) whose tests also run one at a time (`alone`): a thousand loop devices no other
//! test may see in its device list, and a scan that keeps both cores busy for half a minute
//! while the root tests' timings are measured elsewhere.
//!
//! A new file of such tests is one more `mod` line below.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

#[path = "../common/mod.rs"]
mod common;

mod mapfile;
mod triage;

use std::sync::{Mutex, MutexGuard};

/// Held for the whole of a test: the next one waits (a failed test's poisoned lock too).
pub fn alone() -> MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}
