//! Measurements: latency histograms, the per-interval samples workers send, the aggregated
//! interval points a run's series is made of, and run totals.
//!
//! Latency is total latency, as fio's `lat` (`LATENCY_DEFINITION`): from just before the
//! system call that hands the I/O over (io_uring_enter, or pread/pwrite) to when its
//! completion is seen; at QD1 with pread/pwrite, dd's and ioping's time per request. Recorded
//! in ns in an HDR histogram of 3 significant digits (0.1 %), 1 ns to 60 s; longer counts as 60 s.

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::bench::plan::OpKind;

/// What every latency figure measures; the JSON report carries it as `latency_definition`.
pub const LATENCY_DEFINITION: &str = "total: from just before the system call that hands the I/O to \
     the kernel (io_uring_enter or pread/pwrite) to the moment its completion is seen, as fio's \
     lat (not clat); io_uring at QD16 and more, when no completion is ready, waits for QD/8 of \
     them, as fio's iodepth_batch_complete_min";

/// Highest latency the histograms resolve, in nanoseconds.
pub const MAX_LATENCY_NS: u64 = 60_000_000_000;
/// Significant decimal digits the histograms keep.
pub const LATENCY_SIGNIFICANT_DIGITS: u8 = 3;

/// A latency histogram in nanoseconds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram(Histogram<u64>);

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        // Bounds hdrhistogram accepts (low >= 1, high >= 2 * low, digits <= 5): cannot fail.
        let h = Histogram::new_with_bounds(1, MAX_LATENCY_NS, LATENCY_SIGNIFICANT_DIGITS)
            .expect("constant histogram bounds are valid");
        LatencyHistogram(h)
    }

    /// Bytes one histogram takes (allocated whole): about 216 KiB at these bounds.
    pub fn footprint_bytes() -> u64 {
        static BYTES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        *BYTES.get_or_init(|| {
            (LatencyHistogram::new().0.distinct_values() * std::mem::size_of::<u64>()) as u64
        })
    }

    pub fn record(&mut self, ns: u64) {
        self.0.saturating_record(ns.max(1));
    }

    pub fn add(&mut self, other: &LatencyHistogram) {
        // Same bounds on both sides: adding cannot fail.
        let _ = self.0.add(&other.0);
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn record_n(&mut self, value: u64, count: u64) {
        self.0.saturating_record_n(value.max(1), count);
    }

    pub fn reset(&mut self) {
        self.0.reset();
    }

    /// Every non-empty bucket as (a value in the bucket, count): recording these into a
    /// histogram with the same bounds reproduces this one exactly.
    pub fn nonzero_buckets(&self) -> Vec<(u64, u64)> {
        self.0
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    pub fn quantile(&self, q: f64) -> u64 {
        self.0.value_at_quantile(q)
    }

    pub fn point(&self) -> Option<LatencyPoint> {
        (!self.is_empty()).then(|| LatencyPoint {
            p50_ns: self.quantile(0.50),
            p99_ns: self.quantile(0.99),
            p999_ns: self.quantile(0.999),
            max_ns: self.0.max(),
        })
    }

    pub fn summary(&self) -> Option<LatencySummary> {
        (!self.is_empty()).then(|| LatencySummary {
            count: self.count(),
            min_ns: self.0.min(),
            mean_ns: self.0.mean(),
            p50_ns: self.quantile(0.50),
            p90_ns: self.quantile(0.90),
            p99_ns: self.quantile(0.99),
            p999_ns: self.quantile(0.999),
            max_ns: self.0.max(),
        })
    }
}

/// Per-interval latency figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencyPoint {
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

impl LatencyPoint {
    /// Combines two points when a series is coalesced: percentiles cannot be merged without the
    /// histograms, so it keeps the worse of each.
    pub fn worst(a: Option<Self>, b: Option<Self>) -> Option<Self> {
        match (a, b) {
            (Some(a), Some(b)) => Some(LatencyPoint {
                p50_ns: a.p50_ns.max(b.p50_ns),
                p99_ns: a.p99_ns.max(b.p99_ns),
                p999_ns: a.p999_ns.max(b.p999_ns),
                max_ns: a.max_ns.max(b.max_ns),
            }),
            (x, None) | (None, x) => x,
        }
    }
}

/// Whole-run latency figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

/// Bytes, operations and latencies of one direction. The histogram is made on the first
/// latency, so an unused direction costs nothing.
#[derive(Debug, Clone, Default)]
pub struct DirStats {
    pub bytes: u64,
    pub ops: u64,
    pub hist: Option<LatencyHistogram>,
}

impl DirStats {
    pub fn record(&mut self, bytes: u64, latency_ns: u64) {
        self.bytes += bytes;
        self.ops += 1;
        self.hist
            .get_or_insert_with(LatencyHistogram::new)
            .record(latency_ns);
    }

    pub fn add(&mut self, other: &DirStats) {
        self.bytes += other.bytes;
        self.ops += other.ops;
        if let Some(h) = &other.hist {
            self.hist.get_or_insert_with(LatencyHistogram::new).add(h);
        }
    }

    /// Adds a sample as a worker sent it.
    pub fn add_sample(&mut self, s: &DirSample) {
        self.bytes += s.bytes;
        self.ops += s.ops;
        if !s.latencies.is_empty() {
            let h = self.hist.get_or_insert_with(LatencyHistogram::new);
            for &(value, count) in &s.latencies {
                h.record_n(value, count);
            }
        }
    }

    /// Hands out this interval's figures and starts the next, keeping the histogram's memory.
    pub fn take_sample(&mut self) -> DirSample {
        let latencies = match &mut self.hist {
            Some(h) if !h.is_empty() => {
                let v = h.nonzero_buckets();
                h.reset();
                v
            }
            _ => Vec::new(),
        };
        let sample = DirSample {
            bytes: self.bytes,
            ops: self.ops,
            latencies,
        };
        self.bytes = 0;
        self.ops = 0;
        sample
    }

    pub fn is_empty(&self) -> bool {
        self.ops == 0
    }

    pub fn latency_point(&self) -> Option<LatencyPoint> {
        self.hist.as_ref().and_then(LatencyHistogram::point)
    }

    pub fn latency_summary(&self) -> Option<LatencySummary> {
        self.hist.as_ref().and_then(LatencyHistogram::summary)
    }
}

/// Bytes and requests without latencies: a rewrite's (`--preserve`) reads before each write.
/// Not the test's figures, but the kernel counts them, so the witness must too.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub bytes: u64,
    pub ops: u64,
}

