//! Where the probe writes and reads, and the put-back. Three steps, minutes not hours:
//!
//! 1. **The region**: the first `region_bytes` are saved, stamped and read back. Two sectors
//!    that read the same stamp share storage (a wrap shorter than the region); a sector that
//!    does not read its own stamp is not stored.
//! 2. **Giant steps**: one sector every region length is read, nothing written. A device that
//!    wraps with period `d` (any `d`, not only a power of two) returns a region stamp at the
//!    first step past `d`, which names `d`; reading sector `d` confirms it. A failing read
//!    bounds the search too. (Baby-step giant-step: a region of `n` sectors finds any period
//!    with `claimed / n` reads.)
//! 3. **Narrowing**: below that bound, a bisection writes one stamp at a time and reads it
//!    back: the first sector that does not keep its stamp (dropped, zeros, a failed read).
//!
//! Then every stamp is read once more (a later write that landed on an earlier sector shows
//! here) and every saved sector is written back in the reverse order of saving, which undoes
//! the writes whatever the device mapped onto what; the sectors below the real end are read
//! back and compared with what was saved.

use super::stamp::{self, Seen};
use super::{Saver, SectorIo};

/// How the probe runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeConfig {
    /// Bytes stamped at the start (step 1), and the giant steps' stride.
    pub region_bytes: u64,
    /// Bytes per read or write of the region.
    pub chunk_bytes: u64,
    /// This run's id, in every stamp.
    pub run: u64,
    /// Keep what is overwritten and put it back (not under `--destroy-data`).
    pub put_back: bool,
}

impl ProbeConfig {
    /// The defaults: a 64 MiB region in 1 MiB pieces.
    pub fn new(run: u64, put_back: bool) -> ProbeConfig {
        ProbeConfig {
            region_bytes: 64 << 20,
            chunk_bytes: 1 << 20,
            run,
            put_back,
        }
    }
}

/// How a device fails to store what it claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fake {
    /// Sector `first` on lands on earlier sectors: `first` on `onto`.
    Wraps { first: u64, onto: u64 },
    /// From sector `first` on, writes do not read back.
    Drops { first: u64 },
    /// From sector `first` on, reads or writes fail.
    Fails { first: u64 },
}

impl Fake {
    /// The first sector that does not store its own data.
    pub fn first(self) -> u64 {
        match self {
            Fake::Wraps { first, .. } | Fake::Drops { first } | Fake::Fails { first } => first,
        }
    }
}

/// What the probe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    /// The logical sector size in bytes.
    pub sector: u64,
    /// The sectors the device claims.
    pub claimed: u64,
    /// The sectors it stores: the last good LBA is `real - 1`.
    pub real: u64,
    /// How it fails past `real`; `None`: it stores what it claims.
    pub fake: Option<Fake>,
    /// Read and write commands the probe sent (not counting the put-back).
    pub reads: u64,
    pub writes: u64,
}

impl Capacity {
    pub fn is_real(&self) -> bool {
        self.fake.is_none()
    }
}

/// Where the probe is, for a progress line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Saving and stamping the region: bytes done of bytes.
    Stamping { done: u64, of: u64 },
    /// Reading the region back.
    Checking { done: u64, of: u64 },
    /// Giant steps read, of at most.
    Stepping { done: u64, of: u64 },
    /// Bisection steps taken; the real end lies in `lo..=hi` (sectors).
    Narrowing { steps: u32, lo: u64, hi: u64 },
    /// Putting back: sectors done of sectors.
    PuttingBack { done: u64, of: u64 },
}

/// How the put-back went.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Restored {
    /// Sectors written back.
    pub sectors: u64,
    /// Sectors read back equal to what was saved (those below the real end).
    pub verified: u64,
    /// Sectors below the real end that read back otherwise.
    pub mismatched: Vec<u64>,
    /// Why the put-back stopped early: the saved copies stay for `restore`.
    pub error: Option<String>,
}

/// How a probe ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeEnd {
    Done(Capacity),
    /// The stop flag was set; everything written was put back.
    Stopped,
    /// The probe could not go on (a save failed, the device went away).
    Failed(String),
}

