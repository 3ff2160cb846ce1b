//! The power-cut check's records: what `--record` writes to the device and how `--verify`
//! reads a slot back. Pure: bytes in, bytes out.
//!
//! A record is `len` bytes (at least 4096 and a multiple of the logical block size), in
//! 512-byte sectors. Sector 0 starts with the header (magic, format version, record length,
//! run id, sequence number); every later sector starts with the run id and the sequence
//! number again, so a write torn at any sector boundary (the start old, the rest new, or the
//! reverse) still shows that part of the slot belongs to this run. The rest is a payload
//! derived from (run id, seq, position), and the last 4 bytes are a CRC-32 over everything
//! before them: a record is valid only when every byte is the one written.
//!
//! Records go to a ring of `slots` slots at the start of the device; record `seq` goes to
//! slot `seq % slots`.

use crate::model::units::splitmix64;

/// The first 8 bytes of every record.
pub const MAGIC: &[u8; 8] = b"DTFLUSH\x01";
/// The record format version.
pub const VERSION: u32 = 1;
/// The smallest record, and the size with 512- or 4096-byte blocks.
pub const MIN_RECORD: u32 = 4096;
/// The ring's region at the device start, unless the device is smaller.
pub const DEFAULT_REGION: u64 = 64 << 20;
/// The stamp repeated at the start of every sector after the first.
const SECTOR: usize = 512;
const HEADER: usize = 32;
const STAMP: usize = 16;

/// The record length for a logical block size; refused if absurd.
pub fn record_len(logical: u32) -> Result<u32, String> {
    if logical == 0 || !logical.is_power_of_two() || logical > (1 << 20) {
        return Err(format!(
            "the device reports a logical block size of {logical} bytes"
        ));
    }
    Ok(logical.max(MIN_RECORD))
}

/// The ring's slots on a device of `size` bytes (`None`: not one fits).
pub fn slots_for(size: u64, len: u32) -> Option<u64> {
    let region = size.min(DEFAULT_REGION);
    let slots = region / u64::from(len);
    (slots > 0).then_some(slots)
}

/// The slot of record `seq` in a ring of `slots` slots.
pub fn slot_of(seq: u64, slots: u64) -> u64 {
    seq % slots.max(1)
}

/// What a slot read back holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// A whole record of this run.
    Valid { seq: u64 },
    /// A whole record of another run (an older `--record` on this device).
    OtherRun { run: u64 },
    /// A record of this run, not whole; `seq` as the slot's header names it.
    Torn { seq: Option<u64> },
    /// Nothing of a record: zeros, or data this check never wrote.
    Empty,
    /// The slot could not be read (the words of the error).
    Unreadable(String),
}

