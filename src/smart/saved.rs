//! A smartctl report saved to a file, in either of smartctl's outputs: `smartctl -j` JSON
//! (`super::smartctl`) or `-x`/`-a` text (`super::smartctl_text`), told apart by the content
//! (JSON starts with `{`), read into one `SavedReport`: the health data, the drive's identity
//! and its logs, under the transport its protocol names.

use super::PageError;
use super::smartctl::{parse_smartctl_identity, parse_smartctl_json, parse_smartctl_logs};
use super::smartctl_text::{
    parse_smartctl_text, parse_smartctl_text_identity, parse_smartctl_text_logs,
};
use crate::model::{DriveLogs, LogRead, SavedFormat, SavedReport, Transport};

/// The transport of a report's protocol as smartctl names it ("ATA", "NVMe", "SCSI").
fn transport_of(protocol: Option<&str>) -> Transport {
    match protocol.map(str::to_ascii_lowercase).as_deref() {
        Some("ata") => Transport::Sata,
        Some("nvme") => Transport::Nvme,
        Some("scsi") => Transport::Scsi,
        _ => Transport::Unknown,
    }
}

/// Reads a saved report; `device` is the name its logs are filed under. Text that is neither
/// smartctl's JSON nor its text is an error saying why. Logs the report has but that cannot
/// be read are "failed" with the reason, not an error: the health data still count.
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
    fn anything_else_is_an_error_saying_why() {
        for junk in ["", "hello\nworld\n", "{not json", "[1,2]", "\u{1b}[2J"] {
            let e = parse_saved_report(junk, "x").unwrap_err();
            assert!(!e.problem.is_empty(), "{junk:?}");
        }
        let e = parse_saved_report("{}", "x").unwrap_err();
        assert!(e.problem.contains("not smartctl output"), "{e}");
    }
}
