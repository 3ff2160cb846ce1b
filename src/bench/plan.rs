//! The leaf of plan types, below every other floor of `bench`: a `Plan` is a list of phases,
//! each one `Job` of workers with a request size, queue depth, access order (`Access`),
//! read/write mix (`Mix`), region and bounds; with the target facts, the errors a request can
//! meet, and the shared checks. The test's name is in `test_name`, an engine's kind in
//! `engine_kind`, the admin's parameters in `params`. Pure data: `bench::catalog` builds
//! plans, the execution floor runs them.

pub mod engine_kind;
pub mod metric;
pub mod params;
pub mod test_name;

use std::time::Duration;

use serde::Serialize;

use crate::bench::plan::params::EngineKind;
use crate::bench::plan::test_name::TestName;
use crate::model::Bytes;
use crate::sys::direct::SyncMode;

pub const MAX_QUEUE_DEPTH: u32 = 1024;

/// What every output says of a run with `--preserve`.
pub const REWRITE_LABEL: &str = "rewrite of existing data";

/// The plan's note for `--preserve`: what was measured, and what was not.
pub const REWRITE_NOTE: &str = "rewrite of existing data (--preserve): each write first reads its \
     block and writes the same bytes back. Only the write is timed: latency is the write's alone, \
     and MB/s and IOPS count the rewritten bytes over the time the writes took (the untimed \
     reads are not in it). The kernel's counters include the reads";
pub const MAX_WORKERS: u32 = 256;

/// What the plan needs to know about the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetFacts {
    pub size: u64,
    pub logical_block_size: u32,
    /// Largest request the kernel sends unsplit (`queue/max_sectors_kb`), if known.
    pub max_request: Option<u64>,
    /// True for a regular file.
    pub is_file: bool,
}

/// Which part of a multi-phase test a phase is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PhaseTag {
    Single,
    Sweep {
        access: Access,
        write: bool,
    },
    QdSweep {
        small: bool,
        qd: u32,
    },
    Cdm {
        row: String,
        write: bool,
    },
    /// One of the metadata test's six phases: an operation, in sequential or random order.
    Metadata {
        op: crate::bench::plan::MetaOp,
        random: bool,
    },
}

/// One job: `workers` workers, each with `qd` I/Os of `bs` bytes in flight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Job {
    pub bs: u64,
    pub qd: u32,
    pub workers: u32,
    pub access: Access,
    pub mix: Mix,
    pub region_start: u64,
    pub region_len: u64,
    /// Sequential workers get disjoint slices of the region; random ones share all of it.
    pub split_region: bool,
    #[serde(serialize_with = "ser_opt_secs")]
    pub time: Option<Duration>,
    #[serde(serialize_with = "ser_secs")]
    pub warmup: Duration,
    /// I/Os each worker issues in the measured phase, if bounded.
    pub ops_per_worker: Option<u64>,
    pub sync: SyncMode,
    pub seed: u64,
    /// Rewrite of existing data (`--preserve`): each write first reads its block (untimed, not in
    /// the figures) and writes those bytes back.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rewrite: bool,
}

fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn ser_opt_secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

impl Job {
    /// The region of worker `w`: its own slice when split, else the whole region.
    pub fn worker_region(&self, w: u32) -> (u64, u64) {
        if !self.split_region || self.workers <= 1 {
            return (self.region_start, self.region_len);
        }
        let slice = (self.region_len / u64::from(self.workers)) / self.bs * self.bs;
        (self.region_start + u64::from(w) * slice, slice)
    }

    /// "QD8, 1 worker, 1M, forward read": the parameters in words.
    pub fn describe(&self) -> String {
        let dir = match self.mix {
            Mix::Read => "read".to_string(),
            Mix::Write => "write".to_string(),
            Mix::Mixed { read_pct } => format!("mixed {read_pct}% read"),
        };
        // First, so a narrow screen that cuts the line still shows it.
        let rewrite = if self.rewrite && self.writes() {
            format!("{REWRITE_LABEL}, ")
        } else {
            String::new()
        };
        format!(
            "{rewrite}bs {}, QD{}, {} worker{}, {} {}",
            Bytes(self.bs).short(),
            self.qd,
            self.workers,
            if self.workers == 1 { "" } else { "s" },
            self.access.as_str(),
            dir
        )
    }