/// One probe of one device, holding the saved sectors until put back.
pub struct Probe<'a> {
    config: ProbeConfig,
    dev: &'a mut dyn SectorIo,
    saver: &'a mut dyn Saver,
    stop: &'a dyn Fn() -> bool,
    progress: &'a mut dyn FnMut(Progress),
    sector: u64,
    claimed: u64,
    /// Every overwritten range as it was, in the order saved.
    saved: Vec<(u64, Vec<u8>)>,
    /// Sectors `0..region_end` were stamped in step 1.
    region_end: u64,
    /// The stamps written after the region, each a single sector.
    stamped: Vec<u64>,
    reads: u64,
    writes: u64,
}

/// Why a step ended early.
enum Halt {
    Stopped,
    Failed(String),
}

impl<'a> Probe<'a> {
    pub fn new(
        config: ProbeConfig,
        dev: &'a mut dyn SectorIo,
        saver: &'a mut dyn Saver,
        stop: &'a dyn Fn() -> bool,
        progress: &'a mut dyn FnMut(Progress),
    ) -> Probe<'a> {
        let sector = dev.sector_size().max(1);
        let claimed = dev.sectors();
        Probe {
            config,
            dev,
            saver,
            stop,
            progress,
            sector,
            claimed,
            saved: Vec::new(),
            region_end: 0,
            stamped: Vec::new(),
            reads: 0,
            writes: 0,
        }
    }

    /// Probes the device, then puts back what it overwrote (if `put_back`).
    pub fn run(mut self) -> (ProbeEnd, Option<Restored>) {
        let found = self.find();
        let verify_below = match &found {
            Ok(c) => c.real,
            // Unknown: a wrap would make false mismatches, so only the region counts.
            Err(_) => self.region_sectors(),
        };
        let restored = self.config.put_back.then(|| self.put_back(verify_below));
        let end = match found {
            Ok(c) => ProbeEnd::Done(c),
            Err(Halt::Stopped) => ProbeEnd::Stopped,
            Err(Halt::Failed(why)) => ProbeEnd::Failed(why),
        };
        (end, restored)
    }

    fn region_sectors(&self) -> u64 {
        (self.config.region_bytes / self.sector).clamp(1, self.claimed.max(1))
    }

    fn find(&mut self) -> Result<Capacity, Halt> {
        if self.claimed == 0 {
            return Err(Halt::Failed("the device claims no sectors".into()));
        }
        let n = self.region_sectors();
        let mut bound = self.stamp_region(n)?;
        if bound.is_none() && n < self.claimed {
            bound = self.giant_steps(n)?;
        }
        let hi = bound.map_or(self.claimed, Fake::first);
        let mut fake = bound;
        if let Some(dropped) = self.narrow(n.min(hi), hi)? {
            fake = Some(dropped);
        }
        let real = fake.map_or(self.claimed, Fake::first);
        if let Some(clobbered) = self.recheck(self.region_end.min(real), real)? {
            fake = Some(earliest(fake, clobbered));
        }
        Ok(Capacity {
            sector: self.sector,
            claimed: self.claimed,
            real: fake.map_or(self.claimed, Fake::first),
            fake,
            reads: self.reads,
            writes: self.writes,
        })
    }

    fn check_stop(&self) -> Result<(), Halt> {
        if (self.stop)() {
            Err(Halt::Stopped)
        } else {
            Ok(())
        }
    }

    /// Reads `len` sectors at `lba`; `None` when the read fails.
    fn read(&mut self, lba: u64, len: u64) -> Option<Vec<u8>> {
        let mut buf = vec![0u8; usize::try_from(len * self.sector).ok()?];
        self.reads += 1;
        self.dev.read(lba, &mut buf).ok().map(|()| buf)
    }

    /// Saves what is at `lba`, then writes `new`: no save, no write (`Ok(false)`: it failed).
    fn save_and_write(&mut self, lba: u64, old: Vec<u8>, new: &[u8]) -> Result<bool, Halt> {
        if self.config.put_back {
            self.saver.save(lba, &old).map_err(|e| {
                Halt::Failed(format!("cannot save sector {lba} before writing it: {e}"))
            })?;
            self.saved.push((lba, old));
        }
        self.writes += 1;
        Ok(self.dev.write(lba, new).is_ok())
    }

    fn flush(&mut self) -> Result<(), Halt> {
        self.dev
            .flush()
            .map_err(|e| Halt::Failed(format!("the device refused a flush: {e}")))
    }

    /// Step 1: the region stamped and read back.
    fn stamp_region(&mut self, n: u64) -> Result<Option<Fake>, Halt> {
        let chunk = (self.config.chunk_bytes / self.sector).max(1);
        let total = n * self.sector;
        let mut found: Option<Fake> = None;
        while self.region_end < n {
            self.check_stop()?;
            let lba = self.region_end;
            let len = chunk.min(n - lba);
            let Some(old) = self.read(lba, len) else {
                found = Some(self.first_failing_read(lba, len));
                break;
            };
            let mut new = vec![0u8; old.len()];
            stamp::fill_all(&mut new, self.sector as usize, self.config.run, lba);
            if !self.save_and_write(lba, old, &new)? {
                found = Some(Fake::Fails { first: lba });
                break;
            }
            self.region_end += len;
            (self.progress)(Progress::Stamping {
                done: self.region_end * self.sector,
                of: total,
            });
        }
        self.flush()?;
        // A second sector reading a stamp shares the first one's storage.
        let mut first_reader = std::collections::HashMap::new();
        let mut lba = 0;
        while lba < self.region_end && found.is_none_or(|f| lba < f.first()) {
            self.check_stop()?;
            let len = chunk.min(self.region_end - lba);
            let Some(back) = self.read(lba, len) else {
                let failing = self.first_failing_read(lba, len);
                return Ok(Some(earliest(found, failing)));
            };
            for (i, s) in back.chunks(self.sector as usize).enumerate() {
                let at = lba + i as u64;
                let here = match stamp::read(s, self.config.run) {
                    Seen::Other => Some(Fake::Drops { first: at }),
                    Seen::Stamp(j) => first_reader
                        .insert(j, at)
                        .map(|onto| Fake::Wraps { first: at, onto }),
                };
                if let Some(f) = here {
                    found = Some(earliest(found, f));
                    break;
                }
            }
            lba += len;
            (self.progress)(Progress::Checking {
                done: lba * self.sector,
                of: total,
            });
        }
        Ok(found)
    }

    /// The first sector of `lba..lba + len` whose own read fails.
    fn first_failing_read(&mut self, lba: u64, len: u64) -> Fake {
        let first = (lba..lba + len)
            .find(|&s| self.read(s, 1).is_none())
            .unwrap_or(lba);
        Fake::Fails { first }
    }

    /// Step 2: a sector read every `n`; a region stamp names the period.
    fn giant_steps(&mut self, n: u64) -> Result<Option<Fake>, Halt> {
        let steps = (self.claimed - 1) / n;
        for k in 1..=steps {
            self.check_stop()?;
            let g = k * n;
            let Some(s) = self.read(g, 1) else {
                return Ok(Some(Fake::Fails { first: g }));
            };
            (self.progress)(Progress::Stepping { done: k, of: steps });
            if let Seen::Stamp(i) = stamp::read(&s, self.config.run) {
                // g holds sector i's stamp: period d = g - i, so d holds sector 0's.
                let d = g - i;
                let period = self
                    .read(d, 1)
                    .is_some_and(|s| stamp::read(&s, self.config.run) == Seen::Stamp(0));
                return Ok(Some(if period {
                    Fake::Wraps { first: d, onto: 0 }
                } else {
                    Fake::Wraps { first: g, onto: i }
                }));
            }
        }
        Ok(None)
    }

    /// Step 3: bisects `lo..hi` for the first sector that does not keep its stamp.
    fn narrow(&mut self, mut lo: u64, mut hi: u64) -> Result<Option<Fake>, Halt> {
        let mut found = None;
        let mut steps = 0;
        while lo < hi {
            self.check_stop()?;
            let mid = lo + (hi - lo) / 2;
            steps += 1;
            match self.test_sector(mid)? {
                None => lo = mid + 1,
                Some(f) => {
                    hi = mid;
                    found = Some(f);
                }
            }
            (self.progress)(Progress::Narrowing { steps, lo, hi });
        }
        Ok(found)
    }

    /// Writes one stamp at `lba` and reads it back: `None` when it stores it.
    fn test_sector(&mut self, lba: u64) -> Result<Option<Fake>, Halt> {
        let Some(old) = self.read(lba, 1) else {
            return Ok(Some(Fake::Fails { first: lba }));
        };
        let mut new = vec![0u8; old.len()];
        stamp::fill(&mut new, self.config.run, lba);
        if !self.save_and_write(lba, old, &new)? {
            return Ok(Some(Fake::Fails { first: lba }));
        }
        self.stamped.push(lba);
        self.flush()?;
        Ok(match self.read(lba, 1) {
            None => Some(Fake::Fails { first: lba }),
            Some(s) if stamp::read(&s, self.config.run) == Seen::Stamp(lba) => None,
            Some(_) => Some(Fake::Drops { first: lba }),
        })
    }

    /// Reads every stamp again: a later stamp means a wrap; a lost one, a cache.
    fn recheck(&mut self, n: u64, below: u64) -> Result<Option<Fake>, Halt> {
        let run = self.config.run;
        let judge = |at: u64, seen: Option<Seen>| match seen {
            None => Some(Fake::Fails { first: at }),
            Some(Seen::Stamp(j)) if j == at => None,
            Some(Seen::Stamp(j)) if j > at => Some(Fake::Wraps { first: j, onto: at }),
            Some(_) => Some(Fake::Drops { first: at }),
        };
        let mut found: Option<Fake> = None;
        let chunk = (self.config.chunk_bytes / self.sector).max(1);
        let mut lba = 0;
        while lba < n {
            self.check_stop()?;
            let len = chunk.min(n - lba);
            let back = self.read(lba, len);
            for i in 0..len {
                let seen = back.as_ref().map(|b| {
                    let at = (i * self.sector) as usize;
                    stamp::read(&b[at..at + self.sector as usize], run)
                });
                if let Some(f) = judge(lba + i, seen) {
                    found = Some(earliest(found, f));
                }
            }
            lba += len;
        }
        for at in self.stamped.clone().into_iter().filter(|&at| at < below) {
            let seen = self.read(at, 1).map(|s| stamp::read(&s, run));
            if let Some(f) = judge(at, seen) {
                found = Some(earliest(found, f));
            }
        }
        Ok(found)
    }

    /// Writes back every saved range, last first; checks below `verify_below`.
    fn put_back(&mut self, verify_below: u64) -> Restored {
        let mut restored = Restored::default();
        let total: u64 = self
            .saved
            .iter()
            .map(|(_, d)| d.len() as u64 / self.sector)
            .sum();
        for (lba, data) in self.saved.iter().rev() {
            if let Err(e) = self.dev.write(*lba, data) {
                restored.error = Some(format!("cannot write sector {lba} back: {e}"));
                return restored;
            }
            restored.sectors += data.len() as u64 / self.sector;
            (self.progress)(Progress::PuttingBack {
                done: restored.sectors,
                of: total,
            });
        }
        if let Err(e) = self.dev.flush() {
            restored.error = Some(format!(
                "the device refused the flush after the put-back: {e}"
            ));
            return restored;
        }
        for (lba, data) in &self.saved {
            let len = data.len() as u64 / self.sector;
            let mut now = vec![0u8; data.len()];
            if self.dev.read(*lba, &mut now).is_err() {
                restored
                    .mismatched
                    .extend((*lba..lba + len).filter(|&s| s < verify_below));
                continue;
            }
            let sectors = now
                .chunks(self.sector as usize)
                .zip(data.chunks(self.sector as usize));
            for (i, (now, was)) in sectors.enumerate() {
                let at = lba + i as u64;
                if at >= verify_below {
                    continue;
                }
                if now == was {
                    restored.verified += 1;
                } else {
                    restored.mismatched.push(at);
                }
            }
        }
        if restored.mismatched.is_empty() {
            if let Err(e) = self.saver.done() {
                restored.error = Some(format!("cannot remove the saved copies: {e}"));
            }
        } else {
            restored.error = Some(format!(
                "{} sectors read back otherwise than saved: the saved copies are kept",
                restored.mismatched.len()
            ));
        }
        restored
    }
}

/// Of two findings, the one at the lower sector.
fn earliest(a: Option<Fake>, b: Fake) -> Fake {
    match a {
        Some(a) if a.first() <= b.first() => a,
        _ => b,
    }
}

#[cfg(test)]
mod tests;
