//! What a plan holds in memory while it runs (I/O buffers, latency histograms, write data,
//! series), and the check, before anything is allocated, that it fits a test's share.

use crate::bench::exec::engines;
use crate::bench::exec::pattern::PATTERN_PERIOD;
use crate::bench::plan::{Job, Plan, SpecError};
use crate::bench::results::stats::{IntervalPoint, LatencyHistogram};
use crate::model::Bytes;

/// A test may use up to 1/MEMORY_SHARE_DIVISOR of the available memory: the rest stays for
/// the page cache, the TUI and everything else running on the machine.
pub const MEMORY_SHARE_DIVISOR: u64 = 2;

/// What a plan holds in memory while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryNeed {
    /// Bytes at the run's peak: the largest phase's I/O buffers and histograms, the write
    /// data pattern and every phase's series.
    pub total: u64,
    /// The phase with the largest need: its request size, queue depth, workers and label.
    pub bs: u64,
    pub qd: u32,
    pub workers: u32,
    pub label: String,
}

impl Plan {
    /// The memory this plan allocates. Phases run one after another, each with its own buffers
    /// (request size in whole pages, huge pages from 1 MiB with `--huge-pages`, x queue depth per
    /// worker) and histograms (per I/O thread one per recorded direction and one in transit; per
    /// worker and phase the totals). The write pattern (period + largest request) and every
    /// phase's series live for the whole run.
    pub fn memory_need(&self) -> MemoryNeed {
        let hist = LatencyHistogram::footprint_bytes();
        let series = (crate::bench::results::stats::SERIES_CAPACITY
            * std::mem::size_of::<IntervalPoint>()) as u64
            * self.phases.len() as u64;
        let pattern = if self.writes() && !self.rewrites() {
            (PATTERN_PERIOD as u64).saturating_add(self.max_bs())
        } else {
            0
        };
        let phase_need = |j: &Job| {
            let workers = u64::from(j.workers);
            // Auto may choose either engine: count the one with more threads.
            let threads = engines::candidates(self.engine)
                .iter()
                .map(|e| workers.saturating_mul(u64::from(e.threads_per_worker(j))))
                .max()
                .unwrap_or(workers);
            let histograms = threads
                .saturating_mul(4)
                .saturating_add(workers.saturating_mul(2))
                .saturating_add(8);
            crate::sys::direct::request_buffer_bytes(j.bs, self.huge_pages)
                .saturating_mul(u64::from(j.qd))
                .saturating_mul(workers)
                .saturating_add(histograms.saturating_mul(hist))
        };
        // The first of equally large phases is the one named.
        let largest = self
            .phases
            .iter()
            .rev()
            .max_by_key(|p| phase_need(&p.job))
            .map(|p| (phase_need(&p.job), p));
        let (need, bs, qd, workers, label) = match largest {
            Some((n, p)) => (n, p.job.bs, p.job.qd, p.job.workers, p.label.clone()),
            None => (0, 0, 0, 0, String::new()),
        };
        MemoryNeed {
            total: need.saturating_add(pattern).saturating_add(series),
            bs,
            qd,
            workers,
            label,
        }
    }
}

/// Refuses a plan whose memory need is larger than the share of `available` (MemAvailable)
/// a test may use. Unknown available memory refuses nothing.
pub fn check_memory(plan: &Plan, available: Option<u64>) -> Result<(), SpecError> {
    let Some(available) = available else {
        return Ok(());
    };
    let need = plan.memory_need();
    if need.total <= available / MEMORY_SHARE_DIVISOR {
        return Ok(());
    }
    let phase = if plan.phases.len() > 1 {
        format!(" in phase \"{}\"", need.label)
    } else {
        String::new()
    };
    let lower = plan.test.info().family.lower_hint();
    let others = if plan.writes() {
        ", write data and latency histograms"
    } else {
        " and latency histograms"
    };
    // With --huge-pages a request's buffer from 1 MiB on is whole huge pages: say so when more.
    let held = crate::sys::direct::request_buffer_bytes(need.bs, plan.huge_pages);
    let buffer = if plan.huge_pages && held > need.bs {
        format!(
            "{} in {} of huge pages",
            exact_size(need.bs),
            exact_size(held)
        )
    } else {
        exact_size(need.bs)
    };
    Err(SpecError::NotEnoughMemory(format!(
        "this test needs {} of memory for its I/O buffers ({buffer} x QD {} x {} worker{}{phase}){others}; \
         {} is available and a test may use half of it: lower {lower}",
        Bytes(need.total).iec(),
        need.qd,
        need.workers,
        if need.workers == 1 { "" } else { "s" },
        Bytes(available).iec(),
    )))
}