    pub fn writes(&self) -> bool {
        self.mix.writes()
    }

    /// What its rates are over: the measured time, or a rewrite's write-busy time.
    pub fn time_base(&self) -> crate::bench::plan::TimeBase {
        crate::bench::plan::TimeBase::of(self.rewrite, self.mix.reads() && self.mix.writes())
    }
}

/// A phase of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Phase {
    /// Short label: "SEQ1M Q8T1 read", "64k rnd_rd".
    pub label: String,
    pub tag: PhaseTag,
    pub job: Job,
}

/// A validated test: what will run, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub test: TestName,
    pub phases: Vec<Phase>,
    pub direct: bool,
    /// I/O buffers and write data in transparent huge pages (`--huge-pages`): a large request is
    /// one piece for the kernel instead of one per 4 KiB page, so it is split less than dd's and
    /// fio's (a 1 MiB read from a loop device: one request, not two). Off by default, so figures
    /// match dd and fio on the same device; every output names it when on.
    pub huge_pages: bool,
    pub engine: EngineKind,
    pub data: DataKind,
    #[serde(serialize_with = "ser_secs")]
    pub interval: Duration,
    /// Things the admin should know about how the request was interpreted.
    pub notes: Vec<String>,
}

/// What a run with `--huge-pages` says among its notes (text, JSON).
pub const HUGE_PAGES_NOTE: &str = "HUGE PAGES: the I/O buffers are in 2 MiB pages \
     (--huge-pages), so a request of 1 MiB or more is one piece for the kernel; a device may \
     get fewer, larger requests than dd and fio send from their 4 KiB pages, and other figures";

/// "O_DIRECT" or "BUFFERED", with ", huge pages" under `--huge-pages`: the short form the
/// screens, the history and Compare show.
pub fn io_path_label(direct: bool, huge_pages: bool) -> &'static str {
    match (direct, huge_pages) {
        (true, false) => "O_DIRECT",
        (false, false) => "BUFFERED",
        (true, true) => "O_DIRECT, huge pages",
        (false, true) => "BUFFERED, huge pages",
    }
}

impl Plan {
    /// `io_path_label` of this plan.
    pub fn io_path_label(&self) -> &'static str {
        io_path_label(self.direct, self.huge_pages)
    }

    pub fn writes(&self) -> bool {
        self.phases.iter().any(|p| p.job.writes())
    }

    /// The kind of its phases, which lays out its results (tables, the TUI's chart or grid): a
    /// test's phases are all of one kind.
    pub fn kind(&self) -> Option<&PhaseTag> {
        self.phases.first().map(|p| &p.tag)
    }

    /// Its writes put back the data the blocks held (`--preserve`).
    pub fn rewrites(&self) -> bool {
        self.data.rewrites()
    }

    /// Largest request of any phase (sizes the data pattern).
    pub fn max_bs(&self) -> u64 {
        self.phases.iter().map(|p| p.job.bs).max().unwrap_or(0)
    }

    /// Expected duration when every phase is time-bounded (for ETA), else None.
    pub fn expected_duration(&self) -> Option<Duration> {
        self.phases
            .iter()
            .map(|p| p.job.time.map(|t| t + p.job.warmup))
            .sum()
    }
}

/// A request the plan cannot honour.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error(
        "request size {bs} is not a multiple of the {what}'s {lbs}-byte logical block size (O_DIRECT needs that)"
    )]
    Misaligned {
        bs: u64,
        lbs: u32,
        what: &'static str,
    },
    #[error("{what} {value} is not a multiple of the {lbs}-byte logical block size")]
    MisalignedRegion {
        what: &'static str,
        value: u64,
        lbs: u32,
    },
    #[error("the test region ({region}) is smaller than one request ({bs})")]
    RegionTooSmall { region: String, bs: String },
    #[error("{what} must be between {min} and {max}, not {value}")]
    OutOfRange {
        what: &'static str,
        value: u64,
        min: u64,
        max: u64,
    },
    #[error(
        "the region (offset {offset} + size {size}) goes past the end of the target ({target})"
    )]
    PastEnd { offset: u64, size: u64, target: u64 },
    #[error("nothing bounds the run: give --time, --io-size or --count")]
    Unbounded,
    #[error("the target is empty (size 0)")]
    EmptyTarget,
    /// The buffers would not fit in memory (the message says how much, and what to lower).
    #[error("{0}")]
    NotEnoughMemory(String),
    #[error("{0}")]
    Invalid(String),
}

