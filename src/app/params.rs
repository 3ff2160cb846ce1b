//! The Test screen's table of parameters (`PARAMS`, one `ParamInfo` each), where their values
//! are held (`Values`) and what Left/Right do (`Steps`). The run's parameters themselves, and
//! what leaving one out means, are `bench::plan::params`.

use std::time::Duration;

use crate::bench::exec::engines;
use crate::bench::plan::params::{Defaults, EngineKind, Param, TestParams};
use crate::model::{Bytes, TimeSpan};
use crate::sys::direct::SyncMode;

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

/// A parameter's value as the Test screen holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Num(u64),
    Time(Duration),
    /// One of a choice's values, by its place in the choice's order (0 is the default).
    Pick(usize),
    List(Vec<u32>),
}

impl Value {
    pub fn num(self) -> Option<u64> {
        match self {
            Value::Num(n) => Some(n),
            _ => None,
        }
    }

    pub fn time(self) -> Option<Duration> {
        match self {
            Value::Time(t) => Some(t),
            _ => None,
        }
    }

    /// The chosen place; anything but a pick is the first (the default).
    pub fn pick(self) -> usize {
        match self {
            Value::Pick(i) => i,
            _ => 0,
        }
    }

    pub fn list(self) -> Option<Vec<u32>> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }
}

/// The value of every parameter the Test screen sets: the run's `TestParams` plus the
/// session's settings (how often the test runs, how often the temperature is read).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Values {
    pub params: TestParams,
    /// `None` is the default (5 s on SATA/NVMe, off elsewhere); zero means off.
    pub temp_poll: Option<Duration>,
    pub repeats: u32,
}

/// How often a test runs unless the admin says otherwise.
pub const DEFAULT_REPEATS: u32 = 1;

impl Values {
    pub fn new() -> Self {
        Values {
            repeats: DEFAULT_REPEATS,
            ..Values::default()
        }
    }
}

/// What Left/Right do to a parameter on the Test screen.
#[derive(Debug, Clone, Copy)]
pub enum Steps {
    /// The default first, then each of these, and round again.
    Cycle(&'static [Value]),
    /// One up or down within `min..=max` (typed values too); the default counts as `min`.
    Within(u64, u64),
}

/// What the Test screen shows for a parameter the admin left out.
#[derive(Debug, Clone, Copy)]
pub enum Fallback {
    /// The test's default (from its family's `Defaults`), shown as a set value is.
    Test(fn(&Defaults) -> Value),
    /// What leaving it out means, in words.
    Text(&'static str),
    /// Worked out from the test's defaults.
    Said(fn(&Defaults) -> String),
}

/// How the Test screen steps, checks and shows a parameter.
#[derive(Debug, Clone, Copy)]
pub struct Form {
    pub steps: Steps,
    /// A typed number below this is refused, with the reason.
    pub min: u64,
    pub show: fn(&Value) -> String,
    pub fallback: Fallback,
}

impl Form {
    const fn cycle(
        steps: &'static [Value],
        show: fn(&Value) -> String,
        fallback: Fallback,
    ) -> Form {
        Form {
            steps: Steps::Cycle(steps),
            min: 0,
            show,
            fallback,
        }
    }

