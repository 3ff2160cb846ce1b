//! What the library does with outside bytes and fixture trees, without a terminal and without
//! root, one test binary: the parsers' property tests, SMART and log pages captured from real
//! drives, the inventory of captured sysfs trees, and the reports rendered from them (insta
//! snapshots in `snapshots/`).
//!
//! A new file of such tests is one more `mod` line below.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

#[path = "../common/mod.rs"]
mod common;
#[path = "../props/mod.rs"]
mod props;

mod drive_log_pages;
mod inventory_fixtures;
mod parser_props;
mod report_snapshots;
mod smart_meaning;
mod smart_pages;
mod smart_reports;
