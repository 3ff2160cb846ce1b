//! A drive's fitness for an array as smartctl prints it (`-x` text or `-j` JSON): SCT Error
//! Recovery Control, the zoned capabilities, TRIM, and Seagate's FARM log (its power-on
//! hours and recording type), into `model::DriveFitness`. Also the SCT status and the timer
//! a native SCT Error Recovery Control read returns (`sys::passthru::ata`), decoded here.
//!
//! The wording is smartmontools' (`ataprint.cpp`, `farmprint.cpp`): "SCT Error Recovery
//! Control:" then "Read: Disabled" or "Read:     70 (7.0 seconds)"; "SCT capabilities: ..."
//! without "SCT Error Recovery Control supported." (IDENTIFY word 206 bit 3 clear); "TRIM
//! Command:     Available, deterministic"; "Zoned Device:     Device managed zones";
//! the FARM log's "Power on Hours: 31245" and "Drive Recording Type: SMR".

use crate::model::{DriveFitness, Erc, WriteCache, ZoneModel};

/// The fitness facts of `smartctl -x` text; what it omits stays `None`.
pub fn fitness_of_text(text: &str) -> DriveFitness {
    let lines: Vec<&str> = text
        .split(['\n', '\r'])
        .map(|l| l.trim_matches(|c: char| c.is_whitespace() || c == '\0'))
        .collect();
    let value = |key: &str| {
        lines.iter().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim())
        })
    };
    DriveFitness {
        erc: erc_of_text(&lines),
        zoned: value("Zoned Device").and_then(|v| match v {
            _ if v.starts_with("Host Aware") => Some(ZoneModel::HostAware),
            _ if v.starts_with("Device managed") => Some(ZoneModel::DriveManaged),
            _ => None,
        }),
        trim: value("TRIM Command").and_then(|v| match v {
            _ if v.starts_with("Available") => Some(true),
            _ if v.starts_with("Unavailable") => Some(false),
            _ => None,
        }),
        farm_power_on_hours: farm_value(&lines, &["Power on Hours", "Power on Hour"])
            .and_then(|v| v.split_whitespace().next()?.parse().ok()),
        farm_recording: farm_value(&lines, &["Drive Recording Type"]).and_then(recording),
        // ATA's `-g wcache` (part of `-x`) and SCSI's; "Unavailable" says nothing either way.
        write_cache: value("Write cache is")
            .or_else(|| value("Writeback Cache is"))
            .and_then(|v| match v {
                _ if v.starts_with("Enabled") => Some(WriteCache::On),
                _ if v.starts_with("Disabled") => Some(WriteCache::Off),
                _ => None,
            }),
    }
}

/// "SMR" or "CMR" (FARM says "UNKNOWN" otherwise).
fn recording(word: &str) -> Option<String> {
    let w = word.trim();
    matches!(w, "SMR" | "CMR").then(|| w.to_string())
}

/// The first of `keys` after the FARM heading (SMART's own lines come before it).
fn farm_value<'a>(lines: &[&'a str], keys: &[&str]) -> Option<&'a str> {
    let start = lines
        .iter()
        .position(|l| l.contains("Reliability Metrics log (FARM)"))?;
    lines[start..].iter().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        keys.contains(&k.trim()).then(|| v.trim())
    })
}

