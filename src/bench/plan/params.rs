//! The parameters of a run, without the Test screen's semantics (`app::params`): what the admin
//! can set (`TestParams`), the parameters' names (`Param`), a test's defaults (`Defaults`,
//! owned by its family in `catalog/family/`) and `resolve_with`, the one place that fills in
//! what the admin left out.

use std::time::Duration;

use crate::sys::direct::SyncMode;

/// Default seed: runs repeat the same offsets and data unless asked otherwise (fio's
/// `randrepeat=1`, GNOME Disks' seed 42).
pub const DEFAULT_SEED: u64 = 0x6469_736b_7472_6961; // "disktria"

/// The sample interval of the series unless `--interval` says otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(250);

pub use super::engine_kind::EngineKind;

/// The admin's overrides; `None` keeps the test's default.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TestParams {
    pub bs: Option<u64>,
    pub qd: Option<u32>,
    pub jobs: Option<u32>,
    pub time: Option<Duration>,
    pub warmup: Option<Duration>,
    /// Bytes of the target the test may use (CrystalDiskMark's test size).
    pub size: Option<u64>,
    pub offset: Option<u64>,
    /// Bytes each worker transfers (fio's io_size, dd's bs x count).
    pub io_size: Option<u64>,
    /// I/Os each worker issues.
    pub count: Option<u64>,
    pub read_pct: Option<u8>,
    pub interval: Option<Duration>,
    pub buffered: bool,
    /// I/O buffers in huge pages (`--huge-pages`; see `Plan::huge_pages`).
    pub huge_pages: bool,
    pub zeros: bool,
    /// Rewrite of existing data (`--preserve`, GNOME Disks' way of timing writes on a disk that
    /// holds data): see `Job::rewrite`.
    pub preserve: bool,
    pub sync: Option<SyncMode>,
    pub engine: EngineKind,
    pub min_bs: Option<u64>,
    pub max_bs: Option<u64>,
    pub qds: Option<Vec<u32>>,
    /// Include the write half of optional-write tests (sweeps, CrystalDiskMark).
    pub include_writes: bool,
    pub seed: Option<u64>,
    /// Files the metadata test creates, stats and deletes.
    pub files: Option<u64>,
}

/// A parameter of a run. Most are `TestParams` fields; `TempPoll` and `Repeats` are the
/// interactive session's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    Bs,
    Qd,
    Jobs,
    Time,
    Warmup,
    Size,
    Offset,
    /// Bytes each worker transfers (replaces the duration).
    Amount,
    Count,
    ReadPct,
    Interval,
    MinBs,
    MaxBs,
    Qds,
    /// The write half of sweeps and CrystalDiskMark.
    Writes,
    /// Random (incompressible) or zero data for writes.
    Data,
    Sync,
    Seed,
    /// How often the drive's temperature is read during the run.
    TempPoll,
    Repeats,
    Engine,
    Buffered,
    /// I/O buffers in 4 KiB pages (as dd's and fio's) or huge pages.
    HugePages,
    /// Files the metadata test creates, stats and deletes.
    Files,
}

impl Param {
    /// Every parameter, in the order of the enum.
    pub const ALL: [Param; 24] = [
        Param::Bs,
        Param::Qd,
        Param::Jobs,
        Param::Time,
        Param::Warmup,
        Param::Size,
        Param::Offset,
        Param::Amount,
        Param::Count,
        Param::ReadPct,
        Param::Interval,
        Param::MinBs,
        Param::MaxBs,
        Param::Qds,
        Param::Writes,
        Param::Data,
        Param::Sync,
        Param::Seed,
        Param::TempPoll,
        Param::Repeats,
        Param::Engine,
        Param::Buffered,
        Param::HugePages,
        Param::Files,
    ];
}

/// The parameters every test takes, shown after the test's own on the Test screen.
pub const COMMON: [Param; 5] = [
    Param::Repeats,
    Param::TempPoll,
    Param::Engine,
    Param::Buffered,
    Param::HugePages,
];

/// A test's defaults: what a parameter the admin left out means (`Family::defaults`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defaults {
    pub bs: u64,
    /// A default request smaller than the logical block cannot go O_DIRECT: use one block and
    /// say so (sync-latency's 512 bytes on 4Kn).
    pub bs_grows_to_block: bool,
    pub qd: u32,
    pub jobs: u32,
    /// `None`: the run is bounded by `count`.
    pub time: Option<Duration>,
    pub warmup: Duration,
    pub count: Option<u64>,
    pub sync: SyncMode,
    pub read_pct: u8,
    pub min_bs: u64,
    pub max_bs: u64,
    pub qds: &'static [u32],
    /// Files the metadata test creates (bonnie++ -n 16: 16 x 1024).
    pub files: u64,
}

pub const KIB: u64 = 1024;
pub const MIB: u64 = 1024 * 1024;

