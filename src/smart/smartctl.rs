//! `smartctl -j -a` output (smartmontools 7.x JSON), for devices disktriage cannot read
//! natively: SCSI disks, USB bridges that need a vendor pass-through.
//!
//! Every field is optional: smartctl leaves out what a device does not have. The exit status
//! is a bitmask (smartctl(8)); bits 0-1 mean it read nothing, the others describe the drive,
//! so the JSON is parsed whatever the exit status.

use serde::Deserialize;

use super::PageError;
use super::ata::{attribute_name, decode_raw};
use crate::model::SmartctlReport;
use crate::model::smart::PLAUSIBLE_CELSIUS;
use crate::model::{AtaAttribute, AtaSmart, AtaSmartStatus, AttributeState, NvmeHealth};

#[derive(Debug, Deserialize)]
struct Doc {
    json_format_version: Option<Vec<u32>>,
    smartctl: Option<Info>,
    device: Option<Device>,
    smart_support: Option<Support>,
    smart_status: Option<Status>,
    temperature: Option<Temperature>,
    power_on_time: Option<PowerOnTime>,
    ata_smart_attributes: Option<AtaTable>,
    nvme_smart_health_information_log: Option<NvmeLog>,
    scsi_grown_defect_list: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct Info {
    version: Option<Vec<u32>>,
    exit_status: Option<i32>,
    messages: Option<Vec<Message>>,
}

#[derive(Debug, Deserialize)]
struct Message {
    string: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Device {
    protocol: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Support {
    available: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct Status {
    passed: Option<bool>,
    scsi: Option<ScsiStatus>,
}

#[derive(Debug, Deserialize)]
struct ScsiStatus {
    ie_string: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Temperature {
    current: Option<i64>,
}

#[derive(Debug, Deserialize)]
struct PowerOnTime {
    hours: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct AtaTable {
    table: Option<Vec<AtaRow>>,
}

#[derive(Debug, Deserialize)]
struct AtaRow {
    id: Option<u8>,
    name: Option<String>,
    value: Option<u8>,
    worst: Option<u8>,
    thresh: Option<u8>,
    when_failed: Option<String>,
    flags: Option<Flags>,
    raw: Option<Raw>,
}

#[derive(Debug, Deserialize)]
struct Flags {
    value: Option<u16>,
    prefailure: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct Raw {
    value: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct NvmeLog {
    critical_warning: Option<u8>,
    temperature: Option<i64>,
    available_spare: Option<u8>,
    available_spare_threshold: Option<u8>,
    percentage_used: Option<u8>,
    data_units_read: Option<u64>,
    data_units_written: Option<u64>,
    host_reads: Option<u64>,
    host_writes: Option<u64>,
    controller_busy_time: Option<u64>,
    power_cycles: Option<u64>,
    power_on_hours: Option<u64>,
    unsafe_shutdowns: Option<u64>,
    media_errors: Option<u64>,
    num_err_log_entries: Option<u64>,
    warning_temp_time: Option<u32>,
    critical_comp_time: Option<u32>,
}

const WHAT: &str = "smartctl JSON";

/// Parses `smartctl -j -a` output. `process_exit` is the process's exit code, used when the
/// JSON does not carry `smartctl.exit_status`.
pub fn parse_smartctl_json(
    text: &str,
    process_exit: Option<i32>,
) -> Result<SmartctlReport, PageError> {
    let doc: Doc =
        serde_json::from_str(text).map_err(|e| PageError::new(WHAT, format!("not JSON: {e}")))?;
    if doc.json_format_version.is_none() && doc.smartctl.is_none() {
        return Err(PageError::new(
            WHAT,
            "neither json_format_version nor smartctl: not smartctl output",
        ));
    }
    let info = doc.smartctl;
    let version = info
        .as_ref()
        .and_then(|i| i.version.as_ref())
        .map(|v| v.iter().map(u32::to_string).collect::<Vec<_>>().join("."));
    let exit_status = info
        .as_ref()
        .and_then(|i| i.exit_status)
        .or(process_exit)
        .unwrap_or(0);
    let messages = info
        .and_then(|i| i.messages)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.string)
        .map(|s| crate::model::text::neutralize_controls(&s))
        .collect();
    let passed = doc.smart_status.as_ref().and_then(|s| s.passed);
    let ata = doc
        .ata_smart_attributes
        .and_then(|t| t.table)
        .map(|rows| ata_from_rows(rows, passed));
    Ok(SmartctlReport {
        version,
        exit_status,
        passed,
        smart_available: doc.smart_support.and_then(|s| s.available),
        protocol: doc
            .device
            .and_then(|d| d.protocol)
            .map(|p| crate::model::text::neutralize_controls(&p)),
        // smartctl prints 0 when the device reports no temperature (QEMU's scsi-hd does).
        temperature_c: doc
            .temperature
            .and_then(|t| t.current)
            .filter(|t| *t != 0 && PLAUSIBLE_CELSIUS.contains(t)),
        power_on_hours: doc.power_on_time.and_then(|p| p.hours),
        scsi_grown_defects: doc.scsi_grown_defect_list,
        scsi_ie_string: doc
            .smart_status
            .and_then(|s| s.scsi)
            .and_then(|s| s.ie_string)
            .map(|s| crate::model::text::neutralize_controls(&s)),
        ata,
        nvme: doc.nvme_smart_health_information_log.map(nvme_from_log),
        messages,
    })
}

fn ata_from_rows(rows: Vec<AtaRow>, passed: Option<bool>) -> AtaSmart {
    let attributes = rows
        .into_iter()
        .filter_map(|r| {
            let id = r.id.filter(|id| *id != 0)?;
            let known = attribute_name(id).is_some();
            let raw = r.raw.and_then(|raw| raw.value).unwrap_or(0) & 0xffff_ffff_ffff;
            let raw_bytes: [u8; 6] = {
                let b = raw.to_le_bytes();
                [b[0], b[1], b[2], b[3], b[4], b[5]]
            };
            let threshold = r.thresh;
            let state = match (r.when_failed.as_deref(), threshold) {
                (Some("now"), _) => AttributeState::FailingNow,
                (Some("past"), _) => AttributeState::FailedInPast,
                (_, None | Some(0)) => AttributeState::NoThreshold,
                _ => AttributeState::Ok,
            };
            let flags = r.flags.as_ref().and_then(|f| f.value).unwrap_or(0);
            Some(AtaAttribute {
                id,
                name: r
                    .name
                    .map(|n| crate::model::text::neutralize_controls(&n))
                    .unwrap_or_else(|| "Unknown_Attribute".into()),
                known,
                flags,
                prefailure: r.flags.and_then(|f| f.prefailure).unwrap_or(flags & 1 != 0),
                value: r.value.unwrap_or(0),
                worst: r.worst.unwrap_or(0),
                threshold,
                raw,
                decoded: if known {
                    decode_raw(id, &raw_bytes)
                } else {
                    None
                },
                state,
            })
        })
        .collect();
    AtaSmart {
        smart_supported: true,
        smart_enabled: true,
        status: match passed {
            Some(true) => AtaSmartStatus::Good,
            Some(false) => AtaSmartStatus::Failing,
            None => AtaSmartStatus::Unknown,
        },
        status_note: None,
        attributes,
        attribute_problem: None,
    }
}

fn nvme_from_log(l: NvmeLog) -> NvmeHealth {
    let critical_warning = l.critical_warning.unwrap_or(0);
    let n = |v: Option<u64>| u128::from(v.unwrap_or(0));
    NvmeHealth {
        critical_warning,
        critical_warnings: super::nvme::critical_warning_names(critical_warning),
        // smartctl reports Celsius; the log (and this struct) counts Kelvin.
        temperature_kelvin: l
            .temperature
            .and_then(|c| c.checked_add(273))
            .and_then(|k| u16::try_from(k).ok())
            .unwrap_or(0),
        available_spare_pct: l.available_spare.unwrap_or(0),
        available_spare_threshold_pct: l.available_spare_threshold.unwrap_or(0),
        percentage_used: l.percentage_used.unwrap_or(0),
        data_units_read: n(l.data_units_read),
        data_units_written: n(l.data_units_written),
        host_read_commands: n(l.host_reads),
        host_write_commands: n(l.host_writes),
        controller_busy_minutes: n(l.controller_busy_time),
        power_cycles: n(l.power_cycles),
        power_on_hours: n(l.power_on_hours),
        unsafe_shutdowns: n(l.unsafe_shutdowns),
        media_errors: n(l.media_errors),
        error_log_entries: n(l.num_err_log_entries),
        warning_temp_minutes: l.warning_temp_time.unwrap_or(0),
        critical_temp_minutes: l.critical_comp_time.unwrap_or(0),
        temperature_sensors_kelvin: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_truncated() {
        assert!(parse_smartctl_json("", None).is_err());
        assert!(parse_smartctl_json("{", None).is_err());
        assert!(parse_smartctl_json("[1,2]", None).is_err());
        assert!(
            parse_smartctl_json("{}", None).is_err(),
            "not smartctl output"
        );
        assert!(parse_smartctl_json("\x1b[2J", None).is_err());
        // Wrong types inside a known key are an error, not a panic.
        assert!(parse_smartctl_json(r#"{"smartctl":{"exit_status":"x"}}"#, None).is_err());
    }

    #[test]
    fn out_of_range_temperatures_are_unknown_not_a_panic() {
        // An NVMe temperature near i64::MAX overflowed the Celsius-to-Kelvin addition.
        let r = parse_smartctl_json(
            r#"{"smartctl":{"exit_status":0},
                "nvme_smart_health_information_log":{"temperature":9223372036854775807},
                "temperature":{"current":9223372036854775807}}"#,
            None,
        )
        .unwrap();
        assert_eq!(r.temperature_c, None);
        assert_eq!(r.nvme.unwrap().temperature_c(), None);
        let r = parse_smartctl_json(
            r#"{"smartctl":{"exit_status":0},"temperature":{"current":-274}}"#,
            None,
        )
        .unwrap();
        assert_eq!(r.temperature_c, None);
        let r = parse_smartctl_json(r#"{"smartctl":{},"temperature":{"current":41}}"#, None);
        assert_eq!(r.unwrap().temperature_c, Some(41));
    }

    #[test]
    fn strings_from_smartctl_cannot_drive_the_terminal() {
        let r = parse_smartctl_json(
            r#"{"smartctl":{"exit_status":0},"device":{"protocol":"SCSI\u001b[2J"},
                "smart_status":{"passed":false,"scsi":{"ie_string":"FAIL\u001b]0;x\u0007"}}}"#,
            None,
        )
        .unwrap();
        assert_eq!(r.protocol.as_deref(), Some("SCSI?[2J"));
        assert_eq!(r.scsi_ie_string.as_deref(), Some("FAIL?]0;x?"));
    }

    #[test]
    fn minimal_document() {
        let r = parse_smartctl_json(
            r#"{"json_format_version":[1,0],"smartctl":{"version":[7,3],"exit_status":4,
                "messages":[{"string":"bad\u001b[2J","severity":"error"}]},
                "smart_support":{"available":false}}"#,
            Some(0),
        )
        .unwrap();
        assert_eq!(r.version.as_deref(), Some("7.3"));
        assert_eq!(r.exit_status, 4);
        assert_eq!(r.smart_available, Some(false));
        assert_eq!(r.passed, None);
        assert_eq!(r.messages, ["bad?[2J"]);
        // Exit status from the process when the JSON lacks it.
        let r = parse_smartctl_json(r#"{"json_format_version":[1,0]}"#, Some(2)).unwrap();
        assert_eq!(r.exit_status, 2);
    }
}
