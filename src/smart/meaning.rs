//! What an ATA attribute means on the drive it comes from, and its raw value read in that
//! attribute's layout: the one place the verdict and the triage's rules learn that an SSD's 5
//! counts retired NAND blocks, that 9 keeps hours in its low three bytes, that 4294967295
//! means "not reported" and that 2e14 offline-uncorrectable sectors cannot be true.
//!
//! The meaning comes from smartctl's attribute name when the table came from a smartctl
//! report (its drive database named it for that drive), else from the id, the drive's kind
//! (solid state or not) and `FAMILIES`, a small table of the SSD families whose wear
//! attribute sits on an id of their own. Both derive from the 384 real reports in
//! `../shared/data/smart-reports`, and the corpus tests check them against it.

use crate::model::{AtaAttribute, AtaDrive};

/// What an attribute counts or states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meaning {
    /// Sectors a hard disk moved to its spare area (5).
    ReallocatedSectors,
    /// NAND blocks an SSD retired (5 on flash): wear, not a failed read.
    RetiredBlocks,
    /// Reallocation events (196 on hard disks).
    ReallocationEvents,
    /// Sectors waiting to be reallocated: unreadable now (197).
    PendingSectors,
    /// Sectors the offline scan could not read (198).
    OfflineUncorrectable,
    /// Errors the drive could not correct and reported to the host (187).
    ReportedUncorrect,
    /// Data corrupted between the host interface and the media (184).
    EndToEndErrors,
    /// CRC errors on the link: the cable or the port (199).
    CrcErrors,
    /// Commands that timed out (188).
    CommandTimeouts,
    /// A temperature (190, 194 and the vendors' own).
    Temperature,
    /// Power-on time (9), in the unit its layout gives.
    PowerOnTime,
    /// The normalized value is the rated life left, in percent (ids: `FAMILIES`).
    LifeLeft,
    /// The normalized value is the spare (reserved) space left.
    SpareLeft,
    /// An error rate in the vendor's raw format (1, 7, 195): never judged.
    ErrorRate,
    /// An id holding nothing meaningful ("Not_In_Use").
    NotInUse,
    /// Anything else: judged only by the drive's own threshold.
    Other,
}

impl Meaning {
    /// Counts the rules judge by their raw value (the sector and error counts).
    pub fn is_count(self) -> bool {
        matches!(
            self,
            Meaning::ReallocatedSectors
                | Meaning::RetiredBlocks
                | Meaning::ReallocationEvents
                | Meaning::PendingSectors
                | Meaning::OfflineUncorrectable
                | Meaning::ReportedUncorrect
                | Meaning::EndToEndErrors
                | Meaning::CrcErrors
                | Meaning::CommandTimeouts
        )
    }

    /// Counts of sectors: above the drive's sector count they cannot be true.
    fn counts_sectors(self) -> bool {
        matches!(
            self,
            Meaning::ReallocatedSectors | Meaning::PendingSectors | Meaning::OfflineUncorrectable
        )
    }
}

/// A raw value read in its attribute's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Count {
    /// The count (or hours, or degrees) the layout gives.
    Value(u64),
    /// A sentinel (all ones in the field): the drive does not report it.
    NotReported,
    /// A value that cannot be true, with why; never judged.
    Implausible(String),
}

/// One attribute as the rules read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub meaning: Meaning,
    pub count: Count,
}

/// SSD families whose wear attribute has its own id: (model prefix, id).
const FAMILIES: &[(&str, u8)] = &[
    ("CT", 202),
    ("Crucial_CT", 202),
    ("Micron_", 202),
    ("KINGSTON S", 231),
    ("INTEL SSD", 233),
    ("Samsung SSD", 177),
    ("SAMSUNG MZ7", 177),
];

