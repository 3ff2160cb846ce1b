//! The triage's measurements on an opened device (anything that reads timed blocks, a
//! `scan::engine::BlockReader`): the sampled surface read, the sequential reads at the start,
//! middle and end, and the QD1 random 4 KiB reads. Each stops at its own time limit, at the
//! triage's deadline or when asked to stop, and says so; none writes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::facts::{SeqPosition, SeqRead, SurfaceSample};
use super::plan::{self, Spread};
use crate::scan::Span;
use crate::scan::buckets::Bucket;
use crate::scan::engine::{BlockReader, ReadOutcome};

/// A read at or above this is slow (the scan's default `--slow`), and kept with its offset.
pub const SLOW: Duration = Duration::from_millis(150);
/// A read at or above this is counted TIME (the scan's default `--timeout`).
pub const TIMEOUT: Duration = Duration::from_secs(3);
/// The bytes of one surface sample.
pub const SURFACE_READ: u64 = 64 << 10;
/// The bytes of one random read.
pub const RANDOM_READ: u64 = 4 << 10;
/// The unreadable and slow samples kept, at most (the counts stay whole in the buckets).
pub const KEPT: usize = 256;

/// How much each measurement does in a full triage and in a quick one.
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

/// The sampled surface read of `plan` (from `plan::surface_plan`). `progress(done)` is called
/// now and then. The problem says where it stopped when it could not read the whole plan.
pub fn surface(
    reader: &mut dyn BlockReader,
    plan: &[Span],
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
            ReadOutcome::Failed(errno) => {
                if sample.unreadable.len() < KEPT {
                    sample.unreadable.push((span.offset, errno));
                }
                Bucket::Err
            }
            ReadOutcome::Short(_) => {
                if sample.unreadable.len() < KEPT {
                    sample.unreadable.push((span.offset, libc::EIO));
                }
                Bucket::Err
            }
        };
        sample.buckets.add(bucket);
        if bucket != Bucket::Err && read.elapsed >= SLOW && first_slow.len() < KEPT {
            first_slow.push((*span, ms(read.elapsed)));
        }
        if bucket == Bucket::Err
            && let Some(why) = reader.gone()
        {
            problem = Some(format!(
                "surface: stopped after {} of {} reads: {why}",
                i + 1,
                plan.len()
            ));
            break;
        }
        if i % 64 == 0 {
            progress(i);
        }
    }
    // Each slow sample is read once more after the others, as the scan re-reads its slow
    // blocks: slow twice is a weak area, slow once a hiccup (the host, another process).
    // One not read again for want of time stays slow: it was.
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

/// One sequential read of `len` bytes from `offset` in `chunk`-byte reads, until `len` is read
/// or `limit`; MB/s of what was read.
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

    /// A device of `size` bytes whose reads take `each` and fail inside `bad`.
    struct Fake {
        size: u64,
        bad: Option<Span>,
        each: Duration,
        /// Reads after this many take 1 ms (a stall of the host that passes).
        fast_after: Option<usize>,
        reads: Vec<Span>,
    }

    impl BlockReader for Fake {
        fn read(&mut self, span: Span) -> TimedRead {
            assert!(span.offset + span.length <= self.size, "read past the end");
            self.reads.push(span);
            let hit = self
                .bad
                .is_some_and(|b| span.offset < b.offset + b.length && b.offset < span.end());
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
            bad: None,
            each: Duration::from_millis(1),
            fast_after: None,
            reads: Vec::new(),
        }
    }

    #[test]
    fn surface_classes_reads_and_keeps_the_unreadable_and_slow() {
        let size = 1 << 30;
        let mut dev = fake(size);
        dev.bad = Some(Span::new(size / 2, 1 << 20));
        let plan = plan::surface_plan(size, 512, SURFACE_READ, 2000, &mut Spread::new(5));
        let stop = AtomicBool::new(false);
        let limit = Limit {
            until: Instant::now() + Duration::from_secs(60),
            stop: &stop,
        };
        let (s, problem) = surface(&mut dev, &plan, &limit, &mut |_| {});
        assert_eq!(problem, None);
        assert_eq!(s.reads, 2000);
        assert_eq!(s.read_bytes, 65536);
        assert_eq!(s.buckets.total(), 2000);
        assert!(!s.unreadable.is_empty());
        assert!(s.unreadable.iter().all(|(o, e)| {
            *e == libc::EIO && *o + 65536 > size / 2 && *o < size / 2 + (1 << 20)
        }));
        assert_eq!(s.buckets.get(Bucket::Err), s.unreadable.len() as u64);
        assert!(s.slow.is_empty());

        let mut slow = fake(size);
        slow.each = Duration::from_millis(200);
        let (s, _) = surface(&mut slow, &plan[..10], &limit, &mut |_| {});
        assert_eq!(s.slow.len(), 10);
        assert_eq!(s.slow_once, 0);
        assert_eq!(slow.reads.len(), 20, "each slow sample read once more");
        assert_eq!(s.buckets.get(Bucket::Under500), 10);
        // A stall during the first three reads that is gone when they are read again: a
        // hiccup, not a weak area.
        let mut stall = fake(size);
        stall.each = Duration::from_millis(200);
        stall.fast_after = Some(3);
        let (s, _) = surface(&mut stall, &plan[..10], &limit, &mut |_| {});
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
        let (s, problem) = surface(&mut dev, &plan, &limit, &mut |_| {});
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
        dev.bad = Some(Span::new(0, 4096));
        assert!(seq_read(&mut dev, SeqPosition::Start, 0, 8 << 20, 1 << 20, &limit).is_err());
    }
}