/// SCT ERC from its section; none if the capabilities leave it out.
fn erc_of_text(lines: &[&str]) -> Option<Erc> {
    let timer = |line: &str, name: &str| -> Option<u16> {
        let rest = line
            .strip_prefix("Power-on ")
            .unwrap_or(line)
            .strip_prefix(name)?
            .strip_prefix(':')?
            .trim();
        if rest.starts_with("Disabled") {
            Some(0)
        } else {
            rest.split_whitespace().next()?.parse().ok()
        }
    };
    if let Some(at) = lines
        .iter()
        .position(|l| *l == "SCT Error Recovery Control:")
    {
        // The two lines after it (a CRLF report has an empty "line" between each).
        let next: Vec<&str> = lines[at + 1..]
            .iter()
            .filter(|l| !l.is_empty())
            .take(2)
            .copied()
            .collect();
        let read = next.iter().find_map(|l| timer(l, "Read"));
        let write = next.iter().find_map(|l| timer(l, "Write"));
        if let (Some(read), Some(write)) = (read, write) {
            return Some(Erc::Timers { read, write });
        }
    }
    let unsupported = lines.iter().any(|l| {
        l.starts_with("SCT Error Recovery Control command not supported")
            || *l == "SCT Commands not supported"
    });
    let capabilities = lines.iter().any(|l| l.starts_with("SCT capabilities:"));
    let listed = lines
        .iter()
        .any(|l| l.starts_with("SCT Error Recovery Control supported"));
    (unsupported || (capabilities && !listed)).then_some(Erc::NotSupported)
}

/// The fitness facts of a `smartctl -j` document.
pub fn fitness_of_json(text: &str) -> DriveFitness {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return DriveFitness::default();
    };
    let timer = |which: &str| -> Option<u16> {
        let t = doc.get("ata_sct_erc")?.get(which)?;
        if t.get("enabled")?.as_bool()? {
            u16::try_from(t.get("deciseconds")?.as_u64()?).ok()
        } else {
            Some(0)
        }
    };
    let erc = match (timer("read"), timer("write")) {
        (Some(read), Some(write)) => Some(Erc::Timers { read, write }),
        _ => doc
            .get("ata_sct_capabilities")
            .and_then(|c| c.get("error_recovery_control_supported"))
            .and_then(serde_json::Value::as_bool)
            .filter(|supported| !supported)
            .map(|_| Erc::NotSupported),
    };
    let farm_pages: Vec<&serde_json::Value> = doc
        .get("seagate_farm_log")
        .and_then(serde_json::Value::as_object)
        .map(|log| log.values().collect())
        .unwrap_or_default();
    let farm = |keys: &[&str]| {
        farm_pages
            .iter()
            .find_map(|page| keys.iter().find_map(|k| page.get(*k)))
    };
    DriveFitness {
        erc,
        zoned: doc
            .get("zoned_device")
            .and_then(|z| z.get("capabilities"))
            .and_then(serde_json::Value::as_str)
            .and_then(|c| match c {
                "host_aware" => Some(ZoneModel::HostAware),
                "device_managed" => Some(ZoneModel::DriveManaged),
                _ => None,
            }),
        trim: doc
            .get("trim")
            .and_then(|t| t.get("supported"))
            .and_then(serde_json::Value::as_bool),
        farm_power_on_hours: farm(&["poh", "power_on_hour"]).and_then(serde_json::Value::as_u64),
        farm_recording: farm(&["drive_recording_type"])
            .and_then(serde_json::Value::as_str)
            .and_then(recording),
        write_cache: doc
            .get("write_cache")
            .and_then(|w| w.get("enabled"))
            .and_then(serde_json::Value::as_bool)
            .map(|on| WriteCache::from_enabled(Some(on))),
    }
}

/// IDENTIFY word 206 bit 3: SCT Error Recovery Control supported.
pub fn sct_erc_supported(identify: &[u8]) -> Option<bool> {
    let word = u16::from_le_bytes([*identify.get(412)?, *identify.get(413)?]);
    Some(word & 0x0001 != 0 && word & 0x0008 != 0)
}

/// The SCT status (log 0xE0); status 0xFFFF is another SCT command still running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SctStatus {
    pub ext_status: u16,
    pub action: u16,
    pub function: u16,
}

pub fn parse_sct_status(page: &[u8]) -> Option<SctStatus> {
    let word = |at: usize| Some(u16::from_le_bytes([*page.get(at)?, *page.get(at + 1)?]));
    Some(SctStatus {
        ext_status: word(14)?,
        action: word(16)?,
        function: word(18)?,
    })
}

