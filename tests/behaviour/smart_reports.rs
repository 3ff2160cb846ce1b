//! The smartctl parsers on real drives' reports: the shared set beside the repository
//! (`../shared/data/smart-reports`, 190 `smartctl -x`/`-a` texts and 194 `smartctl -j`
//! documents from linuxhw, smartctl_exporter, scrutiny, netdata and py-SMART; its README says
//! where each came from). Every report parses, or fails for the reason listed here, and what
//! is read agrees with the set's MANIFEST.tsv: the health result, the raw values of 5, 10,
//! 187, 188, 196, 197, 198 and 199 exactly as smartctl printed them, and the NVMe health
//! fields. Skipped where the set is absent (an error with `DISKTRIAGE_REQUIRE_ROOT=1`).

use std::collections::BTreeMap;
use std::path::Path;

use disktriage::model::{SavedFormat, SavedReport};
use disktriage::smart::parse_saved_report_bytes;

use crate::common;

/// Reports expected to fail to parse, with why: none. The partial documents (`-jA` only,
/// `--info` only, an open failure, scrutiny's `--info` fragments trimmed by hand, one with
/// `smart_support` a boolean where smartctl writes an object) and the RAID volumes without
/// SMART parse: their verdict is "not available".
const EXPECTED_ERRORS: &[(&str, &str)] = &[];

/// The raw-value columns of the manifest, by attribute id.
const RAW_COLUMNS: [(u8, &str); 8] = [
    (5, "r5"),
    (10, "r10"),
    (187, "r187"),
    (188, "r188"),
    (196, "r196"),
    (197, "r197"),
    (198, "r198"),
    (199, "r199"),
];

/// MANIFEST.tsv: one row per file, by its path (`text/...`, `json/...`). Fields may be quoted
/// as CSV quotes them (a `"` doubled inside).
fn manifest(dir: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let text = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            ('"', true) => quoted = false,
            ('"', false) if field.is_empty() => quoted = true,
            ('\t', false) => row.push(std::mem::take(&mut field)),
            ('\n', false) => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            ('\r', false) => {}
            (c, _) => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    let header = rows.remove(0);
    rows.into_iter()
        .map(|r| {
            let fields: BTreeMap<String, String> = header.iter().cloned().zip(r).collect();
            (fields.get("file").cloned().unwrap_or_default(), fields)
        })
        .collect()
}

/// A number as the manifest writes it: `0x04`, `2,137`, `13%`, `3`.
fn manifest_number(text: &str) -> Option<u128> {
    let t = text.trim().trim_end_matches('%').replace(',', "");
    match t.strip_prefix("0x") {
        Some(hex) => u128::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    }
}

/// Where `saved` disagrees with the manifest's row, in words; `compared` counts the values
/// checked.
fn disagreements(
    saved: &SavedReport,
    row: &BTreeMap<String, String>,
    compared: &mut usize,
) -> Vec<String> {
    let mut out = Vec::new();
    let get = |k: &str| row.get(k).map(String::as_str).unwrap_or("");
    let r = &saved.report;
    let status = get("smart_status");
    let expected = match status {
        "PASSED" | "SCSI:OK" => Some(true),
        "FAILED" => Some(false),
        _ => None,
    };
    *compared += 1;
    if r.passed != expected {
        out.push(format!("health {status}, read {:?}", r.passed));
    }
    if status == "SCSI:OK" && r.protocol.as_deref() != Some("SCSI") {
        out.push(format!("SCSI:OK, read protocol {:?}", r.protocol));
    }
    for (id, column) in RAW_COLUMNS {
        let want = get(column);
        if want.is_empty() {
            continue;
        }
        *compared += 1;
        let got = r
            .ata
            .as_ref()
            .and_then(|a| a.attributes.iter().find(|a| a.id == id))
            .and_then(|a| a.raw_text.clone());
        if got.as_deref() != Some(want) {
            out.push(format!("{column} {want:?}, read {got:?}"));
        }
    }
    let nvme = r.nvme.as_ref();
    let checks: [(&str, Option<u128>); 4] = [
        (
            "nvme_critical_warning",
            nvme.map(|n| u128::from(n.critical_warning)),
        ),
        ("nvme_media_errors", nvme.map(|n| n.media_errors)),
        (
            "nvme_percentage_used",
            nvme.map(|n| u128::from(n.percentage_used)),
        ),
        (
            "nvme_available_spare",
            nvme.map(|n| u128::from(n.available_spare_pct)),
        ),
    ];
    for (column, got) in checks {
        let want = get(column);
        if want.is_empty() {
            continue;
        }
        *compared += 1;
        if got != manifest_number(want) {
            out.push(format!("{column} {want:?}, read {got:?}"));
        }
    }
    out
}

/// Every file of `dir/kind` read and checked; panics with the list of what went wrong.
fn check_folder(test: &str, kind: &str, format: SavedFormat) {
    let Some(dir) = common::smart_reports(test) else {
        return;
    };
    let manifest = manifest(&dir);
    let mut files: Vec<_> = std::fs::read_dir(dir.join(kind))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() > 150, "{} files in {kind}/", files.len());
    let mut wrong = Vec::new();
    let mut parsed = 0;
    let mut compared = 0;
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let key = format!("{kind}/{name}");
        let Some(row) = manifest.get(&key) else {
            wrong.push(format!("{key}: not in MANIFEST.tsv"));
            continue;
        };
        let bytes = std::fs::read(path).unwrap();
        let expected_error = EXPECTED_ERRORS.iter().find(|(f, _)| *f == key);
        match (parse_saved_report_bytes(&bytes, &name), expected_error) {
            (Ok(saved), None) => {
                parsed += 1;
                if saved.format != format {
                    wrong.push(format!("{key}: read as {:?}", saved.format));
                }
                for d in disagreements(&saved, row, &mut compared) {
                    wrong.push(format!("{key}: {d}"));
                }
            }
            (Ok(_), Some((_, why))) => {
                wrong.push(format!("{key}: parsed, but listed as an error ({why})"));
            }
            (Err(e), None) => wrong.push(format!("{key}: {e}")),
            (Err(_), Some(_)) => {}
        }
    }
    eprintln!(
        "{test}: {parsed} of {} reports parsed, {compared} values compared with the manifest",
        files.len()
    );
    // The health of each and at least some raw or NVMe values of most.
    assert!(compared > 2 * parsed, "only {compared} values compared");
    assert!(wrong.is_empty(), "{}:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn every_text_report_parses_and_agrees_with_the_manifest() {
    check_folder(
        "smart_reports::every_text_report_parses_and_agrees_with_the_manifest",
        "text",
        SavedFormat::Text,
    );
}

#[test]
fn every_json_report_parses_and_agrees_with_the_manifest() {
    check_folder(
        "smart_reports::every_json_report_parses_and_agrees_with_the_manifest",
        "json",
        SavedFormat::Json,
    );
}
