//! NVMe: the admin commands used here (Identify Controller, Get/Set Features Volatile Write
//! Cache, Get Log Page SMART/Health) as plain values, and the pages they return.
//!
//! Offsets: the NVMe base specification, as nvme-cli's `nvme-types-base.h` has them; see
//! design/device-interfaces.md, section 4.

use super::{PageError, le_uint, le16};
use crate::model::NvmeHealth;

pub const OP_GET_LOG_PAGE: u8 = 0x02;
pub const OP_IDENTIFY: u8 = 0x06;
pub const OP_SET_FEATURES: u8 = 0x09;
pub const OP_GET_FEATURES: u8 = 0x0A;
pub const OP_DEVICE_SELF_TEST: u8 = 0x14;
pub const FEATURE_VWC: u32 = 0x06;
pub const LOG_SMART: u32 = 0x02;
pub const LOG_ERROR: u32 = 0x01;
pub const LOG_SELF_TEST: u32 = 0x06;
/// One Error Information log entry; the Device Self-test log.
pub const ERROR_ENTRY_LEN: usize = 64;
pub const SELF_TEST_LOG_LEN: usize = 564;
/// Error log entries disktriage reads at most (the log keeps up to 256).
pub const MAX_ERROR_ENTRIES: usize = 64;
/// Device Self-test command codes (CDW10 bits 3:0).
pub const STC_SHORT: u32 = 0x1;
pub const STC_EXTENDED: u32 = 0x2;
pub const STC_ABORT: u32 = 0xF;
/// "All namespaces": the controller-wide health log.
pub const NSID_ALL: u32 = 0xFFFF_FFFF;
pub const IDENTIFY_LEN: usize = 4096;
pub const HEALTH_LOG_LEN: usize = 512;

/// Get Features' SEL field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Select {
    Current = 0,
    /// Bit 0 saveable, bit 1 namespace specific, bit 2 changeable.
    Capabilities = 3,
}

/// One admin command, before it becomes `struct nvme_passthru_cmd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdminCommand {
    pub name: &'static str,
    pub opcode: u8,
    pub nsid: u32,
    pub cdw10: u32,
    pub cdw11: u32,
    /// Bytes the controller sends back (0: none).
    pub data_len: u32,
}

impl AdminCommand {
    pub const fn identify_controller() -> Self {
        AdminCommand {
            name: "Identify Controller",
            opcode: OP_IDENTIFY,
            nsid: 0,
            cdw10: 1, // CNS 1
            cdw11: 0,
            data_len: IDENTIFY_LEN as u32,
        }
    }

    /// Identify Namespace: byte 33 (DLFEAT) says what deallocated blocks read.
    pub const fn identify_namespace(nsid: u32) -> Self {
        AdminCommand {
            name: "Identify Namespace",
            opcode: OP_IDENTIFY,
            nsid,
            cdw10: 0, // CNS 0
            cdw11: 0,
            data_len: IDENTIFY_LEN as u32,
        }
    }

    pub const fn get_write_cache(sel: Select) -> Self {
        AdminCommand {
            name: "Get Features (Volatile Write Cache)",
            opcode: OP_GET_FEATURES,
            nsid: 0,
            cdw10: FEATURE_VWC | ((sel as u32) << 8),
            cdw11: 0,
            data_len: 0,
        }
    }

    pub const fn set_write_cache(enabled: bool) -> Self {
        AdminCommand {
            name: "Set Features (Volatile Write Cache)",
            opcode: OP_SET_FEATURES,
            nsid: 0,
            // SV (bit 31) clear: not saved across power cycles.
            cdw10: FEATURE_VWC,
            cdw11: enabled as u32,
            data_len: 0,
        }
    }

    /// Get Log Page of `len` bytes (a multiple of 4) of log `lid`.
    pub const fn get_log_page(name: &'static str, lid: u32, len: usize) -> Self {
        AdminCommand {
            name,
            opcode: OP_GET_LOG_PAGE,
            nsid: NSID_ALL,
            // NUMDL (bits 31:16): dwords - 1; enough for the logs read here (< 256 KiB).
            cdw10: lid | ((((len as u32) / 4).saturating_sub(1) & 0xFFFF) << 16),
            cdw11: 0,
            data_len: len as u32,
        }
    }

