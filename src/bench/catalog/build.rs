//! From what the admin asked for (`TestParams`) and what the target is (`TargetFacts`) to a
//! validated `Plan`: the checks every test shares are made here, defaults come from the test's
//! row and phases from its family. Pure, so every rule is unit-tested.

use crate::bench::catalog::family::{PlanContext, check_request_size};
use crate::bench::catalog::{CATALOG, resolve};
use crate::bench::plan::params::{Param, Resolved, TestParams};
use crate::bench::plan::test_name::{TestName, Writes};
use crate::bench::plan::{
    DataKind, HUGE_PAGES_NOTE, MAX_QUEUE_DEPTH, MAX_WORKERS, Phase, Plan, REWRITE_NOTE, SpecError,
    TargetFacts, check_range,
};
use crate::model::Bytes;

/// The shortest measured time a run accepts (besides 0, no limit).
pub const MIN_TIME: std::time::Duration = std::time::Duration::from_millis(100);

/// Checks the request, then the test's family plans its phases (`catalog/family/`).
pub fn build_plan(
    test: TestName,
    params: &TestParams,
    target: &TargetFacts,
    writes_allowed: bool,
) -> Result<Plan, SpecError> {
    if target.size == 0 {
        return Err(SpecError::EmptyTarget);
    }
    let defaults = test.defaults();
    let mut resolved = resolve(test, params);
    let mut notes = Vec::new();
    let direct = !params.buffered;
    // Direct I/O must be aligned to the logical block size; buffered I/O only to a byte.
    let lbs = if direct {
        target.logical_block_size.max(1)
    } else {
        1
    };
    let what = if target.is_file {
        "file system"
    } else {
        "device"
    };

    if defaults.bs_grows_to_block && params.bs.is_none() && resolved.bs < u64::from(lbs) {
        notes.push(format!(
            "{}-byte writes are impossible with O_DIRECT on a device with {lbs}-byte sectors: \
             using {lbs}-byte writes",
            defaults.bs
        ));
        resolved.bs = u64::from(lbs);
    }
    check_limits(test, params, &resolved, lbs, what)?;
    check_options(test, params)?;
    let (offset, size) = region(&resolved, target, lbs)?;
    check_range(
        "sample interval (ms)",
        resolved.interval.as_millis() as u64,
        10,
        60_000,
    )?;
    let phases = test.phases(&PlanContext {
        params,
        resolved: &resolved,
        lbs,
        what,
        region_start: offset,
        region_len: size,
        writes_allowed,
    })?;

    add_notes(&mut notes, params, target, &phases, direct);

    let plan = Plan {
        test,
        phases,
        direct,
        huge_pages: params.huge_pages,
        engine: params.engine,
        data: if params.preserve {
            DataKind::Rewrite
        } else if params.zeros {
            DataKind::Zeros
        } else {
            DataKind::Random {
                seed: resolved.seed,
            }
        },
        interval: resolved.interval,
        notes,
    };
    // The phases built above must agree with the one rule, and writing without permission is
    // refused.
    let must_write = test.writes_with(params) == Writes::Always;
    if (must_write || plan.writes()) && !writes_allowed {
        return Err(SpecError::Invalid(
            "this test writes: it needs the write confirmation".into(),
        ));
    }
    Ok(plan)
}

/// The request size, queue depth, worker count and read percentage within their limits.
fn check_limits(
    test: TestName,
    params: &TestParams,
    resolved: &Resolved,
    lbs: u32,
    what: &'static str,
) -> Result<(), SpecError> {
    check_request_size(resolved.bs, lbs, what)?;
    check_range(
        "queue depth",
        u64::from(resolved.qd),
        1,
        u64::from(MAX_QUEUE_DEPTH),
    )?;
    check_range(
        "worker count",
        u64::from(resolved.jobs),
        1,
        u64::from(MAX_WORKERS),
    )?;
    if let Some(p) = params.read_pct {
        check_range("read percentage", u64::from(p), 0, 100)?;
        if !test.params().contains(&Param::ReadPct) {
            let takes: Vec<&str> = CATALOG
                .iter()
                .filter(|t| t.name.params().contains(&Param::ReadPct))
                .map(|t| t.id)
                .collect();
            return Err(SpecError::Invalid(format!(
                "--read-pct applies to {}, not {test}",
                takes.join(" and ")
            )));
        }
    }
    Ok(())
}

