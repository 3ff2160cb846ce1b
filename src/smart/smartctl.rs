//! `smartctl -j -a` output (smartmontools 7.x JSON), for devices disktriage cannot read
//! natively: SCSI disks, USB bridges that need a vendor pass-through.
//!
//! Every field is optional: smartctl leaves out what a device does not have. The exit status
//! is a bitmask (smartctl(8)); bits 0-1 mean it read nothing, the others describe the drive,
//! so the JSON is parsed whatever the exit status.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::PageError;
use super::ata::{attribute_name, decode_raw};
use crate::model::smart::PLAUSIBLE_CELSIUS;
use crate::model::{AtaAttribute, AtaSmart, AtaSmartStatus, AttributeState, NvmeHealth};
use crate::model::{
    DriveLogs, ErrorEntry, ErrorLog, LogRead, SelfTestEntry, SelfTestLog, SelfTestOutcome,
    SelfTestStatus, Transport,
};
use crate::model::{SmartctlIdentity, SmartctlReport};

#[derive(Debug, Deserialize)]
struct Doc {
    smartctl: Option<Info>,
    device: Option<Device>,
    smart_support: Option<Support>,
    smart_status: Option<Status>,
    temperature: Option<Temperature>,
    power_on_time: Option<PowerOnTime>,
    ata_smart_attributes: Option<AtaTable>,
    nvme_smart_health_information_log: Option<NvmeLog>,
    scsi_grown_defect_list: Option<u64>,
    model_name: Option<String>,
    rotation_rate: Option<u32>,
    user_capacity: Option<Capacity>,
}

