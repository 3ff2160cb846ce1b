//! The `qd-sweep` test: how the disk scales with the queue depth (a parameter sweep, not a
//! setting sweep).
//!
//! ORION's sweep: queue depths 1, 2, 4 .. 32 (`--qds`) for small random I/O (8 KiB, `--bs`)
//! and large sequential I/O (1 MiB): max IOPS, max MB/s, min latency and the load of each.

use std::time::Duration;

use super::{Family, PlanContext, short_phases};
use crate::bench::plan::params::{Defaults, KIB, MIB, Param, TestParams};
use crate::bench::plan::test_name::{TestName, Writes};
use crate::bench::plan::{Access, Mix};
use crate::bench::plan::{MAX_QUEUE_DEPTH, Phase, PhaseTag, SpecError, check_range};

pub struct QdScaling;

/// The large sequential request: ORION's 1 MiB.
const LARGE: u64 = MIB;

impl Family for QdScaling {
    fn defaults(&self, _test: TestName) -> Defaults {
        Defaults {
            bs: 8 * KIB,
            ..short_phases(Duration::from_secs(2), Duration::from_millis(500))
        }
    }

    fn params(&self, _test: TestName) -> &'static [Param] {
        use Param::*;
        &[Bs, Time, Warmup, Size, ReadPct, Data]
    }

    /// Reads by default; a --read-pct below 100 mixes writes in.
    fn writes(&self, _test: TestName, params: &TestParams) -> Writes {
        match params.read_pct {
            Some(p) if p < 100 => Writes::Always,
            _ => Writes::Never,
        }
    }

    fn phases(&self, _test: TestName, ctx: &PlanContext) -> Result<Vec<Phase>, SpecError> {
        let r = ctx.resolved;
        if r.qds.is_empty() {
            return Err(SpecError::Invalid(
                "--qds needs at least one queue depth".into(),
            ));
        }
        for &q in &r.qds {
            check_range("queue depth", u64::from(q), 1, u64::from(MAX_QUEUE_DEPTH))?;
        }
        let mix = match r.read_pct {
            100 => Mix::Read,
            0 => Mix::Write,
            p => Mix::Mixed { read_pct: p },
        };
        let mut phases = Vec::new();
        for (small, bs, access) in [
            (true, r.bs, Access::Random),
            (false, LARGE, Access::Forward),
        ] {
            if !bs.is_multiple_of(u64::from(ctx.lbs)) {
                continue;
            }
            for &q in &r.qds {
                phases.push(Phase {
                    label: format!(
                        "{} QD{q}",
                        if small {
                            "small random"
                        } else {
                            "large sequential"
                        }
                    ),
                    tag: PhaseTag::QdSweep { small, qd: q },
                    job: ctx.job(bs, q, r.jobs, access, mix)?,
                });
            }
        }
        Ok(phases)
    }

    fn lower_hint(&self) -> &'static str {
        "the request size (--bs), queue depths (--qds) or workers (--jobs)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::catalog::family::tests::plan;

    #[test]
    fn qd_sweep_small_and_large() {
        let p = plan(TestName::QdSweep, &TestParams::default()).unwrap();
        assert_eq!(p.phases.len(), 12);
        assert_eq!(p.phases[0].job.bs, 8 * KIB);
        assert_eq!(p.phases[5].job.qd, 32);
        assert_eq!(p.phases[6].job.bs, MIB);
        assert_eq!(p.phases[6].job.access, Access::Forward);
        assert_eq!(
            p.expected_duration(),
            Some(Duration::from_millis(2500 * 12))
        );
    }
}
