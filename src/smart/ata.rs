//! ATA: command blocks for ATA PASS-THROUGH(16) (SAT), and the IDENTIFY DEVICE, SMART READ
//! DATA and SMART READ THRESHOLDS pages.
//!
//! Layouts: ACS-3 (IDENTIFY words), smartmontools' `ata_smart_values` /
//! `ata_smart_thresholds_pvt` (SMART pages), hdparm's `sgio.c` (CDB bytes); collected in
//! design/device-interfaces.md, section 2.

use super::{PageError, le16};
use crate::model::{AtaAttribute, AtaSmartStatus, AttributeState};

/// ATA PASS-THROUGH(16) operation code.
pub const ATA_16: u8 = 0x85;
/// Every page here is one 512-byte sector.
pub const SECTOR: usize = 512;

/// ATA command opcodes used here.
pub const OP_IDENTIFY: u8 = 0xEC;
pub const OP_SMART: u8 = 0xB0;
pub const OP_SET_FEATURES: u8 = 0xEF;
pub const OP_FLUSH_CACHE: u8 = 0xE7;
pub const OP_FLUSH_CACHE_EXT: u8 = 0xEA;
/// SMART subcommands (feature register).
pub const SMART_READ_DATA: u8 = 0xD0;
pub const SMART_READ_THRESHOLDS: u8 = 0xD1;
pub const SMART_RETURN_STATUS: u8 = 0xDA;
pub const SMART_EXECUTE_OFFLINE_IMMEDIATE: u8 = 0xD4;
pub const SMART_READ_LOG: u8 = 0xD5;
pub const SMART_WRITE_LOG: u8 = 0xD6;
/// READ LOG EXT (48-bit, General Purpose Logging).
pub const OP_READ_LOG_EXT: u8 = 0x2F;
/// SMART EXECUTE OFF-LINE IMMEDIATE subcommands: self-tests, and abort.
pub const SELF_TEST_SHORT: u8 = 0x01;
pub const SELF_TEST_EXTENDED: u8 = 0x02;
pub const SELF_TEST_ABORT: u8 = 0x7F;
/// SET FEATURES subcommands.
pub const SETFEATURES_WC_ON: u8 = 0x02;
pub const SETFEATURES_WC_OFF: u8 = 0x82;
/// SMART signature in LBA mid/high; a failing drive answers its complement.
const SMART_LBA_MID: u8 = 0x4F;
const SMART_LBA_HIGH: u8 = 0xC2;
const SMART_FAIL_MID: u8 = 0xF4;
const SMART_FAIL_HIGH: u8 = 0x2C;

/// The SAT protocol field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    NonData = 3,
    PioIn = 4,
    PioOut = 5,
}

/// One ATA command, to be sent with ATA PASS-THROUGH(16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtaCommand {
    /// For error messages ("SMART READ DATA").
    pub name: &'static str,
    pub protocol: Protocol,
    /// 48-bit command (EXTEND bit).
    pub extend: bool,
    pub command: u8,
    pub feature: u8,
    pub count: u8,
    pub lba_low: u8,
    pub lba_mid: u8,
    pub lba_high: u8,
    /// CK_COND: return the registers even on success.
    pub check_condition: bool,
}

impl AtaCommand {
    const fn non_data(name: &'static str, command: u8, feature: u8) -> Self {
        AtaCommand {
            name,
            protocol: Protocol::NonData,
            extend: false,
            command,
            feature,
            count: 0,
            lba_low: 0,
            lba_mid: 0,
            lba_high: 0,
            check_condition: true,
        }
    }

    const fn pio_in(name: &'static str, command: u8, feature: u8) -> Self {
        AtaCommand {
            name,
            protocol: Protocol::PioIn,
            extend: false,
            command,
            feature,
            count: 1,
            lba_low: 0,
            lba_mid: 0,
            lba_high: 0,
            check_condition: false,
        }
    }

    pub const fn identify() -> Self {
        Self::pio_in("IDENTIFY DEVICE", OP_IDENTIFY, 0)
    }

    pub const fn smart_read_data() -> Self {
        let mut c = Self::pio_in("SMART READ DATA", OP_SMART, SMART_READ_DATA);
        c.lba_mid = SMART_LBA_MID;
        c.lba_high = SMART_LBA_HIGH;
        c
    }

