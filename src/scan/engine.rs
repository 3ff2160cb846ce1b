//! The scan: every block of the range read once, timed, classified; a failed block bisected
//! to its sectors; a slow block read once more later; the mapfile, the map and the range lists
//! kept up to date. One read per `step`, so the caller checks its stop flag, saves the mapfile
//! and prints progress between reads; or `begin` and `complete` around the read, so that the
//! scan can be shown as it stands while a read hangs (`scan::live`).
//!
//! The device is behind `BlockReader`. A slow block is read again only once the scan has moved
//! `REREAD_DISTANCE` further (or at the end): read again at once it would come from the
//! drive's own cache and always look like a one-off.

use std::collections::VecDeque;
use std::time::Duration;

use super::Span;
use super::bisect::{Bisection, Found};
use super::blockmap::BlockMap;
use super::buckets::{Bucket, BucketCounts};
use super::mapfile::{Mapfile, Status};
use super::ranges::{RangeList, RangeValue};

/// How far the scan moves on before a slow block is read again: more than a drive's cache.
pub const REREAD_DISTANCE: u64 = 512 << 20;

/// Slow blocks waiting for their second read, at most; beyond, the oldest is read at once.
const MAX_PENDING_REREADS: usize = 1024;

/// How one read ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOutcome {
    /// Every byte asked for.
    Read,
    /// The read failed with this errno.
    Failed(i32),
    /// Fewer bytes than asked (the device got smaller): this many.
    Short(u64),
    /// Abandoned at the per-command timeout (SG_IO): no data, the block is not read.
    TimedOut,
}

/// A read and the time it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedRead {
    pub outcome: ReadOutcome,
    pub elapsed: Duration,
}

/// The device, as the scan reads it.
pub trait BlockReader {
    /// Reads `span` (aligned to the logical block size, at most the block size long).
    fn read(&mut self, span: Span) -> TimedRead;
    /// After a failed or short read: why the device is gone (removed, replaced, resized).
    fn gone(&mut self) -> Option<String>;
}

/// What the scan was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanConfig {
    /// The range to scan (aligned to `sector`).
    pub domain: Span,
    /// Bytes per read.
    pub block: u64,
    /// The logical block size: the unit of bisection and of LBAs.
    pub sector: u64,
    /// A read at or above this is slow.
    pub slow: Duration,
    /// A read at or above this is TIME.
    pub timeout: Duration,
    /// Read bad sectors of the mapfile again.
    pub retry: bool,
    /// Cells of the block map.
    pub map_cells: usize,
}

/// A range's errno (ranges of one errno merge).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Errno(pub i32);

impl RangeValue for Errno {
    fn joins(&self, other: &Self) -> bool {
        self == other
    }
    fn combine(&self, _: &Self) -> Self {
        *self
    }
}

/// A slow block's two reads (merged slow blocks keep the worst of each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlowTimes {
    pub ms: u64,
    /// The second read's time; `None` when it was not made (the scan ended first) or failed.
    pub reread_ms: Option<u64>,
    /// The second read failed with this errno.
    pub reread_errno: Option<i32>,
}

impl RangeValue for SlowTimes {
    fn joins(&self, _: &Self) -> bool {
        true
    }
    fn combine(&self, other: &Self) -> Self {
        SlowTimes {
            ms: self.ms.max(other.ms),
            reread_ms: self.reread_ms.max(other.reread_ms),
            reread_errno: self.reread_errno.or(other.reread_errno),
        }
    }
}

/// Why the scan ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// Every block of the plan was read (or found unreadable).
    Finished,
    /// The caller stopped it (a signal).
    Stopped,
    /// The device went away or changed; why.
    Gone(String),
}

/// One step's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Continue,
    Done,
}

/// A read `Scan::begin` hands out, for `Scan::complete` to take back with its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextRead {
    pub span: Span,
    kind: ReadKind,
}

/// Which of the scan's reads it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadKind {
    /// A block of the plan.
    Block,
    /// A part of the failed block being bisected.
    Part,
    /// A slow block's second read; its first took this many ms.
    Reread(u64),
}

/// The failed block being bisected.
#[derive(Debug, Clone)]
struct Bisecting {
    block: Span,
    bisection: Bisection,
    bad_found: bool,
}

