//! The fio command lines that repeat a run, one per phase, with the engine, depth and options
//! it ran with; where fio cannot do the same test, a comment says so.

use std::fmt::Write as _;

use super::shared::{of_files, phase_engine_label};
use crate::bench::exec::engines::io_uring::completions_per_wait;
use crate::bench::exec::probe;
use crate::bench::plan::engine_kind::IoShape;
use crate::bench::plan::params::EngineKind;
use crate::bench::plan::{Access, Mix};
use crate::bench::plan::{PhaseTag, Plan, REWRITE_LABEL};
use crate::bench::results::outcome::{RunOutcome, RunReport};
use crate::sys::direct::SyncMode;

/// How fio issues a phase's I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FioEngine {
    /// io_uring with `iodepth` = QD per job; `fixed`: registered buffers and file
    /// (`--fixedbufs --registerfiles`).
    Uring { fixed: bool },
    /// One pread/pwrite thread per outstanding I/O: psync with `numjobs` = workers x QD.
    Psync,
}

impl FioEngine {
    /// By how the engine keeps its I/Os in flight (its row's shape).
    fn of(kind: EngineKind, fixed: bool) -> FioEngine {
        match kind.row().shape {
            IoShape::Ring => FioEngine::Uring { fixed },
            IoShape::ThreadPerIo => FioEngine::Psync,
        }
    }
}

