//! The write-cliff probe's pure core (`disktriage smrcheck`): the scratch range, the block
//! each write takes, where the next write goes, the per-second samples, the cliff detector
//! (a series in, a verdict out) and the verdict's sentence by what the device is (a rotating
//! disk's cliff is drive-managed SMR behaviour; a solid-state one's, its write cache running
//! out). The device side is `flow::smrcheck`.

use serde::Serialize;

/// The scratch range's size on a device of 1 GiB or more.
pub const SCRATCH_BYTES: u64 = 256 << 20;
/// The smallest scratch range: below this a range would be a drive's DRAM cache's toy.
pub const MIN_SCRATCH_BYTES: u64 = 8 << 20;
/// Ranges are whole MiB on a MiB boundary (the journal's records are 1 MiB).
const MIB: u64 = 1 << 20;

/// Intervals before the baseline: the first second holds the start (queues filling).
pub const WARM_UP: usize = 1;
/// Intervals whose median is the baseline a cliff is measured against.
pub const BASELINE: usize = 5;
/// The fewest of them a cliff that begins sooner is measured against.
pub const MIN_BASELINE: usize = 2;
/// A window this many intervals long is looked at for a cliff...
pub const CONFIRM: usize = 10;
/// ...and this many of its intervals must be slow: single slow seconds are noise.
pub const CONFIRM_SLOW: usize = 8;
/// An interval is slow below the baseline divided by this (a drop of 80 % or more).
pub const CLIFF_FACTOR: f64 = 5.0;
/// A write or flush slower than this is a stall worth naming.
pub const STALL_SECONDS: f64 = 1.0;

/// Where the probe writes: `len` bytes from byte `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Scratch {
    pub offset: u64,
    pub len: u64,
}

/// The scratch range on a device of `size` bytes: `SCRATCH_BYTES`, or a quarter of a
/// device smaller than 1 GiB (at least `MIN_SCRATCH_BYTES`), whole MiB, in the middle of
/// the device (away from the partition table and file system headers at the start and the
/// backup GPT at the end; a DM-SMR disk's media cache takes writes from any LBA alike).
pub fn scratch_range(size: u64, block: u64) -> Result<Scratch, String> {
    if block == 0 || !block.is_power_of_two() || block > MIB {
        return Err(format!(
            "a block of {block} bytes is not a power of two up to 1 MiB"
        ));
    }
    let len = (size / 4).min(SCRATCH_BYTES) / MIB * MIB;
    if len < MIN_SCRATCH_BYTES {
        return Err(format!(
            "the device ({size} bytes) is too small for a scratch range of {} MiB (a quarter \
             of it, at least {} MiB)",
            MIN_SCRATCH_BYTES / MIB,
            MIN_SCRATCH_BYTES / MIB
        ));
    }
    let offset = (size / 2 - len / 2) / MIB * MIB;
    Ok(Scratch { offset, len })
}

/// The block each write takes: 4 KiB, or the device's physical (or logical) block when
/// larger, so no write is a read-modify-write inside the drive.
pub fn write_block(logical: u64, physical: u64) -> u64 {
    4096.max(logical).max(physical)
}

/// A fast reproducible random sequence (xorshift64*): the blocks' places and their bytes.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A block number below `n` (`n` above 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// `buf` filled with random bytes (an SSD that compresses gains nothing).
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// One interval of the run (about a second, and longer when a write or the flush at its
/// end stalled).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sample {
    /// Seconds since the writes began, at the interval's end.
    pub at_s: f64,
    /// The interval's length in seconds (its writes and its flush).
    pub seconds: f64,
    pub writes: u64,
    pub bytes: u64,
    /// The mean write latency in ms (0 without a write).
    pub mean_ms: f64,
    /// The slowest write in ms.
    pub max_ms: f64,
    /// The flush at the interval's end in ms.
    pub flush_ms: f64,
}

impl Sample {
    /// MB/s (10^6 bytes) over the interval, the flush included.
    pub fn mbps(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 / self.seconds / 1e6
        } else {
            0.0
        }
    }

    /// The longest single wait in the interval (a write or the flush), in seconds.
    pub fn worst_s(&self) -> f64 {
        self.max_ms.max(self.flush_ms) / 1e3
    }
}

