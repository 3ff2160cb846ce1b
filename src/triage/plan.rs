//! The triage's arithmetic, pure so it is tested without a disk: where the surface samples go
//! (a random aligned offset in each of evenly spaced strata), where the random 4 KiB reads
//! go, latency percentiles and MB/s.

use crate::bench::plan::splitmix64;
use crate::scan::Span;

/// Where the samples go: `bench::plan::splitmix64` of the seed plus k, the tests' generator
/// (spread matters here, not cryptographic quality).
#[derive(Debug, Clone)]
pub struct Spread {
    seed: u64,
    drawn: u64,
}

impl Spread {
    pub fn new(seed: u64) -> Spread {
        Spread { seed, drawn: 0 }
    }

    /// Seeded from the clock and the disk's name, so two disks and two runs differ.
    pub fn from_clock(salt: &str) -> Spread {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        let salt = salt.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        Spread::new(nanos ^ salt)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.drawn = self.drawn.wrapping_add(1);
        splitmix64(
            self.seed
                .wrapping_add(self.drawn.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        )
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // The modulo bias is at most n / 2^64: irrelevant for positions on a disk.
        self.next_u64() % n
    }
}

/// The length of a read of `want` bytes: rounded up to whole `align` blocks, cut to the
/// device's whole blocks. `None` when not one block fits.
pub fn read_len(want: u64, capacity: u64, align: u64) -> Option<u64> {
    let align = align.max(1);
    let len = want.div_ceil(align).saturating_mul(align);
    let fits = capacity / align * align;
    let len = len.min(fits);
    (len > 0).then_some(len)
}

/// The surface sample's plan: one read (`read_len`) at a random aligned offset in each of
/// `count` evenly spaced strata, ascending; fewer when the device has fewer positions.
pub fn surface_plan(
    capacity: u64,
    align: u64,
    want_len: u64,
    count: u64,
    spread: &mut Spread,
) -> Vec<Span> {
    let align = align.max(1);
    let Some(len) = read_len(want_len, capacity, align) else {
        return Vec::new();
    };
    // The aligned start positions a read of `len` can have: 0, align, ..., capacity - len.
    let positions = (capacity - len) / align + 1;
    let count = count.min(positions);
    (0..count)
        .map(|i| {
            // Proportional bounds tile all positions without gap or overlap; u128 cannot
            // overflow on any disk.
            let first = (u128::from(i) * u128::from(positions) / u128::from(count)) as u64;
            let next = (u128::from(i + 1) * u128::from(positions) / u128::from(count)) as u64;
            let pos = first + spread.below(next - first);
            Span::new(pos * align, len)
        })
        .collect()
}

/// A random aligned read of `len` bytes anywhere on the device (`None` when none fits).
pub fn random_span(capacity: u64, align: u64, len: u64, spread: &mut Spread) -> Option<Span> {
    let align = align.max(1);
    let len = read_len(len, capacity, align)?;
    let positions = (capacity - len) / align + 1;
    Some(Span::new(spread.below(positions) * align, len))
}

/// Where the sequential reads go: the device's start, middle and end, `len` bytes each, aligned.
pub fn seq_offsets(capacity: u64, align: u64, len: u64) -> Option<(u64, [u64; 3])> {
    let align = align.max(1);
    let len = read_len(len, capacity, align)?;
    let last = (capacity - len) / align * align;
    let middle = ((capacity / 2).saturating_sub(len / 2) / align * align).min(last);
    Some((len, [0, middle, last]))
}

/// The `p`-th percentile (0..=100) of `values` by the nearest-rank method: the smallest value
/// with at least p % of the values at or below it. `None` for no values.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() || !p.is_finite() {
        return None;
    }
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let rank = ((p.clamp(0.0, 100.0) / 100.0) * n as f64).ceil() as usize;
    sorted.get(rank.clamp(1, n) - 1).copied()
}

