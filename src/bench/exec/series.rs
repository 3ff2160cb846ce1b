//! Folding the workers' interval samples into one bounded series and the phase's totals
//! (`Aggregator`), for every `WorkerMsg::Sample` of a phase.

use crate::bench::results::stats::{
    BoundedSeries, IntervalPoint, IoStats, SERIES_CAPACITY, mean_busy_seconds,
};

/// Collects samples into interval points: point `i` is emitted when every running thread sent
/// its sample for `i`, or a little after `i` ended (a stuck worker must not freeze the chart).
/// A late sample counts in the next point, so the series adds up to the totals.
///
/// A point ends at its boundary unless every sample in it is a thread's last: then it ends
/// when the last of those threads stopped. So a timed run ends with the folded last interval
/// (no sliver after the deadline), and a stopped or counted run with a partial point.
///
/// In a rewrite phase (`busy`) it keeps each thread's busy time, for the phase's time base and
/// each point's (`TimeBase::WriteBusy`).
pub(crate) struct Aggregator {
    interval: f64,
    next: u64,
    pending: std::collections::BTreeMap<u64, Gathering>,
    late: Gathering,
    pub(crate) series: BoundedSeries,
    pub(crate) totals: IoStats,
    pub(crate) per_worker: Vec<IoStats>,
    /// The interval of each I/O thread's last sample, once sent: a thread that stopped before
    /// interval i will never report it.
    finished_at: Vec<u64>,
    /// The phase's rates are over its write-busy time (a rewrite).
    busy: bool,
    /// Busy nanoseconds of each I/O thread, by (worker, thread), over the whole phase.
    busy_by_thread: std::collections::BTreeMap<ThreadId, u64>,
}

/// An I/O thread: (worker, thread within the worker).
type ThreadId = (u32, u32);

/// The samples of one interval received so far.
#[derive(Debug, Default)]
struct Gathering {
    stats: IoStats,
    /// The threads whose samples here counted busy time (a rewrite's).
    busy_threads: std::collections::BTreeSet<ThreadId>,
    samples: usize,
    /// Some sample ends at the interval's boundary (its thread goes on).
    whole: bool,
    /// The latest real end of the threads' last samples in this interval.
    last_end: Option<f64>,
}

impl Gathering {
    fn end(&self, boundary: f64) -> f64 {
        match self.last_end {
            Some(end) if !self.whole => end,
            Some(end) => end.max(boundary),
            None => boundary,
        }
    }
}

impl Aggregator {
    pub(crate) fn new(interval: f64, workers: usize, busy: bool) -> Self {
        Aggregator {
            interval,
            next: 0,
            pending: Default::default(),
            late: Gathering::default(),
            series: BoundedSeries::new(SERIES_CAPACITY),
            totals: IoStats::default(),
            per_worker: vec![IoStats::default(); workers],
            finished_at: Vec::new(),
            busy,
            busy_by_thread: Default::default(),
        }
    }

    pub(crate) fn add(
        &mut self,
        thread: ThreadId,
        interval: u64,
        end_s: Option<f64>,
        stats: &crate::bench::results::stats::SampleStats,
    ) {
        let (worker, _) = thread;
        if let Some(w) = self.per_worker.get_mut(worker as usize) {
            w.add_sample(stats);
        }
        self.totals.add_sample(stats);
        if stats.busy_ns > 0 {
            *self.busy_by_thread.entry(thread).or_default() += stats.busy_ns;
        }
        if interval < self.next {
            self.late.stats.add_sample(stats);
            if stats.busy_ns > 0 {
                self.late.busy_threads.insert(thread);
            }
        } else {
            let e = self.pending.entry(interval).or_default();
            e.stats.add_sample(stats);
            if stats.busy_ns > 0 {
                e.busy_threads.insert(thread);
            }
            e.samples += 1;
            match end_s {
                Some(end) => e.last_end = Some(e.last_end.map_or(end, |l| l.max(end))),
                None => e.whole = true,
            }
        }
        if end_s.is_some() {
            self.finished_at.push(interval);
        }
    }