/// A scan in progress, and what it found (see the module documentation).
#[derive(Debug, Clone)]
pub struct Scan {
    pub config: ScanConfig,
    /// The regions to read, in order.
    plan: Vec<Span>,
    region: usize,
    /// The next byte to read in `plan[region]`.
    pos: u64,
    bisecting: Option<Bisecting>,
    rereads: VecDeque<(Span, u64)>,
    pub end: Option<End>,
    /// Bytes of the plan.
    pub planned: u64,
    /// Bytes of the plan done (read, or found unreadable).
    pub done: u64,
    pub bytes_read: u64,
    pub bytes_bad: u64,
    /// Bytes abandoned at the per-command timeout: left `*` so the next run reads them.
    pub bytes_abandoned: u64,
    pub buckets: BucketCounts,
    pub errors: RangeList<Errno>,
    pub slow: RangeList<SlowTimes>,
    pub timeouts: RangeList<()>,
    /// Blocks that failed, then read in parts without a bad sector (a flaky read).
    pub failed_then_read: u64,
    pub map: BlockMap,
    pub mapfile: Mapfile,
    /// Total time of the reads.
    pub read_time: Duration,
}

impl Scan {
    /// A scan of `config.domain`, reading what `mapfile` says is still to read there.
    pub fn new(config: ScanConfig, mapfile: Mapfile) -> Scan {
        let sector = config.sector.max(1);
        let device = Span::new(0, mapfile.size());
        // O_DIRECT reads whole logical blocks: another tool's unaligned region is widened.
        let mut plan: Vec<Span> = Vec::new();
        for span in mapfile.to_read(config.domain, config.retry) {
            let start = span.offset / sector * sector;
            let end = span.end().div_ceil(sector).saturating_mul(sector);
            let Some(part) = Span::new(start, end - start).intersect(&device) else {
                continue;
            };
            match plan.last_mut() {
                Some(last) if last.end() >= part.offset => {
                    last.length = part.end().max(last.end()) - last.offset;
                }
                _ => plan.push(part),
            }
        }
        let planned = plan.iter().map(|s| s.length).sum();
        let pos = plan.first().map_or(0, |s| s.offset);
        Scan {
            map: BlockMap::new(config.domain, config.map_cells),
            plan,
            region: 0,
            pos,
            bisecting: None,
            rereads: VecDeque::new(),
            end: None,
            planned,
            done: 0,
            bytes_read: 0,
            bytes_bad: 0,
            bytes_abandoned: 0,
            buckets: BucketCounts::default(),
            errors: RangeList::new(),
            slow: RangeList::new(),
            timeouts: RangeList::new(),
            failed_then_read: 0,
            mapfile,
            read_time: Duration::ZERO,
            config,
        }
    }

    /// The next block of the plan, cut at a block-size multiple so blocks stay aligned.
    fn peek_block(&self) -> Option<Span> {
        let region = self.plan.get(self.region)?;
        let block = self.config.block.max(self.config.sector).max(1);
        let boundary = (self.pos / block).saturating_add(1).saturating_mul(block);
        let end = boundary.min(region.end());
        Some(Span::new(self.pos, end - self.pos))
    }

    fn advance(&mut self, block: Span) {
        self.pos = block.end();
        if let Some(region) = self.plan.get(self.region)
            && self.pos >= region.end()
        {
            self.region += 1;
            if let Some(next) = self.plan.get(self.region) {
                self.pos = next.offset;
            }
        }
        self.mapfile.current_pos = self.pos;
    }

    /// Where the scan is: the next byte it reads.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Stops the scan: slow blocks not read again keep their first time.
    pub fn stop(&mut self) {
        self.finish(End::Stopped);
    }

    fn finish(&mut self, end: End) {
        if self.end.is_some() {
            return;
        }
        while let Some((span, ms)) = self.rereads.pop_front() {
            self.slow.insert(
                span,
                SlowTimes {
                    ms,
                    reread_ms: None,
                    reread_errno: None,
                },
            );
        }
        if end == End::Finished {
            self.mapfile.current_status = '+';
            self.mapfile.current_pos = self.config.domain.end().min(self.mapfile.size());
        }
        self.end = Some(end);
    }

