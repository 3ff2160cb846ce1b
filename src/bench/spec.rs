//! From what the admin asked for (`TestParams`, raw overrides of a catalogue test) and what the
//! target is (`TargetFacts`) to a validated `Plan`: a list of phases, each one job of workers
//! with a request size, queue depth, pattern, region and bounds. This file holds the plan's
//! types and the checks every test shares; defaults come from `params::resolve` and each
//! test's phases from its family (`bench/family/`). Pure: no I/O, so every rule is unit-tested.

use std::time::Duration;

use serde::Serialize;

pub use crate::bench::catalog::family::size_sweep::sweep_column;
use crate::bench::catalog::family::{PlanContext, check_request_size};
use crate::bench::catalog::{CATALOG, TestName, Writes};
use crate::bench::exec::pattern::DataKind;
pub use crate::bench::plan::params::{DEFAULT_SEED, TestParams};
use crate::bench::plan::params::{Param, resolve};
use crate::bench::plan::{Access, Mix};
use crate::bench::results::stats::IntervalPoint;
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

/// Which I/O engine drives the workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// Chosen per phase by the runner: pread/pwrite at QD1, and at higher depths whichever of
    /// the two others a short probe at the start of the warm-up finds faster on this target.
    #[default]
    Auto,
    /// io_uring: one ring per worker keeps QD I/Os in flight from one thread.
    Uring,
    /// pread/pwrite: one thread per outstanding I/O.
    Sync,
}

impl EngineKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Auto => "auto",
            EngineKind::Uring => "io_uring",
            EngineKind::Sync => "sync",
        }
    }
}

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
        op: crate::bench::catalog::family::metadata::MetaOp,
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
    /// Rewrite of existing data (`--preserve`): each write first reads its block (not timed,
    /// not counted in the figures) and writes those same bytes back.
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
        // First, so that a narrow screen that cuts the line still shows it.
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
    pub fn time_base(&self) -> crate::bench::results::stats::TimeBase {
        crate::bench::results::stats::TimeBase::of(
            self.rewrite,
            self.mix.reads() && self.mix.writes(),
        )
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
    /// I/O buffers and write data in transparent huge pages (`--huge-pages`): a large request
    /// is then one piece for the kernel instead of one per 4 KiB page, and a device that takes
    /// fewer pieces per request than a request has pages splits it less than dd's and fio's
    /// (a 1 MiB read from a loop device: one request instead of two). Off by default, so the
    /// figures are those of dd and fio on the same device; every output names it when on.
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

/// "O_DIRECT" or "BUFFERED", with ", huge pages" when the buffers were (`--huge-pages`): the
/// short form the screens, the history and Compare show.
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

    /// The kind of its phases, which lays out its results (the report's tables, the TUI's
    /// chart or grid): a test's phases are all of one kind, whichever family planned them.
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

/// A test may use up to 1/MEMORY_SHARE_DIVISOR of the available memory: the rest stays for
/// the page cache, the TUI and everything else running on the machine.
pub const MEMORY_SHARE_DIVISOR: u64 = 2;

/// What a plan holds in memory while it runs, for the check made before anything is allocated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryNeed {
    /// Bytes at the run's peak: the largest phase's I/O buffers and histograms, the write
    /// data pattern and every phase's series.
    pub total: u64,
    /// The phase with the largest need: its request size, queue depth, workers and label.
    pub bs: u64,
    pub qd: u32,
    pub workers: u32,
    pub label: String,
}

