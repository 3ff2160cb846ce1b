//! The probe's journal: every range of sectors as it was before the probe wrote it, appended
//! (and made durable by the caller) before that write. After a crash or a power cut,
//! `restore` writes the ranges back last first, as the probe itself does. Pure: bytes in,
//! bytes out; the file is `sys::capacity`'s.
//!
//! Layout: the header (`MAGIC`, the device's name, `dev_t`, diskseq, sector size, run id,
//! CRC-32), then records of `lba`, byte length, the bytes and a CRC-32 of all three. A record
//! cut short or with a wrong CRC ends the journal: the probe writes a range only after its
//! record is whole on disk, so a torn last record was never written over.

use std::collections::HashSet;

use super::{SectorIo, stamp};

/// The first 8 bytes of a journal.
pub const MAGIC: &[u8; 8] = b"DTCAPJ\x00\x01";
/// The longest device name kept.
const MAX_NAME: usize = 255;
/// The longest range a record holds (the probe's are 1 MiB at most).
const MAX_RECORD: u64 = 64 << 20;

/// Whose sectors a journal holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The kernel name at the time (`sdb`).
    pub device: String,
    /// `dev_t` as (major, minor).
    pub dev: (u32, u32),
    /// The disk's diskseq, 0 when the kernel has none.
    pub diskseq: u64,
    pub sector: u32,
    pub run: u64,
}

/// One saved range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub lba: u64,
    pub data: Vec<u8>,
}

/// A journal as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    pub header: Header,
    pub records: Vec<Record>,
    /// Bytes after the last whole record (a record torn by the crash), ignored.
    pub torn_bytes: usize,
}

/// The header's bytes.
pub fn header(h: &Header) -> Vec<u8> {
    let name = &h.device.as_bytes()[..h.device.len().min(MAX_NAME)];
    let mut out = Vec::with_capacity(48 + name.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(name);
    out.extend_from_slice(&h.dev.0.to_le_bytes());
    out.extend_from_slice(&h.dev.1.to_le_bytes());
    out.extend_from_slice(&h.diskseq.to_le_bytes());
    out.extend_from_slice(&h.sector.to_le_bytes());
    out.extend_from_slice(&h.run.to_le_bytes());
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// One record's bytes.
pub fn record(lba: u64, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + data.len());
    out.extend_from_slice(&lba.to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Reads a journal; `Err` when it is not one (no magic, a bad header).
pub fn parse(bytes: &[u8]) -> Result<Journal, String> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(8) != Some(MAGIC.as_slice()) {
        return Err("not a disktriage capacity journal".into());
    }
    let damaged = || "the journal's header is damaged".to_string();
    let name_len = usize::from(r.u16().ok_or_else(damaged)?);
    let name = r.take(name_len).ok_or_else(damaged)?;
    let device = String::from_utf8_lossy(name).into_owned();
    let dev = (r.u32().ok_or_else(damaged)?, r.u32().ok_or_else(damaged)?);
    let diskseq = r.u64().ok_or_else(damaged)?;
    let sector = r.u32().ok_or_else(damaged)?;
    let run = r.u64().ok_or_else(damaged)?;
    let end = r.at;
    let crc = r.u32().ok_or_else(damaged)?;
    if crc != crc32fast::hash(&bytes[..end]) || sector == 0 {
        return Err(damaged());
    }
    let header = Header {
        device,
        dev,
        diskseq,
        sector,
        run,
    };
    let mut records = Vec::new();
    loop {
        let start = r.at;
        let Some(rec) = r.record(sector) else {
            return Ok(Journal {
                header,
                records,
                torn_bytes: bytes.len() - start,
            });
        };
        records.push(rec);
    }
}

/// What a sector holds after a put-back, against what was saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Back {
    /// What was saved at this LBA.
    AsSaved,
    /// What another LBA stored in the same place saved (a wrap).
    AnotherSaved,
    /// A stamp of the probe's run: not put back.
    Stamp,
    /// Anything else.
    Other,
}

/// Judges `now`, the sector at `lba` after the put-back, against the save.
pub fn judge_back(now: &[u8], was: &[u8], run: u64, saved: &HashSet<&[u8]>) -> Back {
    if now == was {
        Back::AsSaved
    } else if matches!(stamp::read(now, run), stamp::Seen::Stamp(_)) {
        Back::Stamp
    } else if saved.contains(now) {
        Back::AnotherSaved
    } else {
        Back::Other
    }
}

/// How a journal's put-back went.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PutBack {
    /// Sectors written back.
    pub sectors: u64,
    /// Sectors that read back as saved.
    pub as_saved: u64,
    /// Sectors that read back as another saved sector (one place, two LBAs).
    pub shared: u64,
    /// Sectors that read back as neither: a stamp left, or other data (LBAs).
    pub not_back: Vec<u64>,
    /// Why the put-back stopped: the journal is to be kept.
    pub error: Option<String>,
}

