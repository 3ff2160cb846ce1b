//! Orchestration shared by the two faces, the headless commands (`commands`) and the
//! interactive program (`app`, `tui`): written once here so that both behave and speak alike.
//! It sits below both and above the engine, the journal and the history; it draws no screen
//! and parses no command line.
//!
//! - `job`: the `Job` trait every long-running task implements (what it needs, its messages,
//!   its stop flag, what it puts back, what it hands back), which the TUI's one runner
//!   (`tui::jobs`) and the CLI's (`commands::job`) start.
//!   One file here per job: `scan`, `triage`, `flushcheck`, `capacity`, `trimcheck`,
//!   `smrcheck`, `sweep_job`.
//! - `capacity`: the capacity probe job (the guard, the journal, the probe, the put-back) and
//!   the put-back of a journal a crash left.
//! - `flushcheck`: the flush check's timing run (commits, write + flush, the flush after
//!   dirty data, the commits with the write cache off), its write guard, the timing check
//!   and its job for the CLI (`TimingJob`), and the TUI's flush check job.
//! - `progress`: the progress line of a headless run on stderr (phase, figures, ETA), for
//!   `run` on one target or several and the sweeps.
//! - `scan`: the surface scan job and the one scan loop (the TUI's and `disktriage scan`'s),
//!   with the scan's defaults.
//! - `scan_progress`: `scan`'s progress line (the read in flight, what was found, 80 columns).
//! - `setting_sweep`: the setting sweep as a pure state machine (check, switch, run, measure,
//!   put back; its refusals and the sentences that say them), which the sweep job
//!   (`sweep_job`) drives in a loop.
//! - `sweep_job`: the setting sweep as a job (`disktriage run --sweep-*` and `S`/`W` on the
//!   Test screen, `SweepOrder`): the machine driven through each switch, run and measure,
//!   and the value at start put back on every exit.
//! - `smrcheck`: the write-cliff probe as a job (the guard, the journal, the random writes
//!   second by second, the cliff detector, the put-back).
//! - `trimcheck`: the TRIM check as a job (the guard, the journal, the pattern, the discard, the read
//!   back, the put-back).
//! - `write_target`: the write tests' guard for the checks that write a device themselves,
//!   and the place of their journal of saved sectors.
//! - `triage`: a triage's gathered facts judged, with each disk's changes since its last
//!   triage, as the report both faces show, and recorded in the history; and the TUI's
//!   triage job.
//!
//! Two more pieces both faces share live lower down, where what they need is: the stop-signal
//! guard is `sys::signals::StopSignals` (it registers handlers: the operating system's part
//! stays in `sys`), and the history recorder is `history::History::record_test` (one entry
//! per test and target, which the CLI prints about and the TUI recalls past runs after).

// The library's surface: the jobs and their parts, as a user of the crate (and the
// integration tests) reaches them.
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
