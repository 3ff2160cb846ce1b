//! What flows through the interactive loop: messages in (keys, ticks, results of commands,
//! the runner's events) and commands out (what `App::update` asks the loop to do). One mpsc
//! channel carries every message to the main thread; the input and tick threads live here.

use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::thread;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, KeyEvent, KeyEventKind};

use crate::bench::exec::run_input::RunEvent;
use crate::bench::exec::session::RunRequest;
use crate::bench::plan::Plan;
use crate::bench::results::outcome::RunReport;
use crate::bench::results::outcome::TargetInfo;
use crate::changes::{CacheChange, ChangeError};
pub use crate::flow::job::{JobMsg, JobOrder};
use crate::history::HistoryEntry;
use crate::model::{
    CacheStatus, ChosenDevice, DiskIdentity, DriveLogs, Inventory, SelfTestKind, SelfTestStatus,
    SmartHealth,
};
use crate::persist::{PersistError, Persisted, UdevRule};
use crate::report::export::ExportFormat;
use crate::sys::DriveError;

/// The scan's state as the screen shows it (and the history keeps it): `scan::snapshot`.
pub use crate::scan::snapshot::ScanUpdate;

/// Why work the loop did for the app failed. The variant lets the app tell a drive's refusal
/// from a session that cannot change settings; the text is what the admin reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskError {
    /// This session cannot change settings (not root, no journal): why.
    #[error("{0}")]
    ChangesUnavailable(String),
    /// The drive or the kernel refused or failed a command.
    #[error(transparent)]
    Drive(#[from] DriveError),
    /// A journaled change failed (the journal, the change or its read-back).
    #[error("{0}")]
    Change(String),
    /// Anything else (reading the inventory, a run, an export), with its causes.
    #[error("{0}")]
    Failed(String),
}

impl From<ChangeError> for TaskError {
    fn from(e: ChangeError) -> Self {
        TaskError::Change(e.to_string())
    }
}

impl From<PersistError> for TaskError {
    fn from(e: PersistError) -> Self {
        TaskError::Failed(e.to_string())
    }
}

impl From<anyhow::Error> for TaskError {
    /// Keeps the whole context chain: "cannot open X: permission denied".
    fn from(e: anyhow::Error) -> Self {
        TaskError::Failed(format!("{e:#}"))
    }
}

/// A test file on a mounted file system of the selected device, the Test screen's target
/// while chosen: the run creates it and removes it afterwards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileTarget {
    /// The device (disk or partition) the file system is on.
    pub device: String,
    pub mount: PathBuf,
    pub fstype: String,
    /// Bytes free for an unprivileged user, and the file system's size (statvfs).
    pub free: u64,
    pub total: u64,
    /// The test file: a name no file in `mount` had when it was looked at.
    pub file: PathBuf,
}

/// A message for `App::update`.
#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    Resize,
    /// Time since the program started (the UI's clock; rendering never reads the clock).
    Tick(Duration),
    Inventory(Result<Inventory, TaskError>),
    /// A scheduler write and the active scheduler read back afterwards.
    SchedulerSet {
        device: String,
        result: Result<String, TaskError>,
    },
    /// The run passed its checks and started.
    RunStarted {
        target: Box<TargetInfo>,
        plan: Box<Plan>,
        notes: Vec<String>,
    },
    /// The run could not start (refused, bad parameters, open failed).
    RunRefused(String),
    /// A thread other than the UI's panicked (a bug): which, where and what it said.
    ThreadPanicked(String),
    /// Bytes of the run's new test file written so far, while it is laid out before the run.
    LaidOut(u64),
    Run(Box<RunEvent>),
    RunFinished(Box<Result<RunReport, TaskError>>),
    Exported(Result<PathBuf, TaskError>),
    /// The drive's own cache state and SMART health, read in the background.
    DriveStatus {
        device: String,
        cache: Result<CacheStatus, TaskError>,
        health: Option<Result<Box<SmartHealth>, TaskError>>,
    },
    /// The drive's error and self-test logs and self-test state, read after its SMART health.
    DriveLogs {
        device: String,
        result: Result<Box<DriveLogs>, TaskError>,
    },
    /// A self-test start (or abort) the drive took or refused.
    SelfTestStarted {
        device: String,
        kind: SelfTestKind,
        result: Result<(), TaskError>,
    },
    /// A poll of a drive's self-test state.
    SelfTestStatus {
        device: String,
        result: Result<SelfTestStatus, TaskError>,
    },
    /// A drive write-cache switch and the state read back from the drive.
    DriveCacheSet {
        device: String,
        result: Result<Box<CacheChange>, TaskError>,
    },
    /// Changes a killed or crashed disktriage left in the journal, one line each.
    Orphans(Vec<String>),
    /// What putting back the orphans came to, one line each.
    Restored(Vec<String>),
    /// The file system for a file target (free space, new file name), or why it cannot be used.
    FileTarget(Result<Box<FileTarget>, TaskError>),
    /// A temperature reading during a run (seconds since the run started, degrees C).
    Temperature {
        device: String,
        at: f64,
        celsius: i64,
    },
    /// What the history knows `record`'s target by, sent even if the history write fails:
    /// Results finds earlier sessions' runs of the same test on the same disk by it.
    RecordDisk {
        record: usize,
        disk: DiskIdentity,
    },
    /// Earlier sessions' runs of the disk a run just finished on (oldest first).
    PastRuns(Vec<HistoryEntry>),
    /// Something about the history worth a line (it could not be written, a bad line).
    HistoryNote(String),
    /// The history took `runs` runs of `record` (`Cmd::RecordHistory`).
    HistoryRecorded {
        record: usize,
        runs: usize,
    },
    /// The udev rule that would make a scheduler permanent, or why there can be none.
    PersistPlanned {
        device: String,
        scheduler: String,
        class: bool,
        result: Result<Box<Persisted>, TaskError>,
    },
    /// The rule was written (its path), or why not.
    Persisted(Result<PathBuf, TaskError>),
    /// News of one target of a run on several devices.
    Several(SeveralMsg),
    /// A job's news (`Cmd::StartJob`), for the screen that registered the job's name.
    Job(JobMsg),
}