/// SCT action code of Error Recovery Control, and "return the current timer".
pub const SCT_ERC_ACTION: u16 = 3;
pub const SCT_ERC_GET: u16 = 2;

/// The SCT command asking for one ERC timer (1 read, 2 write), for log 0xE0.
pub fn sct_erc_get_command(selection: u16) -> [u8; 512] {
    let mut cmd = [0u8; 512];
    cmd[0..2].copy_from_slice(&SCT_ERC_ACTION.to_le_bytes());
    cmd[2..4].copy_from_slice(&SCT_ERC_GET.to_le_bytes());
    cmd[4..6].copy_from_slice(&selection.to_le_bytes());
    cmd
}

/// The timer an SCT ERC "get" returns in its SMART WRITE LOG's registers (COUNT low byte,
/// LBA low high), judged by the status read after it. `Err` says why it is not trusted:
/// the command did not run, or the registers came back as sent (smartctl's checks).
pub fn decode_erc_timer(after: SctStatus, count: u8, lba_low: u8) -> Result<u16, String> {
    if after.ext_status != 0 || after.action != SCT_ERC_ACTION || after.function != SCT_ERC_GET {
        return Err(format!(
            "the drive's SCT status after the command is 0x{:04x} (action {}, function {})",
            after.ext_status, after.action, after.function
        ));
    }
    // Sent: COUNT 1 (one sector), LBA low 0xE0 (the log).
    if count == 1 && lba_low == 0xe0 {
        return Err("the pass-through returned the registers unchanged".to_string());
    }
    Ok(u16::from(count) | (u16::from(lba_low) << 8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erc_timers_disabled_and_unsupported_as_smartctl_prints_them() {
        let seven = "SCT Error Recovery Control:\n           Read:     70 (7.0 seconds)\n          Write:     70 (7.0 seconds)\n";
        assert_eq!(
            fitness_of_text(seven).erc,
            Some(Erc::Timers {
                read: 70,
                write: 70
            })
        );
        let off = "SCT Error Recovery Control:\r\n           Read: Disabled\r\n          Write: Disabled\r\n";
        assert_eq!(
            fitness_of_text(off).erc,
            Some(Erc::Timers { read: 0, write: 0 })
        );
        let none = "SCT capabilities: \t       (0x3035)\tSCT Status supported.\n\t\t\t\t\tSCT Feature Control supported.\n";
        assert_eq!(fitness_of_text(none).erc, Some(Erc::NotSupported));
        let listed = "SCT capabilities: \t       (0x303d)\tSCT Status supported.\n\t\t\t\t\tSCT Error Recovery Control supported.\n";
        assert_eq!(fitness_of_text(listed).erc, None);
        assert_eq!(
            fitness_of_text("SCT Error Recovery Control command not supported\n").erc,
            Some(Erc::NotSupported)
        );
        // The get failed: nothing is known.
        assert_eq!(
            fitness_of_text("SCT (Get) Error Recovery Control command failed\n").erc,
            None
        );
    }

    #[test]
    fn zones_trim_and_farm_from_text() {
        let text = "Rotation Rate:    5400 rpm\nTRIM Command:     Available, deterministic, zeroed\n\
                    Zoned Device:     Device managed zones\n\
                    Power_On_Hours 12\n\
                    Seagate Field Access Reliability Metrics log (FARM) (GP Log 0xa6)\n\
                    \tFARM Log Page 1: Drive Information\n\t\tPower on Hours: 31245\n\
                    \t\tSpindle Power on Hours: 31000\n\t\tDrive Recording Type: CMR\n";
        let f = fitness_of_text(text);
        assert_eq!(f.trim, Some(true));
        assert_eq!(f.zoned, Some(ZoneModel::DriveManaged));
        assert_eq!(f.farm_power_on_hours, Some(31245));
        assert_eq!(f.farm_recording.as_deref(), Some("CMR"));
        // "Power on Hours" before the FARM heading is not FARM's.
        let f = fitness_of_text("Power on Hours: 5\nTRIM Command:     Unavailable\n");
        assert_eq!(f.farm_power_on_hours, None);
        assert_eq!(f.trim, Some(false));
        assert_eq!(
            fitness_of_text("Zoned Device:     Host Aware Zones").zoned,
            Some(ZoneModel::HostAware)
        );
        assert_eq!(f.write_cache, None);
        let cache = |t: &str| fitness_of_text(t).write_cache;
        assert_eq!(cache("Write cache is:   Enabled\n"), Some(WriteCache::On));
        assert_eq!(
            cache("Write cache is:   Disabled\r\n"),
            Some(WriteCache::Off)
        );
        assert_eq!(cache("Write cache is:   Unavailable\n"), None);
        assert_eq!(
            cache("Writeback Cache is:   Enabled\n"),
            Some(WriteCache::On)
        );
    }

    #[test]
    fn the_same_facts_from_json() {
        let doc = r#"{"ata_sct_erc":{"read":{"enabled":true,"deciseconds":70},"write":{"enabled":false}},
            "trim":{"supported":true},"zoned_device":{"capabilities":"device_managed"},
            "seagate_farm_log":{"page_0_log_header":{},"page_1_drive_information":{"poh":31245,"drive_recording_type":"SMR"}}}"#;
        let f = fitness_of_json(doc);
        assert_eq!(f.erc, Some(Erc::Timers { read: 70, write: 0 }));
        assert_eq!(f.trim, Some(true));
        assert_eq!(f.zoned, Some(ZoneModel::DriveManaged));
        assert_eq!(f.farm_power_on_hours, Some(31245));
        assert_eq!(f.farm_recording.as_deref(), Some("SMR"));
        assert_eq!(f.write_cache, None);
        assert_eq!(
            fitness_of_json(r#"{"write_cache":{"enabled":false}}"#).write_cache,
            Some(WriteCache::Off)
        );
        let f = fitness_of_json(
            r#"{"ata_sct_capabilities":{"error_recovery_control_supported":false}}"#,
        );
        assert_eq!(f.erc, Some(Erc::NotSupported));
        assert_eq!(fitness_of_json("not json"), DriveFitness::default());
    }

    #[test]
    fn a_native_erc_answer_is_decoded_and_checked() {
        let ok = SctStatus {
            ext_status: 0,
            action: 3,
            function: 2,
        };
        assert_eq!(decode_erc_timer(ok, 70, 0), Ok(70));
        assert_eq!(decode_erc_timer(ok, 0x2c, 0x01), Ok(300));
        assert!(
            decode_erc_timer(ok, 1, 0xe0)
                .unwrap_err()
                .contains("unchanged")
        );
        let busy = SctStatus {
            ext_status: 0xffff,
            ..ok
        };
        assert!(
            decode_erc_timer(busy, 70, 0)
                .unwrap_err()
                .contains("0xffff")
        );
        let cmd = sct_erc_get_command(1);
        assert_eq!(&cmd[..6], &[3, 0, 2, 0, 1, 0]);
        assert!(cmd[6..].iter().all(|b| *b == 0));
        let mut page = [0u8; 512];
        page[14..20].copy_from_slice(&[0, 0, 3, 0, 2, 0]);
        assert_eq!(parse_sct_status(&page), Some(ok));
        assert_eq!(parse_sct_status(&page[..10]), None);
        let mut identify = [0u8; 512];
        identify[412] = 0x3d;
        assert_eq!(sct_erc_supported(&identify), Some(true));
        identify[412] = 0x35;
        assert_eq!(sct_erc_supported(&identify), Some(false));
        assert_eq!(sct_erc_supported(&identify[..100]), None);
    }
}
