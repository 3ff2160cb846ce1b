//! SMART health as plain data: what a drive reported (`SmartReading`, one variant per source),
//! the verdict disktriage draws from it (`SmartHealth`), and a smartctl report saved to a file
//! (`SavedReport`: the report, the drive's identity and its logs). The parsers that fill these
//! live in `crate::smart`; the rules that judge them in `crate::smart::verdict`.

use std::fmt;

use serde::{Serialize, Serializer};

use super::device::Transport;
use super::drivelog::DriveLogs;

/// The one-word health verdict of a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    Passed,
    Warning,
    Failed,
    /// No health data could be read.
    Unavailable,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Passed => "PASSED",
            Verdict::Warning => "WARNING",
            Verdict::Failed => "FAILED",
            Verdict::Unavailable => "not available",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(match self {
            Verdict::Unavailable => "UNAVAILABLE",
            other => other.as_str(),
        })
    }
}

/// One reason behind a WARNING or FAILED verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// `Warning` or `Failed`.
    pub severity: Verdict,
    pub text: String,
}

/// One device's health: verdict, reasons, and the data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SmartHealth {
    pub device: String,
    pub transport: Transport,
    /// Where the data came from ("ATA SMART", "smartctl").
    pub source: String,
    pub verdict: Verdict,
    /// Why the verdict is WARNING or FAILED; empty when PASSED.
    pub findings: Vec<Finding>,
    /// Why no health data is available (only with `Verdict::Unavailable`).
    pub unavailable_reason: Option<String>,
    pub temperature_c: Option<i64>,
    pub power_on_hours: Option<u64>,
    pub ata: Option<AtaSmart>,
    pub nvme: Option<NvmeHealth>,
    /// SCSI: the grown defect list's length, where smartctl read it.
    pub scsi_grown_defects: Option<u64>,
    /// Observations that do not change the verdict.
    pub notes: Vec<String>,
}

/// What a device returned, before judging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SmartReading {
    Ata(AtaSmart),
    Nvme(NvmeHealth),
    Smartctl(Box<SmartctlReport>),
    /// Nothing to read; the reason is shown to the admin.
    Unavailable {
        reason: String,
    },
}

/// The answer to ATA SMART RETURN STATUS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AtaSmartStatus {
    /// LBA mid/high came back 0x4F/0xC2.
    Good,
    /// LBA mid/high came back 0xF4/0x2C: the drive predicts its own failure.
    Failing,
    /// Registers missing or meaningless (some USB bridges); judge by attributes.
    Unknown,
}

/// ATA SMART read natively.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AtaSmart {
    pub smart_supported: bool,
    pub smart_enabled: bool,
    pub status: AtaSmartStatus,
    /// Detail about the status answer (a half answer, a missing register set).
    pub status_note: Option<String>,
    pub attributes: Vec<AtaAttribute>,
    /// Why the attribute table is missing or incomplete.
    pub attribute_problem: Option<String>,
    /// What the attributes' meaning depends on (`crate::smart::meaning`).
    pub drive: AtaDrive,
}

/// The drive an attribute table came from, as far as its meaning depends on it: SSDs reuse
/// hard-disk ids under other meanings, vendors pack raw values their own way, and a sector
/// count above the drive's sectors cannot be true.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AtaDrive {
    /// The model string (IDENTIFY words 27-46, or smartctl's "Device Model").
    pub model: Option<String>,
    /// `Some(true)`: the drive says it does not rotate (IDENTIFY word 217 = 1).
    pub solid_state: Option<bool>,
    /// The drive's addressable logical sectors.
    pub sectors: Option<u64>,
}

/// An attribute against its threshold (smartmontools' `ata_get_attr_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AttributeState {
    Ok,
    /// The drive gave no threshold, or 0 (never fails).
    NoThreshold,
    /// value <= threshold now.
    FailingNow,
    /// worst <= threshold: it failed at some time in the past.
    FailedInPast,
}

impl AttributeState {
    /// smartctl's WHEN_FAILED column: "now", "past" or empty.
    pub fn when_failed(self) -> &'static str {
        match self {
            AttributeState::FailingNow => "now",
            AttributeState::FailedInPast => "past",
            _ => "",
        }
    }
}

/// One row of the ATA SMART attribute table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AtaAttribute {
    pub id: u8,
    /// smartmontools' default name, or "Unknown_Attribute".
    pub name: String,
    /// False for vendor-specific attributes: shown raw, never judged.
    pub known: bool,
    pub flags: u16,
    /// Flags bit 0: failing predicts failure (not age).
    pub prefailure: bool,
    pub value: u8,
    pub worst: u8,
    pub threshold: Option<u8>,
    /// The 48-bit raw value, little-endian as the drive stores it.
    pub raw: u64,
    /// The raw value in words, where its layout is known ("31 C").
    pub decoded: Option<String>,
    /// The raw value as smartctl printed it; `None` for tables read natively.
    pub raw_text: Option<String>,
    pub state: AttributeState,
}

