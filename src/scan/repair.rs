//! The optional repair after a scan (`scan --repair`): each unreadable sector the scan found is
//! overwritten with zeros (its data is already lost; a write lets the drive remap a pending
//! sector, as hdparm `--repair-sector` and Victoria's Remap do), then read again. A sector that
//! reads just before its write is not written: something rewrote it after the scan.
//!
//! Pure: writes go through `SectorWriter`, re-reads through the scan's `BlockReader`. Only
//! whole sectors of the spans given are written, at most `max_write` bytes at a time; whether
//! a repair may run at all is `bench::exec::safety`'s to say, applied before the scan.

use super::Span;
use super::engine::{BlockReader, ReadOutcome};
use super::mapfile::{Mapfile, Status};

/// Writes zeros to the device.
pub trait SectorWriter {
    /// Writes zeros over `span` (whole logical blocks); `Err(errno)` if failed or short.
    fn write_zeros(&mut self, span: Span) -> Result<(), i32>;
}

/// What the repair of one sector came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SectorResult {
    /// Written, and read back without an error.
    Repaired,
    /// The write failed (errno): the sector was not read again.
    WriteFailed(i32),
    /// Written, but the read back failed (errno, or 0 for a short read or a timeout).
    StillUnreadable(i32),
    /// Read fine just before its write, so not written: a file system or the drive rewrote
    /// it since the scan, and zeros would destroy that.
    ReadableAgain,
}

/// The repair of every bad sector given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Repair {
    /// Each sector attempted (offset in bytes) and what came of it, in order.
    pub sectors: Vec<(u64, SectorResult)>,
    /// Why the repair stopped before the end (the device went away), if it did.
    pub stopped: Option<String>,
}

impl Repair {
    pub fn attempted(&self) -> u64 {
        self.sectors.len() as u64
    }

    pub fn repaired(&self) -> u64 {
        self.count(|r| r == SectorResult::Repaired)
    }

    /// The sectors that read before their write, left alone.
    pub fn readable_again(&self) -> u64 {
        self.count(|r| r == SectorResult::ReadableAgain)
    }

    /// Every sector not repaired (write failed or read back failed).
    pub fn still_unreadable(&self) -> u64 {
        self.count(|r| {
            matches!(
                r,
                SectorResult::WriteFailed(_) | SectorResult::StillUnreadable(_)
            )
        })
    }

    fn count(&self, which: impl Fn(SectorResult) -> bool) -> u64 {
        self.sectors.iter().filter(|(_, r)| which(*r)).count() as u64
    }

    /// The sectors not repaired, merged into byte ranges.
    pub fn unrepaired_ranges(&self, sector: u64) -> Vec<Span> {
        self.ranges(sector, |r| {
            matches!(
                r,
                SectorResult::WriteFailed(_) | SectorResult::StillUnreadable(_)
            )
        })
    }

    /// The sectors left alone because they read again, merged into byte ranges.
    pub fn readable_again_ranges(&self, sector: u64) -> Vec<Span> {
        self.ranges(sector, |r| r == SectorResult::ReadableAgain)
    }

    fn ranges(&self, sector: u64, which: impl Fn(SectorResult) -> bool) -> Vec<Span> {
        let offsets: Vec<u64> = self
            .sectors
            .iter()
            .filter(|(_, r)| which(*r))
            .map(|(offset, _)| *offset)
            .collect();
        runs_of(&offsets, sector)
    }

    /// Marks each sector that reads now as read ('+'), so the saved map says what is now.
    pub fn mark_repaired(&self, map: &mut Mapfile, sector: u64) {
        for &(offset, result) in &self.sectors {
            if matches!(result, SectorResult::Repaired | SectorResult::ReadableAgain) {
                map.set(Span::new(offset, sector), Status::Finished);
            }
        }
    }

    /// Did the repair change what the map says (a sector reads now)?
    pub fn reads_now(&self) -> bool {
        self.repaired() + self.readable_again() > 0
    }
}