impl Defaults {
    /// 1 MiB sequential at QD1 for 10 s after 1 s of warm-up: dd's test, the base of the others.
    pub const BASE: Defaults = Defaults {
        bs: MIB,
        bs_grows_to_block: false,
        qd: 1,
        jobs: 1,
        time: Some(Duration::from_secs(10)),
        warmup: Duration::from_secs(1),
        count: None,
        sync: SyncMode::None,
        read_pct: 100,
        min_bs: 4 * KIB,
        max_bs: MIB,
        qds: &[1, 2, 4, 8, 16, 32],
        files: 16 * 1024,
    };
}

/// A request with its defaults applied, not validated (`catalog::build::build_plan` does).
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub bs: u64,
    pub qd: u32,
    pub jobs: u32,
    /// The measured time of each phase; `None` when an amount bounds it.
    pub time: Option<Duration>,
    pub warmup: Duration,
    /// I/Os per worker (`--count`, or the test's default count).
    pub count: Option<u64>,
    /// Bytes per worker.
    pub io_size: Option<u64>,
    /// The admin gave `--io-size` or `--count`: it replaces the default time limit.
    pub explicit_amount: bool,
    pub read_pct: u8,
    pub sync: SyncMode,
    pub seed: u64,
    pub interval: Duration,
    pub offset: u64,
    /// `None`: from the offset to the end of the target.
    pub size: Option<u64>,
    pub min_bs: u64,
    pub max_bs: u64,
    pub qds: Vec<u32>,
    pub files: u64,
}

/// `params` with a test's defaults `d` filled in (`catalog::resolve` finds the test's).
pub fn resolve_with(d: &Defaults, params: &TestParams) -> Resolved {
    // An explicit --io-size or --count replaces the default time limit and warm-up (dd's way).
    let explicit_amount = params.io_size.is_some() || params.count.is_some();
    let time = match params.time {
        Some(t) if t.is_zero() => None,
        Some(t) => Some(t),
        None if explicit_amount => None,
        None => d.time,
    };
    let warmup = params.warmup.unwrap_or(if explicit_amount {
        Duration::ZERO
    } else {
        d.warmup
    });
    Resolved {
        bs: params.bs.unwrap_or(d.bs),
        qd: params.qd.unwrap_or(d.qd),
        jobs: params.jobs.unwrap_or(d.jobs),
        time,
        warmup,
        count: params.count.or(d.count),
        io_size: params.io_size,
        explicit_amount,
        read_pct: params.read_pct.unwrap_or(d.read_pct),
        sync: params.sync.unwrap_or(d.sync),
        seed: params.seed.unwrap_or(DEFAULT_SEED),
        interval: params.interval.unwrap_or(DEFAULT_INTERVAL),
        offset: params.offset.unwrap_or(0),
        size: params.size,
        min_bs: params.min_bs.unwrap_or(d.min_bs),
        max_bs: params.max_bs.unwrap_or(d.max_bs),
        qds: params.qds.clone().unwrap_or_else(|| d.qds.to_vec()),
        files: params.files.unwrap_or(d.files),
    }
}

impl TestParams {
    /// Leaves `param` to the test's default. `TempPoll` and `Repeats` are not held here.
    pub fn clear(&mut self, param: Param) {
        match param {
            Param::Bs => self.bs = None,
            Param::Qd => self.qd = None,
            Param::Jobs => self.jobs = None,
            Param::Time => self.time = None,
            Param::Warmup => self.warmup = None,
            Param::Size => self.size = None,
            Param::Offset => self.offset = None,
            Param::Amount => self.io_size = None,
            Param::Count => self.count = None,
            Param::ReadPct => self.read_pct = None,
            Param::Interval => self.interval = None,
            Param::MinBs => self.min_bs = None,
            Param::MaxBs => self.max_bs = None,
            Param::Qds => self.qds = None,
            Param::Writes => self.include_writes = false,
            Param::Data => (self.zeros, self.preserve) = (false, false),
            Param::Sync => self.sync = None,
            Param::Seed => self.seed = None,
            Param::Engine => self.engine = EngineKind::default(),
            Param::Buffered => self.buffered = false,
            Param::HugePages => self.huge_pages = false,
            Param::Files => self.files = None,
            Param::TempPoll | Param::Repeats => {}
        }
    }

    /// Only the parameters in `keep`: what a test that takes those makes of these.
    pub fn only(&self, keep: &[Param]) -> TestParams {
        let mut p = self.clone();
        for param in Param::ALL.into_iter().filter(|p| !keep.contains(p)) {
            p.clear(param);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parameter_is_listed_once() {
        for (i, p) in Param::ALL.iter().enumerate() {
            assert!(!Param::ALL[i + 1..].contains(p), "{p:?} twice");
        }
    }

    #[test]
    fn clear_leaves_a_parameter_to_its_default() {
        let mut p = TestParams {
            bs: Some(8192),
            read_pct: Some(50),
            zeros: true,
            engine: crate::bench::exec::engines::URING,
            ..TestParams::default()
        };
        p.clear(Param::Bs);
        p.clear(Param::Data);
        p.clear(Param::Engine);
        p.clear(Param::Repeats);
        assert_eq!(
            p,
            TestParams {
                read_pct: Some(50),
                ..TestParams::default()
            }
        );
    }
}