/// The NVMe SMART / Health Information log (log page 0x02), decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NvmeHealth {
    pub critical_warning: u8,
    /// The names of the set critical-warning bits.
    pub critical_warnings: Vec<String>,
    /// Composite temperature in Kelvin as reported (0 = not reported).
    pub temperature_kelvin: u16,
    pub available_spare_pct: u8,
    pub available_spare_threshold_pct: u8,
    pub percentage_used: u8,
    /// In units of 1000 blocks of 512 bytes, as the log counts them.
    #[serde(serialize_with = "u128_as_number")]
    pub data_units_read: u128,
    #[serde(serialize_with = "u128_as_number")]
    pub data_units_written: u128,
    #[serde(serialize_with = "u128_as_number")]
    pub host_read_commands: u128,
    #[serde(serialize_with = "u128_as_number")]
    pub host_write_commands: u128,
    #[serde(serialize_with = "u128_as_number")]
    pub controller_busy_minutes: u128,
    #[serde(serialize_with = "u128_as_number")]
    pub power_cycles: u128,
    #[serde(serialize_with = "u128_as_number")]
    pub power_on_hours: u128,
    #[serde(serialize_with = "u128_as_number")]
    pub unsafe_shutdowns: u128,
    #[serde(serialize_with = "u128_as_number")]
    pub media_errors: u128,
    #[serde(serialize_with = "u128_as_number")]
    pub error_log_entries: u128,
    pub warning_temp_minutes: u32,
    pub critical_temp_minutes: u32,
    /// Temperature sensors 1-8 in Kelvin; absent ones are left out.
    pub temperature_sensors_kelvin: Vec<(u8, u16)>,
}

/// Plausible drive temperatures, Celsius; outside is a broken sensor.
pub const PLAUSIBLE_CELSIUS: std::ops::RangeInclusive<i64> = -40..=125;

/// JSON numbers above 2^64 do not occur; saturate rather than fail.
fn u128_as_number<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(*v).unwrap_or(u64::MAX))
}

impl NvmeHealth {
    /// The composite temperature in degrees Celsius, if reported and plausible.
    pub fn temperature_c(&self) -> Option<i64> {
        (self.temperature_kelvin != 0)
            .then(|| i64::from(self.temperature_kelvin) - 273)
            .filter(|c| PLAUSIBLE_CELSIUS.contains(c))
    }

    /// Data units (1000 x 512 bytes) to bytes.
    pub fn units_to_bytes(units: u128) -> u128 {
        units.saturating_mul(512_000)
    }
}

/// What `smartctl -j -a` said, reduced to what the verdict needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SmartctlReport {
    /// smartctl's version ("7.3").
    pub version: Option<String>,
    pub exit_status: i32,
    /// `smart_status.passed`; absent when smartctl could not tell.
    pub passed: Option<bool>,
    /// `smart_support.available`.
    pub smart_available: Option<bool>,
    pub protocol: Option<String>,
    pub temperature_c: Option<i64>,
    pub power_on_hours: Option<u64>,
    /// SCSI: grown defect list length.
    pub scsi_grown_defects: Option<u64>,
    /// SCSI: the informational-exception string when failing.
    pub scsi_ie_string: Option<String>,
    pub ata: Option<AtaSmart>,
    pub nvme: Option<NvmeHealth>,
    /// smartctl's own messages (errors and warnings it printed).
    pub messages: Vec<String>,
}

/// Who the drive of a smartctl report is, as smartctl names it. Apart from `SmartctlReport`:
/// the verdict needs none of it, a saved report's triage all of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SmartctlIdentity {
    /// smartctl's drive database family ("Seagate Barracuda 7200.14 (AF)").
    pub model_family: Option<String>,
    /// ATA "Device Model", NVMe "Model Number", SCSI vendor and product.
    pub model: Option<String>,
    pub serial: Option<String>,
    /// The WWN as sysfs spells it (`naa.`, `eui.`).
    pub wwn: Option<String>,
    pub firmware: Option<String>,
    pub capacity_bytes: Option<u64>,
    pub logical_block_size: Option<u32>,
    /// `Some(0)`: "Solid State Device".
    pub rotation_rpm: Option<u32>,
    /// "3.5 inches", "M.2".
    pub form_factor: Option<String>,
    /// NVMe: the warning composite temperature (WCTEMP), Celsius.
    pub warning_temperature_c: Option<i64>,
}

/// How a saved smartctl report was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SavedFormat {
    /// `smartctl -x` or `-a` text.
    Text,
    /// `smartctl -j`.
    Json,
}

/// A smartctl report read back from a file (ATA's transport is `Sata`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedReport {
    pub format: SavedFormat,
    pub transport: Transport,
    pub identity: SmartctlIdentity,
    pub report: SmartctlReport,
    pub logs: DriveLogs,
    /// What the report says of the drive's fitness (SCT ERC, zones, TRIM, FARM).
    pub fitness: super::fitness::DriveFitness,
}