pub(crate) fn check_range(
    what: &'static str,
    value: u64,
    min: u64,
    max: u64,
) -> Result<(), SpecError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(SpecError::OutOfRange {
            what,
            value,
            min,
            max,
        })
    }
}

/// The order in which a worker walks its region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Ascending offsets, wrapping at the region's end.
    Forward,
    /// Descending offsets from the region's end, wrapping at its start.
    Backward,
    /// Uniformly random block-aligned offsets.
    Random,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Forward => "forward",
            Access::Backward => "backward",
            Access::Random => "random",
        }
    }
}

/// Reads, writes, or a random mix of both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Mix {
    Read,
    Write,
    Mixed { read_pct: u8 },
}

impl Mix {
    /// Does it write? A mix of 100 % reads does not.
    pub fn writes(self) -> bool {
        !matches!(self, Mix::Read | Mix::Mixed { read_pct: 100.. })
    }

    pub fn reads(self) -> bool {
        !matches!(self, Mix::Write)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    Read,
    Write,
}

/// SplitMix64, the project's one generator (it lives in `model::units` so that the layers
/// below `bench` reach it too).
pub use crate::model::units::splitmix64;

/// What a phase does to each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MetaOp {
    Create,
    Stat,
    Delete,
}

impl MetaOp {
    pub fn as_str(self) -> &'static str {
        match self {
            MetaOp::Create => "create",
            MetaOp::Stat => "stat",
            MetaOp::Delete => "delete",
        }
    }

    /// Which direction of the statistics counts it: a stat reads, a create or delete writes.
    pub fn kind(self) -> OpKind {
        match self {
            MetaOp::Stat => OpKind::Read,
            MetaOp::Create | MetaOp::Delete => OpKind::Write,
        }
    }
}

/// What a phase's rates (MB/s, MiB/s, IOPS) are computed over. Written to JSON as
/// `"elapsed"`, `"write-busy"` or `"io-busy"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimeBase {
    /// The phase's measured time on the clock (every test but a rewrite).
    #[default]
    Elapsed,
    /// A rewrite (`--preserve`) that only writes: the time its writes were in flight, not the
    /// reads before them. Each I/O thread sums its write latencies and divides by its lanes
    /// (outstanding I/Os: 1 for a pread/pwrite thread, the QD for io_uring); the time base is the
    /// mean over the threads that wrote. At QD1 it is the sum of the write latencies; on either engine the IOPS
    /// are lanes over the mean write latency.
    WriteBusy,
    /// A rewrite in a phase that mixes reads and writes: the same rule over its timed I/O (never
    /// the reads that fetch a block to rewrite).
    IoBusy,
}

impl TimeBase {
    /// The time base of a phase that does (`rewrite`) or does not rewrite, with or without
    /// reads of its own (`mixed`).
    pub fn of(rewrite: bool, mixed: bool) -> TimeBase {
        match (rewrite, mixed) {
            (false, _) => TimeBase::Elapsed,
            (true, false) => TimeBase::WriteBusy,
            (true, true) => TimeBase::IoBusy,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TimeBase::Elapsed => "elapsed",
            TimeBase::WriteBusy => "write-busy",
            TimeBase::IoBusy => "io-busy",
        }
    }

    /// Is it the busy time of a rewrite's timed I/O?
    pub fn is_busy(self) -> bool {
        self != TimeBase::Elapsed
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DataKind {
    Random {
        seed: u64,
    },
    Zeros,
    /// Rewrite of existing data (`--preserve`): each write puts back what its read just returned,
    /// so there is no pattern to verify against.
    Rewrite,
}

impl DataKind {
    /// Writes put back what the blocks held.
    pub fn rewrites(self) -> bool {
        self == DataKind::Rewrite
    }
}
