//! CrystalDiskMark's grid: four rows (sequential and random, deep and shallow queues), each
//! read and then written. Without the write confirmation the reads run and the grid says why
//! the writes are missing.

use std::time::Duration;

use super::{Family, PlanContext, short_phases};
use crate::bench::plan::params::{Defaults, KIB, MIB, Param, TestParams};
use crate::bench::plan::test_name::{TestName, Writes};
use crate::bench::plan::{Access, Mix};
use crate::bench::plan::{Phase, PhaseTag, SpecError};

/// A CrystalDiskMark profile: its four rows. Each test of the family names its profile in its
/// catalogue row (`family: &Cdm::DEFAULT`).
pub struct Cdm {
    rows: &'static [Row; 4],
}

impl Cdm {
    pub const DEFAULT: Cdm = Cdm {
        rows: &DEFAULT_ROWS,
    };
    pub const NVME: Cdm = Cdm { rows: &NVME_ROWS };
}

/// A row: its name, request size, queue depth, workers and access.
type Row = (&'static str, u64, u32, u32, Access);

/// The default profile.
const DEFAULT_ROWS: [Row; 4] = [
    ("SEQ1M Q8T1", MIB, 8, 1, Access::Forward),
    ("SEQ1M Q1T1", MIB, 1, 1, Access::Forward),
    ("RND4K Q32T1", 4 * KIB, 32, 1, Access::Random),
    ("RND4K Q1T1", 4 * KIB, 1, 1, Access::Random),
];

/// The NVMe SSD profile.
const NVME_ROWS: [Row; 4] = [
    ("SEQ1M Q8T1", MIB, 8, 1, Access::Forward),
    ("SEQ128K Q32T1", 128 * KIB, 32, 1, Access::Forward),
    ("RND4K Q32T16", 4 * KIB, 32, 16, Access::Random),
    ("RND4K Q1T1", 4 * KIB, 1, 1, Access::Random),
];

impl Family for Cdm {
    fn defaults(&self, _test: TestName) -> Defaults {
        short_phases(Duration::from_secs(5), Duration::from_secs(1))
    }

    fn params(&self, _test: TestName) -> &'static [Param] {
        use Param::*;
        &[Time, Warmup, Size, Writes, Data]
    }

    fn writes(&self, _test: TestName, params: &TestParams) -> Writes {
        if params.include_writes {
            Writes::Always
        } else {
            Writes::Optional
        }
    }

    fn phases(&self, _test: TestName, ctx: &PlanContext) -> Result<Vec<Phase>, SpecError> {
        let mut phases = Vec::new();
        for &(row, bs, qd, workers, access) in self.rows {
            ctx.check_bs(bs)?;
            for write in [false, true] {
                if write && !ctx.writes_allowed {
                    continue;
                }
                let mix = if write { Mix::Write } else { Mix::Read };
                phases.push(Phase {
                    label: format!("{row} {}", if write { "write" } else { "read" }),
                    tag: PhaseTag::Cdm {
                        row: row.to_string(),
                        write,
                    },
                    job: ctx.job(bs, qd, workers, access, mix)?,
                });
            }
        }
        Ok(phases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::catalog::family::tests::plan;

    #[test]
    fn cdm_order_and_parameters() {
        let p = plan(TestName::Cdm, &TestParams::default()).unwrap();
        let labels: Vec<&str> = p.phases.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "SEQ1M Q8T1 read",
                "SEQ1M Q8T1 write",
                "SEQ1M Q1T1 read",
                "SEQ1M Q1T1 write",
                "RND4K Q32T1 read",
                "RND4K Q32T1 write",
                "RND4K Q1T1 read",
                "RND4K Q1T1 write",
            ]
        );
        let rnd = &p.phases[4].job;
        assert_eq!(
            (rnd.bs, rnd.qd, rnd.workers, rnd.access),
            (4096, 32, 1, Access::Random)
        );
        assert_eq!(p.phases[0].job.time, Some(Duration::from_secs(5)));
        let nvme = plan(TestName::CdmNvme, &TestParams::default()).unwrap();
        assert_eq!(nvme.phases[4].job.workers, 16);
        assert_eq!(nvme.phases[2].job.bs, 128 * KIB);
    }
}