/// Writes zeros over each span of `bad` (sorted, aligned to `sector`), at most `max_write`
/// bytes a write, then reads each sector back. A sector that reads before its write is left
/// alone (`ReadableAgain`); a failed write is split to sectors, so one bad sector does not fail
/// its neighbours. `still_ours` returning `Some(why)` before a write stops the repair there.
pub fn repair(
    bad: &[Span],
    sector: u64,
    max_write: u64,
    writer: &mut impl SectorWriter,
    reader: &mut impl BlockReader,
    still_ours: &mut impl FnMut() -> Option<String>,
) -> Repair {
    let sector = sector.max(1);
    let max_write = (max_write / sector).max(1) * sector;
    let mut out = Repair::default();
    'spans: for span in bad {
        // Only whole sectors: a span that is not aligned is shrunk to the sectors inside it.
        let start = span.offset.div_ceil(sector) * sector;
        let end = span.end() / sector * sector;
        let mut at = start;
        while at < end {
            let chunk = Span::new(at, (end - at).min(max_write));
            let mut unreadable = Vec::new();
            for s in sectors_of(chunk, sector) {
                match reader.read(Span::new(s, sector)).outcome {
                    ReadOutcome::Read => out.sectors.push((s, SectorResult::ReadableAgain)),
                    _ => unreadable.push(s),
                }
            }
            for run in runs_of(&unreadable, sector) {
                if let Some(why) = still_ours() {
                    out.stopped = Some(why);
                    break 'spans;
                }
                write_and_read_back(run, sector, writer, reader, &mut out);
            }
            at = chunk.end();
        }
    }
    out.sectors.sort_by_key(|&(offset, _)| offset);
    out
}

/// Writes zeros over `run` (by sectors if the whole write fails) and reads each back.
fn write_and_read_back(
    run: Span,
    sector: u64,
    writer: &mut impl SectorWriter,
    reader: &mut impl BlockReader,
    out: &mut Repair,
) {
    let written: Vec<(u64, Result<(), i32>)> = match writer.write_zeros(run) {
        Ok(()) => sectors_of(run, sector).map(|s| (s, Ok(()))).collect(),
        Err(_) if run.length > sector => sectors_of(run, sector)
            .map(|s| (s, writer.write_zeros(Span::new(s, sector))))
            .collect(),
        Err(errno) => vec![(run.offset, Err(errno))],
    };
    for (offset, result) in written {
        let outcome = match result {
            Err(errno) => SectorResult::WriteFailed(errno),
            Ok(()) => match reader.read(Span::new(offset, sector)).outcome {
                ReadOutcome::Read => SectorResult::Repaired,
                ReadOutcome::Failed(errno) => SectorResult::StillUnreadable(errno),
                ReadOutcome::Short(_) | ReadOutcome::TimedOut => SectorResult::StillUnreadable(0),
            },
        };
        out.sectors.push((offset, outcome));
    }
}

/// Sorted sector offsets merged into runs of adjacent sectors.
fn runs_of(offsets: &[u64], sector: u64) -> Vec<Span> {
    let mut runs: Vec<Span> = Vec::new();
    for &s in offsets {
        match runs.last_mut() {
            Some(last) if last.end() == s => last.length += sector,
            _ => runs.push(Span::new(s, sector)),
        }
    }
    runs
}