    pub const fn smart_read_thresholds() -> Self {
        let mut c = Self::pio_in("SMART READ THRESHOLDS", OP_SMART, SMART_READ_THRESHOLDS);
        c.lba_low = 1;
        c.lba_mid = SMART_LBA_MID;
        c.lba_high = SMART_LBA_HIGH;
        c
    }

    pub const fn smart_return_status() -> Self {
        let mut c = Self::non_data("SMART RETURN STATUS", OP_SMART, SMART_RETURN_STATUS);
        c.lba_mid = SMART_LBA_MID;
        c.lba_high = SMART_LBA_HIGH;
        c
    }

    /// SMART READ LOG of `count` sectors of log `address`.
    pub const fn smart_read_log(name: &'static str, address: u8, count: u8) -> Self {
        let mut c = Self::pio_in(name, OP_SMART, SMART_READ_LOG);
        c.count = count;
        c.lba_low = address;
        c.lba_mid = SMART_LBA_MID;
        c.lba_high = SMART_LBA_HIGH;
        c
    }

    /// SMART WRITE LOG of one sector with CK_COND (the SCT ERC query).
    pub const fn smart_write_log(name: &'static str, address: u8) -> Self {
        let mut c = Self::pio_in(name, OP_SMART, SMART_WRITE_LOG);
        c.protocol = Protocol::PioOut;
        c.lba_low = address;
        c.lba_mid = SMART_LBA_MID;
        c.lba_high = SMART_LBA_HIGH;
        c.check_condition = true;
        c
    }

    /// READ LOG EXT of `count` sectors of GP log `address`, from page 0.
    pub const fn read_log_ext(name: &'static str, address: u8, count: u8) -> Self {
        let mut c = Self::pio_in(name, OP_READ_LOG_EXT, 0);
        c.extend = true;
        c.count = count;
        c.lba_low = address;
        c
    }

    /// SMART EXECUTE OFF-LINE IMMEDIATE with a subcommand (`SELF_TEST_*`).
    pub const fn smart_execute(name: &'static str, subcommand: u8) -> Self {
        let mut c = Self::non_data(name, OP_SMART, SMART_EXECUTE_OFFLINE_IMMEDIATE);
        c.lba_low = subcommand;
        c.lba_mid = SMART_LBA_MID;
        c.lba_high = SMART_LBA_HIGH;
        c
    }

    pub const fn set_write_cache(enabled: bool) -> Self {
        if enabled {
            Self::non_data(
                "SET FEATURES (write cache on)",
                OP_SET_FEATURES,
                SETFEATURES_WC_ON,
            )
        } else {
            Self::non_data(
                "SET FEATURES (write cache off)",
                OP_SET_FEATURES,
                SETFEATURES_WC_OFF,
            )
        }
    }

    pub const fn flush_cache_ext() -> Self {
        let mut c = Self::non_data("FLUSH CACHE EXT", OP_FLUSH_CACHE_EXT, 0);
        c.extend = true;
        c
    }

    pub const fn flush_cache() -> Self {
        Self::non_data("FLUSH CACHE", OP_FLUSH_CACHE, 0)
    }

    /// True when the command reads sectors (`data_len` bytes).
    pub fn reads_sector(&self) -> bool {
        self.protocol == Protocol::PioIn
    }

    /// True when the command sends sectors (`data_len` bytes).
    pub fn writes_sector(&self) -> bool {
        self.protocol == Protocol::PioOut
    }

    /// The bytes a data command moves: `count` sectors.
    pub fn data_len(&self) -> usize {
        if self.reads_sector() || self.writes_sector() {
            usize::from(self.count) * SECTOR
        } else {
            0
        }
    }

    /// The 16-byte ATA PASS-THROUGH CDB (SAT-3 12.2.2).
    pub fn cdb(&self) -> [u8; 16] {
        let mut c = [0u8; 16];
        c[0] = ATA_16;
        c[1] = ((self.protocol as u8) << 1) | u8::from(self.extend);
        // T_DIR from device (0x08), BYT_BLOK (0x04), T_LENGTH in the count field (0x02).
        // Data out: T_DIR 0 with BYT_BLOK and T_LENGTH.
        let transfer = match self.protocol {
            Protocol::PioIn => 0x0E,
            Protocol::PioOut => 0x06,
            Protocol::NonData => 0x00,
        };
        c[2] = transfer | if self.check_condition { 0x20 } else { 0 };
        c[4] = self.feature;
        c[6] = self.count;
        c[8] = self.lba_low;
        c[10] = self.lba_mid;
        c[12] = self.lba_high;
        // The LBA bit, as hdparm sets it; libata sets the device bit.
        c[13] = 0x40;
        c[14] = self.command;
        c
    }
}

