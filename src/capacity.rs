//! The fake-capacity probe's pure core (`disktriage capacity`, issue 38): does a device store
//! every sector it claims? Over a `SectorIo` trait that `sys` implements for a device and the
//! tests for simulated fakes (wraps at any period, dropped writes, failing reads, chains).
//!
//! - `stamp`: the sector a probe writes (run, LBA, checksum) and what a read back shows.
//! - `probe`: where to write and read, the saved sectors, and the put-back afterwards.
//! - `journal`: the saved sectors as a file, for `restore` after a crash.

pub mod journal;
pub mod probe;
pub mod stamp;

use std::io;

pub use journal::PutBack;
pub use probe::{Capacity, Fake, Probe, ProbeConfig, ProbeEnd, Restored};

/// The device as the probe sees it: whole logical sectors, addressed by LBA.
pub trait SectorIo {
    /// The logical sector size in bytes (512 or 4096).
    fn sector_size(&self) -> u64;
    /// The sectors the device claims.
    fn sectors(&self) -> u64;
    /// Reads whole sectors from `lba` into `buf`.
    fn read(&mut self, lba: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Writes whole sectors at `lba`.
    fn write(&mut self, lba: u64, data: &[u8]) -> io::Result<()>;
    /// Flushes the cache, so a read back is not the cache's.
    fn flush(&mut self) -> io::Result<()>;
}

/// Where the probe keeps each sector, durably, before it is overwritten.
pub trait Saver {
    /// Keeps `data`, the sectors at `lba`, before they are overwritten.
    fn save(&mut self, lba: u64, data: &[u8]) -> io::Result<()>;
    /// Every sector is back as it was: the saved copies may go.
    fn done(&mut self) -> io::Result<()>;
}

/// A `Saver` that keeps nothing: the admin typed `--destroy-data`.
pub struct NoSaver;

impl Saver for NoSaver {
    fn save(&mut self, _: u64, _: &[u8]) -> io::Result<()> {
        Ok(())
    }
    fn done(&mut self) -> io::Result<()> {
        Ok(())
    }
}
