//! The one table of test parameters: what the admin can set (`TestParams`, from the command
//! line or the test picker), each parameter's label, kind and flag (`PARAMS`), a test's
//! defaults (`Defaults`, owned by its family in `bench/family/`) and `resolve`, the one place
//! that fills in what the admin left out.

use std::time::Duration;

use super::catalog::TestName;
use super::spec::EngineKind;
use crate::sys::direct::SyncMode;

/// Default seed: runs repeat the same offsets and data unless asked otherwise (fio's
/// `randrepeat=1`, GNOME Disks' seed 42).
pub const DEFAULT_SEED: u64 = 0x6469_736b_7472_6961; // "disktria"

/// The sample interval of the series unless `--interval` says otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(250);

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
    pub zeros: bool,
    /// Rewrite of existing data: each write reads its block and writes the same bytes back
    /// (`--preserve`, GNOME Disks' way of timing writes on a disk that holds data).
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

/// A parameter of a run. Most are `TestParams` fields; `TempPoll` and `Repeats` belong to the
/// interactive session (how often the temperature is read, how often the test runs).
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
    /// Files the metadata test creates, stats and deletes.
    Files,
}

/// What kind of value a parameter takes, which decides how it is typed and shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bytes, typed with k/M/G/T suffixes.
    Size,
    /// A whole number.
    Count,
    /// A duration, typed with ms/s/m/h.
    Duration,
    /// 0 to 100.
    Percent,
    /// One of a few named choices (on/off, an engine); cycled, never typed.
    Choice,
    /// A comma-separated list of whole numbers.
    List,
}

/// A parameter's description: its label on the Test screen, its kind and its `run` flag.
#[derive(Debug, Clone, Copy)]
pub struct ParamInfo {
    pub param: Param,
    pub label: &'static str,
    pub kind: Kind,
    /// The `disktriage run` flag; `None` for settings only the interactive screen has.
    pub flag: Option<&'static str>,
}

/// Every parameter, once.
pub const PARAMS: [ParamInfo; 23] = [
    describe(Param::Bs, "request size", Kind::Size, Some("--bs")),
    describe(Param::Qd, "queue depth", Kind::Count, Some("--qd")),
    describe(Param::Jobs, "workers", Kind::Count, Some("--jobs")),
    describe(Param::Time, "duration", Kind::Duration, Some("--time")),
    describe(Param::Warmup, "warm-up", Kind::Duration, Some("--warmup")),
    describe(Param::Size, "region size", Kind::Size, Some("--size")),
    describe(Param::Offset, "region start", Kind::Size, Some("--offset")),
    describe(
        Param::Amount,
        "amount/worker",
        Kind::Size,
        Some("--io-size"),
    ),
    describe(Param::Count, "I/Os/worker", Kind::Count, Some("--count")),
    describe(Param::ReadPct, "read %", Kind::Percent, Some("--read-pct")),
    describe(
        Param::Interval,
        "interval",
        Kind::Duration,
        Some("--interval"),
    ),
    describe(Param::MinBs, "smallest size", Kind::Size, Some("--min-bs")),
    describe(Param::MaxBs, "largest size", Kind::Size, Some("--max-bs")),
    describe(Param::Qds, "queue depths", Kind::List, Some("--qds")),
    describe(Param::Writes, "write tests", Kind::Choice, Some("--write")),
    describe(Param::Data, "write data", Kind::Choice, Some("--zeros")),
    describe(Param::Sync, "sync writes", Kind::Choice, Some("--sync")),
    describe(Param::Seed, "seed", Kind::Count, Some("--seed")),
    describe(Param::TempPoll, "temperature", Kind::Choice, None),
    describe(Param::Repeats, "repeats", Kind::Count, None),
    describe(Param::Engine, "engine", Kind::Choice, Some("--engine")),
    describe(
        Param::Buffered,
        "I/O path",
        Kind::Choice,
        Some("--buffered"),
    ),
    describe(Param::Files, "files", Kind::Count, Some("--files")),
];

const fn describe(
    param: Param,
    label: &'static str,
    kind: Kind,
    flag: Option<&'static str>,
) -> ParamInfo {
    ParamInfo {
        param,
        label,
        kind,
        flag,
    }
}

impl Param {
    pub fn info(self) -> &'static ParamInfo {
        PARAMS
            .iter()
            .find(|i| i.param == self)
            .unwrap_or(&PARAMS[0])
    }

    pub fn label(self) -> &'static str {
        self.info().label
    }

    pub fn kind(self) -> Kind {
        self.info().kind
    }
}

/// The parameters every test takes, shown after the test's own on the Test screen.
pub const COMMON: [Param; 4] = [
    Param::Repeats,
    Param::TempPoll,
    Param::Engine,
    Param::Buffered,
];