impl Plan {
    /// The memory this plan allocates. Phases run one after another, each allocating its own
    /// buffers (request size in whole pages, huge ones from 1 MiB on with `--huge-pages`,
    /// x queue depth per worker,
    /// with either engine) and latency histograms (per I/O thread: one per direction being
    /// recorded and one in transit; per worker and per phase: the totals); the write pattern
    /// (period + largest request) and the series of every phase live for the whole run.
    pub fn memory_need(&self) -> MemoryNeed {
        let hist = crate::bench::results::stats::LatencyHistogram::footprint_bytes();
        let series = (crate::bench::exec::runner::SERIES_CAPACITY
            * std::mem::size_of::<IntervalPoint>()) as u64
            * self.phases.len() as u64;
        let pattern = if self.writes() && !self.rewrites() {
            (crate::bench::exec::pattern::PATTERN_PERIOD as u64).saturating_add(self.max_bs())
        } else {
            0
        };
        let phase_need = |j: &Job| {
            let workers = u64::from(j.workers);
            let threads = match self.engine {
                EngineKind::Uring => workers,
                // Auto may choose the threads: count the larger of the two.
                EngineKind::Sync | EngineKind::Auto => workers.saturating_mul(u64::from(j.qd)),
            };
            let histograms = threads
                .saturating_mul(4)
                .saturating_add(workers.saturating_mul(2))
                .saturating_add(8);
            crate::sys::direct::request_buffer_bytes(j.bs, self.huge_pages)
                .saturating_mul(u64::from(j.qd))
                .saturating_mul(workers)
                .saturating_add(histograms.saturating_mul(hist))
        };
        // The first of equally large phases is the one named.
        let largest = self
            .phases
            .iter()
            .rev()
            .max_by_key(|p| phase_need(&p.job))
            .map(|p| (phase_need(&p.job), p));
        let (need, bs, qd, workers, label) = match largest {
            Some((n, p)) => (n, p.job.bs, p.job.qd, p.job.workers, p.label.clone()),
            None => (0, 0, 0, 0, String::new()),
        };
        MemoryNeed {
            total: need.saturating_add(pattern).saturating_add(series),
            bs,
            qd,
            workers,
            label,
        }
    }
}

/// Refuses a plan whose memory need is larger than the share of `available` (MemAvailable)
/// a test may use. Unknown available memory refuses nothing.
pub fn check_memory(plan: &Plan, available: Option<u64>) -> Result<(), SpecError> {
    let Some(available) = available else {
        return Ok(());
    };
    let need = plan.memory_need();
    if need.total <= available / MEMORY_SHARE_DIVISOR {
        return Ok(());
    }
    let phase = if plan.phases.len() > 1 {
        format!(" in phase \"{}\"", need.label)
    } else {
        String::new()
    };
    let lower = plan.test.info().family.lower_hint();
    let others = if plan.writes() {
        ", write data and latency histograms"
    } else {
        " and latency histograms"
    };
    // With --huge-pages, from 1 MiB on a request's buffer is whole huge pages: say so where
    // that is more.
    let held = crate::sys::direct::request_buffer_bytes(need.bs, plan.huge_pages);
    let buffer = if plan.huge_pages && held > need.bs {
        format!(
            "{} in {} of huge pages",
            exact_size(need.bs),
            exact_size(held)
        )
    } else {
        exact_size(need.bs)
    };
    Err(SpecError::NotEnoughMemory(format!(
        "this test needs {} of memory for its I/O buffers ({buffer} x QD {} x {} worker{}{phase}){others}; \
         {} is available and a test may use half of it: lower {lower}",
        Bytes(need.total).iec(),
        need.qd,
        need.workers,
        if need.workers == 1 { "" } else { "s" },
        Bytes(available).iec(),
    )))
}