/// What IDENTIFY DEVICE says, as far as needed here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtaIdentity {
    pub model: String,
    pub serial: String,
    pub firmware: String,
    pub smart_supported: bool,
    pub smart_enabled: bool,
    pub write_cache_supported: bool,
    pub write_cache_enabled: bool,
    /// FLUSH CACHE EXT is available (48-bit feature set valid and supported).
    pub flush_ext_supported: bool,
    /// General Purpose Logging (READ LOG EXT), word 84 bit 5.
    pub gpl_supported: bool,
    /// Highest SATA generation (1: 1.5, 2: 3.0, 3: 6.0 Gb/s).
    pub sata_generation: Option<u8>,
    /// Word 217: `Some(0)` does not rotate, `Some(rpm)`, `None` not reported.
    pub rotation_rpm: Option<u32>,
    /// Addressable logical sectors; `None` when 0.
    pub sectors: Option<u64>,
    /// TRIM, word 169 bit 0: on a rotating disk, a hint of SMR.
    pub trim_supported: bool,
    /// Zoned capabilities, word 69: 1 host-aware, 2 drive-managed.
    pub zoned: Option<crate::model::ZoneModel>,
}

impl AtaIdentity {
    /// What the attribute table's meaning depends on (`crate::smart::meaning`).
    pub fn drive(&self) -> crate::model::AtaDrive {
        crate::model::AtaDrive {
            model: (!self.model.is_empty()).then(|| self.model.clone()),
            solid_state: self.rotation_rpm.map(|rpm| rpm == 0),
            sectors: self.sectors,
        }
    }
}

/// The rotation rate in IDENTIFY word 217 (ACS-3).
pub fn rotation_rpm_of(word217: u16) -> Option<u32> {
    match word217 {
        0x0001 => Some(0),
        0x0401..=0xFFFE => Some(u32::from(word217)),
        _ => None,
    }
}

/// The highest SATA generation in IDENTIFY word 76 (bits 1-3).
pub fn sata_generation_of(word76: u16) -> Option<u8> {
    if word76 == 0 || word76 == 0xFFFF {
        return None;
    }
    (1..=3u8).rev().find(|g| word76 & (1 << g) != 0)
}

const IDENTIFY: &str = "IDENTIFY DEVICE page";

/// A command-set word is valid with bit 14 set and 15 clear.
fn valid_feature_word(w: u16) -> bool {
    w & 0xC000 == 0x4000
}

/// An ATA string: two characters per word, high byte first, space-padded.
fn ata_string(words: &[u16]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    crate::model::text::clean_text(&bytes).unwrap_or_default()
}

