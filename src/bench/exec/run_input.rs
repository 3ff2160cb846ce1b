//! What a run is given (the plan, the open target or scratch directory, where its kernel
//! counters are read) and the events it streams to whoever watches.

use std::os::fd::OwnedFd;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use crate::bench::exec::pattern::DataPattern;
use crate::bench::plan::{Job, Plan};
use crate::bench::results::engine_choice::EngineChoice;
use crate::bench::results::outcome::PhaseResult;
use crate::bench::results::stats::IntervalPoint;
use crate::model::{DevNum, Transport};
use crate::sys::SysRoot;

/// What a run reports while it goes.
#[derive(Debug, Clone)]
pub enum RunEvent {
    /// Sent first: which phases will probe the engines before their warm-up, for an ETA that
    /// counts the probes (`probe::expected_duration`).
    Probes { phases: Vec<bool> },
    /// Phase `index` of `count` started: with `probing`, the engine probe runs first, then what is
    /// left of the warm-up; else the warm-up, if any.
    PhaseStarted {
        index: usize,
        count: usize,
        label: String,
        job: Box<Job>,
        probing: bool,
    },
    /// The probe of phase `index` is over (the rest of the warm-up, if any, runs now).
    Probed { index: usize },
    /// The warm-up is over; measurement starts now, with this engine.
    Measuring {
        index: usize,
        engine: Box<EngineChoice>,
    },
    /// One interval of the phase's series.
    Point { index: usize, point: IntervalPoint },
    PhaseFinished {
        index: usize,
        result: Box<PhaseResult>,
    },
}

/// Where the runner reads the kernel's counters for the target.
#[derive(Debug, Clone)]
pub struct StatSource {
    pub root: SysRoot,
    pub dev: DevNum,
    pub name: String,
}

/// Everything a run needs besides the plan.
pub struct RunInput {
    pub plan: Plan,
    pub fd: Arc<OwnedFd>,
    pub pattern: Option<DataPattern>,
    pub stat: Option<StatSource>,
    /// Shown when there is no stat source (e.g. a file on tmpfs).
    pub no_stat_reason: Option<String>,
    pub events: Option<Sender<RunEvent>>,
    /// The target is a block device (else a file), and its size at the start: a failure is
    /// explained against them (a removed device vs a full file system).
    pub block_device: bool,
    pub size_at_start: u64,
    /// The device's kind (for a file, its file system's), when known: without a warm-up it
    /// decides the engine (`probe::decide`).
    pub transport: Option<Transport>,
    /// A directory test's scratch directory (`fd` is the directory): removed by the runner at the
    /// end, and when dropped.
    pub scratch: Option<Arc<Mutex<crate::sys::dirops::ScratchDir>>>,
}