/// "256 MiB", "8 KiB", "1536 bytes": a request size as typed, without rounding.
fn exact_size(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
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

/// Checks the request and turns it into phases: the checks every test shares are made here,
/// then the test's family plans its phases (`bench/family/`).
pub fn build_plan(
    test: TestName,
    params: &TestParams,
    target: &TargetFacts,
    writes_allowed: bool,
) -> Result<Plan, SpecError> {
    if target.size == 0 {
        return Err(SpecError::EmptyTarget);
    }
    let defaults = test.defaults();
    let mut resolved = resolve(test, params);
    let mut notes = Vec::new();
    let direct = !params.buffered;
    // Direct I/O must be aligned to the logical block size; buffered I/O only to a byte.
    let lbs = if direct {
        target.logical_block_size.max(1)
    } else {
        1
    };
    let what = if target.is_file {
        "file system"
    } else {
        "device"
    };

    if defaults.bs_grows_to_block && params.bs.is_none() && resolved.bs < u64::from(lbs) {
        notes.push(format!(
            "{}-byte writes are impossible with O_DIRECT on a device with {lbs}-byte sectors: \
             using {lbs}-byte writes",
            defaults.bs
        ));
        resolved.bs = u64::from(lbs);
    }
    check_request_size(resolved.bs, lbs, what)?;
    check_range(
        "queue depth",
        u64::from(resolved.qd),
        1,
        u64::from(MAX_QUEUE_DEPTH),
    )?;
    check_range(
        "worker count",
        u64::from(resolved.jobs),
        1,
        u64::from(MAX_WORKERS),
    )?;
    if let Some(p) = params.read_pct {
        check_range("read percentage", u64::from(p), 0, 100)?;
        if !test.params().contains(&Param::ReadPct) {
            let takes: Vec<&str> = CATALOG
                .iter()
                .filter(|t| t.name.params().contains(&Param::ReadPct))
                .map(|t| t.id)
                .collect();
            return Err(SpecError::Invalid(format!(
                "--read-pct applies to {}, not {test}",
                takes.join(" and ")
            )));
        }
    }

    if params.preserve {
        if params.zeros {
            return Err(SpecError::Invalid(
                "--preserve writes back the data that is there; --zeros cannot go with it".into(),
            ));
        }
        if test.info().writes == Writes::Never {
            return Err(SpecError::Invalid(format!(
                "--preserve applies to tests that write; {test} only reads"
            )));
        }
        if test.info().family.directory_runner().is_some() {
            return Err(SpecError::Invalid(format!(
                "--preserve rewrites the blocks of a device or file in place; {test} creates \
                 and deletes files of its own, so there is nothing to preserve"
            )));
        }
    }
    if params.io_size == Some(0) || params.count == Some(0) {
        return Err(SpecError::Invalid(
            "--io-size and --count must be larger than 0".into(),
        ));
    }
    let offset = resolved.offset;
    if !offset.is_multiple_of(u64::from(lbs)) {
        return Err(SpecError::MisalignedRegion {
            what: "offset",
            value: offset,
            lbs,
        });
    }
    let size = resolved
        .size
        .unwrap_or_else(|| target.size.saturating_sub(offset));
    if offset.saturating_add(size) > target.size {
        return Err(SpecError::PastEnd {
            offset,
            size,
            target: target.size,
        });
    }
    check_range(
        "sample interval (ms)",
        resolved.interval.as_millis() as u64,
        10,
        60_000,
    )?;
    let phases = test.phases(&PlanContext {
        params,
        resolved: &resolved,
        lbs,
        what,
        region_start: offset,
        region_len: size,
        writes_allowed,
    })?;

    if let Some(max_req) = target.max_request
        && phases.iter().any(|p| p.job.bs > max_req)
    {
        notes.push(format!(
            "requests larger than {} are split by the kernel (queue/max_sectors_kb)",
            Bytes(max_req).short()
        ));
    }
    if !direct {
        notes.push(
            "BUFFERED: I/O goes through the page cache; results may not reflect the device".into(),
        );
    }
    if params.preserve && phases.iter().any(|p| p.job.writes()) {
        notes.push(REWRITE_NOTE.into());
    }
    if params.huge_pages {
        notes.push(HUGE_PAGES_NOTE.into());
    }

    let plan = Plan {
        test,
        phases,
        direct,
        huge_pages: params.huge_pages,
        engine: params.engine,
        data: if params.preserve {
            DataKind::Rewrite
        } else if params.zeros {
            DataKind::Zeros
        } else {
            DataKind::Random {
                seed: resolved.seed,
            }
        },
        interval: resolved.interval,
        notes,
    };
    // The one rule says whether this test writes; the phases built above must agree with it,
    // and either one writing without permission is refused.
    let must_write = test.writes_with(params) == Writes::Always;
    if (must_write || plan.writes()) && !writes_allowed {
        return Err(SpecError::Invalid(
            "this test writes: it needs the write confirmation".into(),
        ));
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::plan::params::MIB;

    use crate::bench::catalog::family::tests::{dev, plan};

    #[test]
    fn io_size_bounds_instead_of_time() {
        let params = TestParams {
            io_size: Some(200 * MIB),
            ..Default::default()
        };
        let j = &plan(TestName::SeqWrite, &params).unwrap().phases[0].job;
        assert_eq!(j.ops_per_worker, Some(200));
        assert_eq!(j.time, None);
        assert_eq!(j.warmup, Duration::ZERO, "dd semantics: nothing extra");
    }

    #[test]
    fn validation_errors() {
        let e = |p: TestParams| plan(TestName::RandRead, &p).unwrap_err().to_string();
        assert!(
            e(TestParams {
                bs: Some(1000),
                ..Default::default()
            })
            .contains("not a multiple")
        );
        assert!(
            e(TestParams {
                qd: Some(0),
                ..Default::default()
            })
            .contains("queue depth")
        );
        assert!(
            e(TestParams {
                jobs: Some(1000),
                ..Default::default()
            })
            .contains("worker count")
        );
        assert!(
            e(TestParams {
                size: Some(2 << 30),
                ..Default::default()
            })
            .contains("past the end")
        );
        assert!(
            e(TestParams {
                time: Some(Duration::ZERO),
                ..Default::default()
            })
            .contains("nothing bounds")
        );
        assert!(
            e(TestParams {
                size: Some(2048),
                ..Default::default()
            })
            .contains("smaller than one request")
        );
        assert!(
            e(TestParams {
                offset: Some(100),
                ..Default::default()
            })
            .contains("offset 100")
        );
        let empty = build_plan(
            TestName::SeqRead,
            &TestParams::default(),
            &dev(0, 512),
            true,
        );
        assert_eq!(empty.unwrap_err(), SpecError::EmptyTarget);
    }

    #[test]
    fn writes_need_permission() {
        let err = build_plan(
            TestName::SeqWrite,
            &TestParams::default(),
            &dev(1 << 30, 512),
            false,
        )
        .unwrap_err();
        assert!(err.to_string().contains("needs the write confirmation"));
        // CrystalDiskMark without permission runs its reads and says why writes are missing.
        let cdm = build_plan(
            TestName::Cdm,
            &TestParams::default(),
            &dev(1 << 30, 512),
            false,
        )
        .unwrap();
        assert_eq!(cdm.phases.len(), 4);
        assert!(!cdm.writes());
    }

    #[test]
    fn plans_write_exactly_when_the_one_rule_says_so() {
        use crate::bench::catalog::CATALOG;
        for t in &CATALOG {
            let pcts: &[Option<u8>] = match t.name {
                TestName::RandMixed | TestName::QdSweep => &[None, Some(0), Some(50), Some(100)],
                _ => &[None],
            };
            for &read_pct in pcts {
                for include_writes in [false, true] {
                    let params = TestParams {
                        read_pct,
                        include_writes,
                        count: Some(4),
                        ..Default::default()
                    };
                    let build = |allowed| build_plan(t.name, &params, &dev(1 << 30, 512), allowed);
                    let case = format!("{} {read_pct:?} include_writes={include_writes}", t.id);
                    match t.name.writes_with(&params) {
                        Writes::Never => {
                            assert!(!build(false).unwrap().writes(), "{case}");
                            assert!(!build(true).unwrap().writes(), "{case}");
                        }
                        Writes::Always => {
                            let err = build(false).unwrap_err().to_string();
                            assert!(err.contains("needs the write confirmation"), "{case}");
                            assert!(build(true).unwrap().writes(), "{case}");
                        }
                        Writes::Optional => {
                            assert!(!build(false).unwrap().writes(), "{case}");
                            assert!(build(true).unwrap().writes(), "{case}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn buffers_larger_than_half_the_available_memory_are_refused() {
        const GIB: u64 = 1 << 30;
        let big = |test, p: TestParams| build_plan(test, &p, &dev(1 << 40, 512), true).unwrap();
        let p = big(
            TestName::SeqRead,
            TestParams {
                bs: Some(256 * MIB),
                qd: Some(1024),
                engine: EngineKind::Uring,
                ..Default::default()
            },
        );
        let need = p.memory_need();
        assert!(need.total >= 256 * GIB && need.total < 256 * GIB + 64 * MIB);
        let available = 11 * GIB + 900 * MIB;
        let err = check_memory(&p, Some(available)).unwrap_err();
        assert!(matches!(err, SpecError::NotEnoughMemory(_)));
        assert_eq!(
            err.to_string(),
            "this test needs 256.0 GiB of memory for its I/O buffers (256 MiB x QD 1024 x 1 \
             worker) and latency histograms; 11.9 GiB is available and a test may use half of \
             it: lower the request size (--bs), queue depth (--qd) or workers (--jobs)"
        );
        assert_eq!(
            check_memory(&p, None),
            Ok(()),
            "unknown memory refuses nothing"
        );
        // Half of the available memory is the limit.
        assert_eq!(check_memory(&p, Some(2 * need.total)), Ok(()));
        assert!(check_memory(&p, Some(2 * need.total - 2)).is_err());

        // Defaults fit anywhere: 1 MiB x QD1 and a few histograms.
        let small = big(TestName::SeqWrite, TestParams::default());
        assert!(small.memory_need().total < 16 * MIB);
        assert_eq!(check_memory(&small, Some(64 * MIB)), Ok(()));

        // Workers multiply, and the write pattern (its period + the largest request) counts.
        let w = big(
            TestName::RandWrite,
            TestParams {
                bs: Some(MIB),
                qd: Some(64),
                jobs: Some(16),
                ..Default::default()
            },
        );
        let need = w.memory_need();
        assert!(need.total >= 1024 * MIB + 2 * MIB, "{}", need.total);
        let err = check_memory(&w, Some(GIB)).unwrap_err().to_string();
        assert!(
            err.contains("(1 MiB x QD 64 x 16 workers), write data and latency histograms"),
            "{err}"
        );
        // With --huge-pages a 1 MiB buffer takes a whole 2 MiB page, and the message says so.
        let huge = big(
            TestName::RandWrite,
            TestParams {
                bs: Some(MIB),
                qd: Some(64),
                jobs: Some(16),
                huge_pages: true,
                ..Default::default()
            },
        );
        // 1024 buffers of 2 MiB instead of 1 MiB.
        assert_eq!(huge.memory_need().total - need.total, 1024 * MIB);
        let err = check_memory(&huge, Some(GIB)).unwrap_err().to_string();
        assert!(
            err.contains(
                "(1 MiB in 2 MiB of huge pages x QD 64 x 16 workers), write data and latency \
                 histograms"
            ),
            "{err}"
        );

        // Sweeps: the largest phase decides and is named, with what to lower for that test.
        let sweep = big(
            TestName::QdSweep,
            TestParams {
                qds: Some(vec![1, 1024]),
                jobs: Some(8),
                engine: EngineKind::Uring,
                ..Default::default()
            },
        );
        let err = check_memory(&sweep, Some(8 * GIB)).unwrap_err().to_string();
        assert!(
            err.contains(
                "needs 8.0 GiB of memory for its I/O buffers (1 MiB x QD 1024 x 8 workers in \
                 phase \"large sequential QD1024\")"
            ),
            "{err}"
        );
        assert!(
            err.ends_with("queue depths (--qds) or workers (--jobs)"),
            "{err}"
        );
        let sizes = big(
            TestName::SizeSweep,
            TestParams {
                min_bs: Some(4096),
                max_bs: Some(256 * MIB),
                qd: Some(64),
                ..Default::default()
            },
        );
        let err = check_memory(&sizes, Some(16 * GIB))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("(256 MiB x QD 64 x 1 worker in phase \"256M fwd_rd\")"),
            "{err}"
        );
        assert!(err.contains("lower the largest size (--max-bs)"), "{err}");

        // The synchronous engine has a thread, with its histograms, per outstanding I/O.
        let threads = |engine| {
            big(
                TestName::RandRead,
                TestParams {
                    qd: Some(1024),
                    jobs: Some(64),
                    engine,
                    ..Default::default()
                },
            )
            .memory_need()
            .total
        };
        assert!(threads(EngineKind::Sync) > threads(EngineKind::Uring) + 10 * GIB);
    }

    #[test]
    fn preserve_rewrites_every_write_and_nothing_else() {
        use crate::bench::catalog::CATALOG;
        let preserve = TestParams {
            preserve: true,
            include_writes: true,
            read_pct: None,
            count: Some(4),
            ..Default::default()
        };
        // Tests of a directory (metadata) refuse --preserve: see the test below.
        for t in CATALOG
            .iter()
            .filter(|t| t.writes != Writes::Never && t.family.directory_runner().is_none())
        {
            let mut params = preserve.clone();
            if t.name == TestName::QdSweep {
                params.read_pct = Some(50);
            }
            let p = build_plan(t.name, &params, &dev(1 << 30, 512), true).unwrap();
            assert!(p.writes() && p.rewrites(), "{}", t.id);
            assert_eq!(p.data, DataKind::Rewrite, "{}", t.id);
            for phase in &p.phases {
                // Exactly the phases that write rewrite; the reads of a preset stay reads.
                assert_eq!(
                    phase.job.rewrite,
                    phase.job.writes(),
                    "{} {}",
                    t.id,
                    phase.label
                );
                if phase.job.writes() {
                    assert!(
                        phase.job.describe().starts_with(REWRITE_LABEL),
                        "{}",
                        phase.job.describe()
                    );
                }
            }
            assert!(
                p.notes.iter().any(|n| n.starts_with(REWRITE_LABEL)),
                "{}",
                t.id
            );
            // No write pattern is allocated for it (nor counted against memory).
            let plain = build_plan(
                t.name,
                &TestParams {
                    preserve: false,
                    ..params.clone()
                },
                &dev(1 << 30, 512),
                true,
            )
            .unwrap();
            assert!(
                p.memory_need().total < plain.memory_need().total,
                "{}",
                t.id
            );
            // The confirmation is still needed where it was.
            if t.writes == Writes::Always {
                let err = build_plan(t.name, &params, &dev(1 << 30, 512), false).unwrap_err();
                assert!(err.to_string().contains("write confirmation"), "{}", t.id);
            }
        }
        // Without permission CrystalDiskMark runs its reads: nothing to rewrite, no note.
        let reads_only = TestParams {
            include_writes: false,
            ..preserve
        };
        let cdm = build_plan(TestName::Cdm, &reads_only, &dev(1 << 30, 512), false).unwrap();
        assert!(!cdm.writes() && cdm.notes.is_empty());
        assert!(cdm.phases.iter().all(|p| !p.job.rewrite));
    }

    #[test]
    fn preserve_is_refused_where_it_means_nothing() {
        let e = |test, p: TestParams| plan(test, &p).unwrap_err().to_string();
        let both = TestParams {
            preserve: true,
            zeros: true,
            ..Default::default()
        };
        assert!(e(TestName::SeqWrite, both).contains("--zeros cannot go with it"));
        let read = TestParams {
            preserve: true,
            ..Default::default()
        };
        assert_eq!(
            e(TestName::RandRead, read.clone()),
            "--preserve applies to tests that write; rand-read only reads"
        );
        assert!(
            e(TestName::Metadata, read).contains("creates and deletes files of its own"),
            "metadata has no blocks to preserve"
        );
    }

    #[test]
    fn buffered_is_labelled_and_unaligned_allowed() {
        let p = plan(
            TestName::SeqRead,
            &TestParams {
                buffered: true,
                bs: Some(1000),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(!p.direct);
        assert!(p.notes.iter().any(|n| n.starts_with("BUFFERED")));
    }
}
