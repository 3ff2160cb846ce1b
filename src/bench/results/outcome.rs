//! What a run produced: each phase's figures, the kernel's witness, the target as measured and
//! the whole result file. Plain data between the execution floor (which fills it) and the
//! reports (which render it), so the engine never reaches up into `report`.

use std::path::PathBuf;

use serde::Serialize;

use crate::bench::plan::TimeBase;
use crate::bench::plan::params::EngineKind;
use crate::bench::plan::test_name::TestName;
use crate::bench::plan::{Job, PhaseTag, Plan};
use crate::bench::results::engine_choice::EngineChoice;
use crate::bench::results::failure::IoFailure;
use crate::bench::results::stats::{BoundedSeries, IoStats, LatencySummary};
use crate::model::activity::{BackgroundIo, BusyProcess};
use crate::model::{KernelWriteCache, Transport};
use crate::sys::host::HostInfo;
use crate::sys::parse::DiskStat;

/// Byte difference between our count and the kernel's above which a run is flagged.
pub const WITNESS_TOLERANCE_PCT: f64 = 2.0;

/// The kernel's own counters for the device around the measured phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Witness {
    /// The counters read, e.g. `/sys/dev/block/7:0/stat (loop0)`.
    pub source: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    /// Requests the block layer merged into others (so it counted fewer I/Os than we sent).
    pub read_merges: u64,
    pub write_merges: u64,
    /// Bytes and reads this test made to rewrite blocks (`--preserve`): not in the figures, but
    /// the kernel counted them, so "our bytes" and "our I/Os" below include them. Else zero.
    pub read_back_bytes: u64,
    pub read_back_ios: u64,
    /// (kernel bytes - our bytes) / our bytes, in percent.
    pub bytes_diff_pct: f64,
    /// (kernel I/Os + merges - our I/Os) / our I/Os, in percent. The block layer splits requests
    /// too large for the device, so the kernel may count more; fewer only when a cache served some.
    pub ios_diff_pct: f64,
    pub agrees: bool,
}

impl Witness {
    pub(crate) fn compare(
        source: String,
        before: &DiskStat,
        after: &DiskStat,
        ours: &IoStats,
    ) -> Self {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let read_bytes = d(after.read_sectors, before.read_sectors) * 512;
        let write_bytes = d(after.write_sectors, before.write_sectors) * 512;
        let read_ios = d(after.read_ios, before.read_ios);
        let write_ios = d(after.write_ios, before.write_ios);
        let read_merges = d(after.read_merges, before.read_merges);
        let write_merges = d(after.write_merges, before.write_merges);
        let pct = |kernel: u64, ours: u64| {
            if ours == 0 {
                if kernel == 0 { 0.0 } else { 100.0 }
            } else {
                (kernel as f64 - ours as f64) / ours as f64 * 100.0
            }
        };
        // A rewrite's reads are I/O the kernel sees: compared with it, never hidden (only the
        // figures leave them out).
        let back = ours.read_back;
        let bytes_diff_pct = pct(read_bytes + write_bytes, ours.bytes() + back.bytes);
        let ios_diff_pct = pct(
            read_ios + write_ios + read_merges + write_merges,
            ours.ops() + back.ops,
        );
        let agrees =
            bytes_diff_pct.abs() <= WITNESS_TOLERANCE_PCT && ios_diff_pct >= -WITNESS_TOLERANCE_PCT;
        Witness {
            source,
            read_bytes,
            write_bytes,
            read_ios,
            write_ios,
            read_merges,
            write_merges,
            read_back_bytes: back.bytes,
            read_back_ios: back.ops,
            bytes_diff_pct,
            ios_diff_pct,
            agrees,
        }
    }
}

/// One direction's totals.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct DirTotals {
    pub bytes: u64,
    pub ops: u64,
    /// Bytes per second over the phase's time base (`PhaseResult::rate_seconds`).
    pub bytes_per_sec: f64,
    pub iops: f64,
    /// The rates rest on few I/Os or little time (`low_count`): shown, and said to be thin.
    pub low_count: bool,
    pub latency: Option<LatencySummary>,
    /// The histogram behind `latency` as its non-empty buckets (value, count), so figures over
    /// repeats can merge them (`bench::analysis::figures`). Not written out.
    #[serde(skip)]
    pub latency_buckets: Vec<(u64, u64)>,
}

impl DirTotals {
    /// A direction's totals with its rates over `rate_seconds` (the phase's time base).
    pub fn over(d: &crate::bench::results::stats::DirStats, rate_seconds: f64) -> DirTotals {
        use crate::bench::results::stats::per_second;
        DirTotals {
            bytes: d.bytes,
            ops: d.ops,
            bytes_per_sec: per_second(d.bytes as f64, rate_seconds),
            iops: per_second(d.ops as f64, rate_seconds),
            low_count: low_count(d.ops, rate_seconds),
            latency: d.latency_summary(),
            latency_buckets: d
                .hist
                .as_ref()
                .map(crate::bench::results::stats::LatencyHistogram::nonzero_buckets)
                .unwrap_or_default(),
        }
    }
}

