//! Sorted lists of byte ranges that never overlap, each with a value (an errno, the times of a
//! slow block): a range inserted next to one whose value it joins becomes one range with both
//! values combined, so a run of bad sectors or slow blocks is one entry, and the list grows with
//! the number of separate areas, not with the device.

use super::Span;

/// How the values of two ranges combine.
pub trait RangeValue: Clone {
    /// Whether two ranges that touch, with these values, become one.
    fn joins(&self, other: &Self) -> bool;
    /// The value of the range made of both (also when they overlap, which always merges).
    fn combine(&self, other: &Self) -> Self;
}

impl RangeValue for () {
    fn joins(&self, _: &()) -> bool {
        true
    }
    fn combine(&self, _: &()) {}
}

/// The list (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeList<V> {
    items: Vec<(Span, V)>,
}

impl<V> Default for RangeList<V> {
    fn default() -> Self {
        RangeList { items: Vec::new() }
    }
}

impl<V: RangeValue> RangeList<V> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `span` with `value`, merged with what it overlaps and with joining neighbours.
    pub fn insert(&mut self, span: Span, value: V) {
        if span.is_empty() {
            return;
        }
        let mut start = span.offset;
        let mut end = span.end();
        let mut value = value;
        // Scans insert in order: this is usually the end of the list.
        let mut first = self.items.partition_point(|(s, _)| s.end() < start);
        let mut next = first;
        while next < self.items.len() {
            let (s, v) = &self.items[next];
            if s.offset > end {
                break;
            }
            let overlaps = s.offset < end && s.end() > start;
            if overlaps || v.joins(&value) {
                start = start.min(s.offset);
                end = end.max(s.end());
                value = v.combine(&value);
                next += 1;
            } else if s.end() <= start {
                // Touches on the left with a value it does not join: it stays.
                first += 1;
                next += 1;
            } else {
                break;
            }
        }
        self.items
            .splice(first..next, [(Span::new(start, end - start), value)]);
        // A merge on the right may now join the range kept apart on the left.
        if first > 0 {
            let (left, v_left) = &self.items[first - 1];
            let (here, v_here) = &self.items[first];
            if left.end() == here.offset && v_left.joins(v_here) {
                let joined = (
                    Span::new(left.offset, here.end() - left.offset),
                    v_left.combine(v_here),
                );
                self.items.splice(first - 1..=first, [joined]);
            }
        }
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &(Span, V)> {
        self.items.iter()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The bytes covered.
    pub fn total_bytes(&self) -> u64 {
        self.items
            .iter()
            .fold(0u64, |a, (s, _)| a.saturating_add(s.length))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone, PartialEq, Eq)]
    struct Errno(i32);
    impl RangeValue for Errno {
        fn joins(&self, other: &Self) -> bool {
            self == other
        }
        fn combine(&self, _: &Self) -> Self {
            self.clone()
        }
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    struct Worst(u64);
    impl RangeValue for Worst {
        fn joins(&self, _: &Self) -> bool {
            true
        }
        fn combine(&self, other: &Self) -> Self {
            Worst(self.0.max(other.0))
        }
    }

    fn spans<V: RangeValue>(list: &RangeList<V>) -> Vec<(u64, u64)> {
        list.iter().map(|(s, _)| (s.offset, s.length)).collect()
    }

    #[test]
    fn adjacent_ranges_with_the_same_errno_become_one() {
        let mut l = RangeList::new();
        for sector in 16..32 {
            l.insert(Span::new(sector * 512, 512), Errno(5));
        }
        assert_eq!(spans(&l), vec![(8192, 8192)]);
        l.insert(Span::new(32 * 512, 512), Errno(61));
        assert_eq!(spans(&l), vec![(8192, 8192), (16384, 512)]);
        // Touching a range of another errno on its right: kept apart.
        l.insert(Span::new(7680, 512), Errno(61));
        assert_eq!(spans(&l), vec![(7680, 512), (8192, 8192), (16384, 512)]);
        assert_eq!(l.total_bytes(), 9216);
    }

    #[test]
    fn merged_values_keep_the_worst() {
        let mut l = RangeList::new();
        l.insert(Span::new(0, 10), Worst(200));
        l.insert(Span::new(10, 10), Worst(900));
        l.insert(Span::new(30, 10), Worst(300));
        let items: Vec<_> = l.iter().cloned().collect();
        assert_eq!(
            items,
            vec![
                (Span::new(0, 20), Worst(900)),
                (Span::new(30, 10), Worst(300))
            ]
        );
        // A range filling the gap joins all three.
        l.insert(Span::new(20, 10), Worst(1));
        assert_eq!(spans(&l), vec![(0, 40)]);
        assert_eq!(l.iter().next().map(|(_, v)| v.0), Some(900));
        l.insert(Span::new(5, 0), Worst(5000));
        assert_eq!(l.len(), 1);
    }

    proptest! {
        /// Any inserts in any order: sorted, never overlapping, touching only when the values
        /// do not join, and exactly the union inserted.
        #[test]
        fn merged_ranges_never_overlap(
            inserts in proptest::collection::vec((0u64..200, 0u64..20, 0i32..3), 0..60)
        ) {
            let mut l = RangeList::new();
            let mut covered = [false; 220];
            for &(offset, length, errno) in &inserts {
                l.insert(Span::new(offset, length), Errno(errno));
                for b in offset..offset + length {
                    covered[b as usize] = true;
                }
            }
            let items: Vec<_> = l.iter().cloned().collect();
            for pair in items.windows(2) {
                let (a, va) = &pair[0];
                let (b, vb) = &pair[1];
                prop_assert!(a.end() <= b.offset, "overlap: {:?} {:?}", a, b);
                prop_assert!(a.end() < b.offset || va != vb, "not merged: {:?} {:?}", a, b);
            }
            let mut listed = [false; 220];
            for (s, _) in &items {
                prop_assert!(s.length > 0);
                for b in s.offset..s.end() {
                    listed[b as usize] = true;
                }
            }
            prop_assert_eq!(listed.to_vec(), covered.to_vec());
        }
    }
}
