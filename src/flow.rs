//! Orchestration shared by the two faces, the headless commands (`commands`) and the
//! interactive program (`app`, `tui`): written once here so that both behave and speak alike.
//! It sits below both and above the engine, the journal and the history, and knows no
//! terminal and no command line.
//!
//! - `progress`: the progress line of a headless run on stderr (phase, figures, ETA).
//! - `setting_sweep`: the setting sweep as a pure state machine (check, switch, run, measure,
//!   put back; its refusals and the sentences that say them), which the CLI drives in a loop
//!   and the TUI one message at a time.
//! - `record`: adding a finished test to the history, as one entry per test and target.
//!
//! The stop-signal guard is `sys::signals::StopSignals` (it registers handlers: the operating
//! system's part stays in `sys`).

pub mod progress;
pub mod setting_sweep;
