//! The test catalogue: every test the seeds describe (dd, concurrent dd, ORION,
//! iozone/diskperf sweeps, CrystalDiskMark), one row each with its name, summary, origin,
//! whether it writes, the figure it is judged on, and the family that owns its parameters,
//! defaults and phases (`family/`). `build` turns a request into a plan. Above `bench::plan`,
//! below everything that runs or reads a test.

pub mod build;
pub mod family;

use std::fmt;
use std::str::FromStr;

use crate::bench::catalog::family::cdm::Cdm;
use crate::bench::catalog::family::metadata::Metadata;
use crate::bench::catalog::family::qd_scaling::QdScaling;
use crate::bench::catalog::family::single;
use crate::bench::catalog::family::size_scaling::SizeScaling;
use crate::bench::catalog::family::{Family, PlanContext};
use crate::bench::plan::metric::Metric;
use crate::bench::plan::params::{Defaults, Param, Resolved, TestParams, resolve_with};
use crate::bench::plan::{Phase, SpecError};

use crate::bench::plan::test_name::{TestName, Writes};

/// A catalogue entry.
#[derive(Clone, Copy)]
pub struct TestInfo {
    pub name: TestName,
    pub id: &'static str,
    pub summary: &'static str,
    pub origin: &'static str,
    /// What the test can do, for the lists (`disktriage tests`, the Test screen); the family's
    /// rule must agree (a test checks).
    pub writes: Writes,
    /// The figure the test is judged on: its report's headline, what a setting sweep compares.
    pub metric: Metric,
    /// The family that owns its parameters, defaults, writes rule and phases.
    pub family: &'static dyn Family,
}

/// One row per test, in `TestName`'s order (a new variant does not build without its row).
pub const CATALOG: [TestInfo; TestName::ALL.len()] = [
    TestInfo {
        name: TestName::SeqRead,
        id: "seq-read",
        summary: "sequential read, 1 MiB requests, QD1",
        origin: "dd if=DEV of=/dev/null bs=1MiB iflag=direct",
        writes: Writes::Never,
        metric: Metric::MbPerSec,
        family: &single::SEQ_READ,
    },
    TestInfo {
        name: TestName::SeqWrite,
        id: "seq-write",
        summary: "sequential write, 1 MiB requests, QD1",
        origin: "dd if=/dev/zero of=DEV bs=1MiB oflag=direct",
        writes: Writes::Always,
        metric: Metric::MbPerSec,
        family: &single::SEQ_WRITE,
    },
    TestInfo {
        name: TestName::SeqReadQ8,
        id: "seq-read-q8",
        summary: "sequential read, 1 MiB requests, QD8",
        origin: "CrystalDiskMark SEQ1M Q8T1",
        writes: Writes::Never,
        metric: Metric::MbPerSec,
        family: &single::SEQ_READ_Q8,
    },
    TestInfo {
        name: TestName::SeqWriteQ8,
        id: "seq-write-q8",
        summary: "sequential write, 1 MiB requests, QD8",
        origin: "CrystalDiskMark SEQ1M Q8T1",
        writes: Writes::Always,
        metric: Metric::MbPerSec,
        family: &single::SEQ_WRITE_Q8,
    },
    TestInfo {
        name: TestName::ConcurrentRead,
        id: "concurrent-read",
        summary: "N sequential readers on disjoint regions (default 2), each rate and the total",
        origin: "two dd readers, the second with skip=200",
        writes: Writes::Never,
        metric: Metric::MbPerSec,
        family: &single::CONCURRENT_READ,
    },
    TestInfo {
        name: TestName::ConcurrentWrite,
        id: "concurrent-write",
        summary: "N sequential writers on disjoint regions (default 2), each rate and the total",
        origin: "two dd writers, the second with seek=200",
        writes: Writes::Always,
        metric: Metric::MbPerSec,
        family: &single::CONCURRENT_WRITE,
    },
    TestInfo {
        name: TestName::SyncLatency,
        id: "sync-latency",
        summary: "1000 synchronous 512-byte writes (O_DSYNC, or O_SYNC), latency per write",
        origin: "dd if=/dev/zero of=DEV bs=512 count=1000 oflag=dsync",
        writes: Writes::Always,
        metric: Metric::MeanLatencyMs,
        family: &single::SYNC_LATENCY,
    },
    TestInfo {
        name: TestName::RandRead,
        id: "rand-read",
        summary: "random read, 4 KiB requests (8 KiB is ORION's small I/O), QD and workers settable",
        origin: "CrystalDiskMark RND4K, ORION small random",
        writes: Writes::Never,
        metric: Metric::Iops,
        family: &single::RAND_READ,
    },
    TestInfo {
        name: TestName::RandWrite,
        id: "rand-write",
        summary: "random write, 4 KiB requests, QD and workers settable",
        origin: "CrystalDiskMark RND4K write",
        writes: Writes::Always,
        metric: Metric::Iops,
        family: &single::RAND_WRITE,
    },
    TestInfo {
        name: TestName::RandMixed,
        id: "rand-mixed",
        summary: "random mixed read/write (70 % reads by default), 4 KiB requests",
        origin: "CrystalDiskMark mix R70/W30, ORION -write",
        writes: Writes::Optional,
        metric: Metric::Iops,
        family: &single::RAND_MIXED,
    },
    TestInfo {
        name: TestName::SizeSweep,
        id: "size-sweep",
        summary: "request sizes doubling from --min-bs to --max-bs: forward, backward and random \
                  read (and write with --write), MB/s table",
        origin: "SGI diskperf, iozone -a",
        writes: Writes::Optional,
        metric: Metric::MbPerSec,
        family: &SizeScaling,
    },
    TestInfo {
        name: TestName::QdSweep,
        id: "qd-sweep",
        summary: "queue depths 1,2,4..32 for small random (8 KiB) and large sequential (1 MiB) \
                  reads (and writes with a read % below 100): max IOPS, max MB/s, min latency \
                  and the load of each",
        origin: "Oracle ORION -run simple/advanced",
        writes: Writes::Optional,
        metric: Metric::MbPerSec,
        family: &QdScaling,
    },
    TestInfo {
        name: TestName::Cdm,
        id: "cdm",
        summary: "CrystalDiskMark's four: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1, read \
                  and write",
        origin: "CrystalDiskMark / KDiskMark default profile",
        writes: Writes::Optional,
        metric: Metric::MbPerSec,
        family: &Cdm::DEFAULT,
    },
    TestInfo {
        name: TestName::CdmNvme,
        id: "cdm-nvme",
        summary: "CrystalDiskMark's NVMe set: SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1",
        origin: "CrystalDiskMark NVMe SSD profile",
        writes: Writes::Optional,
        metric: Metric::MbPerSec,
        family: &Cdm::NVME,
    },
    TestInfo {
        name: TestName::Metadata,
        id: "metadata",
        summary: "create, stat and delete --files empty files (16384) in sequential, then \
                  random order, in a scratch directory of a DIRECTORY target: files/s and \
                  latency per operation",
        origin: "bonnie++ -n 16",
        writes: Writes::Always,
        // Its rate is files per second, counted as its I/Os.
        metric: Metric::Iops,
        family: &Metadata,
    },
];

