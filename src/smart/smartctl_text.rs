//! `smartctl -x` and `smartctl -a` text (smartmontools 5.x to 7.x) as admins and hardware
//! probes save it: the drive's identity (`parse_smartctl_text_identity`), its health line, the
//! ATA attribute table in both layouts, the NVMe SMART/Health log and SCSI's health and grown
//! defects (`parse_smartctl_text`), and the error and self-test logs (`logs`,
//! `parse_smartctl_text_logs`), into the same model as `smartctl -j` (`super::smartctl`).
//!
//! The text was printed for a person: columns move between versions and layouts, numbers carry
//! the locale's thousands separators (`1,234`, `1 234`, `1.234`), captures from Windows come
//! with CRLF line ends and in Latin-1 (the caller reads bytes lossily). What is not recognised
//! is left out; a text that is not smartctl's is a `PageError`, never a panic.

mod logs;

use std::collections::BTreeMap;

use super::PageError;
use super::ata::{attribute_name, decode_raw};
use crate::model::smart::PLAUSIBLE_CELSIUS;
use crate::model::text::neutralize_controls;
use crate::model::{
    AtaAttribute, AtaDrive, AtaSmart, AtaSmartStatus, AttributeState, NvmeHealth, SmartctlIdentity,
    SmartctlReport,
};

pub use logs::parse_smartctl_text_logs;

const WHAT: &str = "smartctl text";

/// The raw values an ATA attribute can hold: 48 bits.
const RAW48: u64 = 0xffff_ffff_ffff;

/// Messages kept from one report: smartctl repeats some per log entry.
const MAX_MESSAGES: usize = 20;

/// The report's lines (CRLF and a lone CR end a line too), tabs as spaces.
struct Text {
    lines: Vec<String>,
    /// The information section's `Key: value` lines, first of each, spaces collapsed.
    info: BTreeMap<String, String>,
    /// The banner's version ("7.4", "pre-7.4", "5.41").
    version: Option<String>,
    /// Each line's `Key: value`, if any (read once for every reader).
    fields: Vec<Option<(String, String)>>,
}

/// The protocol of the report's device, by what smartctl printed for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    Ata,
    Nvme,
    Scsi,
}

impl Protocol {
    fn as_str(self) -> &'static str {
        match self {
            Protocol::Ata => "ATA",
            Protocol::Nvme => "NVMe",
            Protocol::Scsi => "SCSI",
        }
    }
}

/// The words of a line with their byte offsets, split at spaces.
fn words(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
}

/// `text` with runs of spaces made one, trimmed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A `Key: value` line: the key's spaces collapsed, the value trimmed.
fn field(line: &str) -> Option<(String, &str)> {
    let (key, value) = line.split_once(':')?;
    let key = collapse(key);
    (!key.is_empty()).then(|| (key, value.trim()))
}

/// A count as smartctl prints it, in any locale (`1,234`, `1 234`), up to `[` or `%`.
pub(crate) fn count(text: &str) -> Option<u128> {
    let head = text.split(['[', '%']).next()?.trim();
    let mut n: u128 = 0;
    let mut digits = 0;
    for c in head.chars() {
        if let Some(d) = c.to_digit(10) {
            n = n.checked_mul(10)?.checked_add(u128::from(d))?;
            digits += 1;
        } else if !matches!(
            c,
            ',' | '.' | '\'' | ' ' | '\u{a0}' | '\u{202f}' | '\u{fffd}'
        ) {
            return None;
        }
    }
    (digits > 0).then_some(n)
}

/// `count` as a u64, saturating.
fn count64(text: &str) -> Option<u64> {
    count(text).map(|n| u64::try_from(n).unwrap_or(u64::MAX))
}

/// The leading whole number of a text ("35 Celsius", "-5 C").
fn leading_int(text: &str) -> Option<i64> {
    let t = text.trim_start();
    let (sign, digits) = match t.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, t),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits.get(..end)?.parse::<i64>().ok().map(|n| sign * n)
}

/// The leading integer of a printed ATA raw value (`35 (Min/Max 14/50)` is 35); else 0.
fn raw_leading(text: &str) -> u64 {
    let t = text.trim();
    let (digits, radix) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (t, 10),
    };
    let mut n: u64 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else { break };
        n = n
            .saturating_mul(u64::from(radix))
            .saturating_add(u64::from(d));
    }
    n.min(RAW48)
}

