//! The generated assets and the repository's documents, one test binary: screenshots, the
//! man page, completions and the key table are regenerated and compared
//! (`DISKTRIAGE_UPDATE_ASSETS=1` rewrites them), and the tests' own imports are held to the
//! crate's public surface.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

#[path = "../common/mod.rs"]
mod common;

mod assets;
mod public_paths;
