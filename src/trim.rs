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
    /// "ATA IDENTIFY word 69 (RZAT)", "SCSI LBPRZ", "NVMe DLFEAT 1".
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
            (false, false) => Claim::new(Promise::Nothing, "ATA IDENTIFY word 69"),
        }
    }

    /// From SCSI's LBPRZ bit.
    pub fn from_scsi_lbprz(lbprz: bool) -> Claim {
        let promise = if lbprz {
            Promise::Zeros
        } else {
            Promise::Nothing
        };
        Claim::new(promise, "SCSI LBPRZ")
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
    /// Part of the pattern and part not, or something else: this many bytes still the
    /// pattern's.
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
        let still = now.iter().zip(pattern).filter(|(a, b)| a == b).count();
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
                "discard accepted, data still there ({} promises nothing else)",
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
        Readback::Mixed { still } => format!("mixed data ({still} bytes still the old)"),
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
                "discard works, reads zeros as SCSI LBPRZ says".into()
            )
        );
        let (v, s) = judge(&zeros, seen_old);
        assert_eq!(v, Verdict::Broken);
        assert!(
            s.starts_with("claims zeros (SCSI LBPRZ), returns old data"),
            "{s}"
        );
        assert_eq!(
            judge(&none, seen_old).1,
            "discard accepted, data still there (SCSI LBPRZ promises nothing else)"
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
}