/// A test's defaults: what a parameter the admin left out means. Each family says them for its
/// tests (`Family::defaults`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defaults {
    pub bs: u64,
    /// When the default request size is smaller than the logical block size, O_DIRECT cannot
    /// send it: use one block instead, and say so (sync-latency's 512 bytes on 4Kn).
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
    /// 1 MiB sequential at QD1 for 10 s after 1 s of warm-up: dd's test, the base of the
    /// others.
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

/// A request with its defaults applied: what a plan is built from. Nothing is validated here
/// (`spec::build_plan` does that).
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

/// `params` with `test`'s defaults filled in.
pub fn resolve(test: TestName, params: &TestParams) -> Resolved {
    let d = test.defaults();
    // An explicit --io-size or --count replaces the default time limit (and warm-up: dd's
    // semantics, nothing extra).
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
    /// Forgets the value of `param` (back to the test's default). Session settings
    /// (`TempPoll`, `Repeats`) are not held here and are left alone.
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
            Param::Data => {
                self.zeros = false;
                self.preserve = false;
            }
            Param::Sync => self.sync = None,
            Param::Seed => self.seed = None,
            Param::Engine => self.engine = EngineKind::default(),
            Param::Buffered => self.buffered = false,
            Param::Files => self.files = None,
            Param::TempPoll | Param::Repeats => {}
        }
    }

    /// Only the parameters in `keep`: what a test that takes those makes of these.
    pub fn only(&self, keep: &[Param]) -> TestParams {
        let mut p = self.clone();
        for info in &PARAMS {
            if !keep.contains(&info.param) {
                p.clear(info.param);
            }
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::catalog::CATALOG;

    #[test]
    fn every_parameter_is_described_once() {
        for (i, info) in PARAMS.iter().enumerate() {
            assert_eq!(info.param.info().label, info.label);
            assert!(
                PARAMS[i + 1..].iter().all(|o| o.param != info.param),
                "{:?} twice",
                info.param
            );
        }
    }

    #[test]
    fn every_flag_is_a_run_flag_with_the_same_name() {
        use clap::CommandFactory;
        let cli = crate::cli::Cli::command();
        let run = cli
            .find_subcommand("run")
            .expect("the run subcommand")
            .clone();
        for (info, flag) in PARAMS.iter().filter_map(|i| i.flag.map(|f| (i, f))) {
            let long = flag.trim_start_matches("--");
            assert!(
                run.get_arguments().any(|a| a.get_long() == Some(long)),
                "{:?}: no {flag} on `run`",
                info.param
            );
        }
    }

    #[test]
    fn the_defaults_the_run_help_names_are_the_families_defaults() {
        use crate::model::Bytes;
        use clap::CommandFactory;
        let cli = crate::cli::Cli::command();
        let run = cli.find_subcommand("run").expect("the run subcommand");
        let help = |long: &str| {
            run.get_arguments()
                .find(|a| a.get_long() == Some(long))
                .and_then(|a| a.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default()
        };
        let sizes = TestName::SizeSweep.defaults();
        let size = |b: u64| format!("(default {})", Bytes(b).short());
        assert!(
            help("min-bs").contains(&size(sizes.min_bs)),
            "{}",
            help("min-bs")
        );
        assert!(
            help("max-bs").contains(&size(sizes.max_bs)),
            "{}",
            help("max-bs")
        );
        let qds: Vec<String> = TestName::QdSweep
            .defaults()
            .qds
            .iter()
            .map(u32::to_string)
            .collect();
        assert!(
            help("qds").contains(&format!("(default {})", qds.join(","))),
            "{}",
            help("qds")
        );
        let mixed = TestName::RandMixed.defaults().read_pct;
        assert!(
            help("read-pct").contains(&format!("(default {mixed})")),
            "{}",
            help("read-pct")
        );
    }

    #[test]
    fn resolve_fills_in_the_tests_defaults_and_an_amount_replaces_the_time() {
        let r = resolve(TestName::RandMixed, &TestParams::default());
        assert_eq!((r.bs, r.qd, r.jobs, r.read_pct), (4 * KIB, 1, 1, 70));
        assert_eq!(r.time, Some(Duration::from_secs(10)));
        let counted = resolve(
            TestName::SeqRead,
            &TestParams {
                count: Some(5),
                ..TestParams::default()
            },
        );
        assert_eq!((counted.time, counted.warmup), (None, Duration::ZERO));
        let latency = resolve(TestName::SyncLatency, &TestParams::default());
        assert_eq!((latency.time, latency.count), (None, Some(1000)));
        assert_eq!(latency.sync, SyncMode::Dsync);
    }

    #[test]
    fn only_keeps_what_a_test_takes() {
        let p = TestParams {
            bs: Some(8192),
            read_pct: Some(50),
            buffered: true,
            ..TestParams::default()
        };
        let kept = p.only(&[Param::Bs, Param::Buffered]);
        assert_eq!(
            (kept.bs, kept.read_pct, kept.buffered),
            (Some(8192), None, true)
        );
        for t in &CATALOG {
            assert!(!t.name.params().is_empty(), "{}", t.id);
        }
    }
}
