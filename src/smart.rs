//! Pure codecs for what drives send and answer: ATA PASS-THROUGH(16) command blocks, IDENTIFY,
//! SMART data and threshold pages, SCSI sense data and the caching mode page, NVMe Identify
//! Controller and the SMART/Health log, the drives' error and self-test logs (`ata_log`,
//! `nvme_log`), `smartctl -j` JSON, and the health verdict drawn from them.
//!
//! Everything here works on byte slices and returns plain data from `crate::model`; nothing
//! touches a device, so tests feed captured pages (`tests/fixtures/pages/`), hand-made ones and
//! garbage alike. Short or malformed input is an error (`PageError`), never a panic.

pub mod ata;
pub mod ata_log;
pub mod nvme;
pub mod nvme_log;
pub mod scsi;
pub mod sense;
pub mod smartctl;
pub mod verdict;

/// A page or answer that does not have the expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {problem}")]
pub struct PageError {
    /// Which page ("SMART READ DATA page").
    pub what: &'static str,
    pub problem: String,
}

impl PageError {
    pub fn new(what: &'static str, problem: impl Into<String>) -> Self {
        PageError {
            what,
            problem: problem.into(),
        }
    }

    /// The error for a page shorter than it must be.
    pub fn short(what: &'static str, need: usize, got: usize) -> Self {
        PageError::new(what, format!("{got} bytes, need at least {need}"))
    }
}

/// Little-endian u16 at `off`; the caller has checked the length.
fn le16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

/// Little-endian integer of up to 16 bytes at `off`; the caller has checked the length.
fn le_uint(b: &[u8], off: usize, len: usize) -> u128 {
    b[off..off + len]
        .iter()
        .rev()
        .fold(0u128, |acc, &byte| (acc << 8) | u128::from(byte))
}
