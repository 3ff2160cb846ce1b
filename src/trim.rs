//! Does a discard (TRIM, UNMAP, Deallocate) do what the device claims? Pure: what the device
//! claims, what a range read back after a discard holds, and the sentence that compares them.
//! The check itself (save a scratch range, write a pattern, flush, discard, read back, put the
//! range back) runs through `sys`.
//!
//! The claims a drive makes about a discarded block:
//! - ATA: IDENTIFY word 69 bit 14 (DRAT: a read after TRIM is deterministic) and bit 5 (RZAT:
//!   it returns zeros).
//! - SCSI: LBPRZ (READ CAPACITY(16) byte 14 bit 6; VPD page B2h): an unmapped block reads as
//!   zeros.
//! - NVMe: DLFEAT (Identify Namespace byte 33, bits 2:0): 1 reads zeros, 2 reads all ones.
//!
//! The kernel sends discards only where `queue/discard_max_bytes` is above 0.

/// What a deallocated block reads as, by the device's own word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Promise {
    /// Zeros (ATA RZAT, SCSI LBPRZ, NVMe DLFEAT 1).
    Zeros,
    /// All ones (NVMe DLFEAT 2).
    Ones,
    /// The same data each time, not said which (ATA DRAT without RZAT).
    Deterministic,
    /// Nothing promised.
    Nothing,
}

/// The device's claim, and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub promise: Promise,
    /// "ATA IDENTIFY word 69 (RZAT)", "SCSI LBPRZ 1", "NVMe DLFEAT 1"; for no claim, why
    /// ("no drive to ask: a loop device").
    pub source: String,
}

impl Claim {
    /// From ATA IDENTIFY word 69.
    pub fn from_ata_word69(word: u16) -> Claim {
        let drat = word & (1 << 14) != 0;
        let rzat = word & (1 << 5) != 0;
        match (drat, rzat) {
            (_, true) => Claim::new(Promise::Zeros, "ATA IDENTIFY word 69 (RZAT)"),
            (true, false) => Claim::new(Promise::Deterministic, "ATA IDENTIFY word 69 (DRAT)"),
            (false, false) => Claim::new(
                Promise::Nothing,
                "ATA IDENTIFY word 69 (neither RZAT nor DRAT)",
            ),
        }
    }

    /// From SCSI's LBPRZ bit.
    pub fn from_scsi_lbprz(lbprz: bool) -> Claim {
        if lbprz {
            Claim::new(Promise::Zeros, "SCSI LBPRZ 1")
        } else {
            Claim::new(Promise::Nothing, "SCSI LBPRZ 0")
        }
    }

    /// From NVMe Identify Namespace byte 33 (DLFEAT).
    pub fn from_nvme_dlfeat(dlfeat: u8) -> Claim {
        let value = dlfeat & 0x7;
        let promise = match value {
            1 => Promise::Zeros,
            2 => Promise::Ones,
            _ => Promise::Nothing,
        };
        Claim::new(promise, &format!("NVMe DLFEAT {value}"))
    }

    /// No claim: nothing that speaks for the device says (a loop device, null_blk), or it
    /// could not be asked; `source` says which.
    pub fn none(source: &str) -> Claim {
        Claim::new(Promise::Nothing, source)
    }

    fn new(promise: Promise, source: &str) -> Claim {
        Claim {
            promise,
            source: source.to_string(),
        }
    }
}

/// What the scratch range holds after the discard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readback {
    Zeros,
    Ones,
    /// The pattern written before the discard, every byte.
    Unchanged,
    /// Part of the pattern and part not, or something else: this many bytes (of whole
    /// 512-byte blocks) still the pattern's.
    Mixed {
        still: usize,
    },
}

/// Classifies `now`, the range read after the discard, against `pattern`, what was written.
pub fn classify(now: &[u8], pattern: &[u8]) -> Readback {
    if now.iter().all(|&b| b == 0) {
        Readback::Zeros
    } else if now.iter().all(|&b| b == 0xff) {
        Readback::Ones
    } else if now == pattern {
        Readback::Unchanged
    } else {
        // Whole 512-byte blocks: a byte of other data that happens to equal the
        // pattern's is no block kept.
        let still = now
            .chunks(512)
            .zip(pattern.chunks(512))
            .filter(|(a, b)| a == b)
            .map(|(a, _)| a.len())
            .sum();
        Readback::Mixed { still }
    }
}

/// The check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It reads as promised (or as zeros where nothing was promised).
    Works,
    /// Discard accepted, the data still there, and nothing was promised: not a fault.
    Kept,
    /// It promised zeros (or ones) and returned otherwise: a finding.
    Broken,
}