impl Tally {
    pub fn add(&mut self, other: Tally) {
        self.bytes += other.bytes;
        self.ops += other.ops;
    }
}

/// Reads and writes together.
#[derive(Debug, Clone, Default)]
pub struct IoStats {
    pub read: DirStats,
    pub write: DirStats,
    /// Reads of the blocks a rewrite writes back, outside the figures.
    pub read_back: Tally,
    /// In a rewrite phase only: the thread's write-busy nanoseconds (`TimeBase::WriteBusy`).
    /// Summed over threads; the runner divides by the threads that counted some.
    pub busy_ns: u64,
}

impl IoStats {
    pub fn record(&mut self, kind: OpKind, bytes: u64, latency_ns: u64) {
        match kind {
            OpKind::Read => self.read.record(bytes, latency_ns),
            OpKind::Write => self.write.record(bytes, latency_ns),
        }
    }

    /// Counts one read of `bytes` made to rewrite its block (not timed, not a figure).
    pub fn record_read_back(&mut self, bytes: u64) {
        self.read_back.add(Tally { bytes, ops: 1 });
    }

    /// Counts time during which this thread's timed I/O was in flight (rewrite phases).
    pub fn record_busy(&mut self, ns: u64) {
        self.busy_ns += ns;
    }

    pub fn add(&mut self, other: &IoStats) {
        self.read.add(&other.read);
        self.write.add(&other.write);
        self.read_back.add(other.read_back);
        self.busy_ns += other.busy_ns;
    }

    pub fn add_sample(&mut self, s: &SampleStats) {
        self.read.add_sample(&s.read);
        self.write.add_sample(&s.write);
        self.read_back.add(s.read_back);
        self.busy_ns += s.busy_ns;
    }

    pub fn take_sample(&mut self) -> SampleStats {
        SampleStats {
            read: self.read.take_sample(),
            write: self.write.take_sample(),
            read_back: std::mem::take(&mut self.read_back),
            busy_ns: std::mem::take(&mut self.busy_ns),
        }
    }

