//! The `size-sweep` test: how the disk scales with the request size (a parameter sweep, not
//! a setting sweep).
//!
//! SGI diskperf's and iozone's sweep: request sizes doubling from `--min-bs` to `--max-bs`,
//! each read forwards, backwards and at random (and written, with `--write`).

use std::time::Duration;

use super::{Family, PlanContext, short_phases};
use crate::bench::plan::params::{Defaults, Param, TestParams};
use crate::bench::plan::test_name::{TestName, Writes};
use crate::bench::plan::{Access, Mix};
use crate::bench::plan::{Phase, PhaseTag, SpecError};
use crate::model::Bytes;

pub struct SizeScaling;

/// diskperf's column names: fwd_wt fwd_rd bwd_wt bwd_rd rnd_wt rnd_rd.
pub fn size_column(access: Access, write: bool) -> &'static str {
    match (access, write) {
        (Access::Forward, true) => "fwd_wt",
        (Access::Forward, false) => "fwd_rd",
        (Access::Backward, true) => "bwd_wt",
        (Access::Backward, false) => "bwd_rd",
        (Access::Random, true) => "rnd_wt",
        (Access::Random, false) => "rnd_rd",
    }
}

impl Family for SizeScaling {
    fn defaults(&self, _test: TestName) -> Defaults {
        short_phases(Duration::from_secs(2), Duration::from_millis(500))
    }

    fn params(&self, _test: TestName) -> &'static [Param] {
        use Param::*;
        &[MinBs, MaxBs, Qd, Time, Warmup, Size, Writes, Data]
    }

    fn writes(&self, _test: TestName, params: &TestParams) -> Writes {
        if params.include_writes {
            Writes::Always
        } else {
            Writes::Never
        }
    }

    fn phases(&self, _test: TestName, ctx: &PlanContext) -> Result<Vec<Phase>, SpecError> {
        let r = ctx.resolved;
        let (min, max) = (r.min_bs, r.max_bs);
        ctx.check_bs(min)?;
        ctx.check_bs(max)?;
        if min > max {
            return Err(SpecError::Invalid(format!(
                "--min-bs ({}) is larger than --max-bs ({})",
                Bytes(min).short(),
                Bytes(max).short()
            )));
        }
        let writes = ctx.params.include_writes;
        let mut phases = Vec::new();
        let mut size_bs = min;
        while size_bs <= max {
            for access in [Access::Forward, Access::Backward, Access::Random] {
                for write in [true, false] {
                    if write && !writes {
                        continue;
                    }
                    let mix = if write { Mix::Write } else { Mix::Read };
                    phases.push(Phase {
                        label: format!("{} {}", Bytes(size_bs).short(), size_column(access, write)),
                        tag: PhaseTag::Sweep { access, write },
                        job: ctx.job(size_bs, r.qd, r.jobs, access, mix)?,
                    });
                }
            }
            size_bs = size_bs.saturating_mul(2);
        }
        Ok(phases)
    }

    fn lower_hint(&self) -> &'static str {
        "the largest size (--max-bs), queue depth (--qd) or workers (--jobs)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::catalog::family::tests::plan;
    use crate::bench::plan::params::KIB;

    #[test]
    fn size_sweep_doubles_and_names_columns() {
        let p = plan(
            TestName::SizeSweep,
            &TestParams {
                min_bs: Some(16 * KIB),
                max_bs: Some(64 * KIB),
                include_writes: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(p.phases.len(), 3 * 6);
        assert_eq!(p.phases[0].label, "16k fwd_wt");
        assert_eq!(p.phases[5].label, "16k rnd_rd");
        assert_eq!(p.phases[17].job.bs, 64 * KIB);
        let reads_only = plan(TestName::SizeSweep, &TestParams::default()).unwrap();
        assert!(!reads_only.writes());
        assert_eq!(reads_only.phases.len(), 9 * 3, "4k..1M read only");
    }
}
