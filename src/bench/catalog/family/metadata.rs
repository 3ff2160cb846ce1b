//! The metadata test, bonnie++'s `-n`: create, stat and delete `--files` empty files (16,384
//! by default, bonnie++ -n 16) in sequential then random order: six phases, each reported as
//! files per second with each operation's latency. It does no block I/O: it runs in a scratch
//! directory of its own (`sys::dirops::ScratchDir`), removed afterwards whatever the end, on
//! the directory engine (`exec::engines::directory`).

use std::time::Duration;

use super::{Family, PlanContext};
use crate::bench::plan::params::{Defaults, Param, TestParams};
use crate::bench::plan::test_name::{TestName, Writes};
use crate::bench::plan::{
    Access, Job, MetaOp, Mix, OpKind, Phase, PhaseTag, SpecError, check_range,
};
use crate::sys::direct::SyncMode;

pub struct Metadata;

/// The most files a run may create (bonnie++ allows -n up to 1024 x 1024 too).
pub const MAX_FILES: u64 = 1 << 20;

/// The six phases in bonnie++'s order.
const PHASES: [(MetaOp, bool); 6] = [
    (MetaOp::Create, false),
    (MetaOp::Stat, false),
    (MetaOp::Delete, false),
    (MetaOp::Create, true),
    (MetaOp::Stat, true),
    (MetaOp::Delete, true),
];

/// "create sequential", "stat random": a phase's label.
pub fn phase_label(op: MetaOp, random: bool) -> String {
    format!(
        "{} {}",
        op.as_str(),
        if random { "random" } else { "sequential" }
    )
}

impl Family for Metadata {
    fn defaults(&self, _test: TestName) -> Defaults {
        Defaults {
            time: None,
            warmup: Duration::ZERO,
            ..Defaults::BASE
        }
    }

    fn params(&self, _test: TestName) -> &'static [Param] {
        &[Param::Files]
    }

    fn common_params(&self) -> &'static [Param] {
        // No engine and no I/O path: it makes system calls on a directory, one at a time.
        &[Param::Repeats, Param::TempPoll]
    }

    fn writes(&self, _test: TestName, _params: &TestParams) -> Writes {
        // It creates files only in a new directory of its own, so no confirmation is needed, as
        // for a new test file.
        Writes::Always
    }

    fn phases(&self, _test: TestName, ctx: &PlanContext) -> Result<Vec<Phase>, SpecError> {
        let files = ctx.resolved.files;
        check_range("file count (--files)", files, 1, MAX_FILES)?;
        Ok(PHASES
            .iter()
            .map(|&(op, random)| Phase {
                label: phase_label(op, random),
                tag: PhaseTag::Metadata { op, random },
                job: Job {
                    bs: 0,
                    qd: 1,
                    workers: 1,
                    access: if random {
                        Access::Random
                    } else {
                        Access::Forward
                    },
                    mix: match op.kind() {
                        OpKind::Read => Mix::Read,
                        OpKind::Write => Mix::Write,
                    },
                    region_start: 0,
                    region_len: 0,
                    split_region: false,
                    time: None,
                    warmup: Duration::ZERO,
                    ops_per_worker: Some(files),
                    sync: SyncMode::None,
                    rewrite: false,
                    seed: ctx.resolved.seed ^ (PHASES.len() as u64),
                },
            })
            .collect())
    }

    fn lower_hint(&self) -> &'static str {
        "the file count (--files)"
    }

    fn runs_in_directory(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::catalog::family::tests::plan;

    #[test]
    fn six_phases_in_bonnies_order() {
        let p = plan(TestName::Metadata, &TestParams::default()).unwrap();
        let labels: Vec<&str> = p.phases.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "create sequential",
                "stat sequential",
                "delete sequential",
                "create random",
                "stat random",
                "delete random"
            ]
        );
        assert!(
            p.phases
                .iter()
                .all(|p| p.job.ops_per_worker == Some(16 * 1024))
        );
        assert!(p.writes());
        let few = plan(
            TestName::Metadata,
            &TestParams {
                files: Some(100),
                ..TestParams::default()
            },
        )
        .unwrap();
        assert_eq!(few.phases[4].job.ops_per_worker, Some(100));
        let none = plan(
            TestName::Metadata,
            &TestParams {
                files: Some(0),
                ..TestParams::default()
            },
        )
        .unwrap_err();
        assert!(none.to_string().contains("file count"), "{none}");
    }
}
