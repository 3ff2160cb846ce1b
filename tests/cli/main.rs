//! The command line without root, one test binary: the binary built for this run started on
//! files and scratch directories (messages, repeats, several targets, the run history and the
//! safety of its directory, saved smartctl reports judged by `triage --report`).
//!
//! A new file of such tests is one more `mod` line below.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

#[path = "../common/mod.rs"]
mod common;

mod history;
mod history_dir_safety;
mod messages;
mod repeats;
mod several;
mod triage_reports;