/// Parses a 512-byte IDENTIFY DEVICE page.
pub fn parse_identify(page: &[u8]) -> Result<AtaIdentity, PageError> {
    if page.len() < SECTOR {
        return Err(PageError::short(IDENTIFY, SECTOR, page.len()));
    }
    let w: Vec<u16> = (0..256).map(|i| le16(page, 2 * i)).collect();
    if w[0] & 0x8000 != 0 {
        return Err(PageError::new(
            IDENTIFY,
            "word 0 bit 15 set: not an ATA device (ATAPI or garbage)",
        ));
    }
    if w.iter().all(|&x| x == 0) || w.iter().all(|&x| x == 0xFFFF) {
        return Err(PageError::new(IDENTIFY, "all words 0x0000 or 0xFFFF"));
    }
    // Word 255: with signature 0xA5, the page sums to zero.
    if w[255] & 0x00FF == 0x00A5 && page[..SECTOR].iter().fold(0u8, |a, b| a.wrapping_add(*b)) != 0
    {
        return Err(PageError::new(IDENTIFY, "integrity word checksum mismatch"));
    }
    let supported = if valid_feature_word(w[83]) { w[82] } else { 0 };
    let enabled = if valid_feature_word(w[87]) { w[85] } else { 0 };
    let w83 = w[83];
    Ok(AtaIdentity {
        model: ata_string(&w[27..47]),
        serial: ata_string(&w[10..20]),
        firmware: ata_string(&w[23..27]),
        smart_supported: supported & 0x0001 != 0,
        smart_enabled: enabled & 0x0001 != 0,
        write_cache_supported: supported & 0x0020 != 0,
        write_cache_enabled: enabled & 0x0020 != 0,
        // hdparm's `flush_wcache`: word 83 bits 15:13 = 011b.
        flush_ext_supported: w83 & 0xE000 == 0x6000,
        gpl_supported: valid_feature_word(w[84]) && w[84] & 0x0020 != 0,
        sata_generation: sata_generation_of(w[76]),
        rotation_rpm: rotation_rpm_of(w[217]),
        trim_supported: w[169] & 0x0001 != 0,
        zoned: match w[69] & 0x0003 {
            1 => Some(crate::model::ZoneModel::HostAware),
            2 => Some(crate::model::ZoneModel::DriveManaged),
            _ => None,
        },
        sectors: {
            let lba48 = valid_feature_word(w83) && w83 & 0x0400 != 0;
            let count = if lba48 {
                w[100..104]
                    .iter()
                    .rev()
                    .fold(0u64, |acc, &x| (acc << 16) | u64::from(x))
            } else {
                u64::from(w[60]) | (u64::from(w[61]) << 16)
            };
            (count > 0).then_some(count)
        },
    })
}

/// One attribute slot of SMART READ DATA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawAttribute {
    pub id: u8,
    pub flags: u16,
    pub value: u8,
    pub worst: u8,
    pub raw: [u8; 6],
}

/// SMART READ DATA, the parts used here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmartData {
    pub revision: u16,
    pub attributes: Vec<RawAttribute>,
    pub offline_status: u8,
    /// The self-test execution status byte (363): the last or running self-test.
    pub self_test_status: u8,
    /// Byte 367 bit 4: self-tests are implemented.
    pub self_test_supported: bool,
    /// Error logging capability (370) bit 0: the drive keeps an error log.
    pub error_log_supported: bool,
    /// The drive's self-test estimates, in minutes.
    pub short_minutes: u8,
    pub extended_minutes: u16,
}

const DATA: &str = "SMART READ DATA page";
const THRESHOLDS: &str = "SMART READ THRESHOLDS page";

/// The 512 bytes of a SMART page sum to zero modulo 256.
pub(crate) fn check_sum(what: &'static str, page: &[u8]) -> Result<(), PageError> {
    if page.len() < SECTOR {
        return Err(PageError::short(what, SECTOR, page.len()));
    }
    let sum = page[..SECTOR].iter().fold(0u8, |a, b| a.wrapping_add(*b));
    if sum != 0 {
        return Err(PageError::new(
            what,
            format!("checksum mismatch (bytes sum to 0x{sum:02x}, not 0)"),
        ));
    }
    if page[..SECTOR].iter().all(|&b| b == 0) {
        return Err(PageError::new(what, "all zero"));
    }
    Ok(())
}

/// Parses SMART READ DATA: 30 attribute slots and a checksum.
pub fn parse_smart_data(page: &[u8]) -> Result<SmartData, PageError> {
    check_sum(DATA, page)?;
    let attributes = page[2..2 + 30 * 12]
        .chunks_exact(12)
        .filter(|s| s[0] != 0)
        .map(|s| RawAttribute {
            id: s[0],
            flags: le16(s, 1),
            value: s[3],
            worst: s[4],
            raw: [s[5], s[6], s[7], s[8], s[9], s[10]],
        })
        .collect();
    Ok(SmartData {
        revision: le16(page, 0),
        attributes,
        offline_status: page[362],
        self_test_status: page[363],
        self_test_supported: page[367] & 0x10 != 0,
        error_log_supported: page[370] & 0x01 != 0,
        short_minutes: page[372],
        extended_minutes: if page[373] == 0xFF {
            le16(page, 375)
        } else {
            u16::from(page[373])
        },
    })
}

/// Parses SMART READ THRESHOLDS: (id, threshold) pairs.
pub fn parse_smart_thresholds(page: &[u8]) -> Result<Vec<(u8, u8)>, PageError> {
    check_sum(THRESHOLDS, page)?;
    Ok(page[2..2 + 30 * 12]
        .chunks_exact(12)
        .filter(|s| s[0] != 0)
        .map(|s| (s[0], s[1]))
        .collect())
}

