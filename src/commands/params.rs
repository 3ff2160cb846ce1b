//! The admin's `run` flags as the engine's test parameters, shared by `run` on one target,
//! `run` on several and the setting sweeps.

use crate::bench::plan::params::TestParams;
use crate::cli::{RunArgs, SyncArg};
use crate::sys::direct::SyncMode;

/// The admin's flags as test parameters.
pub fn params_from_args(a: &RunArgs) -> TestParams {
    TestParams {
        bs: a.bs,
        qd: a.qd,
        jobs: a.jobs,
        time: a.time,
        warmup: a.warmup,
        size: a.size,
        offset: a.offset,
        io_size: a.io_size,
        count: a.count,
        read_pct: a.read_pct,
        interval: a.interval,
        buffered: a.buffered,
        huge_pages: a.huge_pages,
        zeros: a.zeros,
        preserve: a.preserve,
        sync: a.sync.map(|s| match s {
            SyncArg::Dsync => SyncMode::Dsync,
            SyncArg::Sync => SyncMode::Sync,
        }),
        engine: a.engine,
        min_bs: a.min_bs,
        max_bs: a.max_bs,
        qds: a.qds.clone(),
        include_writes: a.write,
        seed: a.seed,
        files: a.files,
    }
}