/// The meaning of smartctl's name; `None` for its "unknown" names.
fn by_name(name: &str, solid_state: bool) -> Option<Meaning> {
    use Meaning::*;
    if name.starts_with("Unknown") {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    Some(match name {
        "Reallocated_Sector_Ct" if solid_state => RetiredBlocks,
        "Reallocated_Sector_Ct" => ReallocatedSectors,
        "Reallocate_NAND_Blk_Cnt" | "Retired_Block_Count" | "Grown_Bad_Block_Ct" => RetiredBlocks,
        "Reallocated_Event_Count" => ReallocationEvents,
        "Current_Pending_Sector"
        | "Pending_Sector_Count"
        | "Current_Pending_ECC_Cnt"
        | "Total_Pending_Sectors" => PendingSectors,
        "Offline_Uncorrectable"
        | "Uncorrectable_Sector_Ct"
        | "Uncor_Read_Error_Ct"
        | "Total_Offl_Uncorrectabl" => OfflineUncorrectable,
        "Reported_Uncorrect" | "Uncorrectable_Error_Cnt" | "Uncorrectable_ECC_Ct" => {
            ReportedUncorrect
        }
        "End-to-End_Error" | "End-to-End_Error_Count" | "IO_Error_Detect_Code_Ct" => EndToEndErrors,
        "Command_Timeout" => CommandTimeouts,
        "Percent_Lifetime_Remain"
        | "SSD_Life_Left"
        | "Media_Wearout_Indicator"
        | "Wear_Leveling_Count"
        | "Remaining_Lifetime_Perc"
        | "Percent_Life_Remaining" => LifeLeft,
        "Available_Reservd_Space" | "Perc_Avail_Resrvd_Space" | "Reserved_Block_Pct" => SpareLeft,
        "Not_In_Use" | "Bogus_Current_Pend_Sect" => NotInUse,
        _ if lower.contains("crc_error") => CrcErrors,
        _ if lower.starts_with("power_on_") => PowerOnTime,
        _ if lower.contains("temperature") || lower.starts_with("temp") => Temperature,
        _ if lower.contains("error_rate") || name == "Hardware_ECC_Recovered" => ErrorRate,
        _ => Other,
    })
}

/// The meaning by id alone (a native table, or a name smartctl did not know).
fn by_id(id: u8, drive: &AtaDrive) -> Meaning {
    let solid_state = drive.solid_state == Some(true);
    if solid_state {
        let model = drive.model.as_deref().unwrap_or("");
        if FAMILIES
            .iter()
            .any(|(prefix, wear)| *wear == id && model.starts_with(prefix))
        {
            return Meaning::LifeLeft;
        }
    }
    match super::ata::attribute_name(id) {
        Some(name) => by_name(name, solid_state).unwrap_or(Meaning::Other),
        None => Meaning::Other,
    }
}

/// What `a` means on `drive`.
pub fn meaning_of(a: &AtaAttribute, drive: &AtaDrive) -> Meaning {
    let solid_state = drive.solid_state == Some(true);
    match &a.raw_text {
        Some(_) => by_name(&a.name, solid_state).unwrap_or_else(|| by_id(a.id, drive)),
        None => by_id(a.id, drive),
    }
}

/// The leading number of smartctl's printed raw value ("0 (2000 0)").
pub fn leading_number(text: &str) -> Option<u64> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x") {
        let digits: String = hex.chars().take_while(char::is_ascii_hexdigit).collect();
        return u64::from_str_radix(&digits, 16).ok();
    }
    let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() {
        return None;
    }
    // Longer than u64: the maximum, which the plausibility check refuses.
    Some(digits.parse().unwrap_or(u64::MAX))
}

/// The 48 raw bits read in `meaning`'s layout.
fn from_raw(meaning: Meaning, raw: u64) -> u64 {
    match meaning {
        // A 16-bit count; the drive's other words are its own ("0 (2000 0)").
        Meaning::ReallocatedSectors | Meaning::RetiredBlocks | Meaning::ReallocationEvents => {
            raw & 0xffff
        }
        // Hours in the low three bytes (minutes or ms above, on some drives).
        Meaning::PowerOnTime => raw & 0xff_ffff,
        Meaning::Temperature => raw & 0xff,
        // Seagate packs three 16-bit counters, the high word first ("2 2 2").
        Meaning::CommandTimeouts if raw > u64::from(u32::MAX) => (raw >> 32) & 0xffff,
        _ => raw,
    }
}

