//! The test picker's form: which fields a test has, the values the admin chose (or the
//! defaults), the choices ←/→ cycle through, and typed values.

use std::time::Duration;

use crate::bench::catalog::{CATALOG, TestName};
use crate::bench::spec::{self, EngineKind, TestParams};
use crate::cli::{parse_duration, parse_size};
use crate::model::Bytes;

/// An editable parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Bs,
    Qd,
    Jobs,
    Time,
    Warmup,
    Size,
    ReadPct,
    MinBs,
    MaxBs,
    Writes,
    /// Bytes each worker transfers (replaces the duration).
    Amount,
    /// Random (incompressible) or zero data for writes.
    Data,
    /// How often the drive's temperature is read during the run.
    TempPoll,
    Repeats,
    Engine,
    Buffered,
}

impl Field {
    pub fn label(self) -> &'static str {
        match self {
            Field::Bs => "request size",
            Field::Qd => "queue depth",
            Field::Jobs => "workers",
            Field::Time => "duration",
            Field::Warmup => "warm-up",
            Field::Size => "region size",
            Field::ReadPct => "read %",
            Field::MinBs => "smallest size",
            Field::MaxBs => "largest size",
            Field::Writes => "write tests",
            Field::Amount => "amount/worker",
            Field::Data => "write data",
            Field::TempPoll => "temperature",
            Field::Repeats => "repeats",
            Field::Engine => "engine",
            Field::Buffered => "I/O path",
        }
    }

    /// Can a value be typed (as opposed to only cycled)?
    pub fn typeable(self) -> bool {
        !matches!(
            self,
            Field::Writes | Field::Data | Field::TempPoll | Field::Engine | Field::Buffered
        )
    }
}

/// The fields a test shows, in order.
pub fn fields_for(test: TestName) -> Vec<Field> {
    use Field::*;
    let tail = [Repeats, TempPoll, Engine, Buffered];
    let mut v = match test {
        TestName::SizeSweep => vec![MinBs, MaxBs, Qd, Time, Warmup, Size, Writes, Data],
        TestName::QdSweep => vec![Bs, Time, Warmup, Size, ReadPct, Data],
        TestName::Cdm | TestName::CdmNvme => vec![Time, Warmup, Size, Writes, Data],
        TestName::RandMixed => vec![Bs, Qd, Jobs, Time, Amount, Warmup, Size, ReadPct, Data],
        TestName::SyncLatency => vec![Bs, Size, Data],
        _ => vec![Bs, Qd, Jobs, Time, Amount, Warmup, Size],
    };
    if test.info().writes == crate::bench::catalog::Writes::Always && !v.contains(&Data) {
        v.push(Data);
    }
    v.extend_from_slice(&tail);
    v
}

const SIZES: [u64; 14] = [
    512,
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
    2 << 20,
    4 << 20,
    8 << 20,
    16 << 20,
];
const DEPTHS: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];
const WORKERS: [u32; 7] = [1, 2, 3, 4, 8, 16, 32];
const TIMES: [u64; 8] = [1, 2, 3, 5, 10, 30, 60, 300];
const WARMUPS_MS: [u64; 6] = [0, 250, 500, 1000, 2000, 5000];
const REGIONS: [u64; 7] = [
    64 << 20,
    256 << 20,
    1 << 30,
    4 << 30,
    16 << 30,
    64 << 30,
    256 << 30,
];
const AMOUNTS: [u64; 6] = [16 << 20, 64 << 20, 200 << 20, 1 << 30, 4 << 30, 16 << 30];
/// Seconds between temperature reads; 0 is off.
const TEMP_POLLS: [u64; 6] = [0, 1, 2, 5, 10, 30];
const PCTS: [u8; 11] = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100];

/// The admin's choices; `None` is the test's default.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Values {
    pub bs: Option<u64>,
    pub qd: Option<u32>,
    pub jobs: Option<u32>,
    pub time: Option<Duration>,
    pub warmup: Option<Duration>,
    pub size: Option<u64>,
    pub read_pct: Option<u8>,
    pub min_bs: Option<u64>,
    pub max_bs: Option<u64>,
    pub writes: bool,
    pub io_size: Option<u64>,
    pub zeros: bool,
    /// `None` is the default (5 s on SATA/NVMe, off elsewhere); zero means off.
    pub temp_poll: Option<Duration>,
    pub repeats: u32,
    pub engine: EngineKind,
    pub buffered: bool,
}