/// A byte written as `0x04` (or decimal).
fn byte(text: &str) -> Option<u8> {
    let t = text.split_whitespace().next()?;
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u8::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    }
}

/// A display-safe copy of a value smartctl printed; `None` when empty.
fn text_of(value: &str) -> Option<String> {
    let v = collapse(value);
    (!v.is_empty()).then(|| neutralize_controls(&v))
}

impl Text {
    /// Reads the banner and information section; without either, it is not smartctl's.
    fn read(text: &str) -> Result<Text, PageError> {
        let lines: Vec<String> = text
            .split('\n')
            .flat_map(|l| l.strip_suffix('\r').unwrap_or(l).split('\r'))
            .map(|l| {
                l.chars()
                    .map(|c| if c == '\t' || c == '\0' { ' ' } else { c })
                    .collect()
            })
            .collect();
        let version = lines.iter().take(40).find_map(|l| {
            let rest = l.trim_start().strip_prefix("smartctl ")?;
            let v = rest.split_whitespace().next()?;
            (v.starts_with(|c: char| c.is_ascii_digit()) || v.starts_with("pre-"))
                .then(|| neutralize_controls(v))
        });
        let sections = lines.iter().any(|l| l.starts_with("=== START OF"));
        if version.is_none() && !sections {
            return Err(PageError::new(
                WHAT,
                "neither smartctl's banner (\"smartctl 7.4 ...\") nor a \"=== START OF ... \
                 SECTION ===\" line: not smartctl output",
            ));
        }
        let fields: Vec<Option<(String, String)>> = lines
            .iter()
            .map(|l| field(l).map(|(k, v)| (k, v.to_string())))
            .collect();
        let mut info = BTreeMap::new();
        for (line, f) in lines.iter().zip(&fields) {
            if line.starts_with("=== START OF READ SMART DATA")
                || line.starts_with("=== START OF SMART DATA")
            {
                break;
            }
            if let Some((key, value)) = f {
                info.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
        let parsed = Text {
            lines,
            info,
            version,
            fields,
        };
        if !parsed.has_content() {
            return Err(PageError::new(
                WHAT,
                "smartctl's banner and nothing after it: no information or SMART section \
                 (a report cut short?)",
            ));
        }
        Ok(parsed)
    }

    /// Anything besides the banner.
    fn has_content(&self) -> bool {
        !self.info.is_empty()
            || self.lines.iter().any(|l| {
                l.starts_with("=== START OF")
                    || l.contains("overall-health")
                    || l.starts_with("SMART Health Status")
                    || l.trim_start().starts_with("ID#")
                    || is_message(l.trim())
            })
    }

    fn info(&self, key: &str) -> Option<&str> {
        self.info
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// The first line starting with `prefix` (after spaces), from `prefix` on.
    fn line_starting(&self, prefix: &str) -> Option<(usize, &str)> {
        self.lines
            .iter()
            .enumerate()
            .find(|(_, l)| l.trim_start().starts_with(prefix))
            .map(|(i, l)| (i, l.trim_start()))
    }

    /// The value of the first `Key: value` line with this key.
    fn value_anywhere(&self, key: &str) -> Option<&str> {
        self.key_values().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Every `Key: value` line's key and value, in order.
    fn key_values(&self) -> impl Iterator<Item = (&str, &str)> {
        self.fields
            .iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }

    fn protocol(&self) -> Protocol {
        let nvme = self
            .line_starting("SMART/Health Information (NVMe")
            .is_some()
            || self.info("Model Number").is_some()
            || self.info("NVMe Version").is_some();
        let ata = self.info("Device Model").is_some()
            || self.info("ATA Version is").is_some()
            || self.line_starting("ID#").is_some();
        let scsi = self.info("Vendor").is_some()
            || self.info("Product").is_some()
            || self.line_starting("SMART Health Status").is_some();
        match (nvme, ata, scsi) {
            (true, _, _) => Protocol::Nvme,
            (_, true, _) => Protocol::Ata,
            (_, _, true) => Protocol::Scsi,
            _ => Protocol::Ata,
        }
    }

    /// The drive's identity from the information section.
    fn identity(&self) -> SmartctlIdentity {
        let protocol = self.protocol();
        let model = match protocol {
            Protocol::Ata => self.info("Device Model").and_then(text_of),
            Protocol::Nvme => self.info("Model Number").and_then(text_of),
            Protocol::Scsi => {
                let joined = [self.info("Vendor"), self.info("Product")]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" ");
                // smartctl 5.x: "Device: SEAGATE ST3300657SS Version: 0006" on one line.
                let old = self
                    .info("Device")
                    .and_then(|d| d.split("Version:").next())
                    .filter(|_| self.info("Device").is_some_and(|d| d.contains("Version:")));
                text_of(&joined).or_else(|| old.and_then(text_of))
            }
        };
        let capacity_bytes = match protocol {
            Protocol::Nvme => self
                .info("Namespace 1 Size/Capacity")
                .or_else(|| self.info("Total NVM Capacity"))
                .or_else(|| self.info("User Capacity"))
                .and_then(|v| count64(v.split("bytes").next().unwrap_or(v))),
            _ => self
                .info("User Capacity")
                .and_then(|v| count64(v.split("bytes").next().unwrap_or(v))),
        }
        .filter(|b| *b > 0);
        let logical_block_size = self
            .info("Sector Sizes")
            .or_else(|| self.info("Sector Size"))
            .or_else(|| self.info("Logical block size"))
            .or_else(|| self.info("Namespace 1 Formatted LBA Size"))
            .and_then(|v| count(v.split_whitespace().next().unwrap_or("")))
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0);
        let rotation_rpm = self.info("Rotation Rate").and_then(|v| {
            if v.starts_with("Solid State") {
                Some(0)
            } else {
                v.strip_suffix("rpm")
                    .and_then(count)
                    .and_then(|n| u32::try_from(n).ok())
            }
        });
        SmartctlIdentity {
            model_family: self.info("Model Family").and_then(text_of),
            model,
            serial: self
                .info("Serial Number")
                .or_else(|| self.info("Serial number"))
                .and_then(text_of),
            wwn: self.wwn(protocol),
            firmware: self
                .info("Firmware Version")
                .or_else(|| self.info("Revision"))
                .and_then(text_of),
            capacity_bytes,
            logical_block_size,
            rotation_rpm,
            form_factor: self.info("Form Factor").and_then(text_of),
            warning_temperature_c: self
                .info("Warning Comp. Temp. Threshold")
                .and_then(leading_int),
        }
    }

    /// The WWN as sysfs spells it, unless a hardware probe masked part of it.
    fn wwn(&self, protocol: Protocol) -> Option<String> {
        let hex = |v: &str| {
            let h: String = v.split_whitespace().collect::<String>().to_lowercase();
            let h = h.strip_prefix("0x").unwrap_or(&h).to_string();
            (h.len() >= 8 && h.chars().all(|c| c.is_ascii_hexdigit())).then_some(h)
        };
        match protocol {
            Protocol::Ata => self
                .info("LU WWN Device Id")
                .and_then(hex)
                .map(|h| format!("naa.{h}")),
            Protocol::Scsi => self
                .info("Logical Unit id")
                .and_then(hex)
                .map(|h| format!("naa.{h}")),
            Protocol::Nvme => self
                .info("Namespace 1 IEEE EUI-64")
                .and_then(hex)
                .map(|h| format!("eui.{h}")),
        }
    }

    /// `SMART support is:` (twice: available, then enabled).
    fn smart_support(&self) -> (Option<bool>, Option<bool>) {
        let mut available = None;
        let mut enabled = None;
        for (key, value) in self.key_values() {
            if key != "SMART support is" {
                continue;
            }
            if value.starts_with("Available") {
                available = Some(true);
            } else if value.starts_with("Unavailable") {
                available = Some(false);
            } else if value.starts_with("Enabled") {
                enabled = Some(true);
            } else if value.starts_with("Disabled") {
                enabled = Some(false);
            }
        }
        (available, enabled)
    }
}

/// A line of smartctl's own warnings and errors (trimmed).
fn is_message(l: &str) -> bool {
    // "Warning:" and "Warning!", not NVMe's "Warning Comp. Temperature Time".
    l.starts_with("Warning:")
        || l.starts_with("Warning!")
        || l.starts_with("Smartctl open device")
        || l.starts_with("SMART Status not supported")
        || l.starts_with("=======>")
        || (l.starts_with("Read ") && l.contains("failed"))
        || l.starts_with("Smartctl: Device Read Identity Failed")
}

/// smartctl's own warnings and errors among `lines`, display-safe.
fn messages_of(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| is_message(l))
        .map(|l| neutralize_controls(&collapse(l)))
        .collect()
}

/// Parses `smartctl -x`/`-a` text, or any part of it (`-H`, `-A`, `-i`). The text has no exit
/// status: 2 when it says smartctl could not open or identify the device, else 0.
pub fn parse_smartctl_text(text: &str) -> Result<SmartctlReport, PageError> {
    let t = Text::read(text)?;
    let protocol = t.protocol();
    let identity = t.identity();
    let mut messages = messages_of(&t.lines);
    messages.dedup();
    messages.truncate(MAX_MESSAGES);
    let open_failed = messages.iter().any(|m| {
        m.starts_with("Smartctl open device")
            || m.contains("Read Device Identity failed")
            || m.contains("Device Read Identity Failed")
    });
    let (smart_available, smart_enabled) = t.smart_support();
    let (passed, scsi_ie_string) = health(&t);
    let ata = match protocol {
        Protocol::Ata => attribute_table(&t).map(|attributes| {
            let status_note = messages
                .iter()
                .find(|m| {
                    m.starts_with("SMART Status not supported")
                        || m.contains("based on an Attribute check")
                })
                .cloned();
            let attribute_problem = messages
                .iter()
                .find(|m| m.contains("SMART Attribute") || m.starts_with("Read SMART Data"))
                .cloned();
            AtaSmart {
                smart_supported: smart_available != Some(false),
                smart_enabled: smart_enabled != Some(false),
                status: match passed {
                    Some(true) => AtaSmartStatus::Good,
                    Some(false) => AtaSmartStatus::Failing,
                    None => AtaSmartStatus::Unknown,
                },
                status_note,
                attributes,
                attribute_problem,
                drive: AtaDrive {
                    model: identity.model.clone(),
                    solid_state: identity.rotation_rpm.map(|rpm| rpm == 0),
                    sectors: match (identity.capacity_bytes, identity.logical_block_size) {
                        (Some(bytes), Some(size)) => Some(bytes / u64::from(size)),
                        (Some(bytes), None) => Some(bytes / 512),
                        _ => None,
                    }
                    .filter(|s| *s > 0),
                },
            }
        }),
        _ => None,
    };
    let nvme = nvme_health(&t);
    let temperature_c = match protocol {
        Protocol::Nvme => nvme.as_ref().and_then(NvmeHealth::temperature_c),
        Protocol::Scsi => t
            .value_anywhere("Current Drive Temperature")
            .and_then(leading_int),
        // SCT's reading where -x printed it; else the verdict reads the attributes.
        Protocol::Ata => t
            .value_anywhere("Current Temperature")
            .and_then(leading_int),
    }
    .filter(|c| *c != 0 && PLAUSIBLE_CELSIUS.contains(c));
    let power_on_hours = match protocol {
        Protocol::Nvme => nvme
            .as_ref()
            .map(|n| u64::try_from(n.power_on_hours).unwrap_or(u64::MAX)),
        Protocol::Scsi => t
            .line_starting("Accumulated power on time")
            .and_then(|(_, l)| l.split_once("hours:minutes"))
            .and_then(|(_, v)| leading_int(v))
            .and_then(|h| u64::try_from(h).ok()),
        Protocol::Ata => ata.as_ref().and_then(|a| ata_power_on_hours(&a.attributes)),
    };
    Ok(SmartctlReport {
        version: t.version.clone(),
        exit_status: if open_failed { 2 } else { 0 },
        passed,
        smart_available,
        protocol: Some(protocol.as_str().to_string()),
        temperature_c,
        power_on_hours,
        scsi_grown_defects: t
            .value_anywhere("Elements in grown defect list")
            .and_then(count64),
        scsi_ie_string,
        ata,
        nvme,
        messages,
    })
}

/// The drive's identity as the report's information section gives it.
pub fn parse_smartctl_text_identity(text: &str) -> Result<SmartctlIdentity, PageError> {
    Ok(Text::read(text)?.identity())
}

/// The health line: "...self-assessment test result: PASSED" (ATA, NVMe) or "SMART Health
/// Status: OK" (SCSI; anything else is the informational exception).
fn health(t: &Text) -> (Option<bool>, Option<String>) {
    for (key, value) in t.key_values() {
        if key.ends_with("overall-health self-assessment test result") {
            let v = value.trim_end_matches('!');
            return match v {
                "PASSED" => (Some(true), None),
                "FAILED" => (Some(false), None),
                _ => (None, None),
            };
        }
        if key == "SMART Health Status" {
            return if value == "OK" {
                (Some(true), None)
            } else {
                (Some(false), text_of(value))
            };
        }
    }
    (None, None)
}

/// Power-on hours from attribute 9 (`39384h+...` is hours; else its name's unit).
fn ata_power_on_hours(attributes: &[AtaAttribute]) -> Option<u64> {
    let a = attributes.iter().find(|a| a.id == 9)?;
    let text = a.raw_text.as_deref().unwrap_or("");
    if text.contains('h') {
        return Some(a.raw);
    }
    let divisor = if a.name.contains("Half_Min") {
        120
    } else if a.name.contains("Minutes") {
        60
    } else if a.name.contains("Seconds") {
        3600
    } else {
        1
    };
    Some(a.raw / divisor)
}

/// The columns of an attribute table, by the header's names.
struct Columns {
    /// Words before RAW_VALUE: the raw value is the rest of the line.
    before_raw: usize,
    flags: Option<usize>,
    value: Option<usize>,
    worst: Option<usize>,
    thresh: Option<usize>,
    kind: Option<usize>,
    failed: Option<usize>,
}

impl Columns {
    fn of(header: &str) -> Option<Columns> {
        let names: Vec<&str> = header.split_whitespace().collect();
        let at = |n: &[&str]| names.iter().position(|w| n.contains(w));
        Some(Columns {
            before_raw: at(&["RAW_VALUE"])?,
            flags: at(&["FLAG", "FLAGS"]),
            value: at(&["VALUE"]),
            worst: at(&["WORST"]),
            thresh: at(&["THRESH"]),
            kind: at(&["TYPE"]),
            failed: at(&["FAIL", "WHEN_FAILED"]),
        })
    }
}

/// The ATA attribute table under "Vendor Specific SMART Attributes", else the longest.
fn attribute_table(t: &Text) -> Option<Vec<AtaAttribute>> {
    let mut tables: Vec<(bool, Vec<AtaAttribute>)> = Vec::new();
    for (i, line) in t.lines.iter().enumerate() {
        if !line.trim_start().starts_with("ID#") {
            continue;
        }
        let Some(columns) = Columns::of(line) else {
            continue;
        };
        let vendor = i
            .checked_sub(1)
            .and_then(|p| t.lines.get(p))
            .is_some_and(|p| p.starts_with("Vendor Specific SMART Attributes"));
        let rows = t
            .lines
            .iter()
            .skip(i + 1)
            .map_while(|l| attribute_row(l, &columns))
            .collect();
        tables.push((vendor, rows));
    }
    let vendor = tables.iter().rposition(|(v, _)| *v);
    let pick = match vendor {
        Some(i) => i,
        None => tables
            .iter()
            .enumerate()
            .max_by_key(|(i, (_, rows))| (rows.len(), *i))
            .map(|(i, _)| i)?,
    };
    tables.into_iter().nth(pick).map(|(_, rows)| rows)
}

/// One attribute row; `None` ends the table.
fn attribute_row(line: &str, c: &Columns) -> Option<AtaAttribute> {
    let w = words(line);
    let (_, id_word) = *w.first()?;
    let id = match id_word
        .strip_prefix("0x")
        .or_else(|| id_word.strip_prefix("0X"))
    {
        Some(hex) => u8::from_str_radix(hex, 16).ok()?,
        None => id_word.parse::<u8>().ok()?,
    };
    if id == 0 || w.len() <= c.before_raw {
        return None;
    }
    let (raw_at, _) = *w.get(c.before_raw)?;
    let raw_text = line.get(raw_at..)?.trim_end();
    let col = |i: Option<usize>| i.and_then(|i| w.get(i)).map(|(_, s)| *s);
    // "---": no value or threshold (raw-only attributes).
    let num = |i: Option<usize>| col(i).and_then(|s| s.parse::<u8>().ok());
    let value = num(c.value);
    let worst = num(c.worst);
    let threshold = num(c.thresh);
    if col(c.value).is_some_and(|s| value.is_none() && s != "---") {
        return None;
    }
    let flags = match col(c.flags) {
        Some(f) => match f.strip_prefix("0x") {
            Some(hex) => u16::from_str_radix(hex, 16).unwrap_or(0),
            None => brief_flags(f),
        },
        None => 0,
    };
    // `-a` says it in words (Pre-fail, Old_age); `-x` in flag bit 0 (P).
    let prefailure = match col(c.kind) {
        Some(kind) => kind.starts_with("Pre"),
        None => flags & 1 != 0,
    };
    let state = match col(c.failed) {
        Some("NOW" | "FAILING_NOW") => AttributeState::FailingNow,
        Some("Past" | "In_the_past") => AttributeState::FailedInPast,
        Some("-") => match threshold {
            None | Some(0) => AttributeState::NoThreshold,
            Some(_) => AttributeState::Ok,
        },
        _ => match (threshold, value, worst) {
            (None | Some(0), _, _) => AttributeState::NoThreshold,
            (Some(t), Some(v), _) if v <= t => AttributeState::FailingNow,
            (Some(t), _, Some(wst)) if wst <= t => AttributeState::FailedInPast,
            _ => AttributeState::Ok,
        },
    };
    let known = attribute_name(id).is_some();
    let raw = raw_leading(raw_text);
    let raw_bytes: [u8; 6] = {
        let b = raw.to_le_bytes();
        [b[0], b[1], b[2], b[3], b[4], b[5]]
    };
    Some(AtaAttribute {
        id,
        name: col(Some(1))
            .map(neutralize_controls)
            .unwrap_or_else(|| "Unknown_Attribute".into()),
        known,
        flags,
        prefailure,
        value: value.unwrap_or(0),
        worst: worst.unwrap_or(0),
        threshold,
        raw,
        decoded: if known {
            decode_raw(id, &raw_bytes)
        } else {
            None
        },
        raw_text: Some(neutralize_controls(raw_text)),
        state,
    })
}

/// `-x`'s brief flags (`PO--CK`): a letter per bit, in order; `+` marks other bits.
fn brief_flags(letters: &str) -> u16 {
    letters
        .chars()
        .zip(['P', 'O', 'S', 'R', 'C', 'K'])
        .enumerate()
        .filter(|(_, (got, want))| got == want)
        .fold(0, |acc, (bit, _)| acc | (1 << bit))
}

/// The NVMe SMART/Health Information section, if the report has one.
fn nvme_health(t: &Text) -> Option<NvmeHealth> {
    let (start, _) = t.line_starting("SMART/Health Information (NVMe")?;
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    let mut sensors = Vec::new();
    for l in t.lines.iter().skip(start + 1) {
        let Some((key, value)) = field(l) else {
            break;
        };
        if let Some(n) = key.strip_prefix("Temperature Sensor ") {
            let celsius = leading_int(value);
            if let (Ok(n), Some(c)) = (n.parse::<u8>(), celsius)
                && let Some(k) = c.checked_add(273).and_then(|k| u16::try_from(k).ok())
            {
                sensors.push((n, k));
            }
            continue;
        }
        fields.entry(key).or_insert_with(|| value.to_string());
    }
    let get = |k: &str| fields.get(k).map(String::as_str);
    // Without its first field the section was cut short: no health data.
    let critical_warning = byte(get("Critical Warning")?)?;
    let n = |k: &str| get(k).and_then(count).unwrap_or(0);
    let pct = |k: &str| {
        get(k)
            .and_then(count)
            .map_or(0, |v| u8::try_from(v).unwrap_or(u8::MAX))
    };
    let minutes = |k: &str| {
        get(k)
            .and_then(count)
            .map_or(0, |v| u32::try_from(v).unwrap_or(u32::MAX))
    };
    Some(NvmeHealth {
        critical_warning,
        critical_warnings: super::nvme::critical_warning_names(critical_warning),
        // smartctl prints Celsius; the log (and this struct) counts Kelvin.
        temperature_kelvin: get("Temperature")
            .and_then(leading_int)
            .and_then(|c| c.checked_add(273))
            .and_then(|k| u16::try_from(k).ok())
            .unwrap_or(0),
        available_spare_pct: pct("Available Spare"),
        available_spare_threshold_pct: pct("Available Spare Threshold"),
        percentage_used: pct("Percentage Used"),
        data_units_read: n("Data Units Read"),
        data_units_written: n("Data Units Written"),
        host_read_commands: n("Host Read Commands"),
        host_write_commands: n("Host Write Commands"),
        controller_busy_minutes: n("Controller Busy Time"),
        power_cycles: n("Power Cycles"),
        power_on_hours: n("Power On Hours"),
        unsafe_shutdowns: n("Unsafe Shutdowns"),
        media_errors: n("Media and Data Integrity Errors"),
        error_log_entries: n("Error Information Log Entries"),
        warning_temp_minutes: minutes("Warning Comp. Temperature Time"),
        critical_temp_minutes: minutes("Critical Comp. Temperature Time"),
        temperature_sensors_kelvin: sensors,
    })
}

#[cfg(test)]
mod tests;