    /// Get Log Page Error Information, `entries` entries of 64 bytes.
    pub const fn error_log(entries: usize) -> Self {
        Self::get_log_page(
            "Get Log Page (Error Information)",
            LOG_ERROR,
            entries * ERROR_ENTRY_LEN,
        )
    }

    /// Get Log Page Device Self-test.
    pub const fn self_test_log() -> Self {
        Self::get_log_page(
            "Get Log Page (Device Self-test)",
            LOG_SELF_TEST,
            SELF_TEST_LOG_LEN,
        )
    }

    /// Device Self-test with code `STC_*`, on every namespace.
    pub const fn device_self_test(code: u32) -> Self {
        AdminCommand {
            name: "Device Self-test",
            opcode: OP_DEVICE_SELF_TEST,
            nsid: NSID_ALL,
            cdw10: code,
            cdw11: 0,
            data_len: 0,
        }
    }

    pub const fn smart_log() -> Self {
        AdminCommand {
            name: "Get Log Page (SMART / Health Information)",
            opcode: OP_GET_LOG_PAGE,
            nsid: NSID_ALL,
            // LID 0x02, NUMDL = 512/4 - 1 in bits 31:16.
            cdw10: LOG_SMART | (((HEALTH_LOG_LEN as u32 / 4) - 1) << 16),
            cdw11: 0,
            data_len: HEALTH_LOG_LEN as u32,
        }
    }
}

/// What Identify Controller says, as far as this program needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvmeController {
    pub serial: String,
    pub model: String,
    pub firmware: String,
    /// Warning and critical temperature thresholds, Kelvin (0: none).
    pub warning_temp_kelvin: u16,
    pub critical_temp_kelvin: u16,
    /// Optional NVM Command Support; bit 4: Get Features' SEL.
    pub oncs: u16,
    /// VWC byte 525 bit 0: a volatile write cache is present.
    pub vwc_present: bool,
    /// Optional Admin Command Support (256); bit 4: Device Self-test.
    pub oacs: u16,
    /// Error Log Page Entries, 0's based: the log holds `elpe + 1`.
    pub elpe: u8,
    /// Extended Device Self-test Time (316), minutes.
    pub edstt_minutes: u16,
}

impl NvmeController {
    /// Get Features with SEL is implemented.
    pub fn supports_select(&self) -> bool {
        self.oncs & 0x0010 != 0
    }

    /// The Device Self-test command is implemented (OACS bit 4).
    pub fn supports_self_test(&self) -> bool {
        self.oacs & 0x0010 != 0
    }

    /// Error Information entries worth reading (at most `MAX_ERROR_ENTRIES`).
    pub fn error_entries(&self) -> usize {
        (usize::from(self.elpe) + 1).min(MAX_ERROR_ENTRIES)
    }
}

const IDENTIFY: &str = "NVMe Identify Controller page";
const HEALTH: &str = "NVMe SMART/Health log";

/// Parses the 4096-byte Identify Controller data structure.
pub fn parse_identify_controller(page: &[u8]) -> Result<NvmeController, PageError> {
    if page.len() < IDENTIFY_LEN {
        return Err(PageError::short(IDENTIFY, IDENTIFY_LEN, page.len()));
    }
    if page[..IDENTIFY_LEN].iter().all(|&b| b == 0) {
        return Err(PageError::new(IDENTIFY, "all zero"));
    }
    let text =
        |r: std::ops::Range<usize>| crate::model::text::clean_text(&page[r]).unwrap_or_default();
    Ok(NvmeController {
        serial: text(4..24),
        model: text(24..64),
        firmware: text(64..72),
        warning_temp_kelvin: le16(page, 266),
        critical_temp_kelvin: le16(page, 268),
        oncs: le16(page, 520),
        vwc_present: page[525] & 0x01 != 0,
        oacs: le16(page, 256),
        elpe: page[262],
        edstt_minutes: le16(page, 316),
    })
}

