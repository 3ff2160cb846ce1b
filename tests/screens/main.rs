//! The interactive screens, one test binary: each screen drawn through ratatui's TestBackend
//! at 80x25 and 132x43 (insta snapshots in `snapshots/`), and the key handling and state
//! transitions of `App::update` (messages in, state and commands out) without a terminal.
//!
//! A new file of screen tests is one more `mod` line below; its snapshots are named
//! `screens__<name>` when taken through [`snap`], `screens__<module>__<name>` otherwise.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

#[path = "../common/mod.rs"]
mod common;

mod capacity;
mod devices_run;
mod file_dialog;
mod flush;
mod results_charts;
mod scan;
mod selection;
mod several;
mod status;
mod sweeps_health;
mod targets_history;
mod triage;
mod trimcheck;
mod zones;

use common::tui::screen;
use disktriage::app::App;

/// The two terminal sizes every screen is drawn at: the Linux console's smallest usual one
/// and a common terminal emulator's.
pub const SIZES: [(u16, u16); 2] = [(80, 25), (132, 43)];

/// Snapshots a state at both sizes.
pub fn snap(name: &str, app: &App) {
    for (w, h) in SIZES {
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen(app, w, h));
    }
}
