//! The QEMU lab, one test binary: every lab test reads the results of one shared boot
//! (`qemu_lab::shared_lab`, a process-wide `OnceLock`), so all of them must stay in this
//! binary.
//!
//! A new file of lab tests is one more `mod` line below; it reaches the shared boot through
//! `crate::qemu_lab`.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

#[path = "../common/mod.rs"]
mod common;

mod qemu_lab;
