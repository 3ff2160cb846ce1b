//! The probe on simulated devices: each maps a claimed LBA onto its storage as a kind of fake
//! does, and checks that nothing is written where nothing was saved first.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::rc::Rc;

use super::*;
use crate::model::units::splitmix64;

/// Where a claimed sector lives.
#[derive(Debug, Clone, Copy)]
enum Map {
    /// Stores every sector it claims.
    Real,
    /// Sector `lba` is stored at `lba % period`.
    Wrap { period: u64 },
    /// From `from` on, writes are dropped and reads return zeros.
    Drop { from: u64 },
    /// From `from` on, reads and writes fail.
    Fail { from: u64 },
    /// Stored below `real`, dropped to `wrap_from`, then stored at `(lba - wrap_from) % real`.
    Chain { real: u64, wrap_from: u64 },
}

enum Place {
    At(u64),
    Dropped,
    Failed,
}

struct Sim {
    sector: u64,
    claimed: u64,
    map: Map,
    /// The sectors it stores; their content, where written, else `original`'s.
    stored: u64,
    store: HashMap<u64, Vec<u8>>,
    /// Ranges saved so far (lba, sectors): a write outside them fails the test.
    saved: Rc<RefCell<Vec<(u64, u64)>>>,
    writes: u64,
    /// Writes after this many fail and change nothing (the power was cut).
    dies_after: Option<u64>,
}

impl Sim {
    fn new(claimed: u64, stored: u64, map: Map) -> Sim {
        Sim {
            sector: 512,
            claimed,
            map,
            stored,
            store: HashMap::new(),
            saved: Rc::default(),
            writes: 0,
            dies_after: None,
        }
    }

    /// What a stored sector held before the probe: distinct in every sector.
    fn original(&self, p: u64) -> Vec<u8> {
        (0..self.sector / 8)
            .flat_map(|i| splitmix64(p * 64 + i).to_le_bytes())
            .collect()
    }

    fn content(&self, p: u64) -> Vec<u8> {
        self.store
            .get(&p)
            .cloned()
            .unwrap_or_else(|| self.original(p))
    }

    /// Every stored sector holds what it held before.
    fn intact(&self) -> bool {
        self.store.iter().all(|(&p, d)| *d == self.original(p))
    }

    fn place(&self, lba: u64) -> Place {
        let stored = self.stored;
        match self.map {
            Map::Real => Place::At(lba),
            Map::Wrap { period } => Place::At(lba % period),
            Map::Drop { from } if lba >= from => Place::Dropped,
            Map::Fail { from } if lba >= from => Place::Failed,
            Map::Drop { .. } | Map::Fail { .. } => Place::At(lba),
            Map::Chain { real, .. } if lba < real => Place::At(lba),
            Map::Chain { wrap_from, .. } if lba < wrap_from => Place::Dropped,
            Map::Chain { real, wrap_from } => Place::At((lba - wrap_from) % real),
        }
        .checked(stored)
    }

    fn sectors_of(&self, buf: &[u8]) -> u64 {
        buf.len() as u64 / self.sector
    }
}

impl Place {
    fn checked(self, stored: u64) -> Place {
        match self {
            Place::At(p) => {
                assert!(
                    p < stored,
                    "the simulation maps onto {p}, past its {stored} sectors"
                );
                Place::At(p)
            }
            other => other,
        }
    }
}

