//! The test picker's form: the values the admin chose for a test's parameters (a
//! `TestParams`, plus the session's repeats and temperature polling), the choices Left/Right
//! cycle through, and typed values. Which fields a test has, their labels and their defaults
//! come from the test's family and the parameter table (`bench::params`).

use std::time::Duration;

use crate::bench::catalog::{CATALOG, TestName};
pub use crate::bench::params::Param as Field;
use crate::bench::params::{Kind, TestParams};
use crate::bench::spec::EngineKind;
use crate::cli::{parse_duration, parse_size};
use crate::model::Bytes;

impl Field {
    /// Can a value be typed (as opposed to only cycled)?
    pub fn typeable(self) -> bool {
        self.kind() != Kind::Choice
    }
}

/// The fields a test shows, in order.
pub fn fields_for(test: TestName) -> Vec<Field> {
    test.params()
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
/// Files of the metadata test: bonnie++'s -n 1, 4, 16, 64 and 128 (x 1024).
const FILES: [u64; 5] = [1024, 4096, 16384, 65536, 131072];
const PCTS: [u8; 11] = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100];

/// The admin's choices; `None` in `params` is the test's default.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Values {
    pub params: TestParams,
    /// `None` is the default (5 s on SATA/NVMe, off elsewhere); zero means off.
    pub temp_poll: Option<Duration>,
    pub repeats: u32,
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
        let p = &mut self.params;
        match field {
            Field::Bs => p.bs = cycle(p.bs, &SIZES, dir),
            Field::MinBs => p.min_bs = cycle(p.min_bs, &SIZES, dir),
            Field::MaxBs => p.max_bs = cycle(p.max_bs, &SIZES, dir),
            Field::Qd => p.qd = cycle(p.qd, &DEPTHS, dir),
            Field::Jobs => p.jobs = cycle(p.jobs, &WORKERS, dir),
            Field::Time => {
                let t: Vec<Duration> = TIMES.iter().map(|&s| Duration::from_secs(s)).collect();
                p.time = cycle(p.time, &t, dir);
            }
            Field::Warmup => {
                let w: Vec<Duration> = WARMUPS_MS
                    .iter()
                    .map(|&m| Duration::from_millis(m))
                    .collect();
                p.warmup = cycle(p.warmup, &w, dir);
            }
            Field::Size => p.size = cycle(p.size, &REGIONS, dir),
            Field::ReadPct => p.read_pct = cycle(p.read_pct, &PCTS, dir),
            Field::Writes => p.include_writes = !p.include_writes,
            Field::Amount => p.io_size = cycle(p.io_size, &AMOUNTS, dir),
            Field::Data => {
                // random -> zeros -> rewrite of existing data (--preserve) -> random.
                let order = [(false, false), (true, false), (false, true)];
                let pos = order
                    .iter()
                    .position(|&o| o == (p.zeros, p.preserve))
                    .unwrap_or(0) as i32;
                (p.zeros, p.preserve) = order[(pos + dir).rem_euclid(order.len() as i32) as usize];
            }
            Field::TempPoll => {
                let t: Vec<Duration> = TEMP_POLLS.iter().map(|&s| Duration::from_secs(s)).collect();
                self.temp_poll = cycle(self.temp_poll, &t, dir);
            }
            Field::Repeats => {
                self.repeats = (self.repeats as i32 + dir).clamp(1, 10) as u32;
            }
            Field::Engine => {
                let order = [EngineKind::Auto, EngineKind::Uring, EngineKind::Sync];
                let pos = order.iter().position(|e| *e == p.engine).unwrap_or(0) as i32;
                p.engine = order[(pos + dir).rem_euclid(order.len() as i32) as usize];
            }
            Field::Buffered => p.buffered = !p.buffered,
            Field::Files => p.files = cycle(p.files, &FILES, dir),
            // Not on the Test screen (command line only).
            Field::Offset
            | Field::Count
            | Field::Interval
            | Field::Qds
            | Field::Sync
            | Field::Seed => {}
        }
    }

    /// Back to the test's default.
    pub fn reset(&mut self, field: Field) {
        match field {
            Field::TempPoll => self.temp_poll = None,
            Field::Repeats => self.repeats = Values::new().repeats,
            _ => self.params.clear(field),
        }
    }

    /// Applies a typed value; the error says what was expected.
    pub fn set_typed(&mut self, field: Field, text: &str) -> Result<(), String> {
        let text = text.trim();
        if text.is_empty() || text == "default" {
            self.reset(field);
            return Ok(());
        }
        let num = || -> Result<u32, String> {
            text.parse::<u32>()
                .map_err(|_| format!("{} must be a whole number, not {text:?}", field.label()))
        };
        let p = &mut self.params;
        match field {
            Field::Bs => p.bs = Some(parse_size(text)?),
            Field::MinBs => p.min_bs = Some(parse_size(text)?),
            Field::MaxBs => p.max_bs = Some(parse_size(text)?),
            Field::Size => p.size = Some(parse_size(text)?),
            Field::Amount => p.io_size = Some(parse_size(text)?),
            Field::Qd => p.qd = Some(num()?),
            Field::Jobs => p.jobs = Some(num()?),
            Field::Files => {
                let n = num()?;
                if n == 0 {
                    return Err(format!("{} must be at least 1", field.label()));
                }
                p.files = Some(u64::from(n));
            }
            Field::Repeats => self.repeats = num()?.clamp(1, 10),
            Field::Time => p.time = Some(parse_duration(text)?),
            Field::Warmup => p.warmup = Some(parse_duration(text)?),
            Field::ReadPct => {
                let pct = num()?;
                if pct > 100 {
                    return Err(format!("{} is between 0 and 100", field.label()));
                }
                p.read_pct = Some(pct as u8);
            }
            // Cycled, or not on the Test screen.
            Field::Writes
            | Field::Data
            | Field::TempPoll
            | Field::Engine
            | Field::Buffered
            | Field::Offset
            | Field::Count
            | Field::Interval
            | Field::Qds
            | Field::Sync
            | Field::Seed => {}
        }
        Ok(())
    }

    /// The value shown for a field, and whether it is the default.
    pub fn show(&self, test: TestName, field: Field) -> (String, bool) {
        let d = test.defaults();
        let p = &self.params;
        let size = |v: Option<u64>, def: u64| match v {
            Some(b) => (Bytes(b).short(), false),
            None => (Bytes(def).short(), true),
        };
        let number = |v: Option<u32>, def: u32| match v {
            Some(n) => (n.to_string(), false),
            None => (def.to_string(), true),
        };
        match field {
            Field::Bs => size(p.bs, d.bs),
            Field::MinBs => size(p.min_bs, d.min_bs),
            Field::MaxBs => size(p.max_bs, d.max_bs),
            Field::Size => match p.size {
                Some(b) => (Bytes(b).iec(), false),
                None => ("whole device".into(), true),
            },
            Field::Qd => number(p.qd, d.qd),
            Field::Jobs => number(p.jobs, d.jobs),
            Field::Time => match (p.time, d.time, d.count) {
                (Some(t), _, _) => (secs(t), false),
                (None, Some(t), _) => (secs(t), true),
                (None, None, Some(c)) => (format!("{c} I/Os"), true),
                (None, None, None) => ("-".into(), true),
            },
            Field::Warmup => match p.warmup {
                Some(w) => (secs(w), false),
                None => (secs(d.warmup), true),
            },
            Field::ReadPct => match p.read_pct {
                Some(pct) => (format!("{pct}"), false),
                None => (format!("{}", d.read_pct), true),
            },
            Field::Writes => (
                if p.include_writes {
                    "included"
                } else {
                    "left out"
                }
                .into(),
                !p.include_writes,
            ),
            Field::Amount => match p.io_size {
                Some(b) => (format!("{} (replaces the duration)", Bytes(b).iec()), false),
                None => ("- (the duration bounds the run)".into(), true),
            },
            Field::Data => (
                if p.preserve {
                    "rewrite existing (--preserve)"
                } else if p.zeros {
                    "zeros"
                } else {
                    "random (incompressible)"
                }
                .into(),
                !p.zeros && !p.preserve,
            ),
            Field::TempPoll => match self.temp_poll {
                None => ("every 5s on SATA/NVMe, off elsewhere".into(), true),
                Some(d) if d.is_zero() => ("off".into(), false),
                Some(d) => (format!("every {}", secs(d)), false),
            },
            Field::Repeats => (self.repeats.to_string(), self.repeats == 1),
            Field::Files => match p.files {
                Some(n) => (n.to_string(), false),
                None => (d.files.to_string(), true),
            },
            Field::Engine => (p.engine.as_str().into(), p.engine == EngineKind::Auto),
            Field::Buffered => (
                if p.buffered {
                    "BUFFERED (page cache)"
                } else {
                    "O_DIRECT"
                }
                .into(),
                !p.buffered,
            ),
            // Not on the Test screen.
            Field::Offset
            | Field::Count
            | Field::Interval
            | Field::Qds
            | Field::Sync
            | Field::Seed => ("-".into(), true),
        }
    }

    /// The test parameters these values mean: only the ones the test takes.
    pub fn params(&self, test: TestName) -> TestParams {
        self.params.only(&fields_for(test))
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
        assert_eq!(v.params.qd, Some(1));
        v.step(Field::Qd, -1);
        assert_eq!(v.params.qd, None);
        v.step(Field::Qd, -1);
        assert_eq!(v.params.qd, Some(256));
        v.step(Field::Buffered, 1);
        assert!(v.params.buffered);
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
        assert_eq!(v.params.bs, Some(65536));
        v.set_typed(Field::Time, "90s").unwrap();
        assert_eq!(v.params.time, Some(Duration::from_secs(90)));
        assert!(
            v.set_typed(Field::Qd, "lots")
                .unwrap_err()
                .contains("whole number")
        );
        assert!(v.set_typed(Field::ReadPct, "120").is_err());
        v.set_typed(Field::Bs, "").unwrap();
        assert_eq!(v.params.bs, None);
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
        // The third choice is the rewrite of existing data; the next one is random again.
        v.step(Field::Data, 1);
        let w = v.params(TestName::RandWrite);
        assert!(w.preserve && !w.zeros);
        assert!(
            !v.params(TestName::RandRead).preserve,
            "a read test never carries --preserve"
        );
        v.step(Field::Data, 1);
        let w = v.params(TestName::RandWrite);
        assert!(!w.preserve && !w.zeros);
        v.step(Field::Data, -1);
        assert!(v.params(TestName::CdmNvme).preserve);
        v.step(Field::Data, 1);
        assert!(fields_for(TestName::SeqWrite).contains(&Field::Data));
        assert!(!writes(TestName::Cdm, &v));
        v.step(Field::Writes, 1);
        assert!(writes(TestName::Cdm, &v));
        assert!(writes(TestName::SeqWrite, &Values::new()));
    }

    #[test]
    fn every_field_a_test_shows_can_be_changed_here() {
        // A family that lists a parameter the Test screen cannot set would show a dead row.
        for t in &CATALOG {
            for f in fields_for(t.name) {
                let mut v = Values::new();
                v.step(f, 1);
                assert_ne!(v, Values::new(), "{}: {:?} does not step", t.id, f);
                if f.typeable() {
                    let mut typed = Values::new();
                    let _ = typed.set_typed(f, "2");
                    assert_ne!(typed, Values::new(), "{}: {:?} cannot be typed", t.id, f);
                }
            }
        }
    }
}