/// Reads `a` on `drive`: its meaning and value, sentinels and absurd counts marked.
pub fn read(a: &AtaAttribute, drive: &AtaDrive) -> Reading {
    let meaning = meaning_of(a, drive);
    let value = match a.raw_text.as_deref().and_then(leading_number) {
        // All 48 bits printed (smartctl does not know the drive): as from the drive.
        Some(n) if n > u64::from(u32::MAX) && n <= 0xffff_ffff_ffff => from_raw(meaning, n),
        Some(n) => n,
        None => from_raw(meaning, a.raw),
    };
    let count = if !meaning.is_count() {
        Count::Value(value)
    } else if matches!(value, 0xffff | 0xffff_ffff | 0xffff_ffff_ffff) {
        Count::NotReported
    } else if let Some(why) = implausible(meaning, value, drive) {
        Count::Implausible(why)
    } else {
        Count::Value(value)
    };
    Reading { meaning, count }
}

/// Why a count cannot be true, if it cannot.
fn implausible(meaning: Meaning, value: u64, drive: &AtaDrive) -> Option<String> {
    if meaning.counts_sectors()
        && let Some(sectors) = drive.sectors
        && value > sectors
    {
        return Some(format!("more than the drive's {sectors} sectors"));
    }
    // No working drive counts four billion errors: packing, or garbage.
    (value > u64::from(u32::MAX)).then(|| "above 2^32, no counter of a working drive".into())
}

/// The first attribute with `meaning` that reads as a plausible count.
pub fn count_of(attributes: &[AtaAttribute], drive: &AtaDrive, meaning: Meaning) -> Option<u64> {
    attributes.iter().find_map(|a| {
        let r = read(a, drive);
        match r.count {
            Count::Value(v) if r.meaning == meaning => Some(v),
            _ => None,
        }
    })
}