pub use crate::flow::flushcheck::{FlushDone, FlushMsg};

// What a job says, as the screen hears it (`tui::jobs` starts them).
impl From<JobMsg> for Msg {
    fn from(m: JobMsg) -> Msg {
        Msg::Job(m)
    }
}

impl Msg {
    /// `msg` of the job named `job`, as the runner hands it to the app.
    pub fn job<M: std::any::Any + Send + Clone + std::fmt::Debug>(
        job: &'static str,
        msg: M,
    ) -> Msg {
        Msg::Job(JobMsg::new(job, msg))
    }
}

/// What a finished triage hands the screen.
pub use crate::report::triage::{DiskReport, TriageOf, TriageReport};

pub use crate::flow::triage::TriageMsg;

/// Points of a scan's zone curve, at most (neighbours merge beyond).
pub use crate::flow::scan::ZONE_POINTS;

/// What happens to target `index` of a run on several devices (`Cmd::StartSeveral`).
#[derive(Debug, Clone)]
pub enum SeveralMsg {
    Started {
        index: usize,
        target: Box<TargetInfo>,
        plan: Box<Plan>,
    },
    /// It could not start (refused, open failed): the others go on.
    Refused {
        index: usize,
        error: String,
    },
    Event {
        index: usize,
        ev: Box<RunEvent>,
    },
    Finished {
        index: usize,
        result: Box<Result<RunReport, TaskError>>,
    },
}

/// Work `App::update` hands to the loop.
#[derive(Debug, Clone, PartialEq)]
pub enum Cmd {
    RefreshInventory,
    SetScheduler {
        device: String,
        name: String,
        /// The device as the admin chose it: see `App::stamp`.
        chosen: Option<ChosenDevice>,
    },
    /// Stop restoring this device's scheduler on exit: the admin keeps the change.
    KeepScheduler {
        device: String,
    },
    /// Read the drive's cache state, and its SMART health and logs when `health`.
    ReadDriveStatus {
        device: String,
        health: bool,
    },
    /// Start a short or long self-test on the drive, or abort the running one.
    StartSelfTest {
        device: String,
        kind: SelfTestKind,
        /// As in `SetScheduler`.
        chosen: Option<ChosenDevice>,
    },
    /// Read the drive's self-test state (while a self-test runs).
    PollSelfTest {
        device: String,
    },
    /// Switch the drive's own volatile write cache (journaled, put back on exit).
    SetDriveCache {
        device: String,
        enabled: bool,
        /// As in `SetScheduler`.
        chosen: Option<ChosenDevice>,
    },
    /// Keep the drive cache change: not put back on exit.
    KeepDriveCache {
        device: String,
    },
    /// Put back what a killed or crashed disktriage left in the journal.
    RestoreOrphans,
    /// Look at a mounted file system for a file target: its free space and a new file name.
    ProbeFileTarget {
        device: String,
        mount: PathBuf,
    },
    StartRun(Box<RunRequest>),
    /// Start these targets of a run on several devices at the same time, each with its index.
    StartSeveral(Vec<(usize, RunRequest)>),
    /// Stop the run (every target of a run on several devices).
    StopRun,
    /// Add a finished test (all its repeats) to the history, then load the disk's past runs.
    RecordHistory {
        /// The record (in the Results list) the runs belong to.
        record: usize,
        runs: Vec<RunReport>,
        drive_cache: Option<String>,
    },
    /// Plan (not write) the udev rule that sets `scheduler` on `device`, or its whole class,
    /// at boot.
    PlanPersist {
        device: String,
        scheduler: String,
        class: bool,
        /// As in `SetScheduler`.
        chosen: Option<ChosenDevice>,
    },
    /// Write a planned rule.
    WritePersist(Box<UdevRule>),
    /// Start the job this order asks for: its messages come back as `Msg::Job`.
    StartJob(JobOrder),
    /// Stop the job of this name (it puts back what it changed and says how it ended).
    StopJob(&'static str),
    /// Add an ended scan to the history, as a run is.
    RecordScan {
        update: Box<ScanUpdate>,
        path: PathBuf,
    },
    Export {
        reports: Vec<RunReport>,
        format: ExportFormat,
        /// File name without directory, e.g. `disktriage-loop0-rand-read-3`.
        stem: String,
        /// Where it goes (`report::export::export_dir`).
        dir: std::path::PathBuf,
    },
    Quit,
}

/// Reads keys and resizes on its own thread and forwards them.
pub fn spawn_input(tx: Sender<Msg>) -> std::io::Result<thread::JoinHandle<()>> {
    thread::Builder::new().name("input".into()).spawn(move || {
        loop {
            let msg = match event::read() {
                Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => Msg::Key(k),
                Ok(Event::Resize(..)) => Msg::Resize,
                Ok(_) => continue,
                Err(_) => return,
            };
            if tx.send(msg).is_err() {
                return;
            }
        }
    })
}

/// Sends `Tick` every `every` until the receiver is gone.
pub fn spawn_ticker(
    tx: Sender<Msg>,
    start: Instant,
    every: Duration,
) -> std::io::Result<thread::JoinHandle<()>> {
    thread::Builder::new().name("tick".into()).spawn(move || {
        loop {
            thread::sleep(every);
            if tx.send(Msg::Tick(start.elapsed())).is_err() {
                return;
            }
        }
    })
}