// Checked when the crate builds: row i is the row of `TestName::ALL[i]` (its length is
// `ALL`'s), so `TestName::info` is total.
const _: () = {
    let mut i = 0;
    while i < CATALOG.len() {
        assert!(
            CATALOG[i].name as usize == i,
            "CATALOG's rows must be in TestName's order"
        );
        i += 1;
    }
};

impl TestName {
    /// The test's catalogue row (row `self as usize`, checked at build time).
    pub fn info(self) -> &'static TestInfo {
        &CATALOG[self as usize]
    }

    pub fn id(self) -> &'static str {
        self.info().id
    }

    /// Whether this test, run with `params`, writes: `Always` needs the write confirmation,
    /// `Optional` writes only when one is given (CrystalDiskMark's write rows), `Never` is
    /// read-only. The one rule the write guard, the plan and the TUI follow; each family says it.
    pub fn writes_with(self, params: &TestParams) -> Writes {
        self.info().family.writes(self, params)
    }

    /// The test's defaults.
    pub fn defaults(self) -> Defaults {
        self.info().family.defaults(self)
    }

    /// The parameters the test takes, in the Test screen's order: its own, then the common ones.
    pub fn params(self) -> Vec<Param> {
        let family = self.info().family;
        let mut v = family.params(self).to_vec();
        v.extend_from_slice(family.common_params());
        v
    }

    /// The test's phases, from a validated request.
    pub(crate) fn phases(self, ctx: &PlanContext) -> Result<Vec<Phase>, SpecError> {
        self.info().family.phases(self, ctx)
    }
}

impl Metric {
    /// The figure `test` is judged on (its catalogue row's).
    pub fn for_test(test: TestName) -> Metric {
        test.info().metric
    }
}

/// `params` with `test`'s defaults filled in: what its plan is built from.
pub fn resolve(test: TestName, params: &TestParams) -> Resolved {
    resolve_with(&test.defaults(), params)
}

impl fmt::Display for TestName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// An unknown test name, with the list of known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown test {name:?}; known tests: {known}")]
pub struct UnknownTest {
    pub name: String,
    pub known: String,
}