/// An attribute at its threshold now, in words from its meaning.
pub fn failing_now_words(a: &AtaAttribute, meaning: Meaning) -> String {
    let at = format!(
        "{} {} at {}, threshold {}, now",
        a.id,
        a.name,
        a.value,
        a.threshold.unwrap_or(0)
    );
    match meaning {
        Meaning::LifeLeft => format!("the SSD has used its rated life ({at})"),
        Meaning::SpareLeft => format!("the SSD has used its spare blocks ({at})"),
        Meaning::ReallocatedSectors | Meaning::RetiredBlocks | Meaning::ReallocationEvents => {
            format!("the drive has used its spare area for failing sectors ({at})")
        }
        Meaning::Temperature => format!("the drive reports its temperature at its limit ({at})"),
        Meaning::EndToEndErrors => {
            format!("the drive corrupted data between its interface and its media ({at})")
        }
        _ => format!("the drive rates this attribute as failed ({at})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AttributeState;

    fn attr(id: u8, name: &str, raw: u64, raw_text: Option<&str>) -> AtaAttribute {
        AtaAttribute {
            id,
            name: name.into(),
            known: super::super::ata::attribute_name(id).is_some(),
            flags: 0,
            prefailure: false,
            value: 100,
            worst: 100,
            threshold: Some(0),
            raw,
            decoded: None,
            raw_text: raw_text.map(str::to_string),
            state: AttributeState::NoThreshold,
        }
    }

    fn hdd() -> AtaDrive {
        AtaDrive {
            model: Some("ST4000DM000-1F2168".into()),
            solid_state: Some(false),
            sectors: Some(7_814_037_168),
        }
    }

    fn ssd(model: &str) -> AtaDrive {
        AtaDrive {
            model: Some(model.into()),
            solid_state: Some(true),
            sectors: Some(234_441_648),
        }
    }

    #[test]
    fn smartctl_layouts_read_as_their_leading_count() {
        for (text, n) in [
            ("0 (2000 0)", 0),
            ("39384h+40m+45.152s", 39384),
            ("35 (Min/Max 14/50)", 35),
            ("0/174670392", 0),
            ("2 3 3", 2),
            ("29899 (134 191 0)", 29899),
            ("0x000000000012", 0x12),
            ("15544606", 15_544_606),
        ] {
            assert_eq!(leading_number(text), Some(n), "{text}");
        }
        assert_eq!(leading_number("-"), None);
        assert_eq!(leading_number("99999999999999999999999"), Some(u64::MAX));
    }

    #[test]
    fn native_raw_values_use_each_layout() {
        // 5 "0 (2000 0)": the count is the low word.
        let a = attr(5, "Reallocated_Sector_Ct", 2000 << 16, None);
        assert_eq!(read(&a, &hdd()).count, Count::Value(0));
        // 9 "2725 (151 234 0)": hours in the low three bytes.
        let a = attr(9, "Power_On_Hours", 167_031_278_144_165, None);
        assert_eq!(read(&a, &hdd()).count, Count::Value(2725));
        let a = attr(
            9,
            "Power_On_Hours",
            9_023_116_403_587_028 & 0xffff_ffff_ffff,
            None,
        );
        assert_eq!(read(&a, &hdd()).count, Count::Value(47060));
        // 188 "2 2 2" on a Seagate: three counters, the high word first.
        let a = attr(188, "Command_Timeout", 8_590_065_666, None);
        assert_eq!(read(&a, &hdd()).count, Count::Value(2));
        // 196 "2111 (12437 0)".
        let a = attr(196, "Reallocated_Event_Count", 53_416_508_262_463, None);
        assert_eq!(read(&a, &hdd()).count, Count::Value(2111));
    }

    #[test]
    fn sentinels_are_not_reported_and_impossible_counts_are_implausible() {
        let a = attr(197, "Current_Pending_Sector", 4_294_967_295, None);
        assert_eq!(read(&a, &hdd()).count, Count::NotReported);
        let a = attr(
            198,
            "Offline_Uncorrectable",
            205_784_768_053_248,
            Some("205784768053248"),
        );
        assert!(matches!(
            read(&a, &ssd("ST480FN0021")).count,
            Count::Implausible(_)
        ));
        // More pending sectors than the drive has.
        let a = attr(197, "Current_Pending_Sector", 300_000_000, None);
        assert!(matches!(
            read(&a, &ssd("X")).count,
            Count::Implausible(w) if w.contains("234441648")
        ));
        // A CRC count in the millions is real (an old cable).
        let a = attr(199, "UDMA_CRC_Error_Count", 15_544_606, None);
        assert_eq!(read(&a, &hdd()).count, Count::Value(15_544_606));
    }

    #[test]
    fn ssds_reuse_hard_disk_ids() {
        let s = ssd("KINGSTON SV300S37A120G");
        let m = |id, name: &str| meaning_of(&attr(id, name, 0, Some("0")), &s);
        assert_eq!(m(5, "Retired_Block_Count"), Meaning::RetiredBlocks);
        assert_eq!(m(5, "Reallocated_Sector_Ct"), Meaning::RetiredBlocks);
        assert_eq!(m(196, "Not_In_Use"), Meaning::NotInUse);
        assert_eq!(m(197, "Bogus_Current_Pend_Sect"), Meaning::NotInUse);
        assert_eq!(
            m(198, "Uncorrectable_Sector_Ct"),
            Meaning::OfflineUncorrectable
        );
        assert_eq!(
            m(187, "Uncorrectable_Error_Cnt"),
            Meaning::ReportedUncorrect
        );
        assert_eq!(m(231, "SSD_Life_Left"), Meaning::LifeLeft);
        assert_eq!(m(199, "SATA_CRC_Error_Count"), Meaning::CrcErrors);
        assert_eq!(m(190, "Temperature_Case"), Meaning::Temperature);
        // Natively (no name): the family table and the drive's kind.
        let native = |id, drive: &AtaDrive| meaning_of(&attr(id, "x", 0, None), drive);
        assert_eq!(native(231, &s), Meaning::LifeLeft);
        assert_eq!(native(202, &ssd("CT120BX500SSD1")), Meaning::LifeLeft);
        assert_eq!(native(5, &ssd("CT120BX500SSD1")), Meaning::RetiredBlocks);
        assert_eq!(native(5, &hdd()), Meaning::ReallocatedSectors);
        assert_eq!(native(231, &hdd()), Meaning::Other);
        assert_eq!(native(1, &hdd()), Meaning::ErrorRate);
    }
}
