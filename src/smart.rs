//! Pure codecs for what drives send and answer: ATA PASS-THROUGH(16) command blocks, IDENTIFY,
//! SMART data and threshold pages, SCSI sense data and the caching mode page, NVMe Identify
//! Controller and the SMART/Health log, the drives' error and self-test logs (`ata_log`,
//! `nvme_log`), `smartctl -j` JSON and `smartctl -x`/`-a` text (`smartctl_text`; either one
//! saved to a file: `saved`), a drive's fitness for an array (`fitness`: SCT Error Recovery
//! Control, zones, TRIM, FARM), and the health verdict drawn from them.
//!
//! Everything here works on byte slices and returns plain data from `crate::model`; nothing
//! touches a device, so tests feed captured pages (`tests/fixtures/pages/`), hand-made ones and
//! garbage alike. Short or malformed input is an error (`PageError`), never a panic.

pub mod ata;
pub mod ata_log;
pub mod fitness;
pub mod meaning;
pub mod nvme;
pub mod nvme_log;
pub mod saved;
pub mod scsi;
pub mod sense;
pub mod smartctl;
pub mod smartctl_text;
pub mod verdict;

// The library's surface (docs/development.md): `disktriage::smart::Item`.
pub use ata::{
    attribute_table, decode_raw, parse_identify, parse_smart_data, parse_smart_thresholds,
    smart_status,
};
pub use ata_log::{
    decode_self_test_status, parse_ext_error_log, parse_ext_self_test_log, parse_self_test_log,
    parse_summary_error_log, self_test_status,
};
pub use fitness::{fitness_of_json, fitness_of_text};
pub use meaning::{Count, Meaning, Reading, meaning_of, read as read_by_meaning};
pub use nvme::{SELF_TEST_LOG_LEN, describe_status, parse_health_log, parse_identify_controller};
pub use nvme_log::{
    parse_error_log, parse_self_test_log as parse_nvme_self_test_log,
    self_test_status as nvme_self_test_status,
};
pub use saved::{parse_saved_report, parse_saved_report_bytes, report_text};
pub use scsi::{build_caching_select, parse_caching_page};
pub use sense::{AtaOutcome, AtaRegisters, ScsiOutcome, ata_outcome, parse_sense, scsi_outcome};
pub use smartctl::{parse_smartctl_identity, parse_smartctl_json, parse_smartctl_logs};
pub use smartctl_text::{
    parse_smartctl_text, parse_smartctl_text_identity, parse_smartctl_text_logs,
};
pub use verdict::{assess, judge_logs};

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

/// Little-endian integer of up to 16 bytes at `off` (length checked by the caller).
fn le_uint(b: &[u8], off: usize, len: usize) -> u128 {
    b[off..off + len]
        .iter()
        .rev()
        .fold(0u128, |acc, &byte| (acc << 8) | u128::from(byte))
}