/// The critical-warning bits' names (NVMe 2.0 figure 207, smartctl's words).
pub const CRITICAL_WARNING_BITS: [&str; 6] = [
    "available spare below threshold",
    "temperature above or below threshold",
    "reliability degraded",
    "media in read-only mode",
    "volatile memory backup device failed",
    "persistent memory region unreliable",
];

/// WCTEMP (Kelvin) in degrees Celsius, if plausible: 0 K is "not reported", and a threshold
/// outside 40-125 C would call every drive hot or none, so it is not judged.
pub fn plausible_warning_c(kelvin: i64) -> Option<i64> {
    let c = kelvin - 273;
    (kelvin > 0 && (40..=125).contains(&c)).then_some(c)
}

pub fn critical_warning_names(bits: u8) -> Vec<String> {
    CRITICAL_WARNING_BITS
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, name)| (*name).to_string())
        .collect()
}

/// Parses the 512-byte SMART / Health Information log.
pub fn parse_health_log(page: &[u8]) -> Result<NvmeHealth, PageError> {
    if page.len() < HEALTH_LOG_LEN {
        return Err(PageError::short(HEALTH, HEALTH_LOG_LEN, page.len()));
    }
    let critical_warning = page[0];
    if critical_warning & 0xC0 != 0 {
        return Err(PageError::new(
            HEALTH,
            format!("reserved critical-warning bits set (0x{critical_warning:02x})"),
        ));
    }
    let u128_at = |off| le_uint(page, off, 16);
    let temperature_sensors_kelvin = (0..8u8)
        .map(|i| (i + 1, le16(page, 200 + 2 * usize::from(i))))
        .filter(|(_, k)| *k != 0)
        .collect();
    Ok(NvmeHealth {
        critical_warning,
        critical_warnings: critical_warning_names(critical_warning),
        temperature_kelvin: le16(page, 1),
        available_spare_pct: page[3],
        available_spare_threshold_pct: page[4],
        percentage_used: page[5],
        data_units_read: u128_at(32),
        data_units_written: u128_at(48),
        host_read_commands: u128_at(64),
        host_write_commands: u128_at(80),
        controller_busy_minutes: u128_at(96),
        power_cycles: u128_at(112),
        power_on_hours: u128_at(128),
        unsafe_shutdowns: u128_at(144),
        media_errors: u128_at(160),
        error_log_entries: u128_at(176),
        warning_temp_minutes: le_uint(page, 192, 4) as u32,
        critical_temp_minutes: le_uint(page, 196, 4) as u32,
        temperature_sensors_kelvin,
    })
}

