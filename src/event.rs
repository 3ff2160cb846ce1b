//! What flows through the interactive loop: messages in (keys, ticks, results of commands,
//! the runner's events) and commands out (what `App::update` asks the loop to do). One mpsc
//! channel carries every message to the main thread; the input and tick threads live here.

use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::thread;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, KeyEvent, KeyEventKind};

use crate::bench::outcome::RunReport;
use crate::bench::outcome::TargetInfo;
use crate::bench::runner::RunEvent;
use crate::bench::session::RunRequest;
use crate::bench::spec::Plan;
use crate::changes::{CacheChange, ChangeError};
use crate::model::{CacheStatus, DriveLogs, Inventory, SelfTestKind, SelfTestStatus, SmartHealth};
use crate::report::export::ExportFormat;
use crate::sys::DriveError;

/// Why work the loop did for the app failed. The variant says what failed, so the app (and
/// its tests) can tell a drive's refusal from a session that cannot change settings; the text
/// is the cause as the admin reads it.
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

impl From<anyhow::Error> for TaskError {
    /// Keeps the whole chain of context (`{:#}`): "cannot open X: permission denied".
    fn from(e: anyhow::Error) -> Self {
        TaskError::Failed(format!("{e:#}"))
    }
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
    Run(Box<RunEvent>),
    RunFinished(Box<Result<RunReport, TaskError>>),
    Exported(Result<PathBuf, TaskError>),
    /// The drive's own cache state and SMART health, read in the background.
    DriveStatus {
        device: String,
        cache: Result<CacheStatus, TaskError>,
        health: Option<Result<Box<SmartHealth>, TaskError>>,
    },
    /// The drive's error and self-test logs and its self-test state, read in the background
    /// after its SMART health.
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
    /// A temperature reading during a run (seconds since the run started, degrees C).
    Temperature {
        device: String,
        at: f64,
        celsius: i64,
    },
}

/// Work `App::update` hands to the loop.
#[derive(Debug, Clone, PartialEq)]
pub enum Cmd {
    RefreshInventory,
    SetScheduler {
        device: String,
        name: String,
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
    },
    /// Read the drive's self-test state (while a self-test runs).
    PollSelfTest {
        device: String,
    },
    /// Switch the drive's own volatile write cache (journaled, put back on exit).
    SetDriveCache {
        device: String,
        enabled: bool,
    },
    /// Keep the drive cache change: not put back on exit.
    KeepDriveCache {
        device: String,
    },
    /// Put back what a killed or crashed disktriage left in the journal.
    RestoreOrphans,
    StartRun(Box<RunRequest>),
    StopRun,
    Export {
        reports: Vec<RunReport>,
        format: ExportFormat,
        /// File name without directory, e.g. `disktriage-loop0-rand-read-3`.
        stem: String,
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