impl SectorIo for Sim {
    fn sector_size(&self) -> u64 {
        self.sector
    }
    fn sectors(&self) -> u64 {
        self.claimed
    }
    fn read(&mut self, lba: u64, buf: &mut [u8]) -> io::Result<()> {
        let s = self.sector as usize;
        for (i, out) in buf.chunks_mut(s).enumerate() {
            match self.place(lba + i as u64) {
                Place::At(p) => out.copy_from_slice(&self.content(p)),
                Place::Dropped => out.fill(0),
                Place::Failed => return Err(io::Error::from_raw_os_error(libc::EIO)),
            }
        }
        Ok(())
    }
    fn write(&mut self, lba: u64, data: &[u8]) -> io::Result<()> {
        let len = self.sectors_of(data);
        let covered = self
            .saved
            .borrow()
            .iter()
            .any(|&(at, n)| at <= lba && lba + len <= at + n);
        assert!(covered, "wrote sectors {lba}+{len}, not saved first");
        self.writes += 1;
        if self.dies_after.is_some_and(|n| self.writes > n) {
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        let s = self.sector as usize;
        for (i, d) in data.chunks(s).enumerate() {
            match self.place(lba + i as u64) {
                Place::At(p) => {
                    self.store.insert(p, d.to_vec());
                }
                Place::Dropped => {}
                Place::Failed => return Err(io::Error::from_raw_os_error(libc::EIO)),
            }
        }
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Keeps the ranges saved (for `Sim`'s check); fails save `fail_at`.
struct Keeper {
    saved: Rc<RefCell<Vec<(u64, u64)>>>,
    sector: u64,
    count: u32,
    fail_at: Option<u32>,
    done: bool,
    /// The journal as `sys::capacity::JournalSaver` would write it.
    journal: Vec<u8>,
}

impl Saver for Keeper {
    fn save(&mut self, lba: u64, data: &[u8]) -> io::Result<()> {
        self.count += 1;
        if Some(self.count) == self.fail_at {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        self.saved
            .borrow_mut()
            .push((lba, data.len() as u64 / self.sector));
        self.journal
            .extend(crate::capacity::journal::record(lba, data));
        Ok(())
    }
    fn done(&mut self) -> io::Result<()> {
        self.done = true;
        Ok(())
    }
}

struct Outcome {
    end: ProbeEnd,
    restored: Option<Restored>,
    intact: bool,
    saver_done: bool,
}

/// Probes `sim` with a 2 MiB region, stopping after `stop_after` progress reports.
fn probe(mut sim: Sim, fail_save: Option<u32>, stop_after: Option<u32>) -> Outcome {
    let mut saver = Keeper {
        saved: Rc::clone(&sim.saved),
        sector: sim.sector,
        count: 0,
        fail_at: fail_save,
        done: false,
        journal: Vec::new(),
    };
    let reports = std::cell::Cell::new(0u32);
    let stop = || stop_after.is_some_and(|n| reports.get() >= n);
    let mut progress = |_: Progress| reports.set(reports.get() + 1);
    let config = ProbeConfig {
        region_bytes: 2 << 20,
        chunk_bytes: 64 << 10,
        run: 42,
        put_back: true,
    };
    let (end, restored) = Probe::new(config, &mut sim, &mut saver, &stop, &mut progress).run();
    Outcome {
        end,
        restored,
        intact: sim.intact(),
        saver_done: saver.done,
    }
}

fn found(o: &Outcome) -> Capacity {
    match &o.end {
        ProbeEnd::Done(c) => *c,
        other => panic!("the probe ended {other:?}"),
    }
}

const CLAIM: u64 = 1 << 24; // 8 GiB in 512-byte sectors

#[track_caller]
fn assert_put_back(o: &Outcome) {
    assert!(o.intact, "every byte of the storage is as it was");
    let r = o.restored.as_ref().expect("put back");
    assert_eq!(r.error, None);
    assert!(r.mismatched.is_empty());
    assert!(r.verified > 0);
    assert!(o.saver_done, "the saved copies may go");
}

#[test]
fn a_real_device_is_real_and_left_as_it_was() {
    let o = probe(Sim::new(CLAIM, CLAIM, Map::Real), None, None);
    let c = found(&o);
    assert_eq!((c.real, c.fake), (CLAIM, None));
    assert!(c.is_real());
    assert_put_back(&o);
    // 4096 region sectors by 64, 4095 giant steps, 24 bisection steps.
    assert!(c.reads < 9_000, "{} reads", c.reads);
    assert!(c.writes < 100, "{} writes", c.writes);
}

#[test]
fn a_wrap_at_a_period_that_is_no_power_of_two_is_found_to_the_sector() {
    for period in [12_345u64, 4_097, 1_000_003, CLAIM - 1] {
        let o = probe(Sim::new(CLAIM, period, Map::Wrap { period }), None, None);
        let c = found(&o);
        assert_eq!(
            c.fake,
            Some(Fake::Wraps {
                first: period,
                onto: 0
            }),
            "period {period}"
        );
        assert_eq!(c.real, period);
        assert_put_back(&o);
    }
}

#[test]
fn a_wrap_shorter_than_the_region_is_found_in_the_region() {
    let o = probe(
        Sim::new(CLAIM, 1_000, Map::Wrap { period: 1_000 }),
        None,
        None,
    );
    assert_eq!(
        found(&o).fake,
        Some(Fake::Wraps {
            first: 1_000,
            onto: 0
        })
    );
    assert_put_back(&o);
}

#[test]
fn a_power_of_two_wrap_is_found_too() {
    let o = probe(
        Sim::new(CLAIM, 1 << 20, Map::Wrap { period: 1 << 20 }),
        None,
        None,
    );
    assert_eq!(found(&o).real, 1 << 20);
    assert_put_back(&o);
}

#[test]
fn dropped_writes_past_the_real_end_are_found_by_bisection() {
    for real in [4_096u64, 4_097, 204_800, CLAIM - 1, 100] {
        let o = probe(Sim::new(CLAIM, real, Map::Drop { from: real }), None, None);
        let c = found(&o);
        assert_eq!(c.fake, Some(Fake::Drops { first: real }), "real {real}");
        assert_put_back(&o);
    }
}

#[test]
fn failing_reads_past_the_real_end_are_found() {
    for real in [123_457u64, 2_000] {
        let o = probe(Sim::new(CLAIM, real, Map::Fail { from: real }), None, None);
        assert_eq!(
            found(&o).fake,
            Some(Fake::Fails { first: real }),
            "real {real}"
        );
        assert_put_back(&o);
    }
}

#[test]
fn a_chain_of_dropped_then_wrapping_sectors_is_cut_at_the_first() {
    let map = Map::Chain {
        real: 50_000,
        wrap_from: 3_000_000,
    };
    let o = probe(Sim::new(CLAIM, 50_000, map), None, None);
    assert_eq!(found(&o).fake, Some(Fake::Drops { first: 50_000 }));
    assert_put_back(&o);
}

#[test]
fn a_stop_puts_back_what_was_written() {
    for after in [1, 40, 70, 3_000] {
        let o = probe(
            Sim::new(CLAIM, 300_000, Map::Drop { from: 300_000 }),
            None,
            Some(after),
        );
        assert_eq!(o.end, ProbeEnd::Stopped, "stopped after {after} reports");
        assert_put_back(&o);
    }
}

#[test]
fn a_failed_save_writes_nothing_more_and_puts_back_the_rest() {
    let o = probe(Sim::new(CLAIM, CLAIM, Map::Real), Some(3), None);
    match &o.end {
        ProbeEnd::Failed(why) => assert!(why.contains("cannot save sector 256"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_put_back(&o);
}

#[test]
fn without_put_back_nothing_is_saved_or_restored() {
    let mut sim = Sim::new(CLAIM, 10_000, Map::Drop { from: 10_000 });
    // Every range counts as saved: under --destroy-data nothing is.
    sim.saved.borrow_mut().push((0, CLAIM));
    let stop = || false;
    let mut progress = |_: Progress| {};
    let config = ProbeConfig {
        put_back: false,
        ..ProbeConfig::new(1, false)
    };
    let (end, restored) = Probe::new(
        config,
        &mut sim,
        &mut crate::capacity::NoSaver,
        &stop,
        &mut progress,
    )
    .run();
    assert!(
        matches!(end, ProbeEnd::Done(c) if c.real == 10_000),
        "{end:?}"
    );
    assert_eq!(restored, None);
}

#[test]
fn after_a_power_cut_mid_probe_the_journal_puts_every_sector_back() {
    use crate::capacity::journal::{self, Header};
    for (map, stored, dies_after) in [
        (Map::Wrap { period: 1_000 }, 1_000, 20),
        (Map::Wrap { period: 12_345 }, 12_345, 70),
        (Map::Drop { from: 300_000 }, 300_000, 80),
        (Map::Real, CLAIM, 5),
    ] {
        let mut sim = Sim::new(CLAIM, stored, map);
        sim.dies_after = Some(dies_after);
        let header = Header {
            device: "sim".into(),
            dev: (7, 0),
            diskseq: 1,
            sector: 512,
            run: 42,
        };
        let mut saver = Keeper {
            saved: Rc::clone(&sim.saved),
            sector: 512,
            count: 0,
            fail_at: None,
            done: false,
            journal: journal::header(&header),
        };
        let stop = || false;
        let mut progress = |_: Progress| {};
        let config = ProbeConfig {
            region_bytes: 2 << 20,
            chunk_bytes: 64 << 10,
            ..ProbeConfig::new(42, true)
        };
        let (_, restored) = Probe::new(config, &mut sim, &mut saver, &stop, &mut progress).run();
        assert!(
            restored.is_some_and(|r| r.error.is_some()),
            "{map:?}: the put-back failed"
        );
        assert!(!sim.intact(), "{map:?}: the cut left stamps on the device");
        assert!(!saver.done, "{map:?}: the journal is kept");

        sim.dies_after = None;
        let j = journal::parse(&saver.journal).expect("the journal reads back");
        let back = journal::put_back(&j, &mut sim);
        let mut bad: Vec<u64> = sim
            .store
            .iter()
            .filter(|(p, d)| **d != sim.original(**p))
            .map(|(p, _)| *p)
            .collect();
        bad.sort();
        assert!(
            sim.intact(),
            "{map:?}: every sector is as it was: {} differ, first {:?}; records {}",
            bad.len(),
            &bad[..bad.len().min(5)],
            j.records.len()
        );
        assert_eq!(back.error, None);
        assert!(back.not_back.is_empty(), "{map:?}: {:?}", back.not_back);
        assert_eq!(back.sectors, back.as_saved + back.shared);
        if matches!(map, Map::Wrap { period: 1_000 }) {
            assert!(back.shared > 0, "sectors 1000.. are sectors 0.. again");
        }
    }
}