/// The verdict and its sentence: "discard works, reads zeros", "discard accepted, data still
/// there", "claims zeroes, returns old data".
pub fn judge(claim: &Claim, seen: Readback) -> (Verdict, String) {
    let promised = match claim.promise {
        Promise::Zeros => Some(Readback::Zeros),
        Promise::Ones => Some(Readback::Ones),
        Promise::Deterministic | Promise::Nothing => None,
    };
    match (promised, seen) {
        (Some(p), s) if p == s => (
            Verdict::Works,
            format!("discard works, reads {} as {} says", words(s), claim.source),
        ),
        (Some(p), Readback::Unchanged) => (
            Verdict::Broken,
            format!(
                "claims {} ({}), returns old data: a file system or RAID that relies on it \
                 reads stale blocks",
                words(p),
                claim.source
            ),
        ),
        (Some(p), s) => (
            Verdict::Broken,
            format!("claims {} ({}), reads {}", words(p), claim.source, words(s)),
        ),
        (None, Readback::Unchanged) => (
            Verdict::Kept,
            format!(
                "discard accepted, data still there (nothing promised otherwise: {})",
                claim.source
            ),
        ),
        (None, Readback::Mixed { still }) if still > 0 => (
            Verdict::Kept,
            format!(
                "discard accepted, part of the data still there: {} (nothing promised \
                 otherwise: {})",
                words(seen),
                claim.source
            ),
        ),
        (None, s) => (Verdict::Works, format!("discard works, reads {}", words(s))),
    }
}

fn words(r: Readback) -> String {
    match r {
        Readback::Zeros => "zeros".into(),
        Readback::Ones => "all ones".into(),
        Readback::Unchanged => "the old data".into(),
        Readback::Mixed { still: 0 } => "other data (neither zeros nor the old)".into(),
        Readback::Mixed { still } => format!("mixed data ({still} bytes still the old)"),
    }
}

/// What the kernel says about a device's discards, in bytes (read by `sys::discard`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DiscardLimits {
    /// `queue/discard_max_bytes`: 0 when the kernel sends the device no discards.
    pub max_bytes: u64,
    /// `queue/discard_granularity`: the unit the device discards in.
    pub granularity: u64,
    /// `discard_alignment`: where the first whole granule starts.
    pub alignment: u64,
    /// `queue/write_zeroes_max_bytes`: whether it takes WRITE ZEROES (not judged).
    pub write_zeroes_max: u64,
}

/// How a check ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrimEnd {
    /// The kernel sends the device no discards (`discard_max_bytes` 0): nothing written.
    NoDiscard,
    /// No scratch range fits (the device too small, a granule too large): nothing written.
    NoRange(String),
    /// The kernel says it discards, and the discard failed (the error's words).
    Refused(String),
    /// The range read back after the discard, and the verdict.
    Judged {
        seen: Readback,
        verdict: Verdict,
        sentence: String,
    },
    /// Stopped (a signal) before the verdict.
    Stopped,
    /// Failed before the verdict (why).
    Failed(String),
}

/// How much the check writes, unless the granularity asks for more.
pub const SCRATCH_BYTES: u64 = 4 << 20;
/// The most it writes: a granularity larger than this is not tested.
pub const MAX_SCRATCH: u64 = 64 << 20;

/// The range the check saves, writes, discards and puts back, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scratch {
    pub offset: u64,
    pub len: u64,
}

/// The scratch range of a device of `size` bytes: `want` bytes rounded up to whole discard
/// granules, near the middle, starting on a granule (`offset % granularity == alignment`),
/// so that a device that discards only whole granules can discard all of it. `Err` says why
/// there is none.
pub fn scratch_range(
    size: u64,
    logical: u64,
    granularity: u64,
    alignment: u64,
    want: u64,
) -> Result<Scratch, String> {
    let logical = logical.max(1);
    // Checked before the arithmetic: both come from sysfs.
    let granule = if granularity > MAX_SCRATCH || logical > MAX_SCRATCH {
        u64::MAX
    } else {
        lcm(granularity.max(1), logical)
    };
    if granule > MAX_SCRATCH {
        return Err(format!(
            "its discard granularity ({granularity} bytes) is larger than the {} MiB the check \
             writes at most",
            MAX_SCRATCH >> 20
        ));
    }
    let len = if want > MAX_SCRATCH {
        granule
    } else {
        want.max(1).div_ceil(granule) * granule
    };
    let len = if len > MAX_SCRATCH { granule } else { len };
    // On whole logical sectors, whatever sysfs says.
    let alignment = alignment % granule / logical * logical;
    let start = size.saturating_sub(len) / 2;
    let offset = if start < alignment {
        alignment
    } else {
        (start - alignment) / granule * granule + alignment
    };
    if offset.checked_add(len).is_none_or(|end| end > size) {
        return Err(format!(
            "it holds {size} bytes, too few for a scratch range of {len} bytes on its \
             {granule}-byte discard granules"
        ));
    }
    Ok(Scratch { offset, len })
}