/// The status field an NVMe passthrough ioctl returns (> 0), in words.
pub fn describe_status(status: u32) -> String {
    let sc = status & 0xff;
    let sct = (status >> 8) & 0x7;
    let dnr = status & 0x4000 != 0;
    let what = match (sct, sc) {
        (0, 0x01) => "Invalid Command Opcode",
        (0, 0x02) => "Invalid Field in Command",
        (0, 0x0B) => "Invalid Namespace or Format",
        (0, 0x06) => "Internal Error",
        (1, 0x09) => "Invalid Log Page",
        (1, 0x0D) => "Feature Identifier Not Saveable",
        (1, 0x0E) => "Feature Not Changeable",
        (1, 0x0F) => "Feature Not Namespace Specific",
        (1, 0x1D) => "Device Self-test in Progress",
        (2, 0x80) => "Write Fault",
        (2, 0x81) => "Unrecovered Read Error",
        (2, 0x82) => "End-to-end Guard Check Error",
        (2, 0x86) => "Access Denied",
        _ => "unlisted status",
    };
    format!(
        "NVMe status 0x{status:04x} (type {sct}, code 0x{sc:02x}: {what}{})",
        if dnr { ", do not retry" } else { "" }
    )
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_warning_temperature_outside_40_to_125_c_is_not_judged() {
        assert_eq!(plausible_warning_c(0), None);
        assert_eq!(
            plausible_warning_c(273),
            None,
            "0 C would call every drive hot"
        );
        assert_eq!(plausible_warning_c(65535), None);
        assert_eq!(plausible_warning_c(343), Some(70));
    }

    use super::*;

    #[test]
    fn command_dwords() {
        let c = AdminCommand::smart_log();
        assert_eq!(
            (c.opcode, c.nsid, c.cdw10, c.data_len),
            (2, NSID_ALL, 0x007F_0002, 512)
        );
        let c = AdminCommand::get_write_cache(Select::Current);
        assert_eq!((c.opcode, c.cdw10), (0x0A, 0x06));
        assert_eq!(
            AdminCommand::get_write_cache(Select::Capabilities).cdw10,
            0x306
        );
        let c = AdminCommand::set_write_cache(true);
        assert_eq!((c.opcode, c.cdw10, c.cdw11), (0x09, 0x06, 1));
        assert_eq!(AdminCommand::set_write_cache(false).cdw11, 0);
        let c = AdminCommand::identify_controller();
        assert_eq!((c.opcode, c.cdw10, c.data_len), (0x06, 1, 4096));
    }

    #[test]
    fn synthetic_health_log_offsets() {
        let mut p = [0u8; 512];
        p[0] = 0x05;
        p[1..3].copy_from_slice(&300u16.to_le_bytes());
        p[3] = 90;
        p[4] = 10;
        p[5] = 101;
        p[32] = 7;
        p[48..50].copy_from_slice(&0x1234u16.to_le_bytes());
        p[128] = 42;
        p[144] = 3;
        p[160] = 2;
        p[63] = 1; // top byte of data_units_written
        p[202..204].copy_from_slice(&310u16.to_le_bytes());
        let h = parse_health_log(&p).unwrap();
        assert_eq!(
            h.critical_warnings,
            ["available spare below threshold", "reliability degraded"]
        );
        assert_eq!(h.temperature_kelvin, 300);
        assert_eq!(h.temperature_c(), Some(27));
        assert_eq!(
            (h.available_spare_pct, h.available_spare_threshold_pct),
            (90, 10)
        );
        assert_eq!(h.percentage_used, 101);
        assert_eq!(h.data_units_read, 7);
        assert_eq!(h.data_units_written, (1u128 << 120) | 0x1234);
        assert_eq!(h.power_on_hours, 42);
        assert_eq!(h.unsafe_shutdowns, 3);
        assert_eq!(h.media_errors, 2);
        assert_eq!(h.temperature_sensors_kelvin, [(2, 310)]);
    }

    #[test]
    fn implausible_composite_temperature_is_unknown() {
        // 512 K and 0xFFFF K are garbage (found by parser_props.rs); -40 C and 125 C show.
        let with_kelvin = |k: u16| {
            let mut p = [0u8; 512];
            p[1..3].copy_from_slice(&k.to_le_bytes());
            parse_health_log(&p).unwrap().temperature_c()
        };
        assert_eq!(with_kelvin(512), None);
        assert_eq!(with_kelvin(0xFFFF), None);
        assert_eq!(with_kelvin(1), None);
        assert_eq!(with_kelvin(0), None);
        assert_eq!(with_kelvin(233), Some(-40));
        assert_eq!(with_kelvin(398), Some(125));
    }

    #[test]
    fn truncated_and_garbage() {
        assert!(parse_health_log(&[]).is_err());
        assert!(parse_health_log(&[0u8; 511]).is_err());
        assert!(parse_health_log(&[0xffu8; 512]).is_err());
        assert!(parse_identify_controller(&[0u8; 4095]).is_err());
        assert!(parse_identify_controller(&[0u8; 4096]).is_err());
        // Garbage of the right size parses to something, in bounds.
        let c = parse_identify_controller(&[0x41u8; 4096]).unwrap();
        assert!(c.vwc_present);
        assert_eq!(c.model, "A".repeat(40));
    }

    #[test]
    fn status_words() {
        let s = describe_status(0x4002);
        assert!(
            s.contains("Invalid Field in Command") && s.contains("do not retry"),
            "{s}"
        );
        assert!(describe_status(0x10E).contains("Feature Not Changeable"));
        assert!(describe_status(0x7ff).contains("unlisted"));
    }
}