/// The options that cannot go together, or with this test.
fn check_options(test: TestName, params: &TestParams) -> Result<(), SpecError> {
    if params.preserve {
        if params.zeros {
            return Err(SpecError::Invalid(
                "--preserve writes back the data that is there; --zeros cannot go with it".into(),
            ));
        }
        if test.info().writes == Writes::Never {
            return Err(SpecError::Invalid(format!(
                "--preserve applies to tests that write; {test} only reads"
            )));
        }
        if test.info().family.runs_in_directory() {
            return Err(SpecError::Invalid(format!(
                "--preserve rewrites the blocks of a device or file in place; {test} creates \
                 and deletes files of its own, so there is nothing to preserve"
            )));
        }
    }
    // --time 0 is "no time limit"; any other below MIN_TIME measures nothing (a run of 100 ns
    // completed no I/O and called it a result).
    if let Some(t) = params.time.filter(|t| !t.is_zero() && *t < MIN_TIME) {
        return Err(SpecError::Invalid(format!(
            "--time {t:?} is too short to measure anything: give at least {MIN_TIME:?} (0 for no \
             time limit)"
        )));
    }
    if params.io_size == Some(0) || params.count == Some(0) {
        return Err(SpecError::Invalid(
            "--io-size and --count must be larger than 0".into(),
        ));
    }
    Ok(())
}

/// The tested region, `(offset, size)`: aligned and inside the target.
fn region(resolved: &Resolved, target: &TargetFacts, lbs: u32) -> Result<(u64, u64), SpecError> {
    let offset = resolved.offset;
    if !offset.is_multiple_of(u64::from(lbs)) {
        return Err(SpecError::MisalignedRegion {
            what: "offset",
            value: offset,
            lbs,
        });
    }
    let size = resolved
        .size
        .unwrap_or_else(|| target.size.saturating_sub(offset));
    if offset.saturating_add(size) > target.size {
        return Err(SpecError::PastEnd {
            offset,
            size,
            target: target.size,
        });
    }
    Ok((offset, size))
}