fn lcm(a: u64, b: u64) -> u64 {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

/// Fills `buf`, the bytes at `offset` of the scratch range, with the run's pattern: every
/// 8 bytes a mix of the run and the place, so it is neither zeros nor all ones nor what
/// was there before.
pub fn fill_pattern(buf: &mut [u8], run: u64, offset: u64) {
    for (i, word) in buf.chunks_mut(8).enumerate() {
        let mut z = run ^ offset.wrapping_add(8 * i as u64);
        // splitmix64's finaliser: a change of one bit anywhere changes every byte.
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let bytes = (z | 0x0101_0101_0101_0101).to_le_bytes();
        word.copy_from_slice(&bytes[..word.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_claims_are_read_from_each_transports_bits() {
        assert_eq!(Claim::from_ata_word69(0x4020).promise, Promise::Zeros);
        assert_eq!(
            Claim::from_ata_word69(0x4000).promise,
            Promise::Deterministic
        );
        assert_eq!(Claim::from_ata_word69(0).promise, Promise::Nothing);
        assert_eq!(Claim::from_scsi_lbprz(true).promise, Promise::Zeros);
        assert_eq!(Claim::from_nvme_dlfeat(0x09).promise, Promise::Zeros);
        assert_eq!(Claim::from_nvme_dlfeat(0x02).promise, Promise::Ones);
        assert_eq!(Claim::from_nvme_dlfeat(0x08).source, "NVMe DLFEAT 0");
    }

    #[test]
    fn each_readback_against_each_claim_says_the_issues_words() {
        let pattern = vec![0x5au8; 4096];
        let zeros = Claim::from_scsi_lbprz(true);
        let none = Claim::from_scsi_lbprz(false);
        let seen_zeros = classify(&[0u8; 4096], &pattern);
        let seen_old = classify(&pattern, &pattern);
        assert_eq!(
            judge(&zeros, seen_zeros),
            (
                Verdict::Works,
                "discard works, reads zeros as SCSI LBPRZ 1 says".into()
            )
        );
        let (v, s) = judge(&zeros, seen_old);
        assert_eq!(v, Verdict::Broken);
        assert!(
            s.starts_with("claims zeros (SCSI LBPRZ 1), returns old data"),
            "{s}"
        );
        assert_eq!(
            judge(&none, seen_old).1,
            "discard accepted, data still there (nothing promised otherwise: SCSI LBPRZ 0)"
        );
        assert_eq!(
            judge(&none, seen_zeros),
            (Verdict::Works, "discard works, reads zeros".into())
        );
        let mut half = pattern.clone();
        half[..2048].fill(0);
        assert_eq!(classify(&half, &pattern), Readback::Mixed { still: 2048 });
        assert_eq!(judge(&zeros, classify(&half, &pattern)).0, Verdict::Broken);
    }

    #[test]
    fn the_scratch_range_is_in_the_middle_on_whole_granules() {
        let gib = 1u64 << 30;
        let r = scratch_range(gib, 512, 4096, 0, SCRATCH_BYTES).expect("a range");
        assert_eq!(
            r,
            Scratch {
                offset: (gib - SCRATCH_BYTES) / 2,
                len: SCRATCH_BYTES
            }
        );
        // A 3 MiB granule: 6 MiB written, starting 1 MiB past a multiple of 3 MiB.
        let g = 3 << 20;
        let r = scratch_range(gib, 4096, g, 1 << 20, SCRATCH_BYTES).expect("a range");
        assert_eq!(r.len, 2 * g);
        assert_eq!(r.offset % g, 1 << 20);
        assert!(r.offset + r.len <= gib && r.offset > gib / 4);
        // Granularity 0 or below a sector means the sector.
        assert_eq!(
            scratch_range(gib, 4096, 0, 0, 5000).expect("a range").len,
            8192
        );
        let err = scratch_range(gib, 512, 128 << 20, 0, SCRATCH_BYTES).expect_err("too big");
        assert!(err.contains("granularity (134217728 bytes)"), "{err}");
        for (logical, granularity) in [(512, u64::MAX), (u64::MAX, 512), (u64::MAX, u64::MAX)] {
            assert!(scratch_range(u64::MAX, logical, granularity, u64::MAX, u64::MAX).is_err());
        }
        let r = scratch_range(u64::MAX, 512, 4096, u64::MAX, u64::MAX).expect("a range");
        assert_eq!(r.len, 4096, "a want past the most is one granule");
        assert_eq!(
            r.offset % 512,
            0,
            "an alignment off the sector is rounded down"
        );
        let err = scratch_range(3 << 20, 512, 4096, 0, SCRATCH_BYTES).expect_err("too small");
        assert!(err.starts_with("it holds 3145728 bytes"), "{err}");
        assert_eq!(
            scratch_range(4 << 20, 512, 4096, 0, SCRATCH_BYTES),
            Ok(Scratch {
                offset: 0,
                len: 4 << 20
            })
        );
    }

    #[test]
    fn the_pattern_is_neither_zeros_nor_ones_and_differs_by_run_and_place() {
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        fill_pattern(&mut a, 1, 0);
        fill_pattern(&mut b, 2, 0);
        assert_ne!(a, b);
        assert!(a.iter().all(|&x| x != 0));
        assert_eq!(classify(&a, &a), Readback::Unchanged);
        assert_ne!(classify(&a, &b), Readback::Zeros);
        let mut c = vec![0u8; 4096];
        fill_pattern(&mut c, 1, 4096);
        assert_ne!(a, c);
        assert_eq!(
            judge(&Claim::none("a loop device"), classify(&a, &b)).1,
            "discard works, reads other data (neither zeros nor the old)"
        );
    }
}
