//! The sector a probe writes and what reading one back shows. A stamp names its run and its
//! LBA, so a read that returns another sector's stamp tells which sector the device really
//! stored there (a wrap), and the rest is derived from both, so an old or half-written
//! sector never passes: the last 4 bytes are a CRC-32 of everything before them.

use crate::model::units::splitmix64;

/// The first 8 bytes of every stamped sector.
pub const MAGIC: &[u8; 8] = b"DTCAPAC\x01";
/// Magic, run, LBA.
const HEADER: usize = 24;
const CRC: usize = 4;

/// What one sector read back holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// This run's stamp of this LBA.
    Stamp(u64),
    /// Anything else: zeros, old data, another run's stamp, a torn sector.
    Other,
}

/// Writes `lba`'s stamp for `run` into `sector` (at least 32 bytes).
pub fn fill(sector: &mut [u8], run: u64, lba: u64) {
    let len = sector.len();
    if len < HEADER + CRC {
        return;
    }
    sector[..8].copy_from_slice(MAGIC);
    sector[8..16].copy_from_slice(&run.to_le_bytes());
    sector[16..24].copy_from_slice(&lba.to_le_bytes());
    let mut state = splitmix64(run ^ splitmix64(lba));
    for chunk in sector[HEADER..len - CRC].chunks_mut(8) {
        state = splitmix64(state);
        let bytes = state.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    let crc = crc32fast::hash(&sector[..len - CRC]);
    sector[len - CRC..].copy_from_slice(&crc.to_le_bytes());
}

/// Fills every sector of `buf` with the stamps of the LBAs from `first`.
pub fn fill_all(buf: &mut [u8], sector_size: usize, run: u64, first: u64) {
    for (i, sector) in buf.chunks_mut(sector_size.max(1)).enumerate() {
        fill(sector, run, first + i as u64);
    }
}

/// What `sector` holds: `run`'s stamp only when every byte is right.
pub fn read(sector: &[u8], run: u64) -> Seen {
    let len = sector.len();
    if len < HEADER + CRC || &sector[..8] != MAGIC || sector[8..16] != run.to_le_bytes() {
        return Seen::Other;
    }
    let mut lba = [0u8; 8];
    lba.copy_from_slice(&sector[16..24]);
    let lba = u64::from_le_bytes(lba);
    let mut expected = vec![0u8; len];
    fill(&mut expected, run, lba);
    if expected == sector {
        Seen::Stamp(lba)
    } else {
        Seen::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_reads_back_as_its_lba_only_whole_and_of_its_run() {
        let mut s = vec![0u8; 512];
        fill(&mut s, 7, 123_456);
        assert_eq!(read(&s, 7), Seen::Stamp(123_456));
        assert_eq!(read(&s, 8), Seen::Other, "another run's stamp");
        let mut torn = s.clone();
        torn[300] ^= 1;
        assert_eq!(read(&torn, 7), Seen::Other);
        assert_eq!(read(&[0u8; 512], 7), Seen::Other);
        let mut other = vec![0u8; 512];
        fill(&mut other, 7, 123_457);
        assert_ne!(other, s, "two LBAs differ beyond their header");
        assert_ne!(other[24..508], s[24..508]);
    }

    #[test]
    fn fill_all_stamps_consecutive_lbas_in_4096_byte_sectors() {
        let mut buf = vec![0u8; 3 * 4096];
        fill_all(&mut buf, 4096, 1, 10);
        let seen: Vec<Seen> = buf.chunks(4096).map(|s| read(s, 1)).collect();
        assert_eq!(seen, [Seen::Stamp(10), Seen::Stamp(11), Seen::Stamp(12)]);
    }
}
