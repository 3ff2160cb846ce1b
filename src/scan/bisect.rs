//! The split of a block whose read failed down to its unreadable sectors: the block is halved,
//! each half read; a half that fails is halved again, down to one logical block (sector).
//!
//! A pure state machine: `next_read` says what to read, `record` takes the result. For a block
//! of n sectors of which b are bad it needs at most 2·b·⌈log2 n⌉ reads (at each level of the
//! halving only the halves of failed parts are read, and at most b parts fail per level), and
//! it names exactly the sectors whose own read fails, with the errno of that read.

use super::Span;

/// What a finished read of the bisection established.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// These bytes read.
    Good(Span),
    /// This one sector did not read, with the errno the kernel gave.
    Bad(Span, i32),
}

/// The bisection of one failed block (see the module documentation).
#[derive(Debug, Clone)]
pub struct Bisection {
    sector: u64,
    /// Parts still to read, the next last (results come in ascending order).
    todo: Vec<Span>,
    /// The part handed out by `next_read` and not yet recorded.
    reading: Option<Span>,
    reads: u64,
}

impl Bisection {
    /// The bisection of `failed` in `sector`s; `None` when it is a single sector.
    pub fn split(failed: Span, sector: u64) -> Option<Bisection> {
        if sector == 0 || failed.length <= sector {
            return None;
        }
        let mut b = Bisection {
            sector,
            todo: Vec::new(),
            reading: None,
            reads: 0,
        };
        b.push_halves(failed);
        Some(b)
    }

    fn push_halves(&mut self, span: Span) {
        let sectors = span.length.div_ceil(self.sector);
        let left = (sectors / 2) * self.sector;
        self.todo
            .push(Span::new(span.offset + left, span.length - left));
        self.todo.push(Span::new(span.offset, left));
    }

    /// The next part to read; `None` when the bisection is done.
    pub fn next_read(&mut self) -> Option<Span> {
        if self.reading.is_none() {
            self.reading = self.todo.pop();
        }
        self.reading
    }

    /// Records the result of `next_read`'s part; a failed part over a sector splits again.
    pub fn record(&mut self, result: Result<(), i32>) -> Option<Found> {
        let span = self.reading.take()?;
        self.reads += 1;
        match result {
            Ok(()) => Some(Found::Good(span)),
            Err(errno) if span.length <= self.sector => Some(Found::Bad(span, errno)),
            Err(_) => {
                self.push_halves(span);
                None
            }
        }
    }

    /// The reads recorded so far.
    pub fn reads(&self) -> u64 {
        self.reads
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// Bisects `block` against bad sector numbers: bad spans, good bytes, reads.
    fn run(block: Span, sector: u64, bad: &BTreeSet<u64>) -> (Vec<Span>, u64, u64) {
        let mut found_bad = Vec::new();
        let mut good = 0;
        let Some(mut b) = Bisection::split(block, sector) else {
            return (vec![block], 0, 0);
        };
        while let Some(part) = b.next_read() {
            let first = part.offset / sector;
            let last = (part.end() - 1) / sector;
            let fails = bad.range(first..=last).next().is_some();
            match b.record(if fails { Err(5) } else { Ok(()) }) {
                Some(Found::Good(s)) => good += s.length,
                Some(Found::Bad(s, errno)) => {
                    assert_eq!(errno, 5);
                    found_bad.push(s);
                }
                None => {}
            }
        }
        (found_bad, good, b.reads())
    }

    #[test]
    fn sixteen_bad_sectors_in_a_mebibyte() {
        let bad: BTreeSet<u64> = (8192..8208).collect();
        let block = Span::new(8192 * 512 - 4096, 1 << 20);
        let (found, good, reads) = run(block, 512, &bad);
        let sectors: Vec<u64> = found.iter().map(|s| s.offset / 512).collect();
        assert_eq!(sectors, (8192..8208).collect::<Vec<_>>());
        assert_eq!(good, (1 << 20) - 16 * 512);
        assert!(reads <= 2 * 16 * 11, "{reads} reads");
    }

    #[test]
    fn a_single_sector_needs_no_bisection() {
        assert!(Bisection::split(Span::new(0, 512), 512).is_none());
        assert!(Bisection::split(Span::new(0, 4096), 0).is_none());
        let mut b = Bisection::split(Span::new(0, 1024), 512).expect("two sectors");
        assert_eq!(b.record(Ok(())), None, "nothing handed out yet");
        assert_eq!(b.next_read(), Some(Span::new(0, 512)));
        assert_eq!(b.next_read(), Some(Span::new(0, 512)), "until recorded");
    }

    proptest! {
        /// Bad sectors anywhere in a block of any size: the bisection finds exactly them,
        /// counts every other byte as read, and stays within 2·b·⌈log2 n⌉ reads.
        #[test]
        fn finds_exactly_the_bad_sectors(
            sectors in 2u64..600,
            bad_picks in proptest::collection::btree_set(0u64..600, 1..12),
            sector_pow in 9u32..13,
            start_sector in 0u64..1_000_000,
        ) {
            let sector = 1u64 << sector_pow;
            let bad: BTreeSet<u64> = bad_picks
                .into_iter()
                .map(|p| start_sector + p % sectors)
                .collect();
            let block = Span::new(start_sector * sector, sectors * sector);
            let (found, good, reads) = run(block, sector, &bad);
            let found_sectors: BTreeSet<u64> = found.iter().map(|s| s.offset / sector).collect();
            prop_assert!(found.iter().all(|s| s.length == sector));
            prop_assert_eq!(&found_sectors, &bad);
            prop_assert_eq!(good + bad.len() as u64 * sector, block.length);
            let depth = u64::from(64 - (sectors - 1).leading_zeros());
            prop_assert!(reads <= 2 * bad.len() as u64 * depth, "{} reads", reads);
        }
    }
}
