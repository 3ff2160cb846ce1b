//! A smartctl report saved to a file, in either of smartctl's outputs: `smartctl -j` JSON
//! (`super::smartctl`) or `-x`/`-a` text (`super::smartctl_text`), told apart by the content
//! (JSON starts with `{`), read into one `SavedReport`: the health data, the drive's identity
//! and its logs, under the transport its protocol names.

use std::borrow::Cow;

use super::PageError;
use super::smartctl::{parse_smartctl_identity, parse_smartctl_json, parse_smartctl_logs};
use super::smartctl_text::{
    parse_smartctl_text, parse_smartctl_text_identity, parse_smartctl_text_logs,
};
use crate::model::{DriveLogs, LogRead, SavedFormat, SavedReport, Transport};

/// The transport smartctl's protocol name means ("ATA", "NVMe", "SCSI").
fn transport_of(protocol: Option<&str>) -> Transport {
    match protocol.map(str::to_ascii_lowercase).as_deref() {
        Some("ata") => Transport::Sata,
        Some("nvme") => Transport::Nvme,
        Some("scsi") => Transport::Scsi,
        _ => Transport::Unknown,
    }
}

/// A saved report as text: UTF-8 (lossy, so Latin-1 keeps its ASCII) or UTF-16.
pub fn report_text(bytes: &[u8]) -> Cow<'_, str> {
    let utf16 = |rest: &[u8], le: bool| -> String {
        let units = rest.chunks_exact(2).map(|c| {
            let pair = [c[0], c[1]];
            if le {
                u16::from_le_bytes(pair)
            } else {
                u16::from_be_bytes(pair)
            }
        });
        char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect()
    };
    match bytes {
        [0xff, 0xfe, rest @ ..] => Cow::Owned(utf16(rest, true)),
        [0xfe, 0xff, rest @ ..] => Cow::Owned(utf16(rest, false)),
        _ => String::from_utf8_lossy(bytes),
    }
}

/// `parse_saved_report` on a file's bytes (`report_text`).
pub fn parse_saved_report_bytes(bytes: &[u8], device: &str) -> Result<SavedReport, PageError> {
    parse_saved_report(&report_text(bytes), device)
}

/// Reads a saved report, its logs filed under `device`.
pub fn parse_saved_report(text: &str, device: &str) -> Result<SavedReport, PageError> {
    // A byte-order mark (Windows editors) is not part of either format.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim_start().starts_with('{') {
        let report = parse_smartctl_json(text, None)?;
        let identity = parse_smartctl_identity(text)?;
        let transport = transport_of(report.protocol.as_deref());
        let logs = parse_smartctl_logs(text, device, transport)
            .unwrap_or_else(|e| unread_logs(device, transport, &e));
        return Ok(SavedReport {
            format: SavedFormat::Json,
            transport,
            identity,
            report,
            logs,
            fitness: super::fitness::fitness_of_json(text),
        });
    }
    let report = parse_smartctl_text(text)?;
    let identity = parse_smartctl_text_identity(text)?;
    let transport = transport_of(report.protocol.as_deref());
    let logs = parse_smartctl_text_logs(text, device, transport)
        .unwrap_or_else(|e| unread_logs(device, transport, &e));
    Ok(SavedReport {
        format: SavedFormat::Text,
        transport,
        identity,
        report,
        logs,
        fitness: super::fitness::fitness_of_text(text),
    })
}

fn unread_logs(device: &str, transport: Transport, e: &PageError) -> DriveLogs {
    let error = format!("the report's logs are unreadable: {e}");
    let mut logs = DriveLogs::unavailable(device, transport, &error);
    logs.error_log = LogRead::Failed {
        error: error.clone(),
    };
    logs.self_test_log = LogRead::Failed { error };
    logs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_text_are_told_apart_by_content() {
        let json = r#"{"json_format_version":[1,0],"smartctl":{"version":[7,3],"exit_status":0},
            "device":{"protocol":"NVMe"},"model_name":"X","smart_status":{"passed":true}}"#;
        let r = parse_saved_report(json, "a.json").unwrap();
        assert_eq!(r.format, SavedFormat::Json);
        assert_eq!(r.transport, Transport::Nvme);
        assert_eq!(r.identity.model.as_deref(), Some("X"));
        assert_eq!(r.logs.device, "a.json");
        let text = "smartctl 7.4 2023-08-01 r5530 [x86_64-linux] (local build)\n\
                    === START OF INFORMATION SECTION ===\nDevice Model:     Y\n\n\
                    === START OF READ SMART DATA SECTION ===\n\
                    SMART overall-health self-assessment test result: PASSED\n";
        let r = parse_saved_report(&format!("\u{feff}{text}"), "b.txt").unwrap();
        assert_eq!(r.format, SavedFormat::Text);
        assert_eq!(r.transport, Transport::Sata);
        assert_eq!(r.report.passed, Some(true));
        assert_eq!(r.identity.model.as_deref(), Some("Y"));
    }

    #[test]
    fn utf16_from_windows_and_latin1_are_read() {
        let text = "smartctl 7.3 2022-02-28 r5338 [x86_64-w64-mingw32-w10-b19045] (sf-7.3-1)\r\n\
                    === START OF INFORMATION SECTION ===\r\nDevice Model:     Z\r\n";
        let mut le = vec![0xff, 0xfe];
        le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        let r = parse_saved_report_bytes(&le, "ps.txt").unwrap();
        assert_eq!(r.identity.model.as_deref(), Some("Z"));
        let mut be = vec![0xfe, 0xff];
        be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(parse_saved_report_bytes(&be, "ps.txt").unwrap(), r);
        // An odd byte at the end, or a lone surrogate, is a replacement character.
        le.extend([0x00, 0xd8, 0x41]);
        assert!(parse_saved_report_bytes(&le, "ps.txt").is_ok());
        let latin1 = text.replace('Z', "Z\u{a0}").replace('\u{a0}', "\u{fffd}");
        let mut bytes = latin1.into_bytes();
        bytes.push(0xa0);
        assert!(parse_saved_report_bytes(&bytes, "l.txt").is_ok());
    }

    #[test]
    fn anything_else_is_an_error_saying_why() {
        for junk in ["", "hello\nworld\n", "{not json", "[1,2]", "\u{1b}[2J"] {
            let e = parse_saved_report(junk, "x").unwrap_err();
            assert!(!e.problem.is_empty(), "{junk:?}");
        }
        let e = parse_saved_report("{}", "x").unwrap_err();
        assert!(e.problem.contains("not smartctl output"), "{e}");
    }
}
