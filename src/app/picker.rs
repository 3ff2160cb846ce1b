//! The test picker's form: stepping, typing and showing a test's `Values`. A test's fields
//! come from its family, and everything about a field from `app::params::PARAMS`, so a new
//! parameter needs nothing here.

pub use super::params::Values;
use super::params::{Fallback, Kind, Steps, Value};
use crate::bench::catalog::CATALOG;
pub use crate::bench::plan::params::Param as Field;
use crate::bench::plan::params::TestParams;
use crate::bench::plan::test_name::TestName;

impl Field {
    /// Can a value be typed (as opposed to only cycled)? Only what the Test screen shows.
    pub fn typeable(self) -> bool {
        self.info().form.is_some() && !matches!(self.kind(), Kind::Choice | Kind::List)
    }
}

/// The fields a test shows, in order.
pub fn fields_for(test: TestName) -> Vec<Field> {
    test.params()
}

/// Steps `current` through `choices` (None = default, shown first) by `dir` (+1/-1).
fn cycle(current: Option<Value>, choices: &[Value], dir: i32) -> Option<Value> {
    let mut all: Vec<Option<Value>> = vec![None];
    all.extend(choices.iter().cloned().map(Some));
    let pos = all.iter().position(|c| *c == current).unwrap_or(0) as i32;
    let n = all.len() as i32;
    all.swap_remove(((pos + dir).rem_euclid(n)) as usize)
}

impl Values {
    /// Moves a field to its next (`dir` = 1) or previous (-1) choice; a field the Test screen
    /// does not show is left alone.
    pub fn step(&mut self, field: Field, dir: i32) {
        let info = field.info();
        let Some(form) = info.form else {
            return;
        };
        let current = (info.get)(self);
        let next = match form.steps {
            Steps::Cycle(choices) => cycle(current, choices, dir),
            Steps::Within(min, max) => {
                let n = current.and_then(Value::num).unwrap_or(min) as i64;
                let stepped = (n + i64::from(dir)).clamp(min as i64, max as i64);
                Some(Value::Num(stepped as u64))
            }
        };
        (info.set)(self, next);
    }

    /// Back to the test's default.
    pub fn reset(&mut self, field: Field) {
        (field.info().set)(self, None);
    }

    /// Applies a typed value; the error says what was expected.
    pub fn set_typed(&mut self, field: Field, text: &str) -> Result<(), String> {
        let text = text.trim();
        if text.is_empty() || text == "default" {
            self.reset(field);
            return Ok(());
        }
        let info = field.info();
        let value = info.parse(text)?;
        (info.set)(self, Some(value));
        Ok(())
    }

    /// The value shown for a field, and whether it is the default.
    pub fn show(&self, test: TestName, field: Field) -> (String, bool) {
        let info = field.info();
        let Some(form) = info.form else {
            return ("-".into(), true);
        };
        match (info.get)(self) {
            Some(v) => ((form.show)(&v), false),
            None => {
                let shown = match form.fallback {
                    Fallback::Test(default) => (form.show)(&default(&test.defaults())),
                    Fallback::Text(text) => text.into(),
                    Fallback::Said(say) => say(&test.defaults()),
                };
                (shown, true)
            }
        }
    }

    /// The test parameters these values mean: only the ones the test takes.
    pub fn params(&self, test: TestName) -> TestParams {
        self.params.only(&fields_for(test))
    }
}

impl Values {
    /// The temperature polling these values ask for.
    pub fn temperature(&self) -> crate::bench::exec::session::TempPoll {
        use crate::bench::exec::session::TempPoll;
        match self.temp_poll {
            None => TempPoll::Default,
            Some(d) if d.is_zero() => TempPoll::Off,
            Some(d) => TempPoll::Every(d),
        }
    }
}

/// Does this test with these values write to the target (and so need the confirmation)?
pub fn writes(test: TestName, values: &Values) -> bool {
    test.writes_with(&values.params(test)) == crate::bench::plan::test_name::Writes::Always
}

/// The catalogue index of a test.
pub fn index_of(test: TestName) -> usize {
    CATALOG.iter().position(|t| t.name == test).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
        assert_eq!(
            v.set_typed(Field::ReadPct, "120").unwrap_err(),
            "read % is between 0 and 100"
        );
        assert_eq!(
            v.set_typed(Field::Files, "0").unwrap_err(),
            "files must be at least 1"
        );
        v.set_typed(Field::Repeats, "50").unwrap();
        assert_eq!(v.repeats, 10, "repeats are held at 10, typed or stepped");
        assert!(
            v.set_typed(Field::Engine, "sync").is_err(),
            "a choice is cycled"
        );
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