    const fn at_least(self, min: u64) -> Form {
        Form { min, ..self }
    }
}

/// A parameter's description: its label on the Test screen, its kind, its `run` flag, where
/// its value is held and how the Test screen steps, checks and shows it.
#[derive(Debug, Clone, Copy)]
pub struct ParamInfo {
    pub param: Param,
    pub label: &'static str,
    pub kind: Kind,
    /// The `disktriage run` flag; `None` for settings only the interactive screen has.
    pub flag: Option<&'static str>,
    /// The value set, `None` when left to the default.
    pub get: fn(&Values) -> Option<Value>,
    /// Sets the value; `None` goes back to the default.
    pub set: fn(&mut Values, Option<Value>),
    /// `None`: only the command line sets it.
    pub form: Option<Form>,
}

impl ParamInfo {
    /// A typed value, checked as it is typed: the error says what was expected.
    pub fn parse(&self, text: &str) -> Result<Value, String> {
        let label = self.label;
        let whole = || {
            text.parse::<u32>()
                .map(u64::from)
                .map_err(|_| format!("{label} must be a whole number, not {text:?}"))
        };
        let value = match self.kind {
            Kind::Size => Value::Num(text.parse::<Bytes>().map_err(|e| e.to_string())?.0),
            Kind::Count => Value::Num(whole()?),
            Kind::Percent => match whole()? {
                pct if pct > 100 => return Err(format!("{label} is between 0 and 100")),
                pct => Value::Num(pct),
            },
            Kind::Duration => Value::Time(text.parse::<TimeSpan>().map_err(|e| e.to_string())?.0),
            Kind::Choice | Kind::List => {
                return Err(format!("{label} is chosen with Left/Right, not typed"));
            }
        };
        match (self.form, value) {
            (
                Some(Form {
                    steps: Steps::Within(lo, hi),
                    ..
                }),
                Value::Num(n),
            ) => Ok(Value::Num(n.clamp(lo, hi))),
            (Some(f), Value::Num(n)) if n < f.min => {
                Err(format!("{label} must be at least {}", f.min))
            }
            (_, v) => Ok(v),
        }
    }
}

const SIZES: &[Value] = &[
    Value::Num(512),
    Value::Num(4 << 10),
    Value::Num(8 << 10),
    Value::Num(16 << 10),
    Value::Num(32 << 10),
    Value::Num(64 << 10),
    Value::Num(128 << 10),
    Value::Num(256 << 10),
    Value::Num(512 << 10),
    Value::Num(1 << 20),
    Value::Num(2 << 20),
    Value::Num(4 << 20),
    Value::Num(8 << 20),
    Value::Num(16 << 20),
];
const DEPTHS: &[Value] = &[
    Value::Num(1),
    Value::Num(2),
    Value::Num(4),
    Value::Num(8),
    Value::Num(16),
    Value::Num(32),
    Value::Num(64),
    Value::Num(128),
    Value::Num(256),
];
const WORKERS: &[Value] = &[
    Value::Num(1),
    Value::Num(2),
    Value::Num(3),
    Value::Num(4),
    Value::Num(8),
    Value::Num(16),
    Value::Num(32),
];
const TIMES: &[Value] = &[
    Value::Time(Duration::from_secs(1)),
    Value::Time(Duration::from_secs(2)),
    Value::Time(Duration::from_secs(3)),
    Value::Time(Duration::from_secs(5)),
    Value::Time(Duration::from_secs(10)),
    Value::Time(Duration::from_secs(30)),
    Value::Time(Duration::from_secs(60)),
    Value::Time(Duration::from_secs(300)),
];
const WARMUPS: &[Value] = &[
    Value::Time(Duration::ZERO),
    Value::Time(Duration::from_millis(250)),
    Value::Time(Duration::from_millis(500)),
    Value::Time(Duration::from_secs(1)),
    Value::Time(Duration::from_secs(2)),
    Value::Time(Duration::from_secs(5)),
];
const REGIONS: &[Value] = &[
    Value::Num(64 << 20),
    Value::Num(256 << 20),
    Value::Num(1 << 30),
    Value::Num(4 << 30),
    Value::Num(16 << 30),
    Value::Num(64 << 30),
    Value::Num(256 << 30),
];
const AMOUNTS: &[Value] = &[
    Value::Num(16 << 20),
    Value::Num(64 << 20),
    Value::Num(200 << 20),
    Value::Num(1 << 30),
    Value::Num(4 << 30),
    Value::Num(16 << 30),
];
/// Between temperature reads; zero is off.
const TEMP_POLLS: &[Value] = &[
    Value::Time(Duration::ZERO),
    Value::Time(Duration::from_secs(1)),
    Value::Time(Duration::from_secs(2)),
    Value::Time(Duration::from_secs(5)),
    Value::Time(Duration::from_secs(10)),
    Value::Time(Duration::from_secs(30)),
];
/// Files of the metadata test: bonnie++'s -n 1, 4, 16, 64 and 128 (x 1024).
const FILES: &[Value] = &[
    Value::Num(1024),
    Value::Num(4096),
    Value::Num(16384),
    Value::Num(65536),
    Value::Num(131072),
];
const PCTS: &[Value] = &[
    Value::Num(0),
    Value::Num(10),
    Value::Num(20),
    Value::Num(30),
    Value::Num(40),
    Value::Num(50),
    Value::Num(60),
    Value::Num(70),
    Value::Num(80),
    Value::Num(90),
    Value::Num(100),
];
/// The second choice of a two-way choice (the first is the default).
const OTHER: &[Value] = &[Value::Pick(1)];
/// The second and third choices of a three-way choice.
const OTHERS: &[Value] = &[Value::Pick(1), Value::Pick(2)];

/// The engines in the order the Test screen cycles them (the default first).
const ENGINES: &[EngineKind] = engines::ALL;
/// Write data: random, zeros, or the rewrite of existing data (`--preserve`).
const DATA: [&str; 3] = [
    "random (incompressible)",
    "zeros",
    "rewrite existing (--preserve)",
];
const WRITES: [&str; 2] = ["left out", "included"];
const PATHS: [&str; 2] = ["O_DIRECT", "BUFFERED (page cache)"];
const PAGES: [&str; 2] = ["4 KiB pages, as dd and fio", "huge pages (fewer requests)"];
const SYNCS: [SyncMode; 3] = [SyncMode::None, SyncMode::Dsync, SyncMode::Sync];

/// A duration in whole seconds when it is one ("10s"), else in milliseconds ("250ms").
pub fn secs(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

fn plain(v: &Value) -> String {
    match v {
        Value::Num(n) => n.to_string(),
        Value::Time(t) => secs(*t),
        Value::Pick(i) => i.to_string(),
        Value::List(l) => l.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
    }
}

fn short(v: &Value) -> String {
    Bytes(v.clone().num().unwrap_or(0)).short()
}

fn iec(v: &Value) -> String {
    Bytes(v.clone().num().unwrap_or(0)).iec()
}

fn named(names: &[&str], v: &Value) -> String {
    names
        .get(v.clone().pick())
        .or(names.first())
        .map_or_else(String::new, |s| (*s).to_string())
}

fn num32(x: Option<Value>) -> Option<u32> {
    x.and_then(Value::num).and_then(|n| u32::try_from(n).ok())
}

fn num_value(n: impl Into<u64>) -> Value {
    Value::Num(n.into())
}

/// A choice held as `place`: `None` when it is the first (the default).
fn picked(place: usize) -> Option<Value> {
    (place != 0).then_some(Value::Pick(place))
}

/// Every parameter, once.
pub const PARAMS: [ParamInfo; 24] = [
    ParamInfo {
        param: Param::Bs,
        label: "request size",
        kind: Kind::Size,
        flag: Some("--bs"),
        get: |v| v.params.bs.map(Value::Num),
        set: |v, x| v.params.bs = x.and_then(Value::num),
        form: Some(Form::cycle(
            SIZES,
            short,
            Fallback::Test(|d| Value::Num(d.bs)),
        )),
    },
    ParamInfo {
        param: Param::Qd,
        label: "queue depth",
        kind: Kind::Count,
        flag: Some("--qd"),
        get: |v| v.params.qd.map(num_value),
        set: |v, x| v.params.qd = num32(x),
        form: Some(Form::cycle(
            DEPTHS,
            plain,
            Fallback::Test(|d| num_value(d.qd)),
        )),
    },
    ParamInfo {
        param: Param::Jobs,
        label: "workers",
        kind: Kind::Count,
        flag: Some("--jobs"),
        get: |v| v.params.jobs.map(num_value),
        set: |v, x| v.params.jobs = num32(x),
        form: Some(Form::cycle(
            WORKERS,
            plain,
            Fallback::Test(|d| num_value(d.jobs)),
        )),
    },
    ParamInfo {
        param: Param::Time,
        label: "duration",
        kind: Kind::Duration,
        flag: Some("--time"),
        get: |v| v.params.time.map(Value::Time),
        set: |v, x| v.params.time = x.and_then(Value::time),
        form: Some(Form::cycle(
            TIMES,
            plain,
            Fallback::Said(|d| match (d.time, d.count) {
                (Some(t), _) => secs(t),
                (None, Some(c)) => format!("{c} I/Os"),
                (None, None) => "-".into(),
            }),
        )),
    },
    ParamInfo {
        param: Param::Warmup,
        label: "warm-up",
        kind: Kind::Duration,
        flag: Some("--warmup"),
        get: |v| v.params.warmup.map(Value::Time),
        set: |v, x| v.params.warmup = x.and_then(Value::time),
        form: Some(Form::cycle(
            WARMUPS,
            plain,
            Fallback::Test(|d| Value::Time(d.warmup)),
        )),
    },
    ParamInfo {
        param: Param::Size,
        label: "region size",
        kind: Kind::Size,
        flag: Some("--size"),
        get: |v| v.params.size.map(Value::Num),
        set: |v, x| v.params.size = x.and_then(Value::num),
        form: Some(Form::cycle(REGIONS, iec, Fallback::Text("whole device"))),
    },
    ParamInfo {
        param: Param::Offset,
        label: "region start",
        kind: Kind::Size,
        flag: Some("--offset"),
        get: |v| v.params.offset.map(Value::Num),
        set: |v, x| v.params.offset = x.and_then(Value::num),
        form: None,
    },
    ParamInfo {
        param: Param::Amount,
        label: "amount/worker",
        kind: Kind::Size,
        flag: Some("--io-size"),
        get: |v| v.params.io_size.map(Value::Num),
        set: |v, x| v.params.io_size = x.and_then(Value::num),
        form: Some(Form::cycle(
            AMOUNTS,
            |v| format!("{} (replaces the duration)", iec(v)),
            Fallback::Text("- (the duration bounds the run)"),
        )),
    },
    ParamInfo {
        param: Param::Count,
        label: "I/Os/worker",
        kind: Kind::Count,
        flag: Some("--count"),
        get: |v| v.params.count.map(Value::Num),
        set: |v, x| v.params.count = x.and_then(Value::num),
        form: None,
    },
    ParamInfo {
        param: Param::ReadPct,
        label: "read %",
        kind: Kind::Percent,
        flag: Some("--read-pct"),
        get: |v| v.params.read_pct.map(num_value),
        set: |v, x| {
            v.params.read_pct = x.and_then(Value::num).and_then(|n| u8::try_from(n).ok());
        },
        form: Some(Form::cycle(
            PCTS,
            plain,
            Fallback::Test(|d| num_value(d.read_pct)),
        )),
    },
    ParamInfo {
        param: Param::Interval,
        label: "interval",
        kind: Kind::Duration,
        flag: Some("--interval"),
        get: |v| v.params.interval.map(Value::Time),
        set: |v, x| v.params.interval = x.and_then(Value::time),
        form: None,
    },
    ParamInfo {
        param: Param::MinBs,
        label: "smallest size",
        kind: Kind::Size,
        flag: Some("--min-bs"),
        get: |v| v.params.min_bs.map(Value::Num),
        set: |v, x| v.params.min_bs = x.and_then(Value::num),
        form: Some(Form::cycle(
            SIZES,
            short,
            Fallback::Test(|d| Value::Num(d.min_bs)),
        )),
    },
    ParamInfo {
        param: Param::MaxBs,
        label: "largest size",
        kind: Kind::Size,
        flag: Some("--max-bs"),
        get: |v| v.params.max_bs.map(Value::Num),
        set: |v, x| v.params.max_bs = x.and_then(Value::num),
        form: Some(Form::cycle(
            SIZES,
            short,
            Fallback::Test(|d| Value::Num(d.max_bs)),
        )),
    },
    ParamInfo {
        param: Param::Qds,
        label: "queue depths",
        kind: Kind::List,
        flag: Some("--qds"),
        get: |v| v.params.qds.clone().map(Value::List),
        set: |v, x| v.params.qds = x.and_then(Value::list),
        form: None,
    },
    ParamInfo {
        param: Param::Writes,
        label: "write tests",
        kind: Kind::Choice,
        flag: Some("--write"),
        get: |v| picked(usize::from(v.params.include_writes)),
        set: |v, x| v.params.include_writes = x.is_some_and(|x| x.pick() == 1),
        form: Some(Form::cycle(
            OTHER,
            |v| named(&WRITES, v),
            Fallback::Test(|_| Value::Pick(0)),
        )),
    },
    ParamInfo {
        param: Param::Data,
        label: "write data",
        kind: Kind::Choice,
        flag: Some("--zeros"),
        get: |v| match (v.params.zeros, v.params.preserve) {
            (_, true) => picked(2),
            (true, false) => picked(1),
            (false, false) => None,
        },
        set: |v, x| {
            let place = x.map_or(0, Value::pick);
            (v.params.zeros, v.params.preserve) = (place == 1, place == 2);
        },
        form: Some(Form::cycle(
            OTHERS,
            |v| named(&DATA, v),
            Fallback::Test(|_| Value::Pick(0)),
        )),
    },
    ParamInfo {
        param: Param::Sync,
        label: "sync writes",
        kind: Kind::Choice,
        flag: Some("--sync"),
        get: |v| {
            let s = v.params.sync?;
            Some(Value::Pick(SYNCS.iter().position(|m| *m == s).unwrap_or(0)))
        },
        set: |v, x| v.params.sync = x.map(|x| SYNCS.get(x.pick()).copied().unwrap_or_default()),
        form: None,
    },
    ParamInfo {
        param: Param::Seed,
        label: "seed",
        kind: Kind::Count,
        flag: Some("--seed"),
        get: |v| v.params.seed.map(Value::Num),
        set: |v, x| v.params.seed = x.and_then(Value::num),
        form: None,
    },
    ParamInfo {
        param: Param::TempPoll,
        label: "temperature",
        kind: Kind::Choice,
        flag: None,
        get: |v| v.temp_poll.map(Value::Time),
        set: |v, x| v.temp_poll = x.and_then(Value::time),
        form: Some(Form::cycle(
            TEMP_POLLS,
            |v| match v.clone().time() {
                Some(t) if !t.is_zero() => format!("every {}", secs(t)),
                _ => "off".into(),
            },
            Fallback::Text("5s on SATA/NVMe, else off"),
        )),
    },
    ParamInfo {
        param: Param::Repeats,
        label: "repeats",
        kind: Kind::Count,
        flag: None,
        get: |v| (v.repeats != DEFAULT_REPEATS).then_some(num_value(v.repeats)),
        set: |v, x| v.repeats = num32(x).unwrap_or(DEFAULT_REPEATS),
        form: Some(Form {
            steps: Steps::Within(1, 10),
            min: 1,
            show: plain,
            fallback: Fallback::Test(|_| num_value(DEFAULT_REPEATS)),
        }),
    },
    ParamInfo {
        param: Param::Engine,
        label: "engine",
        kind: Kind::Choice,
        flag: Some("--engine"),
        get: |v| {
            picked(
                ENGINES
                    .iter()
                    .position(|e| *e == v.params.engine)
                    .unwrap_or(0),
            )
        },
        set: |v, x| v.params.engine = ENGINES[x.map_or(0, Value::pick).min(ENGINES.len() - 1)],
        form: Some(Form::cycle(
            OTHERS,
            |v| {
                ENGINES[v.clone().pick().min(ENGINES.len() - 1)]
                    .as_str()
                    .into()
            },
            Fallback::Test(|_| Value::Pick(0)),
        )),
    },
    ParamInfo {
        param: Param::Buffered,
        label: "I/O path",
        kind: Kind::Choice,
        flag: Some("--buffered"),
        get: |v| picked(usize::from(v.params.buffered)),
        set: |v, x| v.params.buffered = x.is_some_and(|x| x.pick() == 1),
        form: Some(Form::cycle(
            OTHER,
            |v| named(&PATHS, v),
            Fallback::Test(|_| Value::Pick(0)),
        )),
    },
    ParamInfo {
        param: Param::HugePages,
        label: "buffers",
        kind: Kind::Choice,
        flag: Some("--huge-pages"),
        get: |v| picked(usize::from(v.params.huge_pages)),
        set: |v, x| v.params.huge_pages = x.is_some_and(|x| x.pick() == 1),
        form: Some(Form::cycle(
            OTHER,
            |v| named(&PAGES, v),
            Fallback::Test(|_| Value::Pick(0)),
        )),
    },
    ParamInfo {
        param: Param::Files,
        label: "files",
        kind: Kind::Count,
        flag: Some("--files"),
        get: |v| v.params.files.map(Value::Num),
        set: |v, x| v.params.files = x.and_then(Value::num),
        form: Some(Form::cycle(FILES, plain, Fallback::Test(|d| Value::Num(d.files))).at_least(1)),
    },
];

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::plan::test_name::TestName;

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
    fn clearing_a_parameter_is_setting_it_to_its_default() {
        // `TestParams::clear` and this table's `set` to the default must agree on every
        // parameter.
        let full = TestParams {
            bs: Some(8192),
            qd: Some(4),
            jobs: Some(2),
            time: Some(Duration::from_secs(3)),
            warmup: Some(Duration::from_secs(1)),
            size: Some(1 << 30),
            offset: Some(4096),
            io_size: Some(1 << 20),
            count: Some(10),
            read_pct: Some(50),
            interval: Some(Duration::from_millis(100)),
            buffered: true,
            huge_pages: true,
            zeros: true,
            preserve: true,
            sync: Some(SyncMode::Dsync),
            engine: engines::URING,
            min_bs: Some(4096),
            max_bs: Some(1 << 20),
            qds: Some(vec![1, 2]),
            include_writes: true,
            seed: Some(7),
            files: Some(100),
        };
        assert_eq!(PARAMS.len(), Param::ALL.len());
        for info in &PARAMS {
            let mut v = Values {
                params: full.clone(),
                ..Values::new()
            };
            (info.set)(&mut v, None);
            let mut cleared = full.clone();
            cleared.clear(info.param);
            assert_eq!(v.params, cleared, "{:?}", info.param);
        }
    }
}