/// SMART RETURN STATUS from LBA mid/high (smartmontools' `ataSmartStatus2`).
pub fn smart_status(lba_mid: u8, lba_high: u8) -> (AtaSmartStatus, Option<String>) {
    match (lba_mid, lba_high) {
        (SMART_LBA_MID, SMART_LBA_HIGH) => (AtaSmartStatus::Good, None),
        (SMART_FAIL_MID, SMART_FAIL_HIGH) => (AtaSmartStatus::Failing, None),
        // One register right: some SAT bridges return half of them.
        (SMART_LBA_MID, _) | (_, SMART_LBA_HIGH) => (
            AtaSmartStatus::Good,
            Some(format!(
                "half a SMART status answer (LBA mid/high 0x{lba_mid:02x}/0x{lba_high:02x}), \
                 probably a bridge truncating registers: read as good"
            )),
        ),
        (SMART_FAIL_MID, _) | (_, SMART_FAIL_HIGH) => (
            AtaSmartStatus::Failing,
            Some(format!(
                "half a SMART status answer (LBA mid/high 0x{lba_mid:02x}/0x{lba_high:02x}): \
                 read as failing"
            )),
        ),
        _ => (
            AtaSmartStatus::Unknown,
            Some(format!(
                "SMART RETURN STATUS gave LBA mid/high 0x{lba_mid:02x}/0x{lba_high:02x}, \
                 neither good nor failing"
            )),
        ),
    }
}

/// smartmontools' names for the ids vendors share; others show raw.
pub fn attribute_name(id: u8) -> Option<&'static str> {
    Some(match id {
        1 => "Raw_Read_Error_Rate",
        2 => "Throughput_Performance",
        3 => "Spin_Up_Time",
        4 => "Start_Stop_Count",
        5 => "Reallocated_Sector_Ct",
        7 => "Seek_Error_Rate",
        8 => "Seek_Time_Performance",
        9 => "Power_On_Hours",
        10 => "Spin_Retry_Count",
        11 => "Calibration_Retry_Count",
        12 => "Power_Cycle_Count",
        183 => "Runtime_Bad_Block",
        184 => "End-to-End_Error",
        187 => "Reported_Uncorrect",
        188 => "Command_Timeout",
        189 => "High_Fly_Writes",
        190 => "Airflow_Temperature_Cel",
        191 => "G-Sense_Error_Rate",
        192 => "Power-Off_Retract_Count",
        193 => "Load_Cycle_Count",
        194 => "Temperature_Celsius",
        195 => "Hardware_ECC_Recovered",
        196 => "Reallocated_Event_Count",
        197 => "Current_Pending_Sector",
        198 => "Offline_Uncorrectable",
        199 => "UDMA_CRC_Error_Count",
        200 => "Multi_Zone_Error_Rate",
        240 => "Head_Flying_Hours",
        241 => "Total_LBAs_Written",
        242 => "Total_LBAs_Read",
        _ => return None,
    })
}