/// A worker's share of a phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerTotals {
    pub worker: u32,
    pub region_start: u64,
    pub region_len: u64,
    pub bytes: u64,
    pub ops: u64,
    /// The worker's own measured time (workers bounded by a count finish at their own pace).
    pub seconds: f64,
    /// The time base of its rate: `seconds`, or a rewrite's write-busy time (`TimeBase`).
    pub rate_seconds: f64,
    pub bytes_per_sec: f64,
}

/// The outcome of one phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseResult {
    pub label: String,
    pub tag: PhaseTag,
    pub job: Job,
    /// The engine that ran: io_uring or sync.
    pub engine: EngineKind,
    /// What was asked, what ran and why (with the probe's figures when auto probed).
    pub engine_choice: EngineChoice,
    /// Threads doing I/O: one per worker with io_uring, one per outstanding I/O with sync.
    pub io_threads: u32,
    pub fixed_buffers: bool,
    /// Measured seconds (the warm-up excluded).
    pub seconds: f64,
    /// What the rates are over: the measured time, or a rewrite's (`--preserve`) write-busy time.
    pub time_base: TimeBase,
    /// The seconds the rates are over: `seconds`, or the write-busy time of a rewrite.
    pub rate_seconds: f64,
    /// CPU seconds of the whole process while measuring (user + system, the kernel's io_uring
    /// workers included).
    pub cpu_seconds: f64,
    /// Seconds the I/O threads together were ready to run but waited for a CPU while measuring.
    pub cpu_wait_seconds: f64,
    /// The I/O threads ran or waited to run on every core they could use for the whole phase: the
    /// CPU, not the drive, set the pace (`cpu_bound`).
    pub cpu_bound: bool,
    pub read: DirTotals,
    pub write: DirTotals,
    pub workers: Vec<WorkerTotals>,
    pub series: BoundedSeries,
    pub witness: Option<Witness>,
    /// Why there is no witness, when there is none.
    pub witness_note: Option<String>,
    /// Other processes with the device (or a file on it) open that did I/O during the phase,
    /// busiest first: the likely authors of a witness that disagrees.
    pub others: Vec<BusyProcess>,
    pub failure: Option<IoFailure>,
    pub setup_error: Option<String>,
    /// The admin stopped the run.
    pub stopped: bool,
}

/// Share of the cores that counts as "kept busy": below it, the process waited for the device
/// some of the time.
pub const CPU_BOUND_SHARE: f64 = 0.9;

/// Did a phase's I/O threads want every core they could use (one each, `cpus` at most) for the
/// whole phase? `busy_seconds` is CPU time plus CPU wait: a thread running or waiting to run
/// is not waiting for the device, so the figure measures the CPU as much as the drive.
pub fn cpu_bound(busy_seconds: f64, seconds: f64, io_threads: u32, cpus: usize) -> bool {
    let cores = (io_threads as usize).min(cpus).max(1) as f64;
    seconds > 0.0 && busy_seconds / seconds >= CPU_BOUND_SHARE * cores
}

/// Fewest I/Os, and shortest measured time, that make a rate a settled figure. Below either,
/// a rate measures the setup as much as the device: still shown (dd prints one for a single
/// block, and a slow disk needs it), marked as a low count, and left out of sweeps' knees.
pub const MIN_RATE_OPS: u64 = 100;
pub const MIN_RATE_SECONDS: f64 = 0.01;

/// Is there a rate at all: at least one I/O completed in a measured time.
pub fn rate_measured(ops: u64, seconds: f64) -> bool {
    ops > 0 && seconds > 0.0 && seconds.is_finite()
}

/// Is a rate a settled figure? Sweeps' knees and charts use only these.
pub fn rate_settled(ops: u64, seconds: f64) -> bool {
    ops >= MIN_RATE_OPS && seconds >= MIN_RATE_SECONDS
}

/// A rate that is shown but rests on few I/Os or little time: every output marks it.
pub fn low_count(ops: u64, seconds: f64) -> bool {
    rate_measured(ops, seconds) && !rate_settled(ops, seconds)
}

/// The mark of a low-count rate, "10 I/Os in 11.12 ms: low count"; None otherwise.
pub fn low_count_note(ops: u64, seconds: f64) -> Option<String> {
    low_count(ops, seconds).then(|| format!("{}: low count", time_base(ops, seconds)))
}

