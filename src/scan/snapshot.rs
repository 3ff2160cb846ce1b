//! A copy of a scan's state of a size that does not grow with the device (the fixed map, merged
//! range lists, a bounded zone curve): what the TUI's screen shows (`Msg::Scan`) and what the
//! history keeps of a scan, the TUI's and `disktriage scan`'s alike
//! (`history::ScanRecord::of`).

use std::time::Duration;

use super::Span;
use super::blockmap::BlockMap;
use super::buckets::BucketCounts;
use super::engine::{End, Scan, SlowTimes};
use super::live::InFlight;
use super::verdict::verdict;

/// The surface scan as the screen shows it (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct ScanUpdate {
    pub device: String,
    /// The device's size in bytes, its logical block size and the read size.
    pub size: u64,
    pub sector: u64,
    pub block: u64,
    pub slow_ms: u64,
    /// The next byte the scan reads.
    pub position: u64,
    /// Bytes to read and bytes done (read, or found unreadable).
    pub planned: u64,
    pub done: u64,
    pub bytes_read: u64,
    pub bytes_bad: u64,
    pub buckets: BucketCounts,
    pub map: BlockMap,
    /// Unreadable ranges with their errno, slow ranges with their times, TIME ranges.
    pub errors: Vec<(Span, i32)>,
    pub slow: Vec<(Span, SlowTimes)>,
    pub timeouts: Vec<Span>,
    /// Throughput against position: (byte offset, MB/s), at most `event::ZONE_POINTS`.
    pub zone: Vec<(u64, f64)>,
    /// Since the scan started.
    pub elapsed: Duration,
    /// The read under way and how long it had waited; `None` between reads.
    pub in_flight: Option<InFlight>,
    /// Why it ended; `None` while it runs.
    pub end: Option<End>,
    /// The one-line verdict (`scan::verdict`), set at the end.
    pub verdict: Option<String>,
}

impl ScanUpdate {
    /// `scan` now, on `device`, `elapsed` since it started, with its zone curve.
    pub fn of(device: &str, scan: &Scan, zone: Vec<(u64, f64)>, elapsed: Duration) -> ScanUpdate {
        ScanUpdate {
            device: device.to_string(),
            size: scan.mapfile.size(),
            sector: scan.config.sector,
            block: scan.config.block,
            slow_ms: scan.config.slow.as_millis() as u64,
            position: scan.position(),
            planned: scan.planned,
            done: scan.done,
            bytes_read: scan.bytes_read,
            bytes_bad: scan.bytes_bad,
            buckets: scan.buckets.clone(),
            map: scan.map.clone(),
            errors: scan.errors.iter().map(|(s, e)| (*s, e.0)).collect(),
            slow: scan.slow.iter().map(|(s, t)| (*s, *t)).collect(),
            timeouts: scan.timeouts.iter().map(|(s, _)| *s).collect(),
            zone,
            elapsed,
            in_flight: None,
            verdict: scan.end.as_ref().map(|_| verdict(scan)),
            end: scan.end.clone(),
        }
    }
}