#[derive(Debug, Deserialize)]
struct Capacity {
    blocks: Option<u64>,
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
    string: Option<String>,
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

/// SMART data keys: with a device's protocol, they mark smartctl's document.
const SMART_KEYS: [&str; 5] = [
    "smart_status",
    "ata_smart_attributes",
    "nvme_smart_health_information_log",
    "scsi_grown_defect_list",
    "scsi_error_counter_log",
];

/// The document as JSON, if it is smartctl's.
fn smartctl_document(text: &str) -> Result<serde_json::Value, PageError> {
    let doc: serde_json::Value =
        serde_json::from_str(text).map_err(|e| PageError::new(WHAT, format!("not JSON: {e}")))?;
    let has = |k: &str| doc.get(k).is_some();
    let headed = has("json_format_version") || has("smartctl");
    let device = doc
        .get("device")
        .and_then(|d| d.get("protocol"))
        .is_some_and(serde_json::Value::is_string);
    // A `smartctl -i` fragment (scrutiny keeps those) is smartctl's too.
    let headless = device
        && SMART_KEYS
            .iter()
            .chain(&["smart_support", "model_name", "model_family"])
            .any(|k| has(k));
    if !(headed || headless) {
        return Err(PageError::new(
            WHAT,
            "neither json_format_version nor smartctl, nor a device with SMART data: not \
             smartctl output",
        ));
    }
    Ok(doc)
}

/// A document read into `T`; a top-level field of the wrong type is left out, and named.
fn typed<T: serde::de::DeserializeOwned>(
    doc: serde_json::Value,
) -> Result<(T, Vec<String>), PageError> {
    let err =
        |e: serde_json::Error| PageError::new(WHAT, format!("not as smartctl writes it: {e}"));
    match serde_json::from_value::<T>(doc.clone()) {
        Ok(t) => return Ok((t, Vec::new())),
        Err(e) if !doc.is_object() => return Err(err(e)),
        Err(_) => {}
    }
    let serde_json::Value::Object(fields) = doc else {
        return Err(PageError::new(WHAT, "not a JSON object"));
    };
    let mut kept = serde_json::Map::new();
    let mut left_out = Vec::new();
    for (key, value) in fields {
        let alone =
            serde_json::Value::Object(std::iter::once((key.clone(), value.clone())).collect());
        if serde_json::from_value::<T>(alone).is_ok() {
            kept.insert(key, value);
        } else {
            left_out.push(key);
        }
    }
    let t = serde_json::from_value(serde_json::Value::Object(kept)).map_err(err)?;
    Ok((t, left_out))
}

/// The note for fields `typed` left out.
fn left_out_note(left_out: &[String]) -> Option<String> {
    (!left_out.is_empty()).then(|| {
        format!(
            "{} not as smartctl writes it: left out, the rest read",
            left_out.join(", ")
        )
    })
}

/// Parses `smartctl -j -a`; `process_exit` stands in for a missing exit status.
pub fn parse_smartctl_json(
    text: &str,
    process_exit: Option<i32>,
) -> Result<SmartctlReport, PageError> {
    let (doc, left_out): (Doc, _) = typed(smartctl_document(text)?)?;
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
        .chain(left_out_note(&left_out).map(|n| crate::model::text::neutralize_controls(&n)))
        .collect();
    let passed = doc.smart_status.as_ref().and_then(|s| s.passed);
    let drive = crate::model::AtaDrive {
        model: doc
            .model_name
            .as_deref()
            .map(crate::model::text::neutralize_controls),
        // rotation_rate 0: "Solid State Device"; absent: not reported.
        solid_state: doc.rotation_rate.map(|rpm| rpm == 0),
        sectors: doc.user_capacity.and_then(|c| c.blocks).filter(|b| *b > 0),
    };
    let ata = doc
        .ata_smart_attributes
        .and_then(|t| t.table)
        .map(|rows| ata_from_rows(rows, passed, drive));
    Ok(SmartctlReport {
        version,
        exit_status,
        passed,
        smart_available: doc.smart_support.and_then(|s| s.available),
        protocol: doc
            .device
            .and_then(|d| d.protocol)
            .map(|p| crate::model::text::neutralize_controls(&p)),
        // 0 is no temperature reported (QEMU's scsi-hd).
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

/// The drive's identity in `smartctl -j` output; a field of the wrong type is left out.
pub fn parse_smartctl_identity(text: &str) -> Result<SmartctlIdentity, PageError> {
    let doc = smartctl_document(text)?;
    let string = |key: &str| {
        doc.get(key)
            .and_then(serde_json::Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(crate::model::text::neutralize_controls)
    };
    let number = |v: Option<&serde_json::Value>| v.and_then(serde_json::Value::as_u64);
    let joined = |a: &str, b: &str| match (string(a), string(b)) {
        (Some(a), Some(b)) => Some(format!("{a} {b}")),
        (a, b) => a.or(b),
    };
    let wwn = doc
        .get("wwn")
        .and_then(|w| {
            let (naa, oui, id) = (
                number(w.get("naa"))?,
                number(w.get("oui"))?,
                number(w.get("id"))?,
            );
            Some(format!("naa.{naa:x}{oui:06x}{id:09x}"))
        })
        .or_else(|| {
            let lu = string("logical_unit_id")?;
            let hex = lu.strip_prefix("0x").unwrap_or(&lu).to_lowercase();
            hex.chars()
                .all(|c| c.is_ascii_hexdigit())
                .then(|| format!("naa.{hex}"))
        })
        .or_else(|| {
            let eui = doc.get("nvme_namespaces")?.get(0)?.get("eui64")?;
            let (oui, ext) = (number(eui.get("oui"))?, number(eui.get("ext_id"))?);
            Some(format!("eui.{oui:06x}{ext:010x}"))
        });
    Ok(SmartctlIdentity {
        model_family: string("model_family"),
        model: string("model_name")
            .or_else(|| string("scsi_model_name"))
            .or_else(|| joined("scsi_vendor", "scsi_product"))
            .or_else(|| joined("vendor", "product")),
        serial: string("serial_number"),
        wwn,
        firmware: string("firmware_version")
            .or_else(|| string("scsi_revision"))
            .or_else(|| string("revision")),
        capacity_bytes: number(doc.get("user_capacity").and_then(|c| c.get("bytes")))
            .filter(|b| *b > 0),
        logical_block_size: number(doc.get("logical_block_size"))
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0),
        rotation_rpm: number(doc.get("rotation_rate")).and_then(|n| u32::try_from(n).ok()),
        form_factor: doc
            .get("form_factor")
            .and_then(|f| f.get("name"))
            .and_then(serde_json::Value::as_str)
            .map(crate::model::text::neutralize_controls),
        warning_temperature_c: None,
    })
}

fn ata_from_rows(
    rows: Vec<AtaRow>,
    passed: Option<bool>,
    drive: crate::model::AtaDrive,
) -> AtaSmart {
    let attributes = rows
        .into_iter()
        .filter_map(|r| {
            let id = r.id.filter(|id| *id != 0)?;
            let known = attribute_name(id).is_some();
            let raw_text = r
                .raw
                .as_ref()
                .and_then(|raw| raw.string.as_deref())
                .map(crate::model::text::neutralize_controls);
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
                raw_text,
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
        drive,
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

/// The logs in `smartctl -j -a` output (ATA and SCSI).
#[derive(Debug, Deserialize)]
struct LogDoc {
    smartctl: Option<Info>,
    ata_smart_data: Option<AtaData>,
    ata_smart_error_log: Option<AtaErrorLogs>,
    ata_smart_self_test_log: Option<AtaSelfTestLogs>,
    scsi_error_counter_log: Option<BTreeMap<String, ScsiCounters>>,
    #[serde(flatten)]
    rest: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct AtaData {
    self_test: Option<AtaSelfTestState>,
    capabilities: Option<AtaCapabilities>,
}

#[derive(Debug, Deserialize)]
struct AtaSelfTestState {
    status: Option<ValueString>,
    polling_minutes: Option<Polling>,
}

#[derive(Debug, Deserialize)]
struct Polling {
    short: Option<u32>,
    extended: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct AtaCapabilities {
    self_tests_supported: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct ValueString {
    value: Option<u64>,
    string: Option<String>,
}

#[derive(Debug, Deserialize)]
struct AtaErrorLogs {
    summary: Option<AtaErrorLog>,
    extended: Option<AtaErrorLog>,
}

#[derive(Debug, Deserialize)]
struct AtaErrorLog {
    count: Option<u64>,
    table: Option<Vec<AtaErrorRow>>,
}

#[derive(Debug, Deserialize)]
struct AtaErrorRow {
    error_number: Option<u64>,
    lifetime_hours: Option<u64>,
    completion_registers: Option<Registers>,
    error_description: Option<String>,
    previous_commands: Option<Vec<PreviousCommand>>,
}

#[derive(Debug, Deserialize)]
struct Registers {
    lba: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct PreviousCommand {
    command_name: Option<String>,
}

#[derive(Debug, Deserialize)]
struct AtaSelfTestLogs {
    standard: Option<AtaSelfTestLog>,
    extended: Option<AtaSelfTestLog>,
}

#[derive(Debug, Deserialize)]
struct AtaSelfTestLog {
    table: Option<Vec<AtaSelfTestRow>>,
}

#[derive(Debug, Deserialize)]
struct AtaSelfTestRow {
    #[serde(rename = "type")]
    kind: Option<ValueString>,
    status: Option<ValueString>,
    lifetime_hours: Option<u64>,
    lba: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct ScsiCounters {
    total_uncorrected_errors: Option<u64>,
    total_errors_corrected: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct ScsiSelfTest {
    code: Option<ValueString>,
    result: Option<ValueString>,
    power_on_time: Option<PowerOnTime>,
    lba_first_failure: Option<ValueOrNumber>,
}

/// smartctl writes some numbers bare and some as `{"value": N}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ValueOrNumber {
    Number(u64),
    Value { value: Option<u64> },
}

impl ValueOrNumber {
    fn get(&self) -> Option<u64> {
        match self {
            ValueOrNumber::Number(n) => Some(*n),
            ValueOrNumber::Value { value } => *value,
        }
    }
}

fn text(s: Option<String>) -> Option<String> {
    s.map(|s| crate::model::text::neutralize_controls(&s))
}

fn ata_error_log(log: AtaErrorLog, source: &str) -> ErrorLog {
    let entries = log
        .table
        .unwrap_or_default()
        .into_iter()
        .map(|r| ErrorEntry {
            number: r.error_number.unwrap_or(0),
            power_on_hours: r.lifetime_hours,
            lba: r.completion_registers.and_then(|c| c.lba),
            error: text(r.error_description).unwrap_or_else(|| "not described".into()),
            // smartctl lists the commands oldest first; the last one failed.
            command: r
                .previous_commands
                .and_then(|c| c.into_iter().last())
                .and_then(|c| text(c.command_name)),
            state: None,
        })
        .collect();
    ErrorLog {
        source: source.to_string(),
        count: log.count.unwrap_or(0),
        entries,
    }
}

fn ata_self_test_log(log: AtaSelfTestLog, source: &str) -> SelfTestLog {
    let entries = log
        .table
        .unwrap_or_default()
        .into_iter()
        .map(|r| {
            let status = r.status.as_ref().and_then(|s| s.value).unwrap_or(0xFF);
            let (outcome, result, remaining_pct) =
                super::ata_log::decode_self_test_status(u8::try_from(status).unwrap_or(0x90));
            let number = r.kind.as_ref().and_then(|k| k.value).unwrap_or(0xFF);
            SelfTestEntry {
                kind: text(r.kind.and_then(|k| k.string))
                    .unwrap_or_else(|| format!("type {number}")),
                outcome,
                result: text(r.status.and_then(|s| s.string)).unwrap_or_else(|| result.into()),
                power_on_hours: r.lifetime_hours.unwrap_or(0),
                first_failing_lba: r.lba.filter(|_| outcome == SelfTestOutcome::Failed),
                remaining_pct,
            }
        })
        .collect();
    SelfTestLog {
        source: source.to_string(),
        entries,
    }
}

/// SCSI self-test results `scsi_self_test_0` .. `_19`, newest first.
fn scsi_self_tests(rest: &BTreeMap<String, serde_json::Value>) -> Option<SelfTestLog> {
    let mut entries = Vec::new();
    for i in 0..20 {
        let Some(v) = rest.get(&format!("scsi_self_test_{i}")) else {
            continue;
        };
        let Ok(t) = serde_json::from_value::<ScsiSelfTest>(v.clone()) else {
            continue;
        };
        // SPC-4: 0 passed, 1-2 aborted, 3-7 failed, 0xF in progress.
        let value = t.result.as_ref().and_then(|r| r.value).unwrap_or(0xFF);
        let outcome = match value {
            0 => SelfTestOutcome::Passed,
            1 | 2 => SelfTestOutcome::Aborted,
            3..=7 => SelfTestOutcome::Failed,
            0xF => SelfTestOutcome::InProgress,
            _ => SelfTestOutcome::Unknown,
        };
        entries.push(SelfTestEntry {
            kind: text(t.code.and_then(|c| c.string)).unwrap_or_else(|| "self-test".into()),
            outcome,
            result: text(t.result.and_then(|r| r.string)).unwrap_or_else(|| format!("{value}")),
            power_on_hours: t.power_on_time.and_then(|p| p.hours).unwrap_or(0),
            first_failing_lba: t
                .lba_first_failure
                .and_then(|l| l.get())
                .filter(|_| outcome == SelfTestOutcome::Failed),
            remaining_pct: None,
        });
    }
    (!entries.is_empty()).then(|| SelfTestLog {
        source: "SCSI self-test results (smartctl)".into(),
        entries,
    })
}

/// The SCSI error counter log: uncorrected read, write and verify errors.
fn scsi_error_counters(counters: BTreeMap<String, ScsiCounters>) -> ErrorLog {
    let mut count = 0u64;
    let mut entries = Vec::new();
    for op in ["read", "write", "verify"] {
        let Some(c) = counters.get(op) else { continue };
        let uncorrected = c.total_uncorrected_errors.unwrap_or(0);
        count = count.saturating_add(uncorrected);
        entries.push(ErrorEntry {
            number: uncorrected,
            power_on_hours: None,
            lba: None,
            error: format!(
                "{op}: {uncorrected} uncorrected, {} corrected",
                c.total_errors_corrected.unwrap_or(0)
            ),
            command: None,
            state: None,
        });
    }
    ErrorLog {
        source: "SCSI error counter log (smartctl)".into(),
        count,
        entries,
    }
}

/// Reads the logs of `smartctl -j -a`; one not printed is "not supported".
pub fn parse_smartctl_logs(
    json: &str,
    device: &str,
    transport: Transport,
) -> Result<DriveLogs, PageError> {
    let (doc, _): (LogDoc, _) = typed(smartctl_document(json)?)?;
    let version = doc
        .smartctl
        .as_ref()
        .and_then(|i| i.version.as_ref())
        .map(|v| v.iter().map(u32::to_string).collect::<Vec<_>>().join("."));
    let none = |what: &str| format!("smartctl printed no {what} for this device");
    let error_log = match (doc.ata_smart_error_log, doc.scsi_error_counter_log) {
        (
            Some(AtaErrorLogs {
                extended: Some(l), ..
            }),
            _,
        ) => LogRead::Read(ata_error_log(
            l,
            "ATA extended comprehensive error log (smartctl)",
        )),
        (
            Some(AtaErrorLogs {
                summary: Some(l), ..
            }),
            _,
        ) => LogRead::Read(ata_error_log(l, "ATA SMART summary error log (smartctl)")),
        (_, Some(c)) => LogRead::Read(scsi_error_counters(c)),
        _ => LogRead::NotSupported {
            reason: none("error log"),
        },
    };
    let self_test_log = match doc.ata_smart_self_test_log {
        Some(AtaSelfTestLogs {
            extended: Some(l), ..
        }) => LogRead::Read(ata_self_test_log(
            l,
            "ATA extended self-test log (smartctl)",
        )),
        Some(AtaSelfTestLogs {
            standard: Some(l), ..
        }) => LogRead::Read(ata_self_test_log(l, "ATA SMART self-test log (smartctl)")),
        _ => match scsi_self_tests(&doc.rest) {
            Some(l) => LogRead::Read(l),
            None => LogRead::NotSupported {
                reason: none("self-test log"),
            },
        },
    };
    let mut self_test = SelfTestStatus::unsupported(
        "disktriage starts self-tests natively on ATA and NVMe drives only (smartctl -t \
         short starts one here)",
    );
    if let Some(st) = doc
        .ata_smart_data
        .as_ref()
        .and_then(|d| d.self_test.as_ref())
    {
        if let Some(byte) = st.status.as_ref().and_then(|s| s.value) {
            let (outcome, text, remaining) =
                super::ata_log::decode_self_test_status(u8::try_from(byte).unwrap_or(0x90));
            if outcome == SelfTestOutcome::InProgress {
                self_test.running = Some(crate::model::SelfTestProgress {
                    kind: None,
                    percent_done: 100 - remaining.unwrap_or(100),
                });
            } else {
                self_test.last = Some(text.to_string());
            }
        }
        if let Some(p) = &st.polling_minutes {
            self_test.short_minutes = p.short;
            self_test.long_minutes = p.extended;
        }
    }
    if doc
        .ata_smart_data
        .and_then(|d| d.capabilities)
        .and_then(|c| c.self_tests_supported)
        == Some(false)
    {
        self_test.unsupported_reason = Some("not supported by this drive".into());
    }
    Ok(DriveLogs {
        device: device.to_string(),
        transport,
        source: match version {
            Some(v) => format!("smartctl {v}"),
            None => "smartctl".into(),
        },
        error_log,
        self_test_log,
        self_test,
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_field_of_another_type_loses_the_field_not_the_report() {
        let text = r#"{
            "json_format_version": [1, 0],
            "smartctl": {"version": [7, 3], "exit_status": 0},
            "device": {"protocol": "ATA"},
            "smart_support": true,
            "smart_status": {"passed": true},
            "ata_smart_attributes": {"table": [
                {"id": 197, "name": "Current_Pending_Sector", "value": 100, "worst": 100,
                 "thresh": 0, "flags": {"value": 50, "prefailure": false},
                 "raw": {"value": 24, "string": "24"}}
            ]}
        }"#;
        let report = parse_smartctl_json(text, None).unwrap();
        assert_eq!(report.passed, Some(true));
        assert_eq!(report.smart_available, None, "the odd field is left out");
        assert_eq!(report.ata.unwrap().attributes[0].raw, 24);
        assert!(
            report
                .messages
                .iter()
                .any(|m| m.contains("smart_support not as smartctl writes it")),
            "{:?}",
            report.messages
        );
        // A scrutiny `--info` fragment (no header, no SMART data) is smartctl's too.
        let fragment = r#"{"device": {"protocol": "ATA"}, "model_name": "WD Red SA500",
                          "smart_support": true}"#;
        let report = parse_smartctl_json(fragment, None).unwrap();
        assert!(report.ata.is_none() && report.passed.is_none());
        // What is no smartctl output at all stays refused.
        assert!(parse_smartctl_json(r#"{"model_name": "x"}"#, None).is_err());
    }

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
        // A wrong type inside a known key loses that key, without a panic.
        let r = parse_smartctl_json(r#"{"smartctl":{"exit_status":"x"}}"#, None).unwrap();
        assert!(r.messages[0].starts_with("smartctl not as smartctl writes it"));
    }

    #[test]
    fn a_document_without_its_header_is_smartctls_when_it_has_a_device_and_smart_data() {
        // scrutiny's smart-scsi.json: smartctl's header edited out.
        let doc = r#"{"device":{"name":"/dev/sdg","protocol":"SCSI"},
            "model_name":"SEAGATE ST4000NM0043","smart_status":{"passed":true},
            "scsi_grown_defect_list":56}"#;
        let r = parse_smartctl_json(doc, None).unwrap();
        assert_eq!(r.passed, Some(true));
        assert_eq!(r.scsi_grown_defects, Some(56));
        let id = parse_smartctl_identity(doc).unwrap();
        assert_eq!(id.model.as_deref(), Some("SEAGATE ST4000NM0043"));
        assert!(parse_smartctl_logs(doc, "sdg", Transport::Scsi).is_ok());
        // A device alone, or SMART data without a device, is anybody's JSON.
        for other in [
            r#"{"device":{"protocol":"SCSI"}}"#,
            r#"{"smart_status":{"passed":true}}"#,
            r#"{"device":{"name":"x"},"smart_status":{"passed":true}}"#,
        ] {
            let e = parse_smartctl_json(other, None).unwrap_err();
            assert!(e.problem.contains("not smartctl output"), "{other}: {e}");
        }
    }

    #[test]
    fn out_of_range_temperatures_are_unknown_not_a_panic() {
        // A temperature near i64::MAX overflowed the Celsius-to-Kelvin addition.
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