    pub fn bytes(&self) -> u64 {
        self.read.bytes + self.write.bytes
    }

    pub fn ops(&self) -> u64 {
        self.read.ops + self.write.ops
    }
}

/// One direction of a worker's interval: counts and the histogram's non-empty buckets (value,
/// count), a few hundred at most, instead of the whole histogram.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirSample {
    pub bytes: u64,
    pub ops: u64,
    pub latencies: Vec<(u64, u64)>,
}

/// Both directions of a worker's interval.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampleStats {
    pub read: DirSample,
    pub write: DirSample,
    /// Reads made to rewrite blocks (`--preserve`): counted for the witness only.
    pub read_back: Tally,
    /// Time the thread's timed I/O was in flight, in a rewrite phase (see `IoStats`).
    pub busy_ns: u64,
}

/// What a worker sends once per interval: that interval's figures only, never cumulative.
#[derive(Debug, Clone)]
pub struct WorkerSample {
    pub worker: u32,
    /// The I/O thread within the worker (0 with io_uring; one per outstanding I/O with sync).
    pub thread: u32,
    /// Interval number since the measured phase began (0-based).
    pub interval: u64,
    /// Seconds since the worker began measuring at which this sample ends, when not the interval's
    /// boundary: its last sample (cut short, or the folded last interval of a timed run).
    pub end_s: Option<f64>,
    pub stats: SampleStats,
}

/// One direction of an aggregated interval.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct DirPoint {
    pub bytes: u64,
    pub ops: u64,
    pub latency: Option<LatencyPoint>,
}

impl DirPoint {
    fn from_stats(s: &DirStats) -> Self {
        DirPoint {
            bytes: s.bytes,
            ops: s.ops,
            latency: s.latency_point(),
        }
    }

    fn merge(self, other: DirPoint) -> DirPoint {
        DirPoint {
            bytes: self.bytes + other.bytes,
            ops: self.ops + other.ops,
            latency: LatencyPoint::worst(self.latency, other.latency),
        }
    }
}

/// All workers' figures for one interval of the series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IntervalPoint {
    /// Seconds since the measured phase began.
    pub start_s: f64,
    pub end_s: f64,
    pub read: DirPoint,
    pub write: DirPoint,
    /// A rewrite phase's interval: its write-busy seconds (`TimeBase::WriteBusy`), which its rates
    /// are over. None for every other phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy_s: Option<f64>,
}

impl IntervalPoint {
    pub fn from_stats(start_s: f64, end_s: f64, stats: &IoStats, busy_s: Option<f64>) -> Self {
        IntervalPoint {
            start_s,
            end_s,
            read: DirPoint::from_stats(&stats.read),
            write: DirPoint::from_stats(&stats.write),
            busy_s,
        }
    }

    /// The interval's length (the time it covers on the clock).
    pub fn seconds(&self) -> f64 {
        (self.end_s - self.start_s).max(0.0)
    }

    /// The time base of the interval's rates: its length, or a rewrite's `busy_s`.
    pub fn rate_seconds(&self) -> f64 {
        self.busy_s.unwrap_or_else(|| self.seconds()).max(0.0)
    }

    pub fn bytes(&self) -> u64 {
        self.read.bytes + self.write.bytes
    }

    pub fn ops(&self) -> u64 {
        self.read.ops + self.write.ops
    }

    /// Bytes per second over the interval's time base (both directions).
    pub fn rate(&self) -> f64 {
        per_second(self.bytes() as f64, self.rate_seconds())
    }

    pub fn iops(&self) -> f64 {
        per_second(self.ops() as f64, self.rate_seconds())
    }

    /// The worse latency point of the two directions (what a chart of "the" latency shows).
    pub fn latency(&self) -> Option<LatencyPoint> {
        LatencyPoint::worst(self.read.latency, self.write.latency)
    }

    fn merge(self, later: IntervalPoint) -> IntervalPoint {
        IntervalPoint {
            start_s: self.start_s,
            end_s: later.end_s,
            read: self.read.merge(later.read),
            write: self.write.merge(later.write),
            // Successive intervals: their busy times add up, as their lengths do.
            busy_s: match (self.busy_s, later.busy_s) {
                (Some(a), Some(b)) => Some(a + b),
                (x, None) | (None, x) => x,
            },
        }
    }
}

