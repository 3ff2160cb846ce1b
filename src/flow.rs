//! Orchestration shared by the two faces, the headless commands (`commands`) and the
//! interactive program (`app`, `tui`), so both behave and speak alike. It sits below both and
//! above the engine, the journal and the history; it draws no screen and parses no command
//! line.
//!
//! - `job`: the `Job` trait every long-running task implements, which the TUI's runner
//!   (`tui::jobs`) and the CLI's (`commands::job`) start. One file here per job: `scan`,
//!   `triage`, `flushcheck`, `capacity`, `trimcheck`, `smrcheck`, `sweep_job`.
//! - `capacity`: the capacity probe job, and the put-back of a journal a crash left.
//! - `flushcheck`: the flush check's timing run and its jobs (the CLI's and the TUI's).
//! - `progress`: a headless run's progress line on stderr (phase, figures, ETA).
//! - `scan`: the surface scan job and the one scan loop, with the scan's defaults.
//! - `scan_progress`: `disktriage scan`'s progress line (80 columns).
//! - `setting_sweep`: the setting sweep as a pure state machine, its refusals and sentences.
//! - `sweep_job`: the setting sweep as a job (`run --sweep-*`, `S`/`W` on the Test screen).
//! - `smrcheck`: the write-cliff probe as a job.
//! - `trimcheck`: the TRIM check as a job.
//! - `write_target`: the guard for the checks that write a device themselves, and the place of
//!   their journal of saved sectors.
//! - `triage`: a triage's facts judged, with each disk's changes since its last triage, as the
//!   report both faces show and the history records; and the TUI's triage job.
//!
//! Two more shared pieces live lower down: the stop-signal guard `sys::signals::StopSignals`
//! (it registers handlers) and the history recorder `history::History::record_test`.

// The library's surface: the jobs and their parts (the integration tests reach them).
pub use crate::capacity::probe::Progress as CapacityProgress;
pub use capacity::{CapacityMsg, CapacityOrder, CapacityRun, NAME as CAPACITY_JOB};
pub use flushcheck::{
    FlushCheckJob, FlushChecker, FlushJob, FlushOrder, NAME as FLUSHCHECK_JOB,
    real_checker as real_flush_checker,
};
pub use job::{Job, JobContext, JobEnv, JobMsg, JobOrder, Order};
pub use scan::{
    NAME as SCAN_JOB, ScanJob, ScanMsg, drive as drive_scan, drive_watched as drive_scan_watched,
};
pub use setting_sweep::SettingSweep;
pub use sweep_job::{
    NAME as SWEEP_JOB, RunOne, StepOutcome, SweepJob, SweepMsg, SweepOrder,
    outcome_of as sweep_outcome,
};
pub use triage::{Gatherer, NAME as TRIAGE_JOB, TriageJob, TriageNews, TriageOrder, real_gatherer};
pub use trimcheck::{NAME as TRIM_JOB, TrimMsg, TrimOrder, TrimRun, TrimStep};

pub mod capacity;
pub mod flushcheck;
pub mod job;
pub mod progress;
pub mod scan;
pub mod scan_progress;
pub mod setting_sweep;
pub mod smrcheck;
pub mod sweep_job;
pub mod triage;
pub mod trimcheck;
pub mod write_target;
