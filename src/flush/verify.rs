//! The power-cut check's verdict: which acknowledged records came back. Pure: the LOG's
//! acknowledged numbers and a function reading one slot.
//!
//! Record `seq` went to slot `seq % S`. An acknowledged `seq` with `seq + S <= max_ack` was
//! overwritten by a later acknowledged record in the same slot (superseded, nothing to
//! check). Any other acknowledged `seq` must still be in its slot, or a record with a larger
//! sequence number in the same slot (written after it: also superseded); anything else is
//! lost, and torn when the slot held a part of a record of this run. A slot holding a record
//! of a later recording was overwritten by it: that is no loss of the drive's, and this LOG
//! can no longer tell.

use std::collections::BTreeSet;

use super::records::{Slot, slot_of};

/// What the verify found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Verdict {
    pub acknowledged: u64,
    pub verified: u64,
    pub superseded: u64,
    /// Acknowledged sequence numbers that did not come back, in order.
    pub lost: Vec<u64>,
    /// The lost ones whose slot held a torn or garbled record of this run.
    pub torn: Vec<u64>,
    /// Slots holding an older run's record where this run's was expected.
    pub other_run: u64,
    /// Acknowledged numbers a later recording overwrote: not verifiable.
    pub overwritten_later: Vec<u64>,
    /// Slots that could not be read (each one's record counted lost).
    pub unreadable: Vec<(u64, String)>,
}

impl Verdict {
    /// Zero lost is the only pass.
    pub fn nothing_lost(&self) -> bool {
        self.lost.is_empty()
    }

    /// Nothing lost, but a later recording overwrote some: no verdict.
    pub fn cannot_tell(&self) -> bool {
        self.nothing_lost() && !self.overwritten_later.is_empty()
    }
}