/// The 48-bit raw value, little-endian.
pub fn raw48(raw: &[u8; 6]) -> u64 {
    raw.iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// The temperature attributes, most trusted first: 194, then 190.
pub const TEMPERATURE_ATTRIBUTES: [u8; 2] = [194, 190];

/// A temperature byte in Celsius if plausible (1-125; 0 is no sensor).
fn plausible_celsius(byte: u8) -> Option<i64> {
    let t = i64::from(byte);
    (1..=125).contains(&t).then_some(t)
}

/// A temperature from raw byte 0, if plausible.
pub fn raw_temperature(raw: &[u8; 6]) -> Option<i64> {
    plausible_celsius(raw[0])
}

/// Raw byte 0 of the first plausible `TEMPERATURE_ATTRIBUTES` entry (verdict and poller).
pub fn attribute_temperature(attributes: &[AtaAttribute]) -> Option<i64> {
    TEMPERATURE_ATTRIBUTES.iter().find_map(|id| {
        let a = attributes.iter().find(|a| a.id == *id)?;
        plausible_celsius(a.raw.to_le_bytes()[0])
    })
}

/// The raw value in words, for layouts common across vendors.
pub fn decode_raw(id: u8, raw: &[u8; 6]) -> Option<String> {
    let count = raw48(raw);
    match id {
        // Hours in the low 32 bits (minutes and half-minutes not guessed).
        9 => Some(format!(
            "{} h",
            u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]])
        )),
        190 | 194 => {
            let t = raw_temperature(raw)?;
            // Lifetime min/max sit in one of these (low, high) raw byte pairs, in
            // smartmontools' RAWFMT_TEMPMINMAX order (Hitachi, Kingston, Seagate, WDC).
            let minmax = [(2, 4), (4, 2), (2, 3), (1, 2)].iter().find_map(|&(l, h)| {
                let (lo, hi) = (i64::from(raw[l]), i64::from(raw[h]));
                (lo > 0 && lo <= t && t <= hi && hi <= 125).then_some((lo, hi))
            });
            Some(match minmax {
                Some((lo, hi)) => format!("{t} C (min {lo}, max {hi})"),
                None => format!("{t} C"),
            })
        }
        5 | 196 | 197 | 198 => Some(format!("{count} sectors")),
        4 | 12 | 192 | 193 => Some(count.to_string()),
        10 | 11 | 184 | 187 | 188 | 199 => Some(count.to_string()),
        _ => None,
    }
}

