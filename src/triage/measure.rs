//! The triage's measurements over a `scan::engine::BlockReader`: the sampled surface read (a
//! failed sample split down to its first unreadable sector, in a bounded number of reads), the
//! sequential reads at start, middle and end, and QD1 random 4 KiB reads. Each stops at its
//! limit, the deadline or a stop, and says so; none writes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::facts::{SeqPosition, SeqRead, SurfaceSample, Unreadable};
use super::plan::{self, Spread};
use crate::scan::Span;
use crate::scan::bisect::{Bisection, Found};
use crate::scan::buckets::Bucket;
use crate::scan::engine::{BlockReader, ReadOutcome};

/// A read at or above this is slow and kept with its offset (the scan's `--slow`; see
/// `facts::SLOW_MS`).
pub const SLOW: Duration = Duration::from_millis(150);
/// A read at or above this is counted TIME (the scan's default `--timeout`).
pub const TIMEOUT: Duration = Duration::from_secs(3);
/// The bytes of one surface sample.
pub const SURFACE_READ: u64 = 64 << 10;
/// The bytes of one random read.
pub const RANDOM_READ: u64 = 4 << 10;
/// Split reads per failed sample, at most: enough for a 64 KiB sample of 512-byte sectors
/// (two reads per halving, seven halvings).
pub const SPLIT_READS: u64 = 16;
/// Split reads of the whole surface read, at most; later failed samples keep their range
/// (`disktriage scan` maps them all).
pub const SPLIT_BUDGET: u64 = 256;
/// The unreadable and slow samples kept, at most (the counts stay whole in the buckets).
pub const KEPT: usize = 256;

/// How much each measurement does, in a full triage or a quick one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizes {
    pub surface_reads: u64,
    /// Bytes and seconds of each sequential read, at most.
    pub seq_bytes: u64,
    pub seq_time: Duration,
    pub random_reads: u64,
    pub random_time: Duration,
}

impl Sizes {
    pub fn of(quick: bool) -> Sizes {
        if quick {
            Sizes {
                surface_reads: 500,
                seq_bytes: 16 << 20,
                seq_time: Duration::from_millis(300),
                random_reads: 200,
                random_time: Duration::from_millis(500),
            }
        } else {
            Sizes {
                surface_reads: 3000,
                seq_bytes: 64 << 20,
                seq_time: Duration::from_secs(1),
                random_reads: 1000,
                random_time: Duration::from_millis(1500),
            }
        }
    }
}

/// When a measurement must end: its own limit, the triage's deadline, or a stop.
pub struct Limit<'a> {
    pub until: Instant,
    pub stop: &'a AtomicBool,
}

