//! One job: dd's sequential tests, concurrent dd, synchronous latency and ORION/CrystalDiskMark
//! random I/O. Each test is a preset (direction, access, request size, depth, workers) of the
//! same single phase.

use std::time::Duration;

use super::{Family, PlanContext};
use crate::bench::plan::params::{Defaults, KIB, Param, TestParams};
use crate::bench::plan::test_name::{TestName, Writes};
use crate::bench::plan::{Access, Mix};
use crate::bench::plan::{Phase, PhaseTag, SpecError};
use crate::sys::direct::SyncMode;

/// One job's preset: its direction, access pattern and defaults. Each test names its own in
/// its catalogue row (`family: &single::SEQ_READ`), so none can fall back to another's.
pub struct Single {
    direction: Direction,
    access: Access,
    defaults: Defaults,
}

/// What a single-job test does with its I/Os.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Read,
    Write,
    /// Reads and writes at `--read-pct` (70 by default).
    Mixed,
}

/// Sequential, 1 MiB requests (`Defaults::BASE`) at `qd` with `jobs` workers.
const fn seq(direction: Direction, qd: u32, jobs: u32) -> Single {
    Single {
        direction,
        access: Access::Forward,
        defaults: Defaults {
            qd,
            jobs,
            ..Defaults::BASE
        },
    }
}

/// Random 4 KiB requests, 70 % reads when mixed.
const fn rand(direction: Direction) -> Single {
    Single {
        direction,
        access: Access::Random,
        defaults: Defaults {
            bs: 4 * KIB,
            read_pct: 70,
            ..Defaults::BASE
        },
    }
}

pub const SEQ_READ: Single = seq(Direction::Read, 1, 1);
pub const SEQ_WRITE: Single = seq(Direction::Write, 1, 1);
pub const SEQ_READ_Q8: Single = seq(Direction::Read, 8, 1);
pub const SEQ_WRITE_Q8: Single = seq(Direction::Write, 8, 1);
pub const CONCURRENT_READ: Single = seq(Direction::Read, 1, 2);
pub const CONCURRENT_WRITE: Single = seq(Direction::Write, 1, 2);
pub const SYNC_LATENCY: Single = Single {
    direction: Direction::Write,
    access: Access::Forward,
    defaults: Defaults {
        bs: 512,
        bs_grows_to_block: true,
        time: None,
        warmup: Duration::ZERO,
        count: Some(1000),
        sync: SyncMode::Dsync,
        ..Defaults::BASE
    },
};
pub const RAND_READ: Single = rand(Direction::Read);
pub const RAND_WRITE: Single = rand(Direction::Write);
pub const RAND_MIXED: Single = rand(Direction::Mixed);

impl Family for Single {
    fn defaults(&self, _test: TestName) -> Defaults {
        self.defaults
    }

    fn params(&self, test: TestName) -> &'static [Param] {
        use Param::*;
        match (test, self.direction) {
            (TestName::SyncLatency, _) => &[Bs, Size, Data],
            (_, Direction::Mixed) => &[Bs, Qd, Jobs, Time, Amount, Warmup, Size, ReadPct, Data],
            (_, Direction::Write) => &[Bs, Qd, Jobs, Time, Amount, Warmup, Size, Data],
            (_, Direction::Read) => &[Bs, Qd, Jobs, Time, Amount, Warmup, Size],
        }
    }

    fn writes(&self, _test: TestName, params: &TestParams) -> Writes {
        match self.direction {
            Direction::Read => Writes::Never,
            // A mix of 100 % reads writes nothing: it is a read test, asked no confirmation.
            Direction::Mixed if params.read_pct == Some(100) => Writes::Never,
            Direction::Write | Direction::Mixed => Writes::Always,
        }
    }

    fn phases(&self, test: TestName, ctx: &PlanContext) -> Result<Vec<Phase>, SpecError> {
        let (direction, access) = (self.direction, self.access);
        let r = ctx.resolved;
        let mix = match direction {
            Direction::Read => Mix::Read,
            Direction::Write => Mix::Write,
            Direction::Mixed => Mix::Mixed {
                read_pct: r.read_pct,
            },
        };
        Ok(vec![Phase {
            label: test.id().to_string(),
            tag: PhaseTag::Single,
            job: ctx.job(r.bs, r.qd, r.jobs, access, mix)?,
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::catalog::build::build_plan;
    use crate::bench::catalog::family::tests::{dev, plan};
    use crate::bench::plan::params::MIB;

    #[test]
    fn seq_read_defaults() {
        let p = plan(TestName::SeqRead, &TestParams::default()).unwrap();
        assert_eq!(p.phases.len(), 1);
        let j = &p.phases[0].job;
        assert_eq!((j.bs, j.qd, j.workers), (MIB, 1, 1));
        assert_eq!(j.access, Access::Forward);
        assert_eq!(j.time, Some(Duration::from_secs(10)));
        assert_eq!(j.warmup, Duration::from_secs(1));
        assert_eq!(j.ops_per_worker, None);
        assert!(p.direct && !p.writes());
        assert_eq!(j.describe(), "bs 1M, QD1, 1 worker, forward read");
    }

    #[test]
    fn concurrent_workers_get_disjoint_regions() {
        let j = plan(TestName::ConcurrentRead, &TestParams::default())
            .unwrap()
            .phases[0]
            .job
            .clone();
        assert_eq!(j.workers, 2);
        assert_eq!(j.worker_region(0), (0, 512 * MIB));
        assert_eq!(j.worker_region(1), (512 * MIB, 512 * MIB));
        let r = plan(
            TestName::RandRead,
            &TestParams {
                jobs: Some(4),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            r.phases[0].job.worker_region(3),
            (0, 1 << 30),
            "random workers share"
        );
    }

    #[test]
    fn sync_latency_on_4kn_uses_4k_and_says_so() {
        let p = build_plan(
            TestName::SyncLatency,
            &TestParams::default(),
            &dev(1 << 30, 4096),
            true,
        )
        .unwrap();
        let j = &p.phases[0].job;
        assert_eq!(j.bs, 4096);
        assert_eq!(j.ops_per_worker, Some(1000));
        assert_eq!(j.sync, SyncMode::Dsync);
        assert!(
            p.notes[0].contains("512-byte writes are impossible"),
            "{:?}",
            p.notes
        );
        // An explicit 512 on 4Kn is an error, not a silent change.
        let err = build_plan(
            TestName::SyncLatency,
            &TestParams {
                bs: Some(512),
                ..Default::default()
            },
            &dev(1 << 30, 4096),
            true,
        )
        .unwrap_err();
        assert!(matches!(
            err,
            SpecError::Misaligned {
                bs: 512,
                lbs: 4096,
                ..
            }
        ));
    }
}