/// Judges `acknowledged` against the ring, reading each needed slot once.
pub fn verify(
    acknowledged: &[u64],
    slots: u64,
    is_later: impl Fn(u64) -> bool,
    mut read: impl FnMut(u64) -> Slot,
) -> Verdict {
    let slots = slots.max(1);
    let mut v = Verdict {
        acknowledged: acknowledged.len() as u64,
        ..Verdict::default()
    };
    let Some(&max_ack) = acknowledged.iter().max() else {
        return v;
    };
    let acked: BTreeSet<u64> = acknowledged.iter().copied().collect();
    let mut cache: std::collections::HashMap<u64, Slot> = std::collections::HashMap::new();
    for &seq in &acked {
        if seq.saturating_add(slots) <= max_ack {
            v.superseded += 1;
            continue;
        }
        let slot = slot_of(seq, slots);
        let held = cache.entry(slot).or_insert_with(|| read(slot)).clone();
        match held {
            Slot::Valid { seq: s } if s == seq => v.verified += 1,
            // A later write to the same slot (issued after this one was acknowledged).
            Slot::Valid { seq: s } if s > seq && slot_of(s, slots) == slot => v.superseded += 1,
            Slot::Torn { .. } => {
                v.lost.push(seq);
                v.torn.push(seq);
            }
            Slot::OtherRun { run } if is_later(run) => v.overwritten_later.push(seq),
            Slot::OtherRun { .. } => {
                v.other_run += 1;
                v.lost.push(seq);
            }
            Slot::Unreadable(why) => {
                v.unreadable.push((slot, why));
                v.lost.push(seq);
            }
            Slot::Valid { .. } | Slot::Empty => v.lost.push(seq),
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A device whose slots hold what `writes` wrote last (in order), S slots.
    fn ring(writes: impl IntoIterator<Item = u64>, slots: u64) -> HashMap<u64, Slot> {
        let mut m = HashMap::new();
        for seq in writes {
            m.insert(slot_of(seq, slots), Slot::Valid { seq });
        }
        m
    }

    /// Run ids above 1000 are later recordings'.
    fn run(acked: &[u64], slots: u64, dev: &HashMap<u64, Slot>) -> Verdict {
        verify(
            acked,
            slots,
            |r| r > 1000,
            |s| dev.get(&s).cloned().unwrap_or(Slot::Empty),
        )
    }

    #[test]
    fn everything_acknowledged_and_kept_is_verified() {
        let dev = ring(0..10, 16);
        let v = run(&(0..10).collect::<Vec<_>>(), 16, &dev);
        assert_eq!(v.acknowledged, 10);
        assert_eq!(v.verified, 10);
        assert_eq!(v.superseded, 0);
        assert!(v.nothing_lost());
    }

    #[test]
    fn after_wraparound_older_records_are_superseded() {
        // 40 records in 16 slots: 0..=23 were overwritten by acknowledged ones.
        let dev = ring(0..40, 16);
        let v = run(&(0..40).collect::<Vec<_>>(), 16, &dev);
        assert_eq!(v.superseded, 24);
        assert_eq!(v.verified, 16);
        assert!(v.nothing_lost());
    }

    #[test]
    fn a_write_issued_after_the_last_acknowledged_one_supersedes() {
        // 0..=19 acknowledged; 20 written over slot 4 (the power went before its ack).
        let dev = ring(0..=20, 16);
        let v = run(&(0..20).collect::<Vec<_>>(), 16, &dev);
        assert_eq!(v.verified, 15);
        assert_eq!(v.superseded, 5);
        assert!(v.nothing_lost());
    }

    #[test]
    fn records_missing_are_lost_and_named() {
        // The device kept 0..=14 only: 15..=19 were acknowledged and never written.
        let dev = ring(0..15, 32);
        let v = run(&(0..20).collect::<Vec<_>>(), 32, &dev);
        assert_eq!(v.verified, 15);
        assert_eq!(v.lost, vec![15, 16, 17, 18, 19]);
        assert!(v.torn.is_empty());
        assert!(!v.nothing_lost());
    }

    #[test]
    fn an_older_record_left_in_the_slot_is_lost() {
        // 20..=23 acknowledged over 4..=7 but the slots still hold the old ones.
        let dev = ring(0..20, 16);
        let v = run(&(0..24).collect::<Vec<_>>(), 16, &dev);
        assert_eq!(v.lost, vec![20, 21, 22, 23]);
        assert_eq!(v.verified, 12);
        assert_eq!(v.superseded, 8);
    }

    #[test]
    fn a_torn_record_is_lost_and_torn() {
        let mut dev = ring(0..10, 16);
        dev.insert(9, Slot::Torn { seq: Some(9) });
        let v = run(&(0..10).collect::<Vec<_>>(), 16, &dev);
        assert_eq!(v.lost, vec![9]);
        assert_eq!(v.torn, vec![9]);
    }

    #[test]
    fn a_record_from_another_run_is_lost() {
        let mut dev = ring(0..10, 16);
        dev.insert(3, Slot::OtherRun { run: 99 });
        let v = run(&(0..10).collect::<Vec<_>>(), 16, &dev);
        assert_eq!(v.lost, vec![3]);
        assert_eq!(v.other_run, 1);
        assert!(v.torn.is_empty());
    }

    #[test]
    fn a_ring_a_later_recording_overwrote_is_not_a_loss() {
        let mut dev = ring(0..10, 16);
        for slot in [3, 4] {
            dev.insert(slot, Slot::OtherRun { run: 5000 });
        }
        let v = run(&(0..10).collect::<Vec<_>>(), 16, &dev);
        assert_eq!(v.overwritten_later, vec![3, 4]);
        assert!(v.nothing_lost() && v.cannot_tell());
        assert_eq!(v.other_run, 0);
        // An older recording's record where this one's should be: lost.
        dev.insert(5, Slot::OtherRun { run: 7 });
        let v = run(&(0..10).collect::<Vec<_>>(), 16, &dev);
        assert_eq!(v.lost, vec![5]);
        assert!(!v.cannot_tell());
    }

    #[test]
    fn an_unreadable_slot_is_lost_with_its_reason() {
        let mut dev = ring(0..4, 16);
        dev.insert(2, Slot::Unreadable("EIO".into()));
        let v = run(&[0, 1, 2, 3], 16, &dev);
        assert_eq!(v.lost, vec![2]);
        assert_eq!(v.unreadable, vec![(2, "EIO".to_string())]);
    }

    #[test]
    fn a_torn_log_line_and_nothing_acknowledged() {
        // Of a torn last line only the whole lines count.
        let text = crate::flush::log::format_header(&crate::flush::log::LogHeader {
            run_id: 1,
            record_bytes: 4096,
            slots: 16,
            region_offset: 0,
            device: "loop0".into(),
            size_bytes: 65536,
            serial: None,
            wwid: None,
            logical_block_size: 512,
            started_unix: 0,
        }) + "0\n1\n2";
        let log = crate::flush::log::parse(&text).expect("parses");
        let dev = ring(0..2, 16);
        let v = run(&log.acknowledged, log.header.slots, &dev);
        assert_eq!((v.acknowledged, v.verified), (2, 2));
        assert!(v.nothing_lost());
        let v = run(&[], 16, &dev);
        assert_eq!(v, Verdict::default());
    }

    #[test]
    fn a_valid_record_in_the_wrong_slot_is_not_taken() {
        let mut dev = HashMap::new();
        // Slot 1 holds record 2, which belongs in slot 2: it supersedes nothing, 1 is lost.
        dev.insert(1, Slot::Valid { seq: 2 });
        let v = run(&[1], 16, &dev);
        assert_eq!(v.lost, vec![1]);
    }

    #[test]
    fn each_slot_is_read_once() {
        let dev = ring(0..100, 8);
        let mut reads = 0;
        let acked: Vec<u64> = (0..100).collect();
        let v = verify(
            &acked,
            8,
            |_| false,
            |s| {
                reads += 1;
                dev.get(&s).cloned().unwrap_or(Slot::Empty)
            },
        );
        assert_eq!(reads, 8);
        assert_eq!(v.verified, 8);
        assert_eq!(v.superseded, 92);
    }
}
