//! Latency buckets as MHDD and Victoria admins know them: < 5, < 20, < 50, < 150, < 500 and
//! >= 500 ms, ERR (the block could not be read) and TIME (it took `--timeout` or longer).

use std::time::Duration;

/// The class of one block's read; `Ord` is severity (a map cell shows its worst).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bucket {
    Under5,
    Under20,
    Under50,
    Under150,
    Under500,
    Over500,
    Time,
    Err,
}

/// The buckets' upper limits in ms (>= 500 has none).
const LIMITS_MS: [u64; 5] = [5, 20, 50, 150, 500];

impl Bucket {
    /// The buckets in the order reports list them.
    pub const ALL: [Bucket; 8] = [
        Bucket::Under5,
        Bucket::Under20,
        Bucket::Under50,
        Bucket::Under150,
        Bucket::Under500,
        Bucket::Over500,
        Bucket::Err,
        Bucket::Time,
    ];

    /// The class of a read that took `latency`: TIME from `timeout`, else its bucket.
    pub fn of_latency(latency: Duration, timeout: Duration) -> Bucket {
        if latency >= timeout {
            return Bucket::Time;
        }
        let ms = latency.as_millis();
        let latency_buckets = [
            Bucket::Under5,
            Bucket::Under20,
            Bucket::Under50,
            Bucket::Under150,
            Bucket::Under500,
        ];
        for (bucket, limit) in latency_buckets.into_iter().zip(LIMITS_MS) {
            if ms < u128::from(limit) {
                return bucket;
            }
        }
        Bucket::Over500
    }

    /// The upper limit in ms (exclusive); `None` for >= 500, ERR and TIME.
    pub fn upto_ms(self) -> Option<u64> {
        match self {
            Bucket::Under5 => Some(LIMITS_MS[0]),
            Bucket::Under20 => Some(LIMITS_MS[1]),
            Bucket::Under50 => Some(LIMITS_MS[2]),
            Bucket::Under150 => Some(LIMITS_MS[3]),
            Bucket::Under500 => Some(LIMITS_MS[4]),
            Bucket::Over500 | Bucket::Err | Bucket::Time => None,
        }
    }

    /// The label reports print: "<5", ..., ">=500", "ERR", "TIME".
    pub fn label(self) -> &'static str {
        match self {
            Bucket::Under5 => "<5",
            Bucket::Under20 => "<20",
            Bucket::Under50 => "<50",
            Bucket::Under150 => "<150",
            Bucket::Under500 => "<500",
            Bucket::Over500 => ">=500",
            Bucket::Err => "ERR",
            Bucket::Time => "TIME",
        }
    }

    /// One character per bucket, distinct without colour (`TERM=linux`).
    pub fn glyph(self) -> char {
        match self {
            Bucket::Under5 => '.',
            Bucket::Under20 => ':',
            Bucket::Under50 => '-',
            Bucket::Under150 => '=',
            Bucket::Under500 => '+',
            Bucket::Over500 => '#',
            Bucket::Err => 'X',
            Bucket::Time => 'T',
        }
    }

    fn index(self) -> usize {
        match self {
            Bucket::Under5 => 0,
            Bucket::Under20 => 1,
            Bucket::Under50 => 2,
            Bucket::Under150 => 3,
            Bucket::Under500 => 4,
            Bucket::Over500 => 5,
            Bucket::Err => 6,
            Bucket::Time => 7,
        }
    }
}

/// How many blocks fell in each bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BucketCounts {
    counts: [u64; 8],
}

impl BucketCounts {
    pub fn add(&mut self, bucket: Bucket) {
        let slot = &mut self.counts[bucket.index()];
        *slot = slot.saturating_add(1);
    }

    pub fn get(&self, bucket: Bucket) -> u64 {
        self.counts[bucket.index()]
    }

    /// Every bucket with its count, in report order.
    pub fn iter(&self) -> impl Iterator<Item = (Bucket, u64)> + '_ {
        Bucket::ALL.into_iter().map(|b| (b, self.get(b)))
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0u64, |a, &c| a.saturating_add(c))
    }

    /// The slowest latency bucket holding a block read in time.
    pub fn slowest_read(&self) -> Option<Bucket> {
        [
            Bucket::Over500,
            Bucket::Under500,
            Bucket::Under150,
            Bucket::Under50,
            Bucket::Under20,
            Bucket::Under5,
        ]
        .into_iter()
        .find(|&b| self.get(b) > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn the_bucket_limits_are_exclusive() {
        let t = Duration::from_secs(3);
        assert_eq!(Bucket::of_latency(Duration::ZERO, t), Bucket::Under5);
        assert_eq!(
            Bucket::of_latency(Duration::from_micros(4999), t),
            Bucket::Under5
        );
        assert_eq!(Bucket::of_latency(ms(5), t), Bucket::Under20);
        assert_eq!(Bucket::of_latency(ms(19), t), Bucket::Under20);
        assert_eq!(Bucket::of_latency(ms(20), t), Bucket::Under50);
        assert_eq!(Bucket::of_latency(ms(50), t), Bucket::Under150);
        assert_eq!(Bucket::of_latency(ms(149), t), Bucket::Under150);
        assert_eq!(Bucket::of_latency(ms(150), t), Bucket::Under500);
        assert_eq!(Bucket::of_latency(ms(499), t), Bucket::Under500);
        assert_eq!(Bucket::of_latency(ms(500), t), Bucket::Over500);
        assert_eq!(Bucket::of_latency(ms(2999), t), Bucket::Over500);
        assert_eq!(Bucket::of_latency(ms(3000), t), Bucket::Time);
        // A timeout below 500 ms takes precedence over the latency buckets.
        assert_eq!(Bucket::of_latency(ms(100), ms(100)), Bucket::Time);
    }

    #[test]
    fn glyphs_and_labels_are_distinct() {
        let glyphs: std::collections::BTreeSet<char> =
            Bucket::ALL.iter().map(|b| b.glyph()).collect();
        let labels: std::collections::BTreeSet<&str> =
            Bucket::ALL.iter().map(|b| b.label()).collect();
        assert_eq!(glyphs.len(), 8);
        assert_eq!(labels.len(), 8);
    }

    #[test]
    fn counts_and_the_slowest_bucket() {
        let mut c = BucketCounts::default();
        assert_eq!(c.slowest_read(), None);
        c.add(Bucket::Under5);
        c.add(Bucket::Under50);
        c.add(Bucket::Err);
        assert_eq!(c.total(), 3);
        assert_eq!(c.slowest_read(), Some(Bucket::Under50));
        assert_eq!(c.get(Bucket::Err), 1);
        assert!(Bucket::Err > Bucket::Time && Bucket::Time > Bucket::Over500);
    }
}