    /// Emits every point complete or overdue at `elapsed` seconds. Complete: each of `threads`
    /// reported it or stopped before it (counting threads still running would let those that stop
    /// at the deadline close the last interval before the others sent their share).
    pub(crate) fn emit_ready(
        &mut self,
        threads: usize,
        elapsed: f64,
        out: &mut Vec<IntervalPoint>,
    ) {
        loop {
            let i = self.next;
            let reported = self.pending.get(&i).map_or(0, |e| e.samples);
            let stopped_before = self.finished_at.iter().filter(|&&f| f < i).count();
            if stopped_before >= threads.max(1) {
                // Every thread has stopped: nothing more comes, `finish` closes the series.
                break;
            }
            let overdue = elapsed > (i as f64 + 2.0) * self.interval;
            if !(reported + stopped_before >= threads.max(1) || overdue) {
                break;
            }
            out.push(self.emit(i, None));
        }
    }

    /// Emits point `i`; it ends at `end` when given, else as its samples say.
    pub(crate) fn emit(&mut self, i: u64, end: Option<f64>) -> IntervalPoint {
        let boundary = (i + 1) as f64 * self.interval;
        let g = self.pending.remove(&i).unwrap_or_default();
        let end = end.unwrap_or_else(|| g.end(boundary));
        let late = std::mem::take(&mut self.late);
        let mut stats = g.stats;
        stats.add(&late.stats);
        // The busy time of the threads that counted some here, over their number (a late
        // sample is its thread again).
        let busy_s = self.busy.then(|| {
            let threads = g.busy_threads.union(&late.busy_threads).count();
            if threads == 0 {
                0.0
            } else {
                stats.busy_ns as f64 / 1e9 / threads as f64
            }
        });
        let p = IntervalPoint::from_stats(i as f64 * self.interval, end, &stats, busy_s);
        self.series.push(p);
        self.next = i + 1;
        p
    }

    /// Emits everything left; the last point ends at the phase's real end.
    pub(crate) fn finish(&mut self, seconds: f64, out: &mut Vec<IntervalPoint>) {
        while let Some((&i, _)) = self.pending.iter().next() {
            let last = self.pending.len() == 1;
            let end = last.then(|| seconds.max(i as f64 * self.interval));
            out.push(self.emit(i, end));
        }
        if self.late.stats.ops() > 0 {
            let i = self.next;
            out.push(self.emit(i, Some(seconds)));
        }
        self.series.finish();
    }