/// The plan's notes on how the kernel and the options shape the I/O.
fn add_notes(
    notes: &mut Vec<String>,
    params: &TestParams,
    target: &TargetFacts,
    phases: &[Phase],
    direct: bool,
) {
    if let Some(max_req) = target.max_request
        && phases.iter().any(|p| p.job.bs > max_req)
    {
        notes.push(format!(
            "requests larger than {} are split by the kernel (queue/max_sectors_kb)",
            Bytes(max_req).short()
        ));
    }
    if !direct {
        notes.push(
            "BUFFERED: I/O goes through the page cache; results may not reflect the device".into(),
        );
    }
    if params.preserve && phases.iter().any(|p| p.job.writes()) {
        notes.push(REWRITE_NOTE.into());
    }
    if params.huge_pages {
        notes.push(HUGE_PAGES_NOTE.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::plan::REWRITE_LABEL;
    use crate::bench::plan::params::MIB;
    use std::time::Duration;

    use crate::bench::catalog::family::tests::{dev, plan};

    #[test]
    fn io_size_bounds_instead_of_time() {
        let params = TestParams {
            io_size: Some(200 * MIB),
            ..Default::default()
        };
        let j = &plan(TestName::SeqWrite, &params).unwrap().phases[0].job;
        assert_eq!(j.ops_per_worker, Some(200));
        assert_eq!(j.time, None);
        assert_eq!(j.warmup, Duration::ZERO, "dd semantics: nothing extra");
    }

    #[test]
    fn validation_errors() {
        let e = |p: TestParams| plan(TestName::RandRead, &p).unwrap_err().to_string();
        assert!(
            e(TestParams {
                bs: Some(1000),
                ..Default::default()
            })
            .contains("not a multiple")
        );
        assert!(
            e(TestParams {
                qd: Some(0),
                ..Default::default()
            })
            .contains("queue depth")
        );
        assert!(
            e(TestParams {
                jobs: Some(1000),
                ..Default::default()
            })
            .contains("worker count")
        );
        assert!(
            e(TestParams {
                size: Some(2 << 30),
                ..Default::default()
            })
            .contains("past the end")
        );
        assert!(
            e(TestParams {
                time: Some(Duration::ZERO),
                ..Default::default()
            })
            .contains("nothing bounds")
        );
        assert!(
            e(TestParams {
                size: Some(2048),
                ..Default::default()
            })
            .contains("smaller than one request")
        );
        assert!(
            e(TestParams {
                offset: Some(100),
                ..Default::default()
            })
            .contains("offset 100")
        );
        let empty = build_plan(
            TestName::SeqRead,
            &TestParams::default(),
            &dev(0, 512),
            true,
        );
        assert_eq!(empty.unwrap_err(), SpecError::EmptyTarget);
    }

    #[test]
    fn writes_need_permission() {
        let err = build_plan(
            TestName::SeqWrite,
            &TestParams::default(),
            &dev(1 << 30, 512),
            false,
        )
        .unwrap_err();
        assert!(err.to_string().contains("needs the write confirmation"));
        // CrystalDiskMark without permission runs its reads and says why writes are missing.
        let cdm = build_plan(
            TestName::Cdm,
            &TestParams::default(),
            &dev(1 << 30, 512),
            false,
        )
        .unwrap();
        assert_eq!(cdm.phases.len(), 4);
        assert!(!cdm.writes());
    }

    #[test]
    fn plans_write_exactly_when_the_one_rule_says_so() {
        use crate::bench::catalog::CATALOG;
        for t in &CATALOG {
            let pcts: &[Option<u8>] = match t.name {
                TestName::RandMixed | TestName::QdSweep => &[None, Some(0), Some(50), Some(100)],
                _ => &[None],
            };
            for &read_pct in pcts {
                for include_writes in [false, true] {
                    let params = TestParams {
                        read_pct,
                        include_writes,
                        count: Some(4),
                        ..Default::default()
                    };
                    let build = |allowed| build_plan(t.name, &params, &dev(1 << 30, 512), allowed);
                    let case = format!("{} {read_pct:?} include_writes={include_writes}", t.id);
                    match t.name.writes_with(&params) {
                        Writes::Never => {
                            assert!(!build(false).unwrap().writes(), "{case}");
                            assert!(!build(true).unwrap().writes(), "{case}");
                        }
                        Writes::Always => {
                            let err = build(false).unwrap_err().to_string();
                            assert!(err.contains("needs the write confirmation"), "{case}");
                            assert!(build(true).unwrap().writes(), "{case}");
                        }
                        Writes::Optional => {
                            assert!(!build(false).unwrap().writes(), "{case}");
                            assert!(build(true).unwrap().writes(), "{case}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn preserve_rewrites_every_write_and_nothing_else() {
        use crate::bench::catalog::CATALOG;
        let preserve = TestParams {
            preserve: true,
            include_writes: true,
            read_pct: None,
            count: Some(4),
            ..Default::default()
        };
        // Tests of a directory (metadata) refuse --preserve: see the test below.
        for t in CATALOG
            .iter()
            .filter(|t| t.writes != Writes::Never && !t.family.runs_in_directory())
        {
            let mut params = preserve.clone();
            if t.name == TestName::QdSweep {
                params.read_pct = Some(50);
            }
            let p = build_plan(t.name, &params, &dev(1 << 30, 512), true).unwrap();
            assert!(p.writes() && p.rewrites(), "{}", t.id);
            assert_eq!(p.data, DataKind::Rewrite, "{}", t.id);
            for phase in &p.phases {
                // Exactly the phases that write rewrite; the reads of a preset stay reads.
                assert_eq!(
                    phase.job.rewrite,
                    phase.job.writes(),
                    "{} {}",
                    t.id,
                    phase.label
                );
                if phase.job.writes() {
                    assert!(
                        phase.job.describe().starts_with(REWRITE_LABEL),
                        "{}",
                        phase.job.describe()
                    );
                }
            }
            assert!(
                p.notes.iter().any(|n| n.starts_with(REWRITE_LABEL)),
                "{}",
                t.id
            );
            // No write pattern is allocated for it (nor counted against memory).
            let plain = build_plan(
                t.name,
                &TestParams {
                    preserve: false,
                    ..params.clone()
                },
                &dev(1 << 30, 512),
                true,
            )
            .unwrap();
            assert!(
                p.memory_need().total < plain.memory_need().total,
                "{}",
                t.id
            );
            // The confirmation is still needed where it was.
            if t.writes == Writes::Always {
                let err = build_plan(t.name, &params, &dev(1 << 30, 512), false).unwrap_err();
                assert!(err.to_string().contains("write confirmation"), "{}", t.id);
            }
        }
        // Without permission CrystalDiskMark runs its reads: nothing to rewrite, no note.
        let reads_only = TestParams {
            include_writes: false,
            ..preserve
        };
        let cdm = build_plan(TestName::Cdm, &reads_only, &dev(1 << 30, 512), false).unwrap();
        assert!(!cdm.writes() && cdm.notes.is_empty());
        assert!(cdm.phases.iter().all(|p| !p.job.rewrite));
    }

    #[test]
    fn preserve_is_refused_where_it_means_nothing() {
        let e = |test, p: TestParams| plan(test, &p).unwrap_err().to_string();
        let both = TestParams {
            preserve: true,
            zeros: true,
            ..Default::default()
        };
        assert!(e(TestName::SeqWrite, both).contains("--zeros cannot go with it"));
        let read = TestParams {
            preserve: true,
            ..Default::default()
        };
        assert_eq!(
            e(TestName::RandRead, read.clone()),
            "--preserve applies to tests that write; rand-read only reads"
        );
        assert!(
            e(TestName::Metadata, read).contains("creates and deletes files of its own"),
            "metadata has no blocks to preserve"
        );
    }

    #[test]
    fn buffered_is_labelled_and_unaligned_allowed() {
        let p = plan(
            TestName::SeqRead,
            &TestParams {
                buffered: true,
                bs: Some(1000),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(!p.direct);
        assert!(p.notes.iter().any(|n| n.starts_with("BUFFERED")));
    }
}