impl Limit<'_> {
    fn over(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || Instant::now() >= self.until
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The sampled surface read of `plan` (`plan::surface_plan`) on `sector`-byte blocks, with
/// `progress(done)` now and then. The problem says where it stopped, if before the end.
pub fn surface(
    reader: &mut dyn BlockReader,
    plan: &[Span],
    sector: u64,
    limit: &Limit,
    progress: &mut dyn FnMut(usize),
) -> (SurfaceSample, Option<String>) {
    let mut sample = SurfaceSample {
        read_bytes: plan
            .first()
            .map_or(0, |s| u32::try_from(s.length).unwrap_or(u32::MAX)),
        ..SurfaceSample::default()
    };
    let mut problem = None;
    let mut first_slow: Vec<(Span, f64)> = Vec::new();
    let mut split_budget = SPLIT_BUDGET;
    for (i, span) in plan.iter().enumerate() {
        if limit.over() {
            problem = Some(format!(
                "surface: stopped at the time bound after {i} of {} reads",
                plan.len()
            ));
            break;
        }
        let read = reader.read(*span);
        sample.reads += 1;
        let bucket = match read.outcome {
            ReadOutcome::Read => Bucket::of_latency(read.elapsed, TIMEOUT),
            ReadOutcome::TimedOut => Bucket::Time,
            ReadOutcome::Failed(_) | ReadOutcome::Short(_) => Bucket::Err,
        };
        sample.buckets.add(bucket);
        if bucket != Bucket::Err && read.elapsed >= SLOW && first_slow.len() < KEPT {
            first_slow.push((*span, ms(read.elapsed)));
        }
        if bucket == Bucket::Err {
            let whole = Unreadable {
                sample: *span,
                at: *span,
                errno: match read.outcome {
                    ReadOutcome::Failed(errno) => errno,
                    _ => libc::EIO,
                },
            };
            let mut gone = reader.gone();
            if sample.unreadable.len() < KEPT {
                // A short read is a device that got smaller: nothing to split.
                let found = if gone.is_none() && matches!(read.outcome, ReadOutcome::Failed(_)) {
                    let (found, split_gone) =
                        first_unreadable(reader, whole, sector, limit, &mut split_budget);
                    gone = split_gone;
                    found
                } else {
                    whole
                };
                sample.unreadable.push(found);
            }
            if let Some(why) = gone {
                problem = Some(format!(
                    "surface: stopped after {} of {} reads: {why}",
                    i + 1,
                    plan.len()
                ));
                break;
            }
        }
        if i % 64 == 0 {
            progress(i);
        }
    }
    // Re-read slow samples, as the scan does: slow twice is a weak area, once a hiccup.
    // One left unread for want of time stays slow.
    for (span, first_ms) in first_slow {
        if problem.is_none() && !limit.over() {
            let again = reader.read(span);
            if matches!(again.outcome, ReadOutcome::Read) && again.elapsed < SLOW {
                sample.slow_once += 1;
                continue;
            }
            sample
                .slow
                .push((span.offset, first_ms.max(ms(again.elapsed))));
        } else {
            sample.slow.push((span.offset, first_ms));
        }
    }
    (sample, problem)
}

/// The first unreadable sector of a failed sample, by `scan::bisect` (left part first, so
/// the first one-sector part that fails is it). At most `SPLIT_READS` reads and the rest of
/// `budget`, none past `limit`; stopped early, it is a range from the last good byte to the
/// end of the smallest failed part. The second value: why the device is gone, if it is.
fn first_unreadable(
    reader: &mut dyn BlockReader,
    failed: Unreadable,
    sector: u64,
    limit: &Limit,
    budget: &mut u64,
) -> (Unreadable, Option<String>) {
    let sample = failed.sample;
    let Some(mut split) = Bisection::split(sample, sector) else {
        // One sector: the sample is the sector.
        return (failed, None);
    };
    // Every byte before `clear_to` read.
    let mut clear_to = sample.offset;
    let mut failed_ends = vec![sample.end()];
    let mut reads = 0;
    let mut gone = None;
    while let Some(part) = split.next_read() {
        if reads >= SPLIT_READS || *budget == 0 || limit.over() {
            break;
        }
        let read = reader.read(part);
        reads += 1;
        *budget -= 1;
        let result = match read.outcome {
            ReadOutcome::Read => Ok(()),
            ReadOutcome::Failed(errno) => {
                gone = reader.gone();
                if gone.is_some() {
                    break;
                }
                Err(errno)
            }
            // As in the scan: a part abandoned at the timeout is not read.
            ReadOutcome::TimedOut => Err(libc::ETIMEDOUT),
            ReadOutcome::Short(_) => {
                gone = reader.gone();
                break;
            }
        };
        match split.record(result) {
            Some(Found::Bad(at, errno)) => return (Unreadable { sample, at, errno }, None),
            Some(Found::Good(good)) if good.offset <= clear_to => clear_to = good.end(),
            Some(Found::Good(_)) => {}
            None => failed_ends.push(part.end()),
        }
    }
    // When every part read (a flaky read), the whole sample, as it failed.
    let at = failed_ends
        .into_iter()
        .filter(|&end| end > clear_to)
        .min()
        .map_or(sample, |end| Span::new(clear_to, end - clear_to));
    (Unreadable { at, ..failed }, gone)
}

/// One sequential read of `len` bytes from `offset` in `chunk`-byte reads, until done or
/// `limit`; MB/s of what was read.
pub fn seq_read(
    reader: &mut dyn BlockReader,
    position: SeqPosition,
    offset: u64,
    len: u64,
    chunk: u64,
    limit: &Limit,
) -> Result<SeqRead, String> {
    let chunk = chunk.max(1);
    let start = Instant::now();
    let mut done = 0u64;
    while done < len && !(done > 0 && limit.over()) {
        let this = chunk.min(len - done);
        let read = reader.read(Span::new(offset + done, this));
        match read.outcome {
            ReadOutcome::Read => done += this,
            ReadOutcome::Failed(errno) => {
                return Err(format!(
                    "sequential read at byte {}: {}",
                    offset + done,
                    crate::sys::error::describe_errno(nix::errno::Errno::from_raw(errno))
                ));
            }
            ReadOutcome::Short(n) => {
                return Err(format!(
                    "sequential read at byte {}: only {n} of {this} bytes",
                    offset + done
                ));
            }
            ReadOutcome::TimedOut => {
                return Err(format!(
                    "sequential read at byte {}: timed out",
                    offset + done
                ));
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let mb_per_s = plan::mb_per_s(done, seconds)
        .ok_or_else(|| "sequential read: nothing read in measurable time".to_string())?;
    Ok(SeqRead {
        position,
        offset,
        bytes: done,
        mb_per_s,
    })
}

/// QD1 random reads of `RANDOM_READ` bytes anywhere on the device, until `count` reads or
/// `limit`: their latencies in ms (failed reads are left out and counted).
pub fn random_qd1(
    reader: &mut dyn BlockReader,
    capacity: u64,
    align: u64,
    count: u64,
    limit: &Limit,
    spread: &mut Spread,
) -> (Vec<f64>, u64) {
    let mut latencies = Vec::new();
    let mut failed = 0;
    for _ in 0..count {
        if limit.over() {
            break;
        }
        let Some(span) = plan::random_span(capacity, align, RANDOM_READ, spread) else {
            break;
        };
        let read = reader.read(span);
        match read.outcome {
            ReadOutcome::Read => latencies.push(ms(read.elapsed)),
            _ => failed += 1,
        }
    }
    (latencies, failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::engine::TimedRead;
    use std::sync::Arc;

    /// A device of `size` bytes whose reads take `each` and fail when they touch `bad`.
    struct Fake {
        size: u64,
        bad: Vec<Span>,
        each: Duration,
        /// Reads after this many take 1 ms (a stall of the host that passes).
        fast_after: Option<usize>,
        /// Only reads of at least this many bytes fail (a flaky sample whose parts read).
        fail_from: u64,
        /// Raised after this many reads: the triage's stop (or its bound) mid-split.
        stop_after: Option<(usize, Arc<AtomicBool>)>,
        reads: Vec<Span>,
    }

    impl BlockReader for Fake {
        fn read(&mut self, span: Span) -> TimedRead {
            assert!(span.offset + span.length <= self.size, "read past the end");
            self.reads.push(span);
            if let Some((n, stop)) = &self.stop_after
                && self.reads.len() >= *n
            {
                stop.store(true, Ordering::Relaxed);
            }
            let hit = span.length >= self.fail_from
                && self.bad.iter().any(|b| span.intersect(b).is_some());
            TimedRead {
                outcome: if hit {
                    ReadOutcome::Failed(libc::EIO)
                } else {
                    ReadOutcome::Read
                },
                elapsed: match self.fast_after {
                    Some(n) if self.reads.len() > n => Duration::from_millis(1),
                    _ => self.each,
                },
            }
        }
        fn gone(&mut self) -> Option<String> {
            None
        }
    }

    fn fake(size: u64) -> Fake {
        Fake {
            size,
            bad: Vec::new(),
            each: Duration::from_millis(1),
            fast_after: None,
            fail_from: 0,
            stop_after: None,
            reads: Vec::new(),
        }
    }

    /// Sectors of 512 bytes, as spans.
    fn sectors(lbas: &[u64]) -> Vec<Span> {
        lbas.iter().map(|l| Span::new(l * 512, 512)).collect()
    }

    fn surface_of(dev: &mut Fake, plan: &[Span], sector: u64, stop: &AtomicBool) -> SurfaceSample {
        let limit = Limit {
            until: Instant::now() + Duration::from_secs(60),
            stop,
        };
        surface(dev, plan, sector, &limit, &mut |_| {}).0
    }

    /// The case: bad LBA 409600 in the sample from 409511; named by the sector, in
    /// few reads.
    #[test]
    fn a_failed_sample_names_its_one_bad_sector() {
        let stop = AtomicBool::new(false);
        let mut dev = fake(1 << 30);
        dev.bad = sectors(&[409_600]);
        let sample = Span::new(409_511 * 512, SURFACE_READ);
        let s = surface_of(&mut dev, &[sample], 512, &stop);
        assert_eq!(
            s.unreadable,
            [Unreadable {
                sample,
                at: Span::new(409_600 * 512, 512),
                errno: libc::EIO,
            }]
        );
        assert_eq!(s.unreadable_words(512, 5), "at LBA 409600");
        // One sample read, judged once; the split's reads are not samples.
        assert_eq!((s.reads, s.buckets.get(Bucket::Err)), (1, 1));
        assert!(dev.reads.len() as u64 <= 1 + SPLIT_READS, "{:?}", dev.reads);
        // In the very middle of its sample, and on a disk of 4 KiB sectors.
        for (sector, lba) in [(512, 409_511 + 64), (4096, 51_200 + 8)] {
            let mut dev = fake(1 << 30);
            dev.bad = vec![Span::new(lba * sector, sector)];
            let sample = Span::new((lba - SURFACE_READ / sector / 2) * sector, SURFACE_READ);
            let s = surface_of(&mut dev, &[sample], sector, &stop);
            assert_eq!(s.unreadable[0].at, Span::new(lba * sector, sector));
            assert_eq!(s.unreadable[0].lbas(sector), (lba, 1));
        }
    }

    #[test]
    fn of_several_bad_sectors_the_first_is_named() {
        let stop = AtomicBool::new(false);
        let mut dev = fake(1 << 30);
        dev.bad = sectors(&[409_630, 409_560, 409_600, 409_601]);
        let sample = Span::new(409_511 * 512, SURFACE_READ);
        let s = surface_of(&mut dev, &[sample], 512, &stop);
        assert_eq!(s.unreadable[0].at, Span::new(409_560 * 512, 512));
        assert!(dev.reads.len() as u64 <= 1 + SPLIT_READS);
        // Two overlapping samples that hold the same first bad sector name it once.
        let plan = [sample, Span::new(409_520 * 512, SURFACE_READ)];
        let s = surface_of(&mut fake_with(&dev.bad), &plan, 512, &stop);
        assert_eq!(s.unreadable.len(), 2);
        assert_eq!(s.unreadable_words(512, 5), "at LBA 409560");
    }

    fn fake_with(bad: &[Span]) -> Fake {
        let mut dev = fake(1 << 30);
        dev.bad = bad.to_vec();
        dev
    }

    /// Every sector bad: one read per halving (7 for 128 sectors), never 128.
    #[test]
    fn a_sample_bad_throughout_costs_one_read_per_halving() {
        let stop = AtomicBool::new(false);
        let mut dev = fake(1 << 30);
        dev.bad = vec![Span::new(409_000 * 512, 1 << 20)];
        let sample = Span::new(409_511 * 512, SURFACE_READ);
        let s = surface_of(&mut dev, &[sample], 512, &stop);
        assert_eq!(s.unreadable[0].at, Span::new(409_511 * 512, 512));
        assert_eq!(dev.reads.len(), 1 + 7, "{:?}", dev.reads);
    }

    /// Stopped mid-split (the bound, or Ctrl-C): the place is the range the split reached.
    #[test]
    fn a_split_stopped_early_says_the_range() {
        let stop = Arc::new(AtomicBool::new(false));
        let mut dev = fake(1 << 30);
        dev.bad = sectors(&[409_600]);
        // The sample, then its first half (reads), its second half (fails): stopped there.
        dev.stop_after = Some((3, Arc::clone(&stop)));
        let sample = Span::new(409_511 * 512, SURFACE_READ);
        let s = surface_of(&mut dev, &[sample], 512, &stop);
        assert_eq!(dev.reads.len(), 3, "{:?}", dev.reads);
        let at = s.unreadable[0].at;
        assert_eq!(at, Span::new((409_511 + 64) * 512, 64 * 512));
        assert_eq!(s.unreadable[0].lbas(512), (409_575, 64));
        assert_eq!(s.unreadable_words(512, 5), "somewhere in LBA 409575-409638");
        // Stopped before the split's first read: the whole sample.
        let stop = Arc::new(AtomicBool::new(false));
        let mut dev = fake_with(&sectors(&[409_600]));
        dev.stop_after = Some((1, Arc::clone(&stop)));
        let s = surface_of(&mut dev, &[sample], 512, &stop);
        assert_eq!(dev.reads.len(), 1);
        assert_eq!(s.unreadable[0].at, sample);
        assert_eq!(s.unreadable_words(512, 5), "somewhere in LBA 409511-409638");
    }

    /// Many failed samples: split reads stay within `SPLIT_BUDGET`, later samples keep their
    /// range. A flaky sample whose parts all read keeps its range too: no sector is invented.
    #[test]
    fn splits_are_bounded_over_the_surface_and_invent_nothing() {
        let stop = AtomicBool::new(false);
        let mut dev = fake(1 << 30);
        dev.bad = vec![Span::new(0, 1 << 30)];
        let plan = plan::surface_plan(1 << 30, 512, SURFACE_READ, 200, &mut Spread::new(5));
        let s = surface_of(&mut dev, &plan, 512, &stop);
        assert_eq!(s.unreadable.len(), 200);
        assert!(
            dev.reads.len() as u64 <= 200 + SPLIT_BUDGET,
            "{}",
            dev.reads.len()
        );
        let exact = s.unreadable.iter().filter(|u| u.at.length == 512).count() as u64;
        assert_eq!(exact, SPLIT_BUDGET / 7, "7 reads each");
        let last = s.unreadable[199];
        assert_eq!(last.at, last.sample);
        assert!(s.unreadable_words(512, 200).ends_with(&format!(
            "somewhere in LBA {}-{}",
            last.sample.offset / 512,
            last.sample.end() / 512 - 1
        )));

        let mut flaky = fake_with(&sectors(&[409_600]));
        flaky.fail_from = SURFACE_READ;
        let sample = Span::new(409_511 * 512, SURFACE_READ);
        let s = surface_of(&mut flaky, &[sample], 512, &stop);
        assert_eq!(s.unreadable[0].at, sample);
        assert!(flaky.reads.len() as u64 <= 1 + SPLIT_READS);
    }

    #[test]
    fn surface_classes_reads_and_keeps_the_unreadable_and_slow() {
        let size = 1 << 30;
        let mut dev = fake(size);
        dev.bad = vec![Span::new(size / 2, 1 << 20)];
        let plan = plan::surface_plan(size, 512, SURFACE_READ, 2000, &mut Spread::new(5));
        let stop = AtomicBool::new(false);
        let limit = Limit {
            until: Instant::now() + Duration::from_secs(60),
            stop: &stop,
        };
        let (s, problem) = surface(&mut dev, &plan, 512, &limit, &mut |_| {});
        assert_eq!(problem, None);
        assert_eq!(s.reads, 2000);
        assert_eq!(s.read_bytes, 65536);
        assert_eq!(s.buckets.total(), 2000);
        assert!(!s.unreadable.is_empty());
        assert!(s.unreadable.iter().all(|u| {
            u.errno == libc::EIO
                && u.sample.end() > size / 2
                && u.sample.offset < size / 2 + (1 << 20)
        }));
        assert_eq!(s.buckets.get(Bucket::Err), s.unreadable.len() as u64);
        assert!(s.slow.is_empty());

        let mut slow = fake(size);
        slow.each = Duration::from_millis(200);
        let (s, _) = surface(&mut slow, &plan[..10], 512, &limit, &mut |_| {});
        assert_eq!(s.slow.len(), 10);
        assert_eq!(s.slow_once, 0);
        assert_eq!(slow.reads.len(), 20, "each slow sample read once more");
        assert_eq!(s.buckets.get(Bucket::Under500), 10);
        // A stall in the first three reads, gone on re-read: a hiccup.
        let mut stall = fake(size);
        stall.each = Duration::from_millis(200);
        stall.fast_after = Some(3);
        let (s, _) = surface(&mut stall, &plan[..10], 512, &limit, &mut |_| {});
        assert!(s.slow.is_empty(), "{:?}", s.slow);
        assert_eq!(s.slow_once, 3);
        assert_eq!(s.buckets.get(Bucket::Under500), 3);
    }

    #[test]
    fn surface_stops_at_its_limit_and_says_so() {
        let mut dev = fake(1 << 30);
        let plan = plan::surface_plan(1 << 30, 512, SURFACE_READ, 100, &mut Spread::new(5));
        let stop = AtomicBool::new(true);
        let limit = Limit {
            until: Instant::now() + Duration::from_secs(60),
            stop: &stop,
        };
        let (s, problem) = surface(&mut dev, &plan, 512, &limit, &mut |_| {});
        assert_eq!(s.reads, 0);
        assert_eq!(
            problem.as_deref(),
            Some("surface: stopped at the time bound after 0 of 100 reads")
        );
    }

    #[test]
    fn seq_and_random_reads() {
        let mut dev = fake(1 << 30);
        let stop = AtomicBool::new(false);
        let limit = Limit {
            until: Instant::now() + Duration::from_secs(60),
            stop: &stop,
        };
        let r = seq_read(
            &mut dev,
            SeqPosition::End,
            1 << 29,
            8 << 20,
            1 << 20,
            &limit,
        )
        .unwrap();
        assert_eq!(r.bytes, 8 << 20);
        assert_eq!(dev.reads.len(), 8);
        assert!(r.mb_per_s > 0.0);
        let (lat, failed) = random_qd1(&mut dev, 1 << 30, 4096, 50, &limit, &mut Spread::new(9));
        assert_eq!((lat.len(), failed), (50, 0));
        // Past its limit, a sequential read still reads one chunk to measure something.
        let late = Limit {
            until: Instant::now(),
            stop: &stop,
        };
        let r = seq_read(&mut dev, SeqPosition::Start, 0, 8 << 20, 1 << 20, &late).unwrap();
        assert_eq!(r.bytes, 1 << 20);
        dev.bad = vec![Span::new(0, 4096)];
        assert!(seq_read(&mut dev, SeqPosition::Start, 0, 8 << 20, 1 << 20, &limit).is_err());
    }
}