/// Fills `buf` (one record long) with record `seq` of `run`.
pub fn encode(buf: &mut [u8], run: u64, seq: u64) {
    let len = buf.len();
    let mut state = splitmix64(run ^ splitmix64(seq));
    for (i, chunk) in buf.chunks_mut(8).enumerate() {
        state = splitmix64(state.wrapping_add(i as u64));
        let bytes = state.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    buf[0..8].copy_from_slice(MAGIC);
    buf[8..12].copy_from_slice(&VERSION.to_le_bytes());
    buf[12..16].copy_from_slice(&(len as u32).to_le_bytes());
    buf[16..24].copy_from_slice(&run.to_le_bytes());
    buf[24..32].copy_from_slice(&seq.to_le_bytes());
    let mut at = SECTOR;
    while at + STAMP <= len.saturating_sub(4) {
        buf[at..at + 8].copy_from_slice(&run.to_le_bytes());
        buf[at + 8..at + 16].copy_from_slice(&seq.to_le_bytes());
        at += SECTOR;
    }
    let crc = crc32fast::hash(&buf[..len - 4]);
    buf[len - 4..].copy_from_slice(&crc.to_le_bytes());
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&buf[at..at + 4]);
    u32::from_le_bytes(b)
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Reads a slot's bytes back as run `run` would have left them.
pub fn decode(buf: &[u8], run: u64) -> Slot {
    let len = buf.len();
    if len < HEADER + 4 || len < SECTOR {
        return Slot::Empty;
    }
    // Later sectors carrying this run's stamp: part of the slot is ours.
    let mut stamped: Option<u64> = None;
    let mut at = SECTOR;
    while at + STAMP <= len - 4 {
        if u64_at(buf, at) == run {
            stamped = Some(u64_at(buf, at + 8));
            break;
        }
        at += SECTOR;
    }
    if &buf[0..8] != MAGIC {
        return match stamped {
            Some(seq) => Slot::Torn { seq: Some(seq) },
            None => Slot::Empty,
        };
    }
    let header_run = u64_at(buf, 16);
    let header_seq = u64_at(buf, 24);
    let whole = u32_at(buf, 8) == VERSION
        && u32_at(buf, 12) as usize == len
        && crc32fast::hash(&buf[..len - 4]) == u32_at(buf, len - 4);
    if whole && header_run != run {
        return Slot::OtherRun { run: header_run };
    }
    if whole {
        // The payload must still be (run, seq)'s: a checksum alone is never trusted.
        let mut expected = vec![0u8; len];
        encode(&mut expected, run, header_seq);
        if expected == buf {
            return Slot::Valid { seq: header_seq };
        }
        return Slot::Torn {
            seq: Some(header_seq),
        };
    }
    if header_run == run {
        return Slot::Torn {
            seq: Some(header_seq),
        };
    }
    match stamped {
        Some(seq) => Slot::Torn { seq: Some(seq) },
        // A damaged record of another run: nothing of this run is there.
        None => Slot::Empty,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(len: usize, run: u64, seq: u64) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        encode(&mut buf, run, seq);
        buf
    }

    #[test]
    fn a_record_reads_back_as_itself() {
        for len in [4096usize, 8192, 65536] {
            let buf = record(len, 7, 42);
            assert_eq!(decode(&buf, 7), Slot::Valid { seq: 42 });
        }
    }

    #[test]
    fn records_of_two_sequence_numbers_differ_everywhere() {
        let a = record(4096, 7, 1);
        let b = record(4096, 7, 2);
        // Every sector differs, so a sector left over from another record is seen.
        for (x, y) in a.chunks(512).zip(b.chunks(512)) {
            assert_ne!(x, y);
        }
    }

    #[test]
    fn another_run_is_told_apart() {
        let buf = record(4096, 8, 42);
        assert_eq!(decode(&buf, 7), Slot::OtherRun { run: 8 });
    }

    #[test]
    fn zeros_and_foreign_data_are_empty() {
        assert_eq!(decode(&[0u8; 4096], 7), Slot::Empty);
        assert_eq!(decode(&[0xa5u8; 4096], 7), Slot::Empty);
    }

    #[test]
    fn a_torn_write_is_torn_whichever_part_is_new() {
        let old = record(4096, 7, 1);
        let new = record(4096, 7, 1 + 16);
        // The first sector new, the rest old (of this run).
        let mut torn = old.clone();
        torn[..512].copy_from_slice(&new[..512]);
        assert_eq!(decode(&torn, 7), Slot::Torn { seq: Some(17) });
        // The first sector old, the rest new.
        let mut torn = new.clone();
        torn[..512].copy_from_slice(&old[..512]);
        assert_eq!(decode(&torn, 7), Slot::Torn { seq: Some(1) });
        // The first sector zeros (never written), the rest this run's.
        let mut torn = new.clone();
        torn[..512].fill(0);
        assert_eq!(decode(&torn, 7), Slot::Torn { seq: Some(17) });
        // Only the last sector written over zeros.
        let mut torn = vec![0u8; 4096];
        torn[3584..].copy_from_slice(&new[3584..]);
        assert_eq!(decode(&torn, 7), Slot::Torn { seq: Some(17) });
        // Over another run's record: this run's part is seen.
        let mut torn = record(4096, 9, 3);
        torn[..2048].copy_from_slice(&new[..2048]);
        assert_eq!(decode(&torn, 7), Slot::Torn { seq: Some(17) });
    }

    #[test]
    fn one_flipped_bit_anywhere_is_torn() {
        let good = record(4096, 7, 5);
        for at in [0usize, 9, 13, 20, 30, 100, 600, 4000, 4093] {
            let mut bad = good.clone();
            bad[at] ^= 1;
            assert_ne!(decode(&bad, 7), Slot::Valid { seq: 5 }, "byte {at}");
        }
        let mut bad = good.clone();
        bad[700] ^= 0x10;
        assert_eq!(decode(&bad, 7), Slot::Torn { seq: Some(5) });
    }

    #[test]
    fn a_record_of_another_length_is_not_valid() {
        let buf = record(8192, 7, 5);
        assert_ne!(decode(&buf[..4096], 7), Slot::Valid { seq: 5 });
    }

    #[test]
    fn the_ring_uses_64_mib_or_the_whole_small_device() {
        assert_eq!(slots_for(1 << 40, 4096), Some(16384));
        assert_eq!(slots_for(10 * 4096 + 100, 4096), Some(10));
        assert_eq!(slots_for(4095, 4096), None);
        assert_eq!(slots_for(0, 4096), None);
        assert_eq!(slot_of(16385, 16384), 1);
        assert_eq!(record_len(512), Ok(4096));
        assert_eq!(record_len(4096), Ok(4096));
        assert_eq!(record_len(8192), Ok(8192));
        assert!(record_len(0).is_err());
        assert!(record_len(520).is_err());
    }
}
