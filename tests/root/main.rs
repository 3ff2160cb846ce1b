//! The tests on real loop and zram devices the tests create (root only; without root each
//! says why it is skipped and passes, and `DISKTRIAGE_REQUIRE_ROOT=1` makes a skip a
//! failure), one test binary. Tests that share a system resource serialise themselves: zram0
//! by a file lock (`common::Zram`), the tmux tests by a mutex of their own.
//!
//! A new file of root tests is one more `mod` line below.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

#[path = "../common/mod.rs"]
mod common;

mod capacity;
mod drive_control;
mod engine;
mod engine_choice;
mod fleet;
mod flush_tui;
mod flushcheck_powercut;
mod flushcheck_timing;
mod history;
mod identity;
mod inventory;
mod metadata;
mod preserve;
mod safety;
mod scan;
mod scan_live;
mod scan_repair;
mod scan_tui;
mod several;
mod smrcheck;
mod sweep;
mod targets;
mod triage;
mod triage_tui;
mod trimcheck;
mod trimcheck_tui;
mod tui_tmux;