    /// The phase's write-busy time (`TimeBase::WriteBusy`) over the threads of `worker`, or of
    /// all workers: the mean over the threads that counted busy time.
    pub(crate) fn busy_seconds(&self, worker: Option<u32>) -> f64 {
        mean_busy_seconds(
            self.busy_by_thread
                .iter()
                .filter(|((w, _), _)| worker.is_none_or(|x| x == *w))
                .map(|(_, &ns)| ns),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::results::outcome::DirTotals;
    use crate::bench::results::stats::SampleStats;

    fn sample(bytes: u64) -> SampleStats {
        let mut s = IoStats::default();
        s.record(crate::bench::plan::OpKind::Read, bytes, 1000);
        s.take_sample()
    }

    #[test]
    fn aggregator_waits_for_all_threads_then_for_the_clock() {
        let mut a = aggregator(2);
        let mut out = Vec::new();
        a.add((0, 0), 0, None, &sample(100));
        a.emit_ready(2, 0.26, &mut out);
        assert!(out.is_empty(), "worker 1 has not reported interval 0");
        a.add((1, 0), 0, None, &sample(50));
        a.emit_ready(2, 0.26, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].bytes(), 150);
        // Interval 1: only worker 0 reports; by 0.75 s it is overdue and goes out anyway.
        a.add((0, 0), 1, None, &sample(10));
        a.emit_ready(2, 0.6, &mut out);
        assert_eq!(out.len(), 1);
        a.emit_ready(2, 0.76, &mut out);
        assert_eq!(out.len(), 2);
        // Worker 1's late sample lands in the next point; nothing is lost.
        a.add((1, 0), 1, None, &sample(7));
        a.add((0, 0), 2, None, &sample(1));
        a.finish(0.8, &mut out);
        let total: u64 = out.iter().map(IntervalPoint::bytes).sum();
        assert_eq!(total, 168);
        assert_eq!(a.totals.bytes(), 168);
        assert_eq!(a.series.totals().0, 168);
        assert_eq!(out.last().unwrap().end_s, 0.8);
        assert_eq!(a.per_worker[1].bytes(), 57);
    }

    /// A rewrite's interval of one thread: `bytes` written in 4 KiB writes that were in
    /// flight for `busy_ms` of it.
    fn rewrite_sample(bytes: u64, busy_ms: u64) -> SampleStats {
        let mut s = IoStats::default();
        for _ in 0..bytes / 4096 {
            s.record(crate::bench::plan::OpKind::Write, 4096, 1000);
            s.record_read_back(4096);
        }
        s.record_busy(busy_ms * 1_000_000);
        s.take_sample()
    }

    #[test]
    fn a_rewrite_is_rated_over_its_write_busy_time() {
        // Two pread/pwrite threads rewrite 4 MB each per 250 ms; their reads take as long as their
        // writes, so the writes are in flight 125 ms of 250: 32 MB/s elapsed, twice that busy.
        let mut a = Aggregator {
            series: BoundedSeries::new(16),
            ..Aggregator::new(0.25, 1, true)
        };
        let mut out = Vec::new();
        let mb4 = 4096 * 1000;
        for i in 0..4 {
            for t in 0..2 {
                let end = (i == 3).then_some(1.0);
                a.add((0, t), i, end, &rewrite_sample(mb4, 125));
            }
            a.emit_ready(2, (i + 1) as f64 * 0.25, &mut out);
        }
        a.finish(1.0, &mut out);
        assert_eq!(out.len(), 4, "{out:?}");
        let elapsed_rate = a.totals.write.bytes as f64 / 1.0;
        // The phase: 2 x 4 x 125 ms of busy time over 2 threads = 0.5 s.
        let busy = a.busy_seconds(None);
        assert!((busy - 0.5).abs() < 1e-9, "{busy}");
        assert_eq!(a.busy_seconds(Some(0)), busy);
        let w = DirTotals::over(&a.totals.write, busy);
        assert!((w.bytes_per_sec - 2.0 * elapsed_rate).abs() < 1e-6, "{w:?}");
        assert!((w.iops - 2.0 * 8000.0 / 1.0).abs() < 1e-6, "{w:?}");
        // Every interval by the same rule: 125 ms of writes, twice its bytes over 250 ms.
        for p in &out {
            assert_eq!(p.busy_s, Some(0.125), "{p:?}");
            assert!((p.rate() - 2.0 * p.bytes() as f64 / p.seconds()).abs() < 1e-6);
        }
        // The reads are outside the figures, still counted for the witness.
        assert_eq!(a.totals.read.ops, 0);
        assert_eq!(a.totals.read_back.ops, 8000);
        // A phase that is not a rewrite keeps its rates over the measured time.
        let mut plain = aggregator(1);
        plain.add((0, 0), 0, Some(0.25), &sample(4096));
        let mut out = Vec::new();
        plain.finish(0.25, &mut out);
        assert_eq!(out[0].busy_s, None);
        assert_eq!(out[0].rate_seconds(), 0.25);
    }

    #[test]
    fn a_late_sample_is_its_thread_again_not_one_more_thread() {
        // Thread 1's late sample for interval 0 counts in the next point, where it reports again:
        // that point's busy time is (100 + 100 + 50) ms over two threads, not three.
        let mut a = Aggregator {
            series: BoundedSeries::new(16),
            ..Aggregator::new(0.25, 1, true)
        };
        let mut out = Vec::new();
        a.add((0, 0), 0, None, &rewrite_sample(4096, 100));
        a.emit_ready(2, 0.6, &mut out);
        assert_eq!(out.len(), 1, "interval 0 is overdue, 1 is not: {out:?}");
        a.add((0, 1), 0, None, &rewrite_sample(4096, 100));
        a.add((0, 0), 1, Some(0.5), &rewrite_sample(4096, 100));
        a.add((0, 1), 1, Some(0.5), &rewrite_sample(4096, 50));
        a.finish(0.5, &mut out);
        let busy: Vec<Option<f64>> = out.iter().map(|p| p.busy_s).collect();
        assert_eq!(busy.len(), 2, "{out:?}");
        assert!((busy[0].unwrap() - 0.1).abs() < 1e-9, "{busy:?}");
        assert!((busy[1].unwrap() - 0.125).abs() < 1e-9, "{busy:?}");
        // The phase: thread 0 200 ms, thread 1 150 ms: 175 ms.
        assert!((a.busy_seconds(None) - 0.175).abs() < 1e-9);
    }

    fn aggregator(workers: usize) -> Aggregator {
        Aggregator {
            series: BoundedSeries::new(16),
            ..Aggregator::new(0.25, workers, false)
        }
    }

    #[test]
    fn last_points_end_when_the_threads_stopped() {
        // Time-bounded (1 s): both threads fold the rest into interval 3 and stop just after
        // the deadline. The last point is a whole interval up to the real end.
        let mut a = aggregator(2);
        let mut out = Vec::new();
        for i in 0..3 {
            a.add((0, 0), i, None, &sample(100));
            a.add((1, 0), i, None, &sample(100));
            a.emit_ready(2, (i + 1) as f64 * 0.25, &mut out);
        }
        a.add((0, 0), 3, Some(1.002), &sample(100));
        a.add((1, 0), 3, Some(1.004), &sample(100));
        a.emit_ready(2, 1.005, &mut out);
        a.finish(1.005, &mut out);
        assert_eq!(out.len(), 4, "{out:?}");
        let last = out.last().unwrap();
        assert_eq!((last.start_s, last.end_s), (0.75, 1.004));
        assert_eq!(a.series.totals(), (800, 8));

        // Bounded by a count: thread 0 stops at 0.4 s, thread 1 goes on; the point they share
        // is whole, the last one (thread 1's) ends when it stopped.
        let mut a = aggregator(2);
        let mut out = Vec::new();
        a.add((0, 0), 0, None, &sample(10));
        a.add((1, 0), 0, None, &sample(10));
        a.emit_ready(2, 0.25, &mut out);
        a.add((0, 0), 1, Some(0.4), &sample(10));
        a.add((1, 0), 1, None, &sample(10));
        a.emit_ready(2, 0.5, &mut out);
        a.add((1, 0), 2, Some(0.6), &sample(10));
        a.emit_ready(2, 0.6, &mut out);
        a.finish(0.6, &mut out);
        let ends: Vec<f64> = out.iter().map(|p| p.end_s).collect();
        assert_eq!(ends, [0.25, 0.5, 0.6]);
    }

    #[test]
    fn the_last_interval_waits_for_every_thread_that_has_not_stopped() {
        // Eight threads of one worker (sync at QD8), timed at 1 s; half send their folded last
        // interval early. The point must wait for the rest, not close on half the I/O.
        let mut a = aggregator(1);
        let mut out = Vec::new();
        for i in 0..3 {
            for _ in 0..8 {
                a.add((0, 0), i, None, &sample(100));
            }
            a.emit_ready(8, (i + 1) as f64 * 0.25, &mut out);
        }
        for end in [1.001, 1.002, 1.003, 1.004] {
            a.add((0, 0), 3, Some(end), &sample(100));
        }
        a.emit_ready(8, 1.005, &mut out);
        assert_eq!(
            out.len(),
            3,
            "the last interval is not complete yet: {out:?}"
        );
        for end in [1.005, 1.006, 1.007, 1.008] {
            a.add((0, 0), 3, Some(end), &sample(100));
        }
        a.emit_ready(8, 1.009, &mut out);
        a.finish(1.009, &mut out);
        assert_eq!(out.len(), 4, "{out:?}");
        let last = out.last().unwrap();
        assert_eq!((last.start_s, last.end_s, last.bytes()), (0.75, 1.008, 800));
    }
}