/// MB/s (10^6 bytes per second) of `bytes` in `seconds` (`None` for no time).
pub fn mb_per_s(bytes: u64, seconds: f64) -> Option<f64> {
    (seconds > 0.0 && seconds.is_finite()).then(|| bytes as f64 / seconds / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn strata_cover_the_device_aligned_and_never_past_its_end() {
        for (capacity, align) in [
            (GIB, 512),
            (GIB + 4096 * 3 + 512, 512),
            (7 * GIB + 12345 * 4096, 4096),
            (4 << 40, 4096),
        ] {
            let mut s = Spread::new(42);
            let plan = surface_plan(capacity, align, 64 << 10, 3000, &mut s);
            assert_eq!(plan.len(), 3000);
            let stratum = capacity / 3000;
            for (i, span) in plan.iter().enumerate() {
                assert_eq!(span.offset % align, 0);
                assert_eq!(span.length, 64 << 10);
                assert!(span.offset + span.length <= capacity);
                // In its own stratum (within one read's length of the proportional bounds).
                let lo = (i as u64 * stratum).saturating_sub(span.length);
                let hi = (i as u64 + 1) * stratum + span.length;
                assert!(
                    span.offset >= lo && span.offset <= hi,
                    "{i}: {} not in {lo}..{hi}",
                    span.offset
                );
            }
            assert!(plan.windows(2).all(|w| w[0].offset < w[1].offset));
            // The first stratum starts at the device's start, the last reaches its end.
            assert!(plan[0].offset < stratum);
            assert!(plan[2999].offset + 64 * 1024 > capacity - stratum);
        }
    }

    #[test]
    fn the_offsets_are_random_within_their_stratum() {
        let a = surface_plan(GIB, 512, 65536, 100, &mut Spread::new(1));
        let b = surface_plan(GIB, 512, 65536, 100, &mut Spread::new(2));
        assert_ne!(a, b);
        // Not all at a stratum's start.
        let stratum = GIB / 100;
        assert!(a.iter().any(|s| s.offset % stratum != 0));
    }

    #[test]
    fn tiny_devices() {
        let mut s = Spread::new(7);
        // Smaller than one read: one read of the whole (aligned) device.
        assert_eq!(
            surface_plan(8192, 512, 65536, 500, &mut s),
            [Span::new(0, 8192)]
        );
        // A few positions only: one read each, no duplicates.
        let plan = surface_plan(65536 + 3 * 512, 512, 65536, 500, &mut s);
        assert_eq!(
            plan.iter().map(|p| p.offset).collect::<Vec<_>>(),
            [0, 512, 1024, 1536]
        );
        // Not one block: nothing.
        assert!(surface_plan(511, 512, 65536, 500, &mut s).is_empty());
        assert!(surface_plan(0, 512, 65536, 500, &mut s).is_empty());
        // A capacity that is not a multiple of the block size: the tail is never read.
        let plan = surface_plan(1000, 512, 65536, 5, &mut s);
        assert_eq!(plan, [Span::new(0, 512)]);
        // A block size larger than the read: the read is one block.
        assert_eq!(read_len(65536, GIB, 1 << 20), Some(1 << 20));
    }

    #[test]
    fn seq_offsets_are_the_start_middle_and_end() {
        let (len, offs) = seq_offsets(GIB, 4096, 64 << 20).unwrap();
        assert_eq!(len, 64 << 20);
        assert_eq!(offs, [0, GIB / 2 - (32 << 20), GIB - (64 << 20)]);
        let (len, offs) = seq_offsets(10 * 512 + 100, 512, 64 << 20).unwrap();
        assert_eq!(len, 5120);
        assert_eq!(offs, [0, 0, 0]);
        assert_eq!(seq_offsets(100, 512, 4096), None);
    }

    #[test]
    fn random_spans_stay_on_the_device() {
        let mut s = Spread::new(3);
        for _ in 0..10_000 {
            let span = random_span(GIB + 1000, 4096, 4096, &mut s).unwrap();
            assert_eq!(span.offset % 4096, 0);
            assert!(span.offset + 4096 <= GIB + 1000);
        }
        assert_eq!(random_span(100, 512, 4096, &mut s), None);
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), Some(50.0));
        assert_eq!(percentile(&v, 99.0), Some(99.0));
        assert_eq!(percentile(&v, 100.0), Some(100.0));
        assert_eq!(percentile(&v, 0.0), Some(1.0));
        // Unsorted input, few values: p99 of 3 values is the largest.
        assert_eq!(percentile(&[3.0, 1.0, 2.0], 99.0), Some(3.0));
        assert_eq!(percentile(&[3.0, 1.0, 2.0], 50.0), Some(2.0));
        assert_eq!(percentile(&[5.0], 99.0), Some(5.0));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[f64::NAN], 50.0), None);
    }

    #[test]
    fn mb_per_s_is_decimal() {
        assert_eq!(mb_per_s(1_000_000, 1.0), Some(1.0));
        assert_eq!(mb_per_s(64 << 20, 0.5), Some(134.217728));
        assert_eq!(mb_per_s(1, 0.0), None);
    }
}