fn sectors_of(span: Span, sector: u64) -> impl Iterator<Item = u64> {
    (span.offset..span.end()).step_by(sector as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::engine::TimedRead;
    use std::cell::RefCell;
    use std::collections::BTreeSet;
    use std::rc::Rc;
    use std::time::Duration;

    /// 512-byte sectors: `bad` ones fail to read until written; `dead` ones always fail.
    #[derive(Default)]
    struct Fake {
        bad: BTreeSet<u64>,
        dead: BTreeSet<u64>,
        writes: Vec<Span>,
        reads: Vec<Span>,
    }

    impl SectorWriter for Fake {
        fn write_zeros(&mut self, span: Span) -> Result<(), i32> {
            assert_eq!(span.offset % 512, 0);
            assert_eq!(span.length % 512, 0);
            if sectors_of(span, 512).any(|s| self.dead.contains(&s)) {
                return Err(5);
            }
            self.writes.push(span);
            for s in sectors_of(span, 512) {
                self.bad.remove(&s);
            }
            Ok(())
        }
    }

    impl BlockReader for Fake {
        fn read(&mut self, span: Span) -> TimedRead {
            self.reads.push(span);
            let bad =
                sectors_of(span, 512).any(|s| self.bad.contains(&s) || self.dead.contains(&s));
            TimedRead {
                outcome: if bad {
                    ReadOutcome::Failed(61)
                } else {
                    ReadOutcome::Read
                },
                elapsed: Duration::from_millis(1),
            }
        }
        fn gone(&mut self) -> Option<String> {
            None
        }
    }

    fn ours() -> impl FnMut() -> Option<String> {
        || None
    }

    #[test]
    fn exactly_the_bad_ranges_are_written_then_read_back() {
        let mut dev = Fake::default();
        dev.bad.extend([8192 * 512, 8193 * 512, 100 * 512]);
        let bad = [Span::new(100 * 512, 512), Span::new(8192 * 512, 1024)];
        let mut rw = Fake {
            bad: dev.bad.clone(),
            ..Fake::default()
        };
        let r = repair(&bad, 512, 1 << 20, &mut rw, &mut dev, &mut ours());
        // The writer saw exactly the two ranges, nothing else.
        assert_eq!(rw.writes, bad.to_vec());
        // Each sector read alone before the write, and after it.
        assert_eq!(
            dev.reads,
            vec![
                Span::new(100 * 512, 512),
                Span::new(100 * 512, 512),
                Span::new(8192 * 512, 512),
                Span::new(8193 * 512, 512),
                Span::new(8192 * 512, 512),
                Span::new(8193 * 512, 512)
            ]
        );
        assert_eq!(r.attempted(), 3);
        // A separate fake reader still holds the bad sectors: nothing repaired.
        assert_eq!(r.repaired(), 0);
        assert_eq!(r.still_unreadable(), 3);
        assert_eq!(
            r.unrepaired_ranges(512),
            vec![Span::new(100 * 512, 512), Span::new(8192 * 512, 1024)]
        );
    }

    /// One device behind two handles.
    #[derive(Clone)]
    struct Shared(Rc<RefCell<Fake>>);
    impl SectorWriter for Shared {
        fn write_zeros(&mut self, span: Span) -> Result<(), i32> {
            self.0.borrow_mut().write_zeros(span)
        }
    }
    impl BlockReader for Shared {
        fn read(&mut self, span: Span) -> TimedRead {
            self.0.borrow_mut().read(span)
        }
        fn gone(&mut self) -> Option<String> {
            None
        }
    }

    #[test]
    fn written_sectors_read_again_and_a_dead_one_is_split_out() {
        let mut dev = Fake::default();
        dev.bad.extend([10 * 512, 11 * 512, 13 * 512]);
        dev.dead.insert(12 * 512);
        let mut w = Shared(Rc::new(RefCell::new(dev)));
        let mut rd = w.clone();
        let r = repair(
            &[Span::new(10 * 512, 4 * 512)],
            512,
            1 << 20,
            &mut w,
            &mut rd,
            &mut ours(),
        );
        let dev = w.0.borrow();
        // The 4-sector write failed on the dead sector: split into 3 single writes.
        assert_eq!(
            dev.writes,
            vec![
                Span::new(10 * 512, 512),
                Span::new(11 * 512, 512),
                Span::new(13 * 512, 512)
            ]
        );
        assert_eq!(
            r.sectors,
            vec![
                (10 * 512, SectorResult::Repaired),
                (11 * 512, SectorResult::Repaired),
                (12 * 512, SectorResult::WriteFailed(5)),
                (13 * 512, SectorResult::Repaired),
            ]
        );
        assert_eq!(
            (r.attempted(), r.repaired(), r.still_unreadable()),
            (4, 3, 1)
        );
        // The dead sector was read before the write only (its write failed).
        let dead = Span::new(12 * 512, 512);
        assert_eq!(dev.reads.iter().filter(|&&r| r == dead).count(), 1);
        assert_eq!(r.unrepaired_ranges(512), vec![Span::new(12 * 512, 512)]);
    }

    #[test]
    fn a_repaired_sector_is_read_in_the_map_the_others_stay_bad() {
        let mut map = Mapfile::new(64 * 512);
        map.set(Span::new(0, 64 * 512), Status::Finished);
        map.set(Span::new(10 * 512, 4 * 512), Status::BadSector);
        map.set(Span::new(30 * 512, 512), Status::BadSector);
        let r = Repair {
            sectors: vec![
                (10 * 512, SectorResult::Repaired),
                (11 * 512, SectorResult::StillUnreadable(61)),
                (12 * 512, SectorResult::WriteFailed(5)),
                (13 * 512, SectorResult::Repaired),
            ],
            // Sector 30 was not reached.
            stopped: Some("stopped by a signal".into()),
        };
        r.mark_repaired(&mut map, 512);
        assert_eq!(
            map.regions().collect::<Vec<_>>(),
            vec![
                (Span::new(0, 11 * 512), Status::Finished),
                (Span::new(11 * 512, 2 * 512), Status::BadSector),
                (Span::new(13 * 512, 17 * 512), Status::Finished),
                (Span::new(30 * 512, 512), Status::BadSector),
                (Span::new(31 * 512, 33 * 512), Status::Finished),
            ]
        );
    }

    #[test]
    fn nothing_bad_writes_nothing() {
        let mut w = Fake::default();
        let mut rd = Fake::default();
        let r = repair(&[], 512, 1 << 20, &mut w, &mut rd, &mut ours());
        assert!(w.writes.is_empty() && rd.reads.is_empty());
        assert_eq!(r, Repair::default());
    }

    #[test]
    fn writes_are_split_at_max_write_and_aligned() {
        let mut dev = Fake::default();
        dev.bad.extend((0..12).map(|s| s * 512));
        let mut w = Shared(Rc::new(RefCell::new(dev)));
        let mut rd = w.clone();
        // At most 2 sectors a write; ragged ends keep only whole sectors.
        let bad = [Span::new(0, 5 * 512), Span::new(10 * 512 + 1, 2 * 512)];
        let r = repair(&bad, 512, 1024, &mut w, &mut rd, &mut ours());
        assert_eq!(
            w.0.borrow().writes,
            vec![
                Span::new(0, 1024),
                Span::new(1024, 1024),
                Span::new(2048, 512),
                Span::new(11 * 512, 512),
            ]
        );
        assert_eq!(r.repaired(), 6);
    }

    #[test]
    fn a_sector_that_reads_before_its_write_is_left_alone() {
        // 20-23 unreadable in the scan, 21 and 22 rewritten since: only 20 and 23 written.
        let mut dev = Fake::default();
        dev.bad.extend([20 * 512, 23 * 512]);
        let mut w = Shared(Rc::new(RefCell::new(dev)));
        let mut rd = w.clone();
        let r = repair(
            &[Span::new(20 * 512, 4 * 512)],
            512,
            1 << 20,
            &mut w,
            &mut rd,
            &mut ours(),
        );
        assert_eq!(
            w.0.borrow().writes,
            vec![Span::new(20 * 512, 512), Span::new(23 * 512, 512)]
        );
        assert_eq!(
            r.sectors,
            vec![
                (20 * 512, SectorResult::Repaired),
                (21 * 512, SectorResult::ReadableAgain),
                (22 * 512, SectorResult::ReadableAgain),
                (23 * 512, SectorResult::Repaired),
            ]
        );
        assert_eq!(
            (r.repaired(), r.readable_again(), r.still_unreadable()),
            (2, 2, 0)
        );
        assert_eq!(
            r.readable_again_ranges(512),
            vec![Span::new(21 * 512, 2 * 512)]
        );
        // In the map, all four read now.
        let mut map = Mapfile::new(64 * 512);
        map.set(Span::new(0, 64 * 512), Status::Finished);
        map.set(Span::new(20 * 512, 4 * 512), Status::BadSector);
        r.mark_repaired(&mut map, 512);
        assert_eq!(map.bytes_with(Status::BadSector, Span::new(0, 64 * 512)), 0);
    }

    #[test]
    fn a_device_that_changed_stops_the_repair_before_the_next_write() {
        let mut dev = Fake::default();
        dev.bad.extend([0, 4096]);
        let mut w = Shared(Rc::new(RefCell::new(dev)));
        let mut rd = w.clone();
        let bad = [Span::new(0, 512), Span::new(4096, 512)];
        let mut calls = 0;
        let mut check = || {
            calls += 1;
            (calls > 1).then(|| "another device".to_string())
        };
        let r = repair(&bad, 512, 1 << 20, &mut w, &mut rd, &mut check);
        assert_eq!(w.0.borrow().writes, vec![Span::new(0, 512)]);
        assert_eq!(r.stopped.as_deref(), Some("another device"));
        assert_eq!(r.attempted(), 1);
    }
}