/// Writes a journal's records back to `dev`, last saved first, and judges each sector.
pub fn put_back(j: &Journal, dev: &mut dyn SectorIo) -> PutBack {
    let mut out = PutBack::default();
    let sector = u64::from(j.header.sector);
    if dev.sector_size() != sector {
        out.error = Some(format!(
            "the device has {}-byte sectors, the journal {sector}-byte ones",
            dev.sector_size()
        ));
        return out;
    }
    for r in j.records.iter().rev() {
        if let Err(e) = dev.write(r.lba, &r.data) {
            out.error = Some(format!("cannot write sector {} back: {e}", r.lba));
            return out;
        }
        out.sectors += r.data.len() as u64 / sector;
    }
    if let Err(e) = dev.flush() {
        out.error = Some(format!(
            "the device refused the flush after the put-back: {e}"
        ));
        return out;
    }
    let size = sector as usize;
    let saved: HashSet<&[u8]> = j.records.iter().flat_map(|r| r.data.chunks(size)).collect();
    for r in &j.records {
        let mut now = vec![0u8; r.data.len()];
        let read = dev.read(r.lba, &mut now);
        for (i, was) in r.data.chunks(size).enumerate() {
            let lba = r.lba + i as u64;
            let back = match read {
                Ok(()) => judge_back(&now[i * size..][..size], was, j.header.run, &saved),
                Err(_) => Back::Other,
            };
            match back {
                Back::AsSaved => out.as_saved += 1,
                Back::AnotherSaved => out.shared += 1,
                Back::Stamp | Back::Other => out.not_back.push(lba),
            }
        }
    }
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    /// One whole record of whole sectors with its CRC right, or `None`.
    fn record(&mut self, sector: u32) -> Option<Record> {
        let start = self.at;
        let lba = self.u64()?;
        let len = self.u32()?;
        if len == 0 || u64::from(len) > MAX_RECORD || !len.is_multiple_of(sector) {
            return None;
        }
        let data = self.take(len as usize)?.to_vec();
        let end = self.at;
        let crc = self.u32()?;
        (crc == crc32fast::hash(&self.bytes[start..end])).then_some(Record { lba, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header {
            device: "sdb".into(),
            dev: (8, 16),
            diskseq: 9,
            sector: 512,
            run: 77,
        }
    }

    #[test]
    fn a_journal_reads_back_its_records_and_ignores_a_torn_last_one() {
        let mut bytes = header(&sample());
        bytes.extend(record(0, &[1u8; 1024]));
        bytes.extend(record(4096, &[2u8; 512]));
        let whole = parse(&bytes).expect("a journal");
        assert_eq!(whole.header, sample());
        assert_eq!(whole.records.len(), 2);
        assert_eq!(
            whole.records[1],
            Record {
                lba: 4096,
                data: vec![2u8; 512]
            }
        );
        assert_eq!(whole.torn_bytes, 0);
        let third = record(8192, &[3u8; 512]);
        for cut in [1, 12, 300, third.len() - 1] {
            let mut torn = bytes.clone();
            torn.extend_from_slice(&third[..cut]);
            let j = parse(&torn).expect("a journal");
            assert_eq!(j.records.len(), 2, "cut at {cut}");
            assert_eq!(j.torn_bytes, cut);
        }
        let mut flipped = bytes.clone();
        let last = flipped.len() - 10;
        flipped[last] ^= 0x40;
        assert_eq!(parse(&flipped).expect("a journal").records.len(), 1);
    }

    #[test]
    fn a_damaged_or_foreign_header_is_refused() {
        assert!(parse(b"hello").is_err());
        let mut bytes = header(&sample());
        bytes[10] ^= 1;
        assert_eq!(parse(&bytes), Err("the journal's header is damaged".into()));
        assert!(parse(&header(&sample())[..20]).is_err());
    }

    #[test]
    fn a_sector_after_the_put_back_is_judged_against_every_save() {
        let was = vec![5u8; 512];
        let other = vec![6u8; 512];
        let saved: std::collections::HashSet<&[u8]> = [&was[..], &other[..]].into();
        let mut stamped = vec![0u8; 512];
        stamp::fill(&mut stamped, 77, 3);
        assert_eq!(judge_back(&was, &was, 77, &saved), Back::AsSaved);
        assert_eq!(judge_back(&other, &was, 77, &saved), Back::AnotherSaved);
        assert_eq!(judge_back(&stamped, &was, 77, &saved), Back::Stamp);
        assert_eq!(judge_back(&[0u8; 512], &was, 77, &saved), Back::Other);
    }
}
