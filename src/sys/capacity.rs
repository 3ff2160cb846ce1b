//! The device side of the checks that save sectors before writing them (capacity probe, TRIM
//! check, write-cliff probe): the guard's `FlushDevice` (O_DIRECT, exclusive) as
//! `capacity::SectorIo`, and the journal of saved sectors as `capacity::Saver`, each record
//! durable before the write it saves for.

use std::io;

use super::direct::AlignedBuf;
use super::flush::{Durability, FlushDevice};
use super::flush_log::{LogDir, LogFile};
use crate::capacity::journal::{self, Header};
use crate::capacity::{Saver, SectorIo};

/// The largest transfer the probe asks for (its chunks are 1 MiB).
const MAX_IO: usize = 1 << 20;

/// A block device as whole logical sectors.
pub struct DeviceSectors {
    device: FlushDevice,
    buf: AlignedBuf,
}

impl DeviceSectors {
    pub fn new(device: FlushDevice) -> io::Result<DeviceSectors> {
        let buf = FlushDevice::buffer(MAX_IO)?;
        Ok(DeviceSectors { device, buf })
    }

    /// The opened device, for the commands besides reads and writes (a discard).
    pub fn device(&self) -> &FlushDevice {
        &self.device
    }

    fn check_len(&self, len: usize) -> io::Result<()> {
        let sector = self.device.logical.max(1) as usize;
        if len == 0 || len > MAX_IO || !len.is_multiple_of(sector) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{len} bytes is not whole sectors of {sector} bytes up to 1 MiB"),
            ));
        }
        Ok(())
    }

    fn offset(&self, lba: u64) -> io::Result<u64> {
        lba.checked_mul(u64::from(self.device.logical))
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))
    }
}

impl SectorIo for DeviceSectors {
    fn sector_size(&self) -> u64 {
        u64::from(self.device.logical)
    }

    fn sectors(&self) -> u64 {
        self.device.size / u64::from(self.device.logical.max(1))
    }

    fn read(&mut self, lba: u64, buf: &mut [u8]) -> io::Result<()> {
        self.check_len(buf.len())?;
        let at = self.offset(lba)?;
        let aligned = &mut self.buf.as_mut_slice()[..buf.len()];
        if self.device.read(aligned, at)? < buf.len() {
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        buf.copy_from_slice(aligned);
        Ok(())
    }

    fn write(&mut self, lba: u64, data: &[u8]) -> io::Result<()> {
        self.check_len(data.len())?;
        let at = self.offset(lba)?;
        let aligned = &mut self.buf.as_mut_slice()[..data.len()];
        aligned.copy_from_slice(data);
        self.device
            .write(aligned, at, Durability::Plain)
            .map(|_| ())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.device.flush().map(|_| ())
    }
}

/// The journal file: created new, its header durable before the first save.
pub struct JournalSaver<'a> {
    dir: &'a LogDir,
    file: LogFile,
}

impl<'a> JournalSaver<'a> {
    /// Creates the journal at `dir`'s name for `header`'s device.
    pub fn create(dir: &'a LogDir, header: &Header) -> io::Result<JournalSaver<'a>> {
        let mut file = dir.create_new(
            "it may hold another probe's saved sectors: run `disktriage restore --capacity` \
             with it, or name another file",
            // Copies of the disk's data: readable by root alone.
            0o600,
        )?;
        file.append_bytes_durably(&journal::header(header))?;
        Ok(JournalSaver { dir, file })
    }
}

impl Saver for JournalSaver<'_> {
    fn save(&mut self, lba: u64, data: &[u8]) -> io::Result<()> {
        self.file.append_bytes_durably(&journal::record(lba, data))
    }

    fn done(&mut self) -> io::Result<()> {
        self.dir.remove()
    }
}