/// `count` per second over `seconds`; 0 when no time passed (nothing to divide by).
pub fn per_second(count: f64, seconds: f64) -> f64 {
    if seconds > 0.0 { count / seconds } else { 0.0 }
}

/// A rewrite phase's time base: the mean busy time of the threads that counted some; 0 when
/// none did.
pub fn mean_busy_seconds(busy_ns: impl IntoIterator<Item = u64>) -> f64 {
    let (sum, threads) = busy_ns
        .into_iter()
        .filter(|&ns| ns > 0)
        .fold((0u128, 0u64), |(s, n), ns| (s + u128::from(ns), n + 1));
    if threads == 0 {
        0.0
    } else {
        sum as f64 / 1e9 / threads as f64
    }
}

/// Points a phase's series keeps before it coarsens (at 250 ms: 17 minutes at full detail).
pub const SERIES_CAPACITY: usize = 4096;

/// A time series of bounded size: when full, neighbouring points merge pairwise, so a long run
/// keeps its whole span at a coarser step. Counts survive exactly (the series sums to totals).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoundedSeries {
    #[serde(skip)]
    capacity: usize,
    /// How many original intervals each point now covers.
    pub merged: u32,
    pub points: Vec<IntervalPoint>,
    /// Intervals gathered towards the next coarse point: (partial point, intervals in it).
    #[serde(skip)]
    pending: Option<(IntervalPoint, u32)>,
}

impl BoundedSeries {
    pub fn new(capacity: usize) -> Self {
        BoundedSeries {
            capacity: capacity.max(2),
            merged: 1,
            points: Vec::new(),
            pending: None,
        }
    }

    pub fn push(&mut self, p: IntervalPoint) {
        let (p, n) = match self.pending.take() {
            Some((acc, n)) => (acc.merge(p), n + 1),
            None => (p, 1),
        };
        if n < self.merged {
            self.pending = Some((p, n));
            return;
        }
        if self.points.len() >= self.capacity {
            self.points = self
                .points
                .chunks(2)
                .map(|pair| pair.iter().copied().reduce(IntervalPoint::merge))
                .map(|m| m.unwrap_or(p))
                .collect();
            self.merged *= 2;
        }
        self.points.push(p);
    }