/// Steps `current` through `choices` (None = default, shown first) by `dir` (+1/-1).
fn cycle<T: Copy + PartialEq>(current: Option<T>, choices: &[T], dir: i32) -> Option<T> {
    let mut all: Vec<Option<T>> = vec![None];
    all.extend(choices.iter().copied().map(Some));
    let pos = all.iter().position(|c| *c == current).unwrap_or(0) as i32;
    let n = all.len() as i32;
    all[((pos + dir).rem_euclid(n)) as usize]
}

fn secs(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

impl Values {
    pub fn new() -> Self {
        Values {
            repeats: 1,
            ..Values::default()
        }
    }

    /// Moves a field to its next (`dir` = 1) or previous (-1) choice.
    pub fn step(&mut self, field: Field, dir: i32) {
        match field {
            Field::Bs => self.bs = cycle(self.bs, &SIZES, dir),
            Field::MinBs => self.min_bs = cycle(self.min_bs, &SIZES, dir),
            Field::MaxBs => self.max_bs = cycle(self.max_bs, &SIZES, dir),
            Field::Qd => self.qd = cycle(self.qd, &DEPTHS, dir),
            Field::Jobs => self.jobs = cycle(self.jobs, &WORKERS, dir),
            Field::Time => {
                let t: Vec<Duration> = TIMES.iter().map(|&s| Duration::from_secs(s)).collect();
                self.time = cycle(self.time, &t, dir);
            }
            Field::Warmup => {
                let w: Vec<Duration> = WARMUPS_MS
                    .iter()
                    .map(|&m| Duration::from_millis(m))
                    .collect();
                self.warmup = cycle(self.warmup, &w, dir);
            }
            Field::Size => self.size = cycle(self.size, &REGIONS, dir),
            Field::ReadPct => self.read_pct = cycle(self.read_pct, &PCTS, dir),
            Field::Writes => self.writes = !self.writes,
            Field::Amount => self.io_size = cycle(self.io_size, &AMOUNTS, dir),
            Field::Data => self.zeros = !self.zeros,
            Field::TempPoll => {
                let t: Vec<Duration> = TEMP_POLLS.iter().map(|&s| Duration::from_secs(s)).collect();
                self.temp_poll = cycle(self.temp_poll, &t, dir);
            }
            Field::Repeats => {
                self.repeats = (self.repeats as i32 + dir).clamp(1, 10) as u32;
            }
            Field::Engine => {
                let order = [EngineKind::Auto, EngineKind::Uring, EngineKind::Sync];
                let pos = order.iter().position(|e| *e == self.engine).unwrap_or(0) as i32;
                self.engine = order[(pos + dir).rem_euclid(order.len() as i32) as usize];
            }
            Field::Buffered => self.buffered = !self.buffered,
        }
    }

    /// Back to the test's default.
    pub fn reset(&mut self, field: Field) {
        let fresh = Values::new();
        match field {
            Field::Bs => self.bs = None,
            Field::Qd => self.qd = None,
            Field::Jobs => self.jobs = None,
            Field::Time => self.time = None,
            Field::Warmup => self.warmup = None,
            Field::Size => self.size = None,
            Field::ReadPct => self.read_pct = None,
            Field::MinBs => self.min_bs = None,
            Field::MaxBs => self.max_bs = None,
            Field::Writes => self.writes = fresh.writes,
            Field::Amount => self.io_size = None,
            Field::Data => self.zeros = fresh.zeros,
            Field::TempPoll => self.temp_poll = None,
            Field::Repeats => self.repeats = fresh.repeats,
            Field::Engine => self.engine = fresh.engine,
            Field::Buffered => self.buffered = fresh.buffered,
        }
    }

    /// Applies a typed value; the error says what was expected.
    pub fn set_typed(&mut self, field: Field, text: &str) -> Result<(), String> {
        let text = text.trim();
        if text.is_empty() || text == "default" {
            self.reset(field);
            return Ok(());
        }
        let num = |what: &str| -> Result<u32, String> {
            text.parse::<u32>()
                .map_err(|_| format!("{what} must be a whole number, not {text:?}"))
        };
        match field {
            Field::Bs => self.bs = Some(parse_size(text)?),
            Field::MinBs => self.min_bs = Some(parse_size(text)?),
            Field::MaxBs => self.max_bs = Some(parse_size(text)?),
            Field::Size => self.size = Some(parse_size(text)?),
            Field::Amount => self.io_size = Some(parse_size(text)?),
            Field::Qd => self.qd = Some(num("queue depth")?),
            Field::Jobs => self.jobs = Some(num("workers")?),
            Field::Repeats => self.repeats = num("repeats")?.clamp(1, 10),
            Field::Time => self.time = Some(parse_duration(text)?),
            Field::Warmup => self.warmup = Some(parse_duration(text)?),
            Field::ReadPct => {
                let p = num("read %")?;
                if p > 100 {
                    return Err("read % is between 0 and 100".into());
                }
                self.read_pct = Some(p as u8);
            }
            Field::Writes | Field::Data | Field::TempPoll | Field::Engine | Field::Buffered => {}
        }
        Ok(())
    }

    /// The value shown for a field, and whether it is the default.
    pub fn show(&self, test: TestName, field: Field) -> (String, bool) {
        let d = spec::defaults(test, self.read_pct);
        let size = |v: Option<u64>, def: String| match v {
            Some(b) => (Bytes(b).short(), false),
            None => (def, true),
        };
        match field {
            Field::Bs => size(
                self.bs,
                Bytes(if test == TestName::QdSweep {
                    8192
                } else {
                    d.bs
                })
                .short(),
            ),
            Field::MinBs => size(self.min_bs, "4k".into()),
            Field::MaxBs => size(self.max_bs, "1M".into()),
            Field::Size => match self.size {
                Some(b) => (Bytes(b).iec(), false),
                None => ("whole device".into(), true),
            },
            Field::Qd => match self.qd {
                Some(q) => (q.to_string(), false),
                None => (d.qd.to_string(), true),
            },
            Field::Jobs => match self.jobs {
                Some(j) => (j.to_string(), false),
                None => (d.jobs.to_string(), true),
            },
            Field::Time => match (self.time, d.time, d.count) {
                (Some(t), _, _) => (secs(t), false),
                (None, Some(t), _) => (secs(t), true),
                (None, None, Some(c)) => (format!("{c} I/Os"), true),
                (None, None, None) => ("-".into(), true),
            },
            Field::Warmup => match self.warmup {
                Some(w) => (secs(w), false),
                None => (secs(d.warmup), true),
            },
            Field::ReadPct => match self.read_pct {
                Some(p) => (format!("{p}"), false),
                None => (
                    if test == TestName::RandMixed {
                        "70"
                    } else {
                        "100"
                    }
                    .into(),
                    true,
                ),
            },
            Field::Writes => (
                if self.writes { "included" } else { "left out" }.into(),
                !self.writes,
            ),
            Field::Amount => match self.io_size {
                Some(b) => (format!("{} (replaces the duration)", Bytes(b).iec()), false),
                None => ("- (the duration bounds the run)".into(), true),
            },
            Field::Data => (
                if self.zeros {
                    "zeros"
                } else {
                    "random (incompressible)"
                }
                .into(),
                !self.zeros,
            ),
            Field::TempPoll => match self.temp_poll {
                None => ("every 5s on SATA/NVMe, off elsewhere".into(), true),
                Some(d) if d.is_zero() => ("off".into(), false),
                Some(d) => (format!("every {}", secs(d)), false),
            },
            Field::Repeats => (self.repeats.to_string(), self.repeats == 1),
            Field::Engine => (self.engine.as_str().into(), self.engine == EngineKind::Auto),
            Field::Buffered => (
                if self.buffered {
                    "BUFFERED (page cache)"
                } else {
                    "O_DIRECT"
                }
                .into(),
                !self.buffered,
            ),
        }
    }

    /// The test parameters these values mean.
    pub fn params(&self, test: TestName) -> TestParams {
        let fields = fields_for(test);
        let has = |f: Field| fields.contains(&f);
        TestParams {
            bs: self.bs.filter(|_| has(Field::Bs)),
            qd: self.qd.filter(|_| has(Field::Qd)),
            jobs: self.jobs.filter(|_| has(Field::Jobs)),
            time: self.time.filter(|_| has(Field::Time)),
            warmup: self.warmup.filter(|_| has(Field::Warmup)),
            size: self.size.filter(|_| has(Field::Size)),
            read_pct: self.read_pct.filter(|_| has(Field::ReadPct)),
            min_bs: self.min_bs.filter(|_| has(Field::MinBs)),
            max_bs: self.max_bs.filter(|_| has(Field::MaxBs)),
            include_writes: self.writes && has(Field::Writes),
            io_size: self.io_size.filter(|_| has(Field::Amount)),
            zeros: self.zeros && has(Field::Data),
            engine: self.engine,
            buffered: self.buffered,
            ..TestParams::default()
        }
    }
}

impl Values {
    /// The temperature polling these values ask for.
    pub fn temperature(&self) -> crate::bench::session::TempPoll {
        use crate::bench::session::TempPoll;
        match self.temp_poll {
            None => TempPoll::Default,
            Some(d) if d.is_zero() => TempPoll::Off,
            Some(d) => TempPoll::Every(d),
        }
    }
}

/// Does this test with these values write to the target (and so need the confirmation)?
pub fn writes(test: TestName, values: &Values) -> bool {
    test.writes_with(&values.params(test)) == crate::bench::catalog::Writes::Always
}

/// The catalogue index of a test.
pub fn index_of(test: TestName) -> usize {
    CATALOG.iter().position(|t| t.name == test).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycling_starts_and_ends_at_the_default() {
        let mut v = Values::new();
        v.step(Field::Qd, 1);
        assert_eq!(v.qd, Some(1));
        v.step(Field::Qd, -1);
        assert_eq!(v.qd, None);
        v.step(Field::Qd, -1);
        assert_eq!(v.qd, Some(256));
        v.step(Field::Buffered, 1);
        assert!(v.buffered);
        v.step(Field::Repeats, 1);
        v.step(Field::Repeats, 1);
        assert_eq!(v.repeats, 3);
        v.step(Field::Repeats, -5);
        assert_eq!(v.repeats, 1);
    }

    #[test]
    fn typed_values_and_errors() {
        let mut v = Values::new();
        v.set_typed(Field::Bs, "64k").unwrap();
        assert_eq!(v.bs, Some(65536));
        v.set_typed(Field::Time, "90s").unwrap();
        assert_eq!(v.time, Some(Duration::from_secs(90)));
        assert!(
            v.set_typed(Field::Qd, "lots")
                .unwrap_err()
                .contains("whole number")
        );
        assert!(v.set_typed(Field::ReadPct, "120").is_err());
        v.set_typed(Field::Bs, "").unwrap();
        assert_eq!(v.bs, None);
    }

    #[test]
    fn defaults_are_shown_as_such() {
        let v = Values::new();
        assert_eq!(v.show(TestName::RandRead, Field::Bs), ("4k".into(), true));
        assert_eq!(v.show(TestName::SeqRead, Field::Bs), ("1M".into(), true));
        assert_eq!(
            v.show(TestName::SyncLatency, Field::Time),
            ("1000 I/Os".into(), true)
        );
        assert_eq!(v.show(TestName::SeqReadQ8, Field::Qd), ("8".into(), true));
        let mut w = Values::new();
        w.set_typed(Field::Qd, "32").unwrap();
        assert_eq!(w.show(TestName::RandRead, Field::Qd), ("32".into(), false));
    }

    #[test]
    fn params_only_carry_the_tests_fields() {
        let mut v = Values::new();
        v.set_typed(Field::Bs, "64k").unwrap();
        v.set_typed(Field::ReadPct, "50").unwrap();
        let p = v.params(TestName::RandRead);
        assert_eq!(p.bs, Some(65536));
        assert_eq!(p.read_pct, None, "rand-read has no read %");
        assert_eq!(v.params(TestName::RandMixed).read_pct, Some(50));
        v.set_typed(Field::Amount, "200M").unwrap();
        assert_eq!(v.params(TestName::SeqRead).io_size, Some(200 << 20));
        assert_eq!(
            v.params(TestName::QdSweep).io_size,
            None,
            "no amount in sweeps"
        );
        v.step(Field::Data, 1);
        assert!(v.params(TestName::SeqWrite).zeros);
        assert!(
            !v.params(TestName::SeqRead).zeros,
            "reads have no write data"
        );
        assert!(fields_for(TestName::SeqWrite).contains(&Field::Data));
        assert!(!writes(TestName::Cdm, &v));
        v.step(Field::Writes, 1);
        assert!(writes(TestName::Cdm, &v));
        assert!(writes(TestName::SeqWrite, &Values::new()));
    }
}