/// The attribute table, with each row's state.
pub fn attribute_table(data: &SmartData, thresholds: Option<&[(u8, u8)]>) -> Vec<AtaAttribute> {
    data.attributes
        .iter()
        .map(|a| {
            let threshold = thresholds
                .and_then(|t| t.iter().find(|(id, _)| *id == a.id))
                .map(|(_, t)| *t);
            let state = match threshold {
                None | Some(0) => AttributeState::NoThreshold,
                Some(t) if a.value <= t => AttributeState::FailingNow,
                Some(t) if a.worst <= t => AttributeState::FailedInPast,
                Some(_) => AttributeState::Ok,
            };
            let name = attribute_name(a.id);
            AtaAttribute {
                id: a.id,
                name: name.unwrap_or("Unknown_Attribute").to_string(),
                known: name.is_some(),
                flags: a.flags,
                prefailure: a.flags & 0x0001 != 0,
                value: a.value,
                worst: a.worst,
                threshold,
                raw: raw48(&a.raw),
                raw_text: None,
                decoded: if name.is_some() {
                    decode_raw(a.id, &a.raw)
                } else {
                    None
                },
                state,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdbs_match_the_design_table() {
        // The bytes device-interfaces.md section 2 lists.
        let pick = |c: [u8; 16]| [c[1], c[2], c[4], c[6], c[8], c[10], c[12], c[14]];
        assert_eq!(
            pick(AtaCommand::identify().cdb()),
            [0x08, 0x0E, 0, 1, 0, 0, 0, 0xEC]
        );
        assert_eq!(
            pick(AtaCommand::smart_read_data().cdb()),
            [0x08, 0x0E, 0xD0, 1, 0, 0x4F, 0xC2, 0xB0]
        );
        assert_eq!(
            pick(AtaCommand::smart_read_thresholds().cdb()),
            [0x08, 0x0E, 0xD1, 1, 1, 0x4F, 0xC2, 0xB0]
        );
        // SCT: PIO data-out, CK_COND for the returned registers.
        let sct = AtaCommand::smart_write_log("SCT", 0xE0);
        assert_eq!(
            pick(sct.cdb()),
            [0x0A, 0x26, 0xD6, 1, 0xE0, 0x4F, 0xC2, 0xB0]
        );
        assert_eq!(
            (sct.writes_sector(), sct.reads_sector(), sct.data_len()),
            (true, false, 512)
        );
        assert_eq!(
            pick(AtaCommand::smart_return_status().cdb()),
            [0x06, 0x20, 0xDA, 0, 0, 0x4F, 0xC2, 0xB0]
        );
        assert_eq!(
            pick(AtaCommand::set_write_cache(true).cdb()),
            [0x06, 0x20, 0x02, 0, 0, 0, 0, 0xEF]
        );
        assert_eq!(
            pick(AtaCommand::set_write_cache(false).cdb()),
            [0x06, 0x20, 0x82, 0, 0, 0, 0, 0xEF]
        );
        assert_eq!(
            pick(AtaCommand::flush_cache_ext().cdb()),
            [0x07, 0x20, 0, 0, 0, 0, 0, 0xEA]
        );
        assert_eq!(
            pick(AtaCommand::flush_cache().cdb()),
            [0x06, 0x20, 0, 0, 0, 0, 0, 0xE7]
        );
        let c = AtaCommand::identify().cdb();
        assert_eq!((c[0], c[13]), (0x85, 0x40));
        assert!(AtaCommand::identify().reads_sector());
        assert!(!AtaCommand::smart_return_status().reads_sector());
    }

    #[test]
    fn status_registers() {
        assert_eq!(smart_status(0x4f, 0xc2), (AtaSmartStatus::Good, None));
        assert_eq!(smart_status(0xf4, 0x2c), (AtaSmartStatus::Failing, None));
        assert_eq!(smart_status(0x4f, 0x00).0, AtaSmartStatus::Good);
        assert_eq!(smart_status(0x00, 0x2c).0, AtaSmartStatus::Failing);
        assert_eq!(smart_status(0, 0).0, AtaSmartStatus::Unknown);
    }

    #[test]
    fn raw_decoding() {
        assert_eq!(raw48(&[1, 0, 0, 0, 0, 0]), 1);
        assert_eq!(raw48(&[0, 0, 0, 0, 0, 1]), 1 << 40);
        assert_eq!(
            decode_raw(9, &[0x10, 0x27, 0, 0, 0x55, 0x55]).unwrap(),
            "10000 h"
        );
        assert_eq!(
            decode_raw(194, &[36, 0, 20, 0, 45, 0]).unwrap(),
            "36 C (min 20, max 45)"
        );
        assert_eq!(decode_raw(194, &[36, 0, 0, 0, 0, 0]).unwrap(), "36 C");
        // max below current: not a min/max layout
        assert_eq!(decode_raw(190, &[36, 0, 20, 0, 30, 0]).unwrap(), "36 C");
        assert_eq!(decode_raw(194, &[0, 0, 0, 0, 0, 0]), None);
        // QEMU's 190: 1f 00 1f 1f 00 00 (smartctl: "31 (Min/Max 31/31)").
        assert_eq!(
            decode_raw(190, &[0x1f, 0, 0x1f, 0x1f, 0, 0]).unwrap(),
            "31 C (min 31, max 31)"
        );
        assert_eq!(decode_raw(5, &[12, 0, 0, 0, 0, 0]).unwrap(), "12 sectors");
        assert_eq!(decode_raw(231, &[12, 0, 0, 0, 0, 0]), None);
    }

    /// Attribute rows with only an id and a raw value.
    fn rows(attrs: &[(u8, u64)]) -> Vec<AtaAttribute> {
        attrs
            .iter()
            .map(|&(id, raw)| AtaAttribute {
                id,
                name: attribute_name(id).unwrap_or("Unknown_Attribute").into(),
                known: attribute_name(id).is_some(),
                flags: 0,
                prefailure: false,
                value: 100,
                worst: 100,
                threshold: None,
                raw,
                raw_text: None,
                decoded: None,
                state: AttributeState::NoThreshold,
            })
            .collect()
    }

    #[test]
    fn the_temperature_rule() {
        let t = |attrs: &[(u8, u64)]| attribute_temperature(&rows(attrs));
        assert_eq!(t(&[(194, 36)]), Some(36));
        assert_eq!(t(&[(190, 31)]), Some(31));
        // 194 is trusted first, wherever it sits in the table.
        assert_eq!(t(&[(190, 31), (194, 36)]), Some(36));
        // Only raw byte 0 is the temperature, not min 20 / max 45.
        assert_eq!(t(&[(194, 0x002d_0014_0024)]), Some(36));
        // A 194 without a plausible reading gives way to 190.
        assert_eq!(t(&[(194, 0), (190, 31)]), Some(31));
        assert_eq!(t(&[(194, 126), (190, 31)]), Some(31));
        assert_eq!(
            t(&[(194, 0x100), (190, 31)]),
            Some(31),
            "256 C is byte 0 = 0"
        );
        // The plausible range is 1..=125 C; 0xFF is -1 as a signed byte, not 255 C.
        assert_eq!(t(&[(194, 1)]), Some(1));
        assert_eq!(t(&[(194, 125)]), Some(125));
        assert_eq!(t(&[(194, 0xff)]), None);
        // No temperature attribute, or none plausible: no reading.
        assert_eq!(t(&[(9, 36), (231, 40)]), None);
        assert_eq!(t(&[(194, 0), (190, 0)]), None);
        assert_eq!(t(&[]), None);
    }

    #[test]
    fn identify_trim_and_zoned_capabilities() {
        let mut p = [0u8; 512];
        p[0] = 0x40;
        let id = parse_identify(&p).unwrap();
        assert_eq!((id.trim_supported, id.zoned), (false, None));
        p[2 * 169] = 0x01;
        p[2 * 69] = 0x02;
        let id = parse_identify(&p).unwrap();
        assert_eq!(
            (id.trim_supported, id.zoned),
            (true, Some(crate::model::ZoneModel::DriveManaged))
        );
        p[2 * 69] = 0x01;
        assert_eq!(
            parse_identify(&p).unwrap().zoned,
            Some(crate::model::ZoneModel::HostAware)
        );
        p[2 * 69] = 0x03;
        assert_eq!(parse_identify(&p).unwrap().zoned, None, "0x3 is reserved");
    }

    #[test]
    fn identify_garbage_and_truncated() {
        assert!(parse_identify(&[]).is_err());
        assert!(parse_identify(&[0u8; 511]).is_err());
        assert!(parse_identify(&[0u8; 512]).is_err());
        assert!(parse_identify(&[0xffu8; 512]).is_err());
        // ATAPI signature in word 0
        let mut p = [0x11u8; 512];
        p[1] = 0x85;
        assert!(parse_identify(&p).is_err());
        // Integrity signature with a wrong checksum
        let mut p = [0u8; 512];
        p[2] = 1;
        p[510] = 0xA5;
        p[511] = 0x00;
        assert!(parse_identify(&p).is_err());
    }

    #[test]
    fn smart_pages_garbage_and_truncated() {
        assert!(parse_smart_data(&[]).is_err());
        assert!(parse_smart_data(&[0u8; 100]).is_err());
        assert!(parse_smart_data(&[0u8; 512]).is_err(), "all zero");
        let mut p = [0x5au8; 512];
        p[7] = 0x11;
        assert!(parse_smart_data(&p).is_err(), "bad checksum");
        // With a right checksum garbage parses, every slot read in bounds.
        let sum = p[..511].iter().fold(0u8, |a, b| a.wrapping_add(*b));
        p[511] = 0u8.wrapping_sub(sum);
        let d = parse_smart_data(&p).unwrap();
        assert_eq!(d.attributes.len(), 30);
        assert!(parse_smart_thresholds(&[1u8; 3]).is_err());
        assert_eq!(parse_smart_thresholds(&p).unwrap().len(), 30);
    }

    #[test]
    fn table_states() {
        let data = SmartData {
            revision: 16,
            attributes: vec![
                RawAttribute {
                    id: 5,
                    flags: 0x33,
                    value: 100,
                    worst: 100,
                    raw: [12, 0, 0, 0, 0, 0],
                },
                RawAttribute {
                    id: 231,
                    flags: 0x32,
                    value: 5,
                    worst: 5,
                    raw: [1, 2, 3, 4, 5, 6],
                },
                RawAttribute {
                    id: 9,
                    flags: 0x32,
                    value: 90,
                    worst: 10,
                    raw: [1, 0, 0, 0, 0, 0],
                },
            ],
            offline_status: 0,
            self_test_status: 0,
            self_test_supported: true,
            error_log_supported: true,
            short_minutes: 2,
            extended_minutes: 54,
        };
        let t = attribute_table(&data, Some(&[(5, 36), (231, 10), (9, 20)]));
        assert_eq!(t[0].state, AttributeState::Ok);
        assert!(t[0].prefailure && t[0].known);
        assert_eq!(t[0].decoded.as_deref(), Some("12 sectors"));
        assert_eq!(t[1].state, AttributeState::FailingNow);
        assert!(!t[1].known);
        assert_eq!(t[1].name, "Unknown_Attribute");
        assert_eq!(t[1].decoded, None);
        assert_eq!(t[1].raw, 0x060504030201);
        assert_eq!(t[2].state, AttributeState::FailedInPast);
        let t = attribute_table(&data, None);
        assert!(t.iter().all(|a| a.state == AttributeState::NoThreshold));
    }
}