    /// Puts a partial coarse point into the series (at the end of a run).
    pub fn finish(&mut self) {
        if let Some((p, _)) = self.pending.take() {
            self.points.push(p);
        }
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Bytes and ops summed over the series, including a pending partial point.
    pub fn totals(&self) -> (u64, u64) {
        self.points
            .iter()
            .chain(self.pending.iter().map(|(p, _)| p))
            .fold((0, 0), |(b, o), p| (b + p.bytes(), o + p.ops()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::plan::TimeBase;

    #[test]
    fn histogram_resolution_and_summary() {
        let mut h = LatencyHistogram::new();
        for v in 1..=1000u64 {
            h.record(v * 1000); // 1 us .. 1 ms
        }
        let s = h.summary().unwrap();
        assert_eq!(s.count, 1000);
        assert_eq!(s.min_ns, 1000);
        // Within 0.1 % (3 significant digits).
        assert!((s.p50_ns as f64 - 500_000.0).abs() <= 500.0, "{}", s.p50_ns);
        assert!((s.p99_ns as f64 - 990_000.0).abs() <= 990.0, "{}", s.p99_ns);
        assert!((s.max_ns as f64 - 1_000_000.0).abs() <= 1000.0);
        assert!((s.mean_ns - 500_500.0).abs() < 600.0);
        h.record(10 * MAX_LATENCY_NS);
        assert!(h.summary().unwrap().max_ns >= MAX_LATENCY_NS * 999 / 1000);
        assert!(LatencyHistogram::new().summary().is_none());
    }

    fn point(i: u64, bytes: u64, p99: u64) -> IntervalPoint {
        IntervalPoint {
            start_s: i as f64 * 0.25,
            end_s: (i + 1) as f64 * 0.25,
            read: DirPoint {
                bytes,
                ops: 1,
                latency: Some(LatencyPoint {
                    p50_ns: p99 / 2,
                    p99_ns: p99,
                    p999_ns: p99,
                    max_ns: p99,
                }),
            },
            write: DirPoint::default(),
            busy_s: None,
        }
    }

    #[test]
    fn bounded_series_coarsens_but_keeps_totals_and_span() {
        let mut s = BoundedSeries::new(8);
        let mut total = 0;
        for i in 0..100u64 {
            s.push(point(i, i + 1, 1000 + i));
            total += i + 1;
            assert!(s.len() <= 8);
        }
        s.finish();
        assert_eq!(s.totals(), (total, 100));
        assert_eq!(s.points.first().unwrap().start_s, 0.0);
        assert_eq!(s.points.last().unwrap().end_s, 25.0);
        assert!(s.merged >= 16);
        // Coalesced latency keeps the worst.
        assert_eq!(s.points.last().unwrap().read.latency.unwrap().p99_ns, 1099);
    }

    #[test]
    fn samples_carry_the_histogram_exactly() {
        let mut worker = IoStats::default();
        for v in [900u64, 1_000, 1_001, 55_555, 7_000_000] {
            worker.record(OpKind::Read, 4096, v);
        }
        worker.record(OpKind::Write, 512, 123);
        let sample = worker.take_sample();
        assert_eq!(worker.ops(), 0, "taking a sample starts the next interval");
        assert!(worker.read.hist.as_ref().unwrap().is_empty());
        assert_eq!(sample.read.ops, 5);
        assert_eq!(sample.read.bytes, 5 * 4096);

        let mut direct = DirStats::default();
        for v in [900u64, 1_000, 1_001, 55_555, 7_000_000] {
            direct.record(4096, v);
        }
        let mut rebuilt = DirStats::default();
        rebuilt.add_sample(&sample.read);
        assert_eq!(rebuilt.latency_summary(), direct.latency_summary());
        assert_eq!(
            worker.take_sample().read,
            DirSample::default(),
            "empty interval"
        );
    }

    #[test]
    fn interval_rates() {
        let p = point(0, 1_000_000, 10);
        assert_eq!(p.rate(), 4_000_000.0);
        assert_eq!(p.iops(), 4.0);
    }

    #[test]
    fn a_rewrite_interval_is_rated_over_its_busy_time() {
        // 1 MB written in 0.25 s, the writes in flight half of it (the reads took the rest):
        // twice the rate over the interval's length.
        let mut p = point(0, 1_000_000, 10);
        assert_eq!(p.rate(), 4_000_000.0);
        p.busy_s = Some(0.125);
        assert_eq!(p.rate(), 8_000_000.0);
        assert_eq!(p.iops(), 8.0);
        assert_eq!(
            p.seconds(),
            0.25,
            "the interval still covers its time on the clock"
        );
        // Merged points add their busy times as they add their lengths.
        let mut q = point(1, 1_000_000, 10);
        q.busy_s = Some(0.125);
        let m = p.merge(q);
        assert_eq!((m.seconds(), m.rate_seconds()), (0.5, 0.25));
        assert_eq!(m.rate(), 8_000_000.0);
        // No busy time at all: no rate rather than a division by zero.
        p.busy_s = Some(0.0);
        assert_eq!(p.rate(), 0.0);
    }

    #[test]
    fn the_time_base_is_the_mean_busy_time_of_the_threads_that_wrote() {
        // Threads busy 2 s and 1 s; a third never wrote and does not count.
        assert_eq!(mean_busy_seconds([2_000_000_000, 1_000_000_000, 0]), 1.5);
        assert_eq!(mean_busy_seconds([]), 0.0);
        assert_eq!(TimeBase::of(false, false), TimeBase::Elapsed);
        assert_eq!(TimeBase::of(true, false), TimeBase::WriteBusy);
        assert_eq!(TimeBase::of(true, true), TimeBase::IoBusy);
        let names = [TimeBase::Elapsed, TimeBase::WriteBusy, TimeBase::IoBusy]
            .map(|b| serde_json::to_string(&b).unwrap());
        assert_eq!(names, ["\"elapsed\"", "\"write-busy\"", "\"io-busy\""]);
        // Figures recorded before the time base existed were over the elapsed time.
        assert_eq!(TimeBase::default(), TimeBase::Elapsed);
    }
}
