//! The surface scan's pure core: what a read of each block of a device means, kept in memory of
//! a size that does not grow with the device, and written in the formats rescue tools read.
//!
//! Nothing here touches the system: the device is read through the `engine::BlockReader`
//! trait (`sys::scan` implements it for a block device; tests implement it with chosen bad
//! sectors and latencies).
//!
//! - `buckets`: the latency classes MHDD and Victoria users know (< 5 .. >= 500 ms, ERR, TIME).
//! - `ranges`: sorted, merged, never overlapping lists of byte ranges with a value (errno, times).
//! - `blockmap`: a fixed number of cells over the scanned range, each with its worst bucket.
//! - `mapfile`: GNU ddrescue's mapfile (parse, write, the regions still to read on resume).
//! - `badblocks`: the unreadable blocks in N-byte units, for `e2fsck -l` / `mke2fs -l`.
//! - `bisect`: the split of a failed block down to the exact unreadable sectors.
//! - `engine`: the scan itself, one read per step, so the caller can stop, save and report.
//! - `live`: a scan shared with a thread that shows it, with the read in flight, while it hangs.
//! - `verdict`: the one-line summary.
//! - `repair`: `--repair`, the bad sectors overwritten with zeros and read again.
//! - `snapshot`: a scan's state of a fixed size, for the screen and the history.

pub mod badblocks;
pub mod bisect;
pub mod blockmap;
pub mod buckets;
pub mod engine;
pub mod live;
pub mod mapfile;
pub mod ranges;
pub mod repair;
pub mod snapshot;
pub mod verdict;

// The library's surface (docs/development.md): `disktriage::scan::Item`.
pub use blockmap::DEFAULT_CELLS;
pub use engine::{BlockReader, End, ReadOutcome, Scan, ScanConfig, SlowTimes, TimedRead};
pub use live::{InFlight, LiveScan};
pub use mapfile::Mapfile;

/// A byte range `[offset, offset + length)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Span {
    pub offset: u64,
    pub length: u64,
}

impl Span {
    pub fn new(offset: u64, length: u64) -> Span {
        Span { offset, length }
    }

    /// The first byte after the range (saturating: a range never wraps).
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.length)
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// The part of `self` inside `other`, if any.
    pub fn intersect(&self, other: &Span) -> Option<Span> {
        let start = self.offset.max(other.offset);
        let end = self.end().min(other.end());
        (start < end).then(|| Span::new(start, end - start))
    }
}