/// The fio command lines of a run: with `outcome`, as each phase ran. Without it (`--fio`
/// runs nothing), an engine `auto` has not chosen yet gets both commands, the second
/// commented out.
pub fn fio_commands(plan: &Plan, target: &std::path::Path, outcome: Option<&RunOutcome>) -> String {
    let mut out = String::new();
    if of_files(plan) {
        return metadata_fio_script(plan, target);
    }
    for (i, p) in plan.phases.iter().enumerate() {
        let j = &p.job;
        let ran = outcome
            .and_then(|o| o.phases.get(i))
            .filter(|r| r.label == p.label);
        // disktriage registers its buffers wherever the kernel allows (as root, always).
        let (engine, alternative) = match ran {
            Some(r) => (FioEngine::of(r.engine, r.fixed_buffers), None),
            None => match probe::static_choice(plan.engine, j, &Ok(())) {
                Some(c) => (FioEngine::of(c.used, true), None),
                None => (FioEngine::Uring { fixed: true }, Some(FioEngine::Psync)),
            },
        };
        if let Some(r) = ran {
            let _ = writeln!(
                out,
                "# {}: disktriage used {} - {}",
                p.label,
                phase_engine_label(r),
                r.engine_choice.reason
            );
        }
        if alternative.is_some() {
            let _ = writeln!(
                out,
                "# {}: --engine auto chooses io_uring or one pread/pwrite thread per I/O by a \
                 probe when it runs; the run's report (JSON fio_commands, the TUI's export) has \
                 the command of the engine it used. The sync alternative is commented out.",
                p.label
            );
        }
        out.push_str(&fio_command(plan, p, target, engine));
        if let Some(alt) = alternative {
            // Every line, not only the first (which may be a note).
            for line in fio_command(plan, p, target, alt).lines() {
                if !line.starts_with('#') {
                    out.push_str("# ");
                }
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// fio's file engines (filecreate, filestat, filedelete) time one open(O_CREAT), stat or
/// unlink per file as the metadata test does; they run in an empty directory of their own.
fn metadata_fio_script(plan: &Plan, target: &std::path::Path) -> String {
    let dir = shell_quote(&target.join("fio-metadata").to_string_lossy());
    let mut out = String::from(
        "# fio's filecreate/filestat/filedelete engines time one open(O_CREAT)/stat/unlink per \
         file, as disktriage does; fio names the files itself, lays files out before a stat \
         or delete job, and its random file service picks files at random (with repeats), not \
         a permutation\n",
    );
    let _ = writeln!(out, "mkdir {dir}");
    for p in &plan.phases {
        out.push_str(&metadata_fio_command(p, target));
        out.push('\n');
    }
    let _ = writeln!(out, "rmdir {dir}");
    out
}

/// One metadata phase's fio command.
fn metadata_fio_command(p: &crate::bench::plan::Phase, target: &std::path::Path) -> String {
    let PhaseTag::Metadata { op, random } = p.tag else {
        return String::new();
    };
    let engine = match op {
        crate::bench::plan::MetaOp::Create => "filecreate",
        crate::bench::plan::MetaOp::Stat => "filestat",
        crate::bench::plan::MetaOp::Delete => "filedelete",
    };
    format!(
        "fio --name={} --directory={} --ioengine={engine} --nrfiles={} --filesize=4k --bs=4k \
         --openfiles=1 --fallocate=none --file_service_type={}",
        p.label.replace(' ', "-"),
        shell_quote(&target.join("fio-metadata").to_string_lossy()),
        p.job.ops_per_worker.unwrap_or(0),
        if random { "random" } else { "sequential" }
    )
}

/// The fio command lines of the phases a report ran.
pub fn report_fio_commands(r: &RunReport) -> Vec<String> {
    if of_files(&r.plan) {
        return r
            .plan
            .phases
            .iter()
            .take(r.outcome.phases.len())
            .map(|p| metadata_fio_command(p, &r.target.path))
            .collect();
    }
    r.outcome
        .phases
        .iter()
        .enumerate()
        .filter_map(|(i, ran)| {
            let p = r.plan.phases.get(i).filter(|p| p.label == ran.label)?;
            let engine = FioEngine::of(ran.engine, ran.fixed_buffers);
            Some(
                fio_command(&r.plan, p, &r.target.path, engine)
                    .trim_end()
                    .to_string(),
            )
        })
        .collect()
}

/// One phase's fio command line (with comment lines before it where fio differs).
fn fio_command(
    plan: &Plan,
    p: &crate::bench::plan::Phase,
    target: &std::path::Path,
    engine: FioEngine,
) -> String {
    let mut out = String::new();
    let j = &p.job;
    // fio has no read-then-rewrite mode: a rewrite becomes the read-only job over the same
    // blocks (not the same test, and says so); --readonly makes fio refuse to write.
    let mix = if j.rewrite { Mix::Read } else { j.mix };
    if j.rewrite {
        let _ = writeln!(
            out,
            "# {REWRITE_LABEL}: fio has no read-then-rewrite mode, and its write jobs destroy the \
             data. NOT THE SAME TEST: the line below only reads the blocks this phase rewrites \
             (--readonly), with no write at all"
        );
    }
    let rw = match (j.access, mix) {
        (Access::Random, Mix::Read) => "randread".to_string(),
        (Access::Random, Mix::Write) => "randwrite".to_string(),
        (Access::Random, Mix::Mixed { read_pct }) => format!("randrw --rwmixread={read_pct}"),
        (_, Mix::Read) => "read".to_string(),
        (_, Mix::Write) => "write".to_string(),
        (_, Mix::Mixed { read_pct }) => format!("rw --rwmixread={read_pct}"),
    };
    if j.access == Access::Backward {
        let _ = writeln!(
            out,
            "# fio has no backward sequential pattern; forward shown"
        );
    }
    let name: String = p
        .label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    // fio jobs: one per worker with io_uring, one thread per outstanding I/O with psync.
    let (ioengine, iodepth, jobs) = match engine {
        FioEngine::Uring { .. } => ("io_uring", j.qd, j.workers),
        FioEngine::Psync => ("psync", 1, j.workers.saturating_mul(j.qd)),
    };
    let mut cmd = format!(
        "fio --name={name} --filename={} --ioengine={ioengine} --direct={} --rw={rw} --bs={} \
         --iodepth={iodepth} --numjobs={jobs}",
        shell_quote(&target.to_string_lossy()),
        u8::from(plan.direct),
        j.bs,
    );
    match engine {
        FioEngine::Uring { fixed: true } => cmd.push_str(" --fixedbufs --registerfiles"),
        FioEngine::Uring { fixed: false } => {}
        FioEngine::Psync => cmd.push_str(" --thread"),
    }
    if plan.huge_pages {
        // fio's own hugetlb pages, which must be reserved: each job maps bs x iodepth plus a
        // page for O_DIRECT alignment, rounded up to 2 MiB.
        let per_job =
            j.bs.saturating_mul(u64::from(iodepth))
                .saturating_add(4096)
                .div_ceil(2 << 20);
        let _ = writeln!(
            out,
            "# buffers in huge pages (disktriage --huge-pages): fio's --mem=mmaphuge takes {} \
             huge page(s) of 2 MiB, which must be free (HugePages_Free in /proc/meminfo; \
             reserve them with sysctl vm.nr_hugepages)",
            per_job.saturating_mul(u64::from(jobs)),
        );
        cmd.push_str(" --mem=mmaphuge");
    }
    // Wait for completions as disktriage does (`io_uring::completions_per_wait`).
    let per_wait = completions_per_wait(iodepth);
    if matches!(engine, FioEngine::Uring { .. }) && per_wait > 1 {
        let _ = write!(cmd, " --iodepth_batch_complete_min={per_wait}");
    }
    cmd.push_str(" --group_reporting --randrepeat=1 --norandommap");
    if j.split_region && jobs > 1 {
        if engine == FioEngine::Psync && j.qd > 1 {
            let _ = writeln!(
                out,
                "# disktriage's {} threads per worker share one sequential stream; fio gives \
                 each thread its own slice",
                j.qd
            );
        }
        let slice = (j.region_len / u64::from(jobs)) / j.bs * j.bs;
        let _ = write!(
            cmd,
            " --offset={} --size={slice} --offset_increment={slice}",
            j.region_start
        );
    } else {
        let _ = write!(cmd, " --offset={} --size={}", j.region_start, j.region_len);
    }
    if let Some(t) = j.time {
        let _ = write!(cmd, " --time_based --runtime={}ms", t.as_millis());
    }
    if !j.warmup.is_zero() {
        let _ = write!(cmd, " --ramp_time={}ms", j.warmup.as_millis());
    }
    if let Some(n) = j.ops_per_worker {
        // psync: the worker's I/Os spread over its threads.
        let per_job = match engine {
            FioEngine::Psync => n.div_ceil(u64::from(j.qd.max(1))),
            FioEngine::Uring { .. } => n,
        };
        let _ = write!(cmd, " --number_ios={per_job}");
    }
    if j.rewrite {
        cmd.push_str(" --readonly");
    } else {
        match j.sync {
            SyncMode::None => {}
            SyncMode::Dsync => cmd.push_str(" --sync=dsync"),
            SyncMode::Sync => cmd.push_str(" --sync=sync"),
        }
    }
    if j.writes() {
        match plan.data {
            crate::bench::plan::DataKind::Zeros => cmd.push_str(" --zero_buffers"),
            // fio's default scrambles part of the buffer before every write; disktriage does
            // not, and scrambling cost fio over half its IOPS on zram.
            crate::bench::plan::DataKind::Random { .. } => {
                cmd.push_str(" --scramble_buffers=0");
            }
            // A rewrite's line only reads.
            crate::bench::plan::DataKind::Rewrite => {}
        }
    }
    let _ = writeln!(out, "{cmd}");
    out
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