/// What the series shows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Finding {
    /// Too short a series to judge (fewer intervals than the warm-up, baseline and window).
    TooShort { intervals: usize },
    /// No cliff: the median MB/s over the run, and the longest wait.
    Steady { mbps: f64, worst_s: f64 },
    /// A cliff: where it began, the rates before and after, the longest wait after it.
    Cliff {
        /// The first slow interval.
        onset: usize,
        /// Bytes written before it.
        written_before: u64,
        before_mbps: f64,
        after_mbps: f64,
        worst_s: f64,
    },
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// The cliff detector. The baseline is the median MB/s of the `BASELINE` intervals after the
/// `WARM_UP`, or of those before the window looked at when it begins sooner (at least
/// `MIN_BASELINE`: a small cache fills within them); an interval is slow below a fifth of it;
/// the cliff begins at the first window of `CONFIRM` intervals with at least `CONFIRM_SLOW`
/// slow ones (its first slow interval), so a few slow seconds (a drive's housekeeping, a busy
/// host) are not a cliff. A cliff is proven when this returns `Cliff`.
pub fn detect(series: &[Sample]) -> Finding {
    let first = WARM_UP;
    let judged = first + BASELINE;
    for start in first + MIN_BASELINE..=series.len().saturating_sub(CONFIRM) {
        let baseline = median(
            series[first..start.min(judged)]
                .iter()
                .map(Sample::mbps)
                .collect(),
        );
        let slow = |s: &Sample| s.mbps() < baseline / CLIFF_FACTOR;
        let window = &series[start..start + CONFIRM];
        if window.iter().filter(|s| slow(s)).count() >= CONFIRM_SLOW {
            // The window holds at least one slow interval: the cliff begins at the first.
            let onset = start + window.iter().position(slow).unwrap_or(0);
            let after = &series[onset..];
            return Finding::Cliff {
                onset,
                written_before: series[..onset].iter().map(|s| s.bytes).sum(),
                before_mbps: median(series[first..onset].iter().map(Sample::mbps).collect()),
                after_mbps: median(after.iter().map(Sample::mbps).collect()),
                worst_s: after.iter().map(Sample::worst_s).fold(0.0, f64::max),
            };
        }
    }
    if series.len() < judged + CONFIRM {
        return Finding::TooShort {
            intervals: series.len(),
        };
    }
    Finding::Steady {
        mbps: median(series[first..].iter().map(Sample::mbps).collect()),
        worst_s: series.iter().map(Sample::worst_s).fold(0.0, f64::max),
    }
}

/// How a probe ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SmrEnd {
    /// No scratch range fits: nothing written.
    NoRange(String),
    /// The writes ran to the time asked or to a proven cliff: the detector's finding.
    Judged(Finding),
    /// Stopped (a signal, the stop key) before the end.
    Stopped,
    /// An I/O failed: what and where.
    Failed(String),
}

/// What the device is, for what a cliff means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Medium {
    /// It rotates (VPD B1h, ATA word 217, or `queue/rotational` 1 of a real drive).
    Rotating,
    /// It does not (the same sources say 0 or non-rotating).
    SolidState,
    /// Nothing known (a loop or zram device, md or dm over mixed disks).
    Unknown,
}

/// The verdict's sentence for `finding` after `minutes` of writes.
pub fn sentence(finding: &Finding, medium: Medium, minutes: f64) -> String {
    match *finding {
        Finding::TooShort { intervals } => format!(
            "unknown: {intervals} s of writes is too short to judge (at least {} s are needed)",
            WARM_UP + BASELINE + CONFIRM
        ),
        Finding::Steady { mbps, worst_s } => {
            let mut s = format!(
                "no write cliff in {} ({mbps:.2} MB/s steady)",
                minutes_words(minutes)
            );
            if worst_s >= STALL_SECONDS {
                s.push_str(&format!(
                    ", stalls up to {worst_s:.1} s (slow throughout: a shingled disk whose cache \
                     was already full looks like this)"
                ));
            }
            s
        }
        Finding::Cliff {
            written_before,
            before_mbps,
            after_mbps,
            worst_s,
            ..
        } => {
            let what = match medium {
                Medium::Rotating => "drive-managed SMR behaviour",
                Medium::SolidState => {
                    "an SSD's fast write cache (SLC) running out, not SMR (it does not rotate)"
                }
                Medium::Unknown => {
                    "drive-managed SMR behaviour on a hard disk, a write cache running out on \
                     an SSD (what the device is cannot be told here)"
                }
            };
            let stalls = if worst_s >= STALL_SECONDS {
                format!(", stalls up to {worst_s:.1} s")
            } else {
                format!(", the longest wait {:.0} ms", worst_s * 1e3)
            };
            format!(
                "write cliff after {:.1} MiB written: {before_mbps:.2} MB/s to \
                 {after_mbps:.2} MB/s{stalls}: {what}",
                written_before as f64 / MIB as f64
            )
        }
    }
}

/// "5 min", "1.5 min", "18 s" (under a minute).
pub fn minutes_words(minutes: f64) -> String {
    if minutes < 1.0 {
        format!("{:.0} s", minutes * 60.0)
    } else {
        format!("{minutes} min")
    }
}

#[cfg(test)]
mod tests;
