//! The data write tests write: incompressible random bytes made once per run (or zeros),
//! laid out so the bytes at device offset `o` are always `pattern[o % period]`. Writes come
//! straight from one shared buffer (no fill, no copy), and what a test left on the device can
//! be verified from the seed alone.

use std::io;
use std::sync::Arc;

use crate::bench::plan::{DataKind, splitmix64};
use crate::sys::direct::AlignedBuf;

/// Bytes before the pattern repeats. Every compression unit up to this size is
/// incompressible (zram's 4 KiB pages, btrfs's 128 KiB extents, ZFS records to 1 MiB). A
/// deduplicating device (VDO, ZFS dedup) still sees only 256 distinct 4 KiB blocks: its write
/// figures are not the media's, as with fio's fixed buffers.
///
/// Not more than 1 MiB: a pattern that does not fit the CPU's cache makes each write fetch its
/// bytes from memory. With 8 MiB, 1 MiB writes on a loop device and 4 KiB random writes at QD32
/// on zram ran 3-8 % slower than fio; with 1 MiB they are level (`cargo bench --bench vs_fio`).
pub const PATTERN_PERIOD: usize = 1 << 20;

/// The write data of a run.
#[derive(Debug, Clone)]
pub struct DataPattern {
    buf: Arc<AlignedBuf>,
    kind: DataKind,
}

impl DataPattern {
    /// Builds the pattern for requests up to `max_request` bytes, in huge pages with
    /// `--huge-pages`, else in ordinary pages like a request buffer, so a write from it is as many
    /// pieces for the kernel as dd's and fio's.
    pub fn new(kind: DataKind, max_request: usize, huge_pages: bool) -> io::Result<DataPattern> {
        if kind.rewrites() {
            // A rewrite's data is the block's own: a pattern would be a way to write it wrong.
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a rewrite of existing data has no write pattern",
            ));
        }
        // period + max_request, so every request is one contiguous slice; a request longer
        // than the period (up to 256 MiB) reads several repeats.
        let len = PATTERN_PERIOD
            .checked_add(max_request)
            .ok_or_else(|| io::Error::new(io::ErrorKind::OutOfMemory, "write pattern too large"))?;
        let mut buf = if huge_pages {
            AlignedBuf::zeroed_huge_pages(len)?
        } else {
            AlignedBuf::for_requests(len, false)?
        };
        if let DataKind::Random { seed } = kind {
            let bytes = buf.as_mut_slice();
            for (i, chunk) in bytes[..PATTERN_PERIOD].chunks_exact_mut(8).enumerate() {
                chunk.copy_from_slice(&splitmix64(seed ^ (i as u64)).to_le_bytes());
            }
            let mut filled = PATTERN_PERIOD;
            while filled < bytes.len() {
                let n = PATTERN_PERIOD.min(bytes.len() - filled);
                bytes.copy_within(..n, filled);
                filled += n;
            }
        }
        Ok(DataPattern {
            buf: Arc::new(buf),
            kind,
        })
    }

    pub fn kind(&self) -> DataKind {
        self.kind
    }

    /// Where in the shared buffer the data for a write at `device_offset` starts.
    pub fn start_for(&self, device_offset: u64) -> usize {
        (device_offset % PATTERN_PERIOD as u64) as usize
    }

    /// The bytes a write of `len` at `device_offset` puts on the device.
    pub fn expected(&self, device_offset: u64, len: usize) -> &[u8] {
        let start = self.start_for(device_offset);
        &self.buf.as_slice()[start..start + len]
    }

    /// The shared buffer, for registering with io_uring.
    pub fn shared(&self) -> Arc<AlignedBuf> {
        Arc::clone(&self.buf)
    }

    /// Largest request the buffer can serve.
    pub fn max_request(&self) -> usize {
        self.buf.len() - PATTERN_PERIOD
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_data_is_periodic_and_reproducible() {
        let a = DataPattern::new(DataKind::Random { seed: 9 }, 1 << 20, false).unwrap();
        let b = DataPattern::new(DataKind::Random { seed: 9 }, 4096, false).unwrap();
        assert_eq!(a.expected(12288, 4096), b.expected(12288, 4096));
        // Wraps: the block at period-2048 continues with the first bytes.
        let end = (PATTERN_PERIOD - 2048) as u64;
        let wrapped = a.expected(end, 4096);
        assert_eq!(&wrapped[2048..], a.expected(0, 2048));
        assert_eq!(
            a.expected(PATTERN_PERIOD as u64 + 512, 512),
            a.expected(512, 512)
        );
        // Incompressible enough: no byte value dominates.
        let mut counts = [0u32; 256];
        for &x in a.expected(0, 1 << 20) {
            counts[x as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| c > 3000 && c < 5200),
            "{:?}",
            &counts[..8]
        );
    }

    #[test]
    fn requests_larger_than_the_period_repeat_it_at_the_right_phase() {
        // The largest request a plan accepts is 256 MiB; 32 MiB is four periods.
        let big = 32 << 20;
        let p = DataPattern::new(DataKind::Random { seed: 5 }, big, false).unwrap();
        assert_eq!(p.max_request(), big);
        let one_period = p.expected(0, PATTERN_PERIOD).to_vec();
        // Whatever the offset, byte i of a write at o is pattern[(o + i) mod period].
        for offset in [
            0u64,
            4096,
            (PATTERN_PERIOD as u64) - 512,
            3 * (1 << 20) + 512,
        ] {
            let data = p.expected(offset, big);
            assert_eq!(data.len(), big);
            for i in (0..big).step_by(4093).chain([big - 1]) {
                let phase = (offset as usize + i) % PATTERN_PERIOD;
                assert_eq!(data[i], one_period[phase], "offset {offset}, byte {i}");
            }
        }
        let z = DataPattern::new(DataKind::Zeros, big, false).unwrap();
        assert!(z.expected(512, big).iter().all(|&x| x == 0));
    }

    #[test]
    fn a_rewrite_has_no_pattern_to_write() {
        assert!(DataPattern::new(DataKind::Rewrite, 4096, false).is_err());
        assert_eq!(
            serde_json::to_string(&DataKind::Rewrite).unwrap(),
            r#"{"kind":"rewrite"}"#
        );
    }

    #[test]
    fn zeros_are_zeros() {
        let z = DataPattern::new(DataKind::Zeros, 4096, false).unwrap();
        assert!(z.expected(123 * 512, 4096).iter().all(|&x| x == 0));
        assert_eq!(z.max_request(), 4096);
    }
}