/// "256 MiB", "8 KiB", "1536 bytes": a request size as typed, without rounding.
fn exact_size(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::catalog::build::build_plan;
    use crate::bench::catalog::family::tests::dev;
    use crate::bench::exec::engines::{SYNC, URING};
    use crate::bench::plan::params::{MIB, TestParams};
    use crate::bench::plan::test_name::TestName;

    #[test]
    fn buffers_larger_than_half_the_available_memory_are_refused() {
        const GIB: u64 = 1 << 30;
        let big = |test, p: TestParams| build_plan(test, &p, &dev(1 << 40, 512), true).unwrap();
        let p = big(
            TestName::SeqRead,
            TestParams {
                bs: Some(256 * MIB),
                qd: Some(1024),
                engine: URING,
                ..Default::default()
            },
        );
        let need = p.memory_need();
        assert!(need.total >= 256 * GIB && need.total < 256 * GIB + 64 * MIB);
        let available = 11 * GIB + 900 * MIB;
        let err = check_memory(&p, Some(available)).unwrap_err();
        assert!(matches!(err, SpecError::NotEnoughMemory(_)));
        assert_eq!(
            err.to_string(),
            "this test needs 256.0 GiB of memory for its I/O buffers (256 MiB x QD 1024 x 1 \
             worker) and latency histograms; 11.9 GiB is available and a test may use half of \
             it: lower the request size (--bs), queue depth (--qd) or workers (--jobs)"
        );
        assert_eq!(
            check_memory(&p, None),
            Ok(()),
            "unknown memory refuses nothing"
        );
        // Half of the available memory is the limit.
        assert_eq!(check_memory(&p, Some(2 * need.total)), Ok(()));
        assert!(check_memory(&p, Some(2 * need.total - 2)).is_err());

        // Defaults fit anywhere: 1 MiB x QD1 and a few histograms.
        let small = big(TestName::SeqWrite, TestParams::default());
        assert!(small.memory_need().total < 16 * MIB);
        assert_eq!(check_memory(&small, Some(64 * MIB)), Ok(()));

        // Workers multiply, and the write pattern (its period + the largest request) counts.
        let w = big(
            TestName::RandWrite,
            TestParams {
                bs: Some(MIB),
                qd: Some(64),
                jobs: Some(16),
                ..Default::default()
            },
        );
        let need = w.memory_need();
        assert!(need.total >= 1024 * MIB + 2 * MIB, "{}", need.total);
        let err = check_memory(&w, Some(GIB)).unwrap_err().to_string();
        assert!(
            err.contains("(1 MiB x QD 64 x 16 workers), write data and latency histograms"),
            "{err}"
        );
        // With --huge-pages a 1 MiB buffer takes a whole 2 MiB page, and the message says so.
        let huge = big(
            TestName::RandWrite,
            TestParams {
                bs: Some(MIB),
                qd: Some(64),
                jobs: Some(16),
                huge_pages: true,
                ..Default::default()
            },
        );
        // 1024 buffers of 2 MiB instead of 1 MiB.
        assert_eq!(huge.memory_need().total - need.total, 1024 * MIB);
        let err = check_memory(&huge, Some(GIB)).unwrap_err().to_string();
        assert!(
            err.contains(
                "(1 MiB in 2 MiB of huge pages x QD 64 x 16 workers), write data and latency \
                 histograms"
            ),
            "{err}"
        );

        // Sweeps: the largest phase decides and is named, with what to lower for that test.
        let sweep = big(
            TestName::QdSweep,
            TestParams {
                qds: Some(vec![1, 1024]),
                jobs: Some(8),
                engine: URING,
                ..Default::default()
            },
        );
        let err = check_memory(&sweep, Some(8 * GIB)).unwrap_err().to_string();
        assert!(
            err.contains(
                "needs 8.0 GiB of memory for its I/O buffers (1 MiB x QD 1024 x 8 workers in \
                 phase \"large sequential QD1024\")"
            ),
            "{err}"
        );
        assert!(
            err.ends_with("queue depths (--qds) or workers (--jobs)"),
            "{err}"
        );
        let sizes = big(
            TestName::SizeSweep,
            TestParams {
                min_bs: Some(4096),
                max_bs: Some(256 * MIB),
                qd: Some(64),
                ..Default::default()
            },
        );
        let err = check_memory(&sizes, Some(16 * GIB))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("(256 MiB x QD 64 x 1 worker in phase \"256M fwd_rd\")"),
            "{err}"
        );
        assert!(err.contains("lower the largest size (--max-bs)"), "{err}");

        // The synchronous engine has a thread, with its histograms, per outstanding I/O.
        let threads = |engine| {
            big(
                TestName::RandRead,
                TestParams {
                    qd: Some(1024),
                    jobs: Some(64),
                    engine,
                    ..Default::default()
                },
            )
            .memory_need()
            .total
        };
        assert!(threads(SYNC) > threads(URING) + 10 * GIB);
    }
}