    /// Does one read (or ends the scan). `Done` once the scan has ended.
    pub fn step(&mut self, reader: &mut dyn BlockReader) -> Step {
        let Some(next) = self.begin() else {
            return Step::Done;
        };
        let r = reader.read(next.span);
        self.complete(next, r, reader);
        if self.end.is_some() {
            Step::Done
        } else {
            Step::Continue
        }
    }

    /// The next read, `None` once ended: with `complete`, `step` in two halves, so another
    /// thread can show the scan while a read hangs.
    pub fn begin(&mut self) -> Option<NextRead> {
        loop {
            if self.end.is_some() {
                return None;
            }
            if let Some(mut b) = self.bisecting.take() {
                let Some(part) = b.bisection.next_read() else {
                    if !b.bad_found {
                        self.failed_then_read += 1;
                    }
                    self.advance(b.block);
                    continue;
                };
                self.bisecting = Some(b);
                return Some(NextRead {
                    span: part,
                    kind: ReadKind::Part,
                });
            }
            let next = self.peek_block();
            let reread_due = match (self.rereads.front(), next) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some((span, _)), Some(block)) => {
                    self.rereads.len() >= MAX_PENDING_REREADS
                        || block.offset.saturating_sub(span.end()) >= REREAD_DISTANCE
                }
            };
            if reread_due && let Some((span, ms)) = self.rereads.pop_front() {
                return Some(NextRead {
                    span,
                    kind: ReadKind::Reread(ms),
                });
            }
            let Some(block) = next else {
                self.finish(End::Finished);
                return None;
            };
            return Some(NextRead {
                span: block,
                kind: ReadKind::Block,
            });
        }
    }

    /// Takes the result of the read `begin` handed out.
    pub fn complete(&mut self, next: NextRead, r: TimedRead, reader: &mut dyn BlockReader) {
        self.read_time = self.read_time.saturating_add(r.elapsed);
        match next.kind {
            ReadKind::Block => self.read_block(reader, next.span, r),
            ReadKind::Part => self.bisect_part(reader, r),
            ReadKind::Reread(ms) => self.reread(reader, next.span, ms, r),
        }
    }

    fn read_block(&mut self, reader: &mut dyn BlockReader, block: Span, r: TimedRead) {
        match r.outcome {
            ReadOutcome::Read => {
                let bucket = Bucket::of_latency(r.elapsed, self.config.timeout);
                self.buckets.add(bucket);
                self.map.record(block, bucket);
                self.mapfile.set(block, Status::Finished);
                self.bytes_read += block.length;
                self.done += block.length;
                if bucket == Bucket::Time {
                    self.timeouts.insert(block, ());
                } else if r.elapsed >= self.config.slow {
                    self.rereads.push_back((block, millis(r.elapsed)));
                }
                self.advance(block);
            }
            ReadOutcome::Failed(errno) => {
                if let Some(why) = reader.gone() {
                    self.finish(End::Gone(why));
                    return;
                }
                self.buckets.add(Bucket::Err);
                self.map.record(block, Bucket::Err);
                match Bisection::split(block, self.config.sector) {
                    Some(bisection) => {
                        self.bisecting = Some(Bisecting {
                            block,
                            bisection,
                            bad_found: false,
                        });
                    }
                    None => {
                        self.found(Found::Bad(block, errno));
                        self.advance(block);
                    }
                }
            }
            ReadOutcome::TimedOut => {
                self.buckets.add(Bucket::Time);
                self.map.record(block, Bucket::Time);
                self.mapfile.set(block, Status::NonTrimmed);
                self.timeouts.insert(block, ());
                self.bytes_abandoned += block.length;
                self.done += block.length;
                self.advance(block);
            }
            ReadOutcome::Short(got) => {
                let why = reader.gone().unwrap_or_else(|| {
                    format!(
                        "a read at byte {} returned {got} of {} bytes: the device got smaller",
                        block.offset, block.length
                    )
                });
                self.finish(End::Gone(why));
            }
        }
    }

    fn bisect_part(&mut self, reader: &mut dyn BlockReader, r: TimedRead) {
        let Some(mut b) = self.bisecting.take() else {
            return;
        };
        let result = match r.outcome {
            ReadOutcome::Read => Ok(()),
            ReadOutcome::Failed(errno) => {
                if let Some(why) = reader.gone() {
                    self.finish(End::Gone(why));
                    return;
                }
                Err(errno)
            }
            // Abandoned: as bad as unreadable for the map, and ETIMEDOUT says why.
            ReadOutcome::TimedOut => Err(libc::ETIMEDOUT),
            ReadOutcome::Short(_) => {
                let why = reader.gone().unwrap_or_else(|| {
                    "a read returned fewer bytes: the device got smaller".into()
                });
                self.finish(End::Gone(why));
                return;
            }
        };
        if let Some(found) = b.bisection.record(result) {
            b.bad_found |= matches!(found, Found::Bad(..));
            self.found(found);
        }
        self.bisecting = Some(b);
    }

    fn found(&mut self, found: Found) {
        match found {
            Found::Good(span) => {
                self.mapfile.set(span, Status::Finished);
                self.bytes_read += span.length;
                self.done += span.length;
            }
            Found::Bad(span, errno) => {
                self.mapfile.set(span, Status::BadSector);
                self.errors.insert(span, Errno(errno));
                self.bytes_bad += span.length;
                self.done += span.length;
            }
        }
    }

    fn reread(&mut self, reader: &mut dyn BlockReader, span: Span, ms: u64, r: TimedRead) {
        let mut times = SlowTimes {
            ms,
            reread_ms: None,
            reread_errno: None,
        };
        match r.outcome {
            ReadOutcome::Read => times.reread_ms = Some(millis(r.elapsed)),
            ReadOutcome::Failed(errno) => {
                if let Some(why) = reader.gone() {
                    self.slow.insert(span, times);
                    self.finish(End::Gone(why));
                    return;
                }
                times.reread_errno = Some(errno);
            }
            ReadOutcome::TimedOut => times.reread_errno = Some(libc::ETIMEDOUT),
            ReadOutcome::Short(_) => {}
        }
        self.slow.insert(span, times);
    }

    /// Slow blocks in the slow list that were slow on their second read too.
    pub fn slow_twice(&self) -> usize {
        self.slow
            .iter()
            .filter(|(_, t)| t.reread_ms.is_some_and(|ms| ms >= millis(self.config.slow)))
            .count()
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// A device with chosen bad sectors and latencies, counting what is read.
    pub(crate) struct FakeDisk {
        pub size: u64,
        pub sector: u64,
        /// Bad sector numbers and their errno.
        pub bad: BTreeMap<u64, i32>,
        /// Latency of reads that start in a range (checked in order; default 1 ms).
        pub latency: Vec<(Span, Duration)>,
        /// Latency of the first read that starts in a range only (a one-off hiccup).
        pub latency_once: Vec<(Span, Duration)>,
        /// After this many reads the device is gone.
        pub gone_after: Option<u64>,
        /// Reads starting in these ranges time out.
        pub abandon: Vec<Span>,
        pub reads: Vec<Span>,
        pub seen: BTreeSet<u64>,
    }

    impl FakeDisk {
        pub(crate) fn new(size: u64, sector: u64) -> FakeDisk {
            FakeDisk {
                size,
                sector,
                bad: BTreeMap::new(),
                latency: Vec::new(),
                latency_once: Vec::new(),
                gone_after: None,
                abandon: Vec::new(),
                reads: Vec::new(),
                seen: BTreeSet::new(),
            }
        }
    }

    impl BlockReader for FakeDisk {
        fn read(&mut self, span: Span) -> TimedRead {
            assert_eq!(span.offset % self.sector, 0, "unaligned {span:?}");
            assert_eq!(span.length % self.sector, 0, "unaligned {span:?}");
            assert!(span.length > 0);
            self.reads.push(span);
            let again = !self.seen.insert(span.offset);
            let starts_in = |s: &Span| s.intersect(&Span::new(span.offset, 1)).is_some();
            let once = self.latency_once.iter().filter(|_| !again);
            let elapsed = once
                .chain(self.latency.iter())
                .find(|(s, _)| starts_in(s))
                .map_or(Duration::from_millis(1), |&(_, d)| d);
            if self.gone_after.is_some_and(|n| self.reads.len() as u64 > n) {
                return TimedRead {
                    outcome: ReadOutcome::Failed(libc::ENODEV),
                    elapsed,
                };
            }
            if span.end() > self.size {
                return TimedRead {
                    outcome: ReadOutcome::Short(self.size.saturating_sub(span.offset)),
                    elapsed,
                };
            }
            if self.abandon.iter().any(starts_in) {
                return TimedRead {
                    outcome: ReadOutcome::TimedOut,
                    elapsed,
                };
            }
            let first = span.offset / self.sector;
            let last = (span.end() - 1) / self.sector;
            let outcome = match self.bad.range(first..=last).next() {
                Some((_, &errno)) => ReadOutcome::Failed(errno),
                None => ReadOutcome::Read,
            };
            TimedRead { outcome, elapsed }
        }

        fn gone(&mut self) -> Option<String> {
            self.gone_after
                .filter(|&n| self.reads.len() as u64 > n)
                .map(|_| "removed".to_string())
        }
    }

    pub(crate) fn config(domain: Span) -> ScanConfig {
        ScanConfig {
            domain,
            block: 1 << 20,
            sector: 512,
            slow: Duration::from_millis(150),
            timeout: Duration::from_secs(3),
            retry: false,
            map_cells: 64,
        }
    }

    pub(crate) fn run_to_end(scan: &mut Scan, disk: &mut FakeDisk) {
        let mut steps = 0;
        while scan.step(disk) == Step::Continue {
            steps += 1;
            assert!(steps < 1_000_000, "the scan does not end");
        }
    }

    fn errors(scan: &Scan) -> Vec<(u64, u64, i32)> {
        scan.errors
            .iter()
            .map(|(s, e)| (s.offset, s.length, e.0))
            .collect()
    }

    #[test]
    fn sixteen_bad_sectors_are_named_and_the_rest_read() {
        let size = 64 << 20;
        let mut disk = FakeDisk::new(size, 512);
        for lba in 8192..8208 {
            disk.bad.insert(lba, libc::ENODATA);
        }
        let mut scan = Scan::new(config(Span::new(0, size)), Mapfile::new(size));
        run_to_end(&mut scan, &mut disk);
        assert_eq!(scan.end, Some(End::Finished));
        assert_eq!(errors(&scan), vec![(8192 * 512, 16 * 512, libc::ENODATA)]);
        assert_eq!(scan.bytes_bad, 16 * 512);
        assert_eq!(scan.bytes_read, size - 16 * 512);
        assert_eq!(scan.buckets.get(Bucket::Err), 1);
        assert_eq!(scan.buckets.get(Bucket::Under5), 63);
        let regions: Vec<_> = scan
            .mapfile
            .regions()
            .map(|(s, st)| (s.offset, s.length, st.char()))
            .collect();
        assert_eq!(
            regions,
            vec![
                (0, 8192 * 512, '+'),
                (8192 * 512, 8192, '-'),
                (8208 * 512, size - 8208 * 512, '+')
            ]
        );
        assert_eq!(scan.mapfile.current_status, '+');
    }

    #[test]
    fn slow_blocks_are_read_again_later_and_both_times_kept() {
        let size = 2048u64 << 20;
        let mut disk = FakeDisk::new(size, 4096);
        // Blocks 10 and 11 slow (300 ms) the first time, fast the second: a one-off; block
        // 1500 slow at 700 ms both times; block 20 takes 4 s: TIME.
        disk.latency_once
            .push((Span::new(10 << 20, 2 << 20), Duration::from_millis(300)));
        disk.latency
            .push((Span::new(1500 << 20, 1 << 20), Duration::from_millis(700)));
        disk.latency
            .push((Span::new(20 << 20, 1 << 20), Duration::from_secs(4)));
        let mut cfg = config(Span::new(0, size));
        cfg.sector = 4096;
        let mut scan = Scan::new(cfg, Mapfile::new(size));
        run_to_end(&mut scan, &mut disk);
        // The two 300 ms blocks merged, worst times kept; re-read REREAD_DISTANCE later.
        let slow: Vec<_> = scan.slow.iter().cloned().collect();
        assert_eq!(slow.len(), 2);
        assert_eq!(slow[0].0, Span::new(10 << 20, 2 << 20));
        assert_eq!(slow[0].1.ms, 300);
        assert_eq!(slow[0].1.reread_ms, Some(1));
        assert_eq!(slow[1].1.ms, 700);
        assert_eq!(slow[1].1.reread_ms, Some(700));
        assert_eq!(scan.slow_twice(), 1);
        let second = disk
            .reads
            .iter()
            .rposition(|s| s.offset == 10 << 20)
            .expect("read again");
        let position_then = disk.reads[second - 1].end();
        assert!(position_then >= (11 << 20) + REREAD_DISTANCE);
        assert_eq!(
            scan.timeouts.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
            vec![Span::new(20 << 20, 1 << 20)]
        );
        assert_eq!(scan.buckets.get(Bucket::Time), 1);
        assert_eq!(scan.buckets.get(Bucket::Under500), 2);
        assert_eq!(scan.buckets.get(Bucket::Over500), 1);
        assert_eq!(scan.buckets.total(), 2048);
        assert_eq!(scan.bytes_read, size);
        // 2048 blocks, 3 second reads.
        assert_eq!(disk.reads.len(), 2048 + 3);
    }

    #[test]
    fn a_block_abandoned_at_the_timeout_is_time_not_read_and_tried_again_next_run() {
        let size = 8 << 20;
        let mut disk = FakeDisk::new(size, 512);
        disk.abandon.push(Span::new(3 << 20, 1 << 20));
        let mut scan = Scan::new(config(Span::new(0, size)), Mapfile::new(size));
        run_to_end(&mut scan, &mut disk);
        assert_eq!(scan.end, Some(End::Finished));
        assert_eq!(scan.buckets.get(Bucket::Time), 1);
        assert_eq!(scan.buckets.get(Bucket::Err), 0);
        let timeouts: Vec<Span> = scan.timeouts.iter().map(|(s, _)| *s).collect();
        assert_eq!(timeouts, vec![Span::new(3 << 20, 1 << 20)]);
        assert_eq!(scan.bytes_abandoned, 1 << 20);
        assert_eq!(scan.bytes_read, size - (1 << 20));
        assert_eq!(scan.done, size);
        assert!(scan.errors.is_empty());
        // Not bisected: one read of the block, none of its parts.
        assert_eq!(disk.reads.len(), 8);
        let domain = Span::new(0, size);
        assert_eq!(scan.mapfile.bytes_with(Status::NonTrimmed, domain), 1 << 20);
        assert_eq!(
            scan.mapfile.bytes_with(Status::Finished, domain),
            size - (1 << 20)
        );
        // The next run reads that block again, and only it.
        let mut disk = FakeDisk::new(size, 512);
        let mut again = Scan::new(config(domain), scan.mapfile.clone());
        run_to_end(&mut again, &mut disk);
        assert_eq!(disk.reads, vec![Span::new(3 << 20, 1 << 20)]);
        assert_eq!(again.mapfile.bytes_with(Status::Finished, domain), size);
    }

    #[test]
    fn a_resumed_scan_reads_only_what_is_not_tried() {
        let size = 16 << 20;
        let mut map = Mapfile::new(size);
        map.set(Span::new(0, 5 << 20), Status::Finished);
        map.set(Span::new(5 << 20, 512), Status::BadSector);
        map.set(Span::new(9 << 20, 1 << 20), Status::Finished);
        let mut disk = FakeDisk::new(size, 512);
        let mut scan = Scan::new(config(Span::new(0, size)), map.clone());
        run_to_end(&mut scan, &mut disk);
        let read: u64 = disk.reads.iter().map(|s| s.length).sum();
        assert_eq!(read, size - (6 << 20) - 512);
        // The first block read is the rest of block 5, then whole blocks again.
        assert_eq!(disk.reads[0], Span::new((5 << 20) + 512, (1 << 20) - 512));
        assert_eq!(disk.reads[1], Span::new(6 << 20, 1 << 20));
        assert_eq!(
            scan.mapfile
                .bytes_with(Status::BadSector, Span::new(0, size)),
            512
        );
        // --retry reads the bad sector again: it reads now.
        let mut cfg = config(Span::new(0, size));
        cfg.retry = true;
        let mut disk = FakeDisk::new(size, 512);
        let mut scan = Scan::new(cfg, scan.mapfile.clone());
        run_to_end(&mut scan, &mut disk);
        assert_eq!(disk.reads, vec![Span::new(5 << 20, 512)]);
        assert_eq!(scan.mapfile.regions().count(), 1);
    }

    #[test]
    fn offset_and_size_limit_the_reads() {
        let size = 16 << 20;
        let mut disk = FakeDisk::new(size, 512);
        let domain = Span::new((3 << 20) + 4096, 2 << 20);
        let mut scan = Scan::new(config(domain), Mapfile::new(size));
        run_to_end(&mut scan, &mut disk);
        assert_eq!(
            disk.reads,
            vec![
                Span::new((3 << 20) + 4096, (1 << 20) - 4096),
                Span::new(4 << 20, 1 << 20),
                Span::new(5 << 20, 4096)
            ]
        );
        assert_eq!(
            scan.mapfile
                .bytes_with(Status::Finished, Span::new(0, size)),
            2 << 20
        );
    }

    #[test]
    fn a_device_that_goes_away_ends_the_scan_with_what_was_read() {
        let size = 16 << 20;
        let mut disk = FakeDisk::new(size, 512);
        disk.gone_after = Some(5);
        let mut scan = Scan::new(config(Span::new(0, size)), Mapfile::new(size));
        run_to_end(&mut scan, &mut disk);
        assert_eq!(scan.end, Some(End::Gone("removed".into())));
        assert_eq!(scan.bytes_read, 5 << 20);
        assert!(scan.errors.is_empty(), "a vanished device is no bad sector");
        assert_eq!(
            scan.mapfile
                .bytes_with(Status::NonTried, Span::new(0, size)),
            11 << 20
        );
        assert_eq!(scan.mapfile.current_status, '?');
        assert_eq!(scan.mapfile.current_pos, 5 << 20);
        // A device that got smaller: a short read.
        let mut disk = FakeDisk::new(size / 2, 512);
        let mut scan = Scan::new(config(Span::new(0, size)), Mapfile::new(size));
        run_to_end(&mut scan, &mut disk);
        assert!(matches!(&scan.end, Some(End::Gone(why)) if why.contains("smaller")));
        assert_eq!(scan.bytes_read, size / 2);
    }

    #[test]
    fn a_stop_keeps_the_first_time_of_slow_blocks() {
        let size = 16 << 20;
        let mut disk = FakeDisk::new(size, 512);
        disk.latency
            .push((Span::new(0, 1 << 20), Duration::from_millis(200)));
        let mut scan = Scan::new(config(Span::new(0, size)), Mapfile::new(size));
        for _ in 0..3 {
            scan.step(&mut disk);
        }
        scan.stop();
        assert_eq!(scan.step(&mut disk), Step::Done);
        assert_eq!(disk.reads.len(), 3);
        let slow: Vec<_> = scan.slow.iter().cloned().collect();
        assert_eq!(slow.len(), 1);
        assert_eq!(slow[0].1.reread_ms, None);
        assert_eq!(scan.end, Some(End::Stopped));
    }

    #[test]
    fn a_block_that_fails_once_then_reads_is_counted_apart() {
        struct Flaky(bool);
        impl BlockReader for Flaky {
            fn read(&mut self, span: Span) -> TimedRead {
                let fail = !self.0 && span.length == 1 << 20;
                self.0 |= fail;
                TimedRead {
                    outcome: if fail {
                        ReadOutcome::Failed(libc::EIO)
                    } else {
                        ReadOutcome::Read
                    },
                    elapsed: Duration::from_millis(1),
                }
            }
            fn gone(&mut self) -> Option<String> {
                None
            }
        }
        let size = 4 << 20;
        let mut scan = Scan::new(config(Span::new(0, size)), Mapfile::new(size));
        let mut flaky = Flaky(false);
        while scan.step(&mut flaky) == Step::Continue {}
        assert_eq!(scan.failed_then_read, 1);
        assert!(scan.errors.is_empty());
        assert_eq!(scan.bytes_read, size);
    }
}