/// The time base of a rate: "1 I/O in 0.90 ms", "4096 I/Os in 2.00 s".
pub fn time_base(ops: u64, seconds: f64) -> String {
    let what = if ops == 1 { "I/O" } else { "I/Os" };
    if seconds < 1.0 {
        format!("{ops} {what} in {:.2} ms", seconds * 1e3)
    } else {
        format!("{ops} {what} in {seconds:.2} s")
    }
}

impl PhaseResult {
    pub fn bytes_per_sec(&self) -> f64 {
        self.read.bytes_per_sec + self.write.bytes_per_sec
    }

    pub fn iops(&self) -> f64 {
        self.read.iops + self.write.iops
    }

    /// The latency summary of the phase's main direction (reads, unless it only writes).
    pub fn latency(&self) -> Option<&LatencySummary> {
        self.latency_direction().and_then(|d| d.latency.as_ref())
    }

    /// The phase's main direction for latency: reads, unless it only writes.
    pub fn latency_direction(&self) -> Option<&DirTotals> {
        [&self.read, &self.write]
            .into_iter()
            .find(|d| d.latency.is_some())
    }

    pub fn ok(&self) -> bool {
        self.failure.is_none() && self.setup_error.is_none()
    }
}

/// The result of a whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunOutcome {
    /// The engine every phase used, or `auto` when they differ (see each phase).
    pub engine: EngineKind,
    /// What the latency figures measure (`stats::LATENCY_DEFINITION`).
    pub latency_definition: &'static str,
    /// Things said about the run as a whole (engine fallback, say).
    pub notes: Vec<String>,
    /// I/O on the device by others just before the first phase, when there was any.
    pub background: Option<BackgroundIo>,
    pub phases: Vec<PhaseResult>,
    pub stopped: bool,
}

impl RunOutcome {
    /// The first failure of any phase, described.
    pub fn error(&self) -> Option<String> {
        self.phases.iter().find_map(|p| {
            p.setup_error
                .clone()
                .or_else(|| p.failure.as_ref().map(IoFailure::describe))
        })
    }
}

/// What a run measured. Written to JSON as `"block-device"`, `"file"` or `"directory"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetClass {
    BlockDevice,
    File,
    Directory,
}

/// The most a link carries, after its line encoding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkCeiling {
    /// "SATA 6.0 Gbps", "PCIe 8.0 GT/s x4", "USB 480 Mbps".
    pub link: String,
    pub bytes_per_sec: f64,
}

/// The target as the report describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetInfo {
    pub path: PathBuf,
    pub kind: TargetClass,
    /// Kernel name of the device (or of the device under the file's file system).
    pub device: Option<String>,
    pub size_bytes: u64,
    pub logical_block_size: u32,
    pub physical_block_size: Option<u32>,
    pub model: Option<String>,
    pub transport: Option<Transport>,
    pub rotational: Option<bool>,
    /// The active I/O scheduler during the run.
    pub scheduler: Option<String>,
    /// The kernel's flush policy during the run (not the drive's cache setting).
    pub kernel_write_cache: Option<KernelWriteCache>,
    /// True when this run created the file.
    pub created: bool,
    /// The most the link to the disk carries, where known: a faster figure came from a cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_ceiling: Option<crate::bench::results::outcome::LinkCeiling>,
}

/// Version of the JSON result layout.
pub const RUN_JSON_SCHEMA: u32 = 1;

/// Everything a result file holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    pub schema: u32,
    pub tool: String,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix: u64,
    pub host: HostInfo,
    pub test: TestName,
    pub target: TargetInfo,
    pub plan: Plan,
    pub outcome: RunOutcome,
    /// Notes from preparing the target (skipped writes, say).
    pub notes: Vec<String>,
}

impl RunReport {
    pub fn error(&self) -> Option<String> {
        self.outcome.error()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_bound_means_every_usable_core_ran_or_waited_to_run() {
        // One thread can want one core: 95 % of it is bound, 50 % waited for the device.
        assert!(cpu_bound(0.95, 1.0, 1, 2));
        assert!(!cpu_bound(0.5, 1.0, 1, 2));
        // 32 threads on 2 cores can want both, and no more.
        assert!(cpu_bound(1.9, 1.0, 32, 2));
        assert!(!cpu_bound(1.2, 1.0, 32, 2));
        // 4 threads on 64 cores: bound only when all four wanted theirs.
        assert!(!cpu_bound(2.0, 1.0, 4, 64));
        assert!(cpu_bound(3.7, 1.0, 4, 64));
        // Nothing measured is never bound.
        assert!(!cpu_bound(1.0, 0.0, 1, 2));
    }

    #[test]
    fn target_classes_keep_their_json_names() {
        let names = [
            TargetClass::BlockDevice,
            TargetClass::File,
            TargetClass::Directory,
        ]
        .map(|c| serde_json::to_string(&c).unwrap());
        assert_eq!(names, ["\"block-device\"", "\"file\"", "\"directory\""]);
    }
}
