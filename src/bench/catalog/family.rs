//! Test families: each file in `family/` owns a kind of test (one job, a size sweep, a queue
//! depth sweep, CrystalDiskMark's grid): its parameters, defaults, whether a run writes, and
//! its phases. The checks every test shares are made once in `catalog::build::build_plan`,
//! which hands the family a `PlanContext`.

pub mod cdm;
pub mod metadata;
pub mod qd_scaling;
pub mod single;
pub mod size_scaling;

use std::time::Duration;

use crate::bench::plan::params::{COMMON, Defaults, Param, Resolved, TestParams};
use crate::bench::plan::test_name::{TestName, Writes};
use crate::bench::plan::{Access, Mix};
use crate::bench::plan::{Job, Phase, SpecError, check_range};
use crate::model::Bytes;
use crate::sys::direct::SyncMode;

/// What a family of tests knows about its tests.
pub trait Family: Sync {
    /// `test`'s defaults.
    fn defaults(&self, test: TestName) -> Defaults;

    /// The parameters `test` takes besides `params::COMMON`, in the Test screen's order; one not
    /// listed is dropped by the Test screen.
    fn params(&self, test: TestName) -> &'static [Param];

    /// Whether a run of `test` with `params` writes: the one rule (`TestName::writes_with`).
    fn writes(&self, test: TestName, params: &TestParams) -> Writes;

    /// The phases of `test`, in the order they run.
    fn phases(&self, test: TestName, ctx: &PlanContext) -> Result<Vec<Phase>, SpecError>;

    /// What to lower when the buffers do not fit in memory.
    fn lower_hint(&self) -> &'static str {
        "the request size (--bs), queue depth (--qd) or workers (--jobs)"
    }

    /// The parameters shown after the test's own: `params::COMMON` unless the family has no use
    /// for some (the metadata test has no engine and no I/O path).
    fn common_params(&self) -> &'static [Param] {
        &COMMON
    }

    /// A family whose tests run in a directory (the metadata test): the target is checked by
    /// `target::prepare_directory` and runs on `exec::engines::directory`.
    fn runs_in_directory(&self) -> bool {
        false
    }
}

/// The validated request a family builds its phases from.
pub struct PlanContext<'a> {
    pub params: &'a TestParams,
    /// The request with the test's defaults applied; `bs` already fitted to the block size.
    pub resolved: &'a Resolved,
    /// The alignment O_DIRECT needs (1 when buffered).
    pub lbs: u32,
    /// "device" or "file system", for messages.
    pub what: &'static str,
    pub region_start: u64,
    pub region_len: u64,
    pub writes_allowed: bool,
}

/// The largest request a test may make.
pub const MAX_REQUEST: u64 = 256 * 1024 * 1024;

/// Checks a request size: at most `MAX_REQUEST`, and a multiple of `lbs` (O_DIRECT's
/// alignment) on the `what`.
pub fn check_request_size(bs: u64, lbs: u32, what: &'static str) -> Result<(), SpecError> {
    check_range("request size", bs, 1, MAX_REQUEST)?;
    if !bs.is_multiple_of(u64::from(lbs)) {
        return Err(SpecError::Misaligned { bs, lbs, what });
    }
    Ok(())
}

impl PlanContext<'_> {
    /// Checks a request size: in range and aligned.
    pub fn check_bs(&self, bs: u64) -> Result<(), SpecError> {
        check_request_size(bs, self.lbs, self.what)
    }

    /// One job over the test region, bounded as the request says.
    pub fn job(
        &self,
        bs: u64,
        qd: u32,
        workers: u32,
        access: Access,
        mix: Mix,
    ) -> Result<Job, SpecError> {
        let r = self.resolved;
        let ops_per_worker = match (r.count, r.io_size) {
            (Some(c), Some(b)) => Some(c.min(b.div_ceil(bs))),
            (Some(c), None) => Some(c),
            (None, Some(b)) => Some(b.div_ceil(bs)),
            (None, None) => None,
        };
        let ops_per_worker = if r.explicit_amount || r.time.is_none() {
            ops_per_worker
        } else {
            None
        };
        if r.time.is_none() && ops_per_worker.is_none() {
            return Err(SpecError::Unbounded);
        }
        let j = Job {
            bs,
            qd,
            workers,
            access,
            mix,
            region_start: self.region_start,
            region_len: self.region_len,
            split_region: access != Access::Random,
            time: r.time,
            warmup: r.warmup,
            ops_per_worker,
            sync: if mix.writes() { r.sync } else { SyncMode::None },
            seed: r.seed,
            rewrite: self.params.preserve && mix.writes(),
        };
        let (_, slice) = j.worker_region(0);
        if slice < bs {
            return Err(SpecError::RegionTooSmall {
                region: if j.split_region && workers > 1 {
                    format!("{} per worker", Bytes(slice).iec())
                } else {
                    Bytes(self.region_len).iec()
                },
                bs: Bytes(bs).iec(),
            });
        }
        Ok(j)
    }
}

/// Phase time for the sweeps and CrystalDiskMark: many short phases.
pub(crate) const fn short_phases(time: Duration, warmup: Duration) -> Defaults {
    Defaults {
        time: Some(time),
        warmup,
        ..Defaults::BASE
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::bench::catalog::build::build_plan;
    use crate::bench::plan::params::{KIB, TestParams};
    use crate::bench::plan::test_name::TestName;
    use crate::bench::plan::{Plan, SpecError, TargetFacts};

    /// A device of `size` bytes with `lbs`-byte logical blocks.
    pub fn dev(size: u64, lbs: u32) -> TargetFacts {
        TargetFacts {
            size,
            logical_block_size: lbs,
            max_request: Some(1280 * KIB),
            is_file: false,
        }
    }

    /// `test` planned on a 1 GiB device with 512-byte blocks, writes allowed.
    pub fn plan(test: TestName, p: &TestParams) -> Result<Plan, SpecError> {
        build_plan(test, p, &dev(1 << 30, 512), true)
    }
}