impl FromStr for TestName {
    type Err = UnknownTest;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CATALOG
            .iter()
            .find(|t| t.id == s)
            .map(|t| t.name)
            .ok_or_else(|| UnknownTest {
                name: s.to_string(),
                known: CATALOG.iter().map(|t| t.id).collect::<Vec<_>>().join(", "),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::plan::params::KIB;
    use crate::sys::direct::SyncMode;
    use std::time::Duration;

    #[test]
    fn every_test_has_its_own_complete_row_and_its_name_round_trips() {
        assert_eq!(TestName::ALL.len(), CATALOG.len());
        for &t in TestName::ALL {
            let row = t.info();
            assert_eq!(row.name, t);
            assert_eq!(t.id().parse::<TestName>().unwrap(), t);
            assert_eq!(t.to_string(), row.id);
            assert!(!row.summary.is_empty() && !row.origin.is_empty(), "{t}");
            assert!(!t.params().is_empty(), "{t}");
        }
        let mut ids: Vec<_> = CATALOG.iter().map(|t| t.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), CATALOG.len());
        let err = "seq-reed".parse::<TestName>().unwrap_err().to_string();
        assert!(err.contains("seq-read, seq-write"), "{err}");
    }

    #[test]
    fn every_test_plans_from_its_own_row_and_no_two_plan_alike() {
        // A test that borrowed another's preset would plan as that one.
        let mut seen: Vec<Vec<String>> = Vec::new();
        for &t in TestName::ALL {
            let plan = family::tests::plan(t, &TestParams::default()).unwrap();
            let phases: Vec<String> = (plan.phases.iter())
                .map(|p| format!("{:?} {}", p.tag, p.job.describe()))
                .collect();
            assert!(!phases.is_empty(), "{t}");
            assert!(
                !seen.contains(&phases),
                "{t} plans as another test: {phases:?}"
            );
            seen.push(phases);
        }
    }

    #[test]
    fn whether_a_run_writes_follows_its_parameters() {
        let with = |read_pct: Option<u8>, include_writes: bool| TestParams {
            read_pct,
            include_writes,
            ..TestParams::default()
        };
        let none = TestParams::default();
        assert_eq!(TestName::SeqRead.writes_with(&none), Writes::Never);
        assert_eq!(TestName::SyncLatency.writes_with(&none), Writes::Always);
        // qd-sweep reads unless --read-pct asks for writes.
        assert_eq!(TestName::QdSweep.writes_with(&none), Writes::Never);
        assert_eq!(
            TestName::QdSweep.writes_with(&with(Some(100), false)),
            Writes::Never
        );
        assert_eq!(
            TestName::QdSweep.writes_with(&with(Some(50), false)),
            Writes::Always
        );
        assert_eq!(
            TestName::QdSweep.writes_with(&with(Some(0), false)),
            Writes::Always
        );
        assert_eq!(TestName::RandMixed.writes_with(&none), Writes::Always);
        // rand-mixed at --read-pct 100 only reads: no confirmation asked.
        assert_eq!(
            TestName::RandMixed.writes_with(&with(Some(100), false)),
            Writes::Never
        );
        assert_eq!(
            TestName::RandMixed.writes_with(&with(Some(99), false)),
            Writes::Always
        );
        assert_eq!(TestName::SizeSweep.writes_with(&none), Writes::Never);
        assert_eq!(
            TestName::SizeSweep.writes_with(&with(None, true)),
            Writes::Always
        );
        assert_eq!(TestName::Cdm.writes_with(&none), Writes::Optional);
        assert_eq!(TestName::Cdm.writes_with(&with(None, true)), Writes::Always);
    }

    #[test]
    fn the_catalogue_mark_agrees_with_the_rule() {
        // Read-only never writes, writing always does, optional writes for some parameters only.
        let variants: Vec<TestParams> = [None, Some(0), Some(50), Some(100)]
            .into_iter()
            .flat_map(|read_pct| {
                [false, true].map(|include_writes| TestParams {
                    read_pct,
                    include_writes,
                    ..TestParams::default()
                })
            })
            .collect();
        for t in &CATALOG {
            let outcomes: Vec<Writes> = variants.iter().map(|p| t.name.writes_with(p)).collect();
            match t.writes {
                Writes::Never => assert!(outcomes.iter().all(|&w| w == Writes::Never), "{}", t.id),
                Writes::Always => {
                    assert!(outcomes.iter().all(|&w| w == Writes::Always), "{}", t.id);
                }
                Writes::Optional => assert!(
                    outcomes.contains(&Writes::Always)
                        && outcomes.iter().any(|&w| w != Writes::Always),
                    "{}",
                    t.id
                ),
            }
        }
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
