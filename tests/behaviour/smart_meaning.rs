//! Reading SMART by meaning, against what no one here wrote: the real `smartctl -j` reports
//! in `../shared/data/smart-reports/json`. smartctl printed each raw value in the layout its
//! drive database gives that drive (`raw.string`); disktriage reads the same 48 raw bits
//! natively (`raw.value`, as a drive sends them) by its own meaning table. Both must agree on
//! every value a rule judges.

use crate::common::smart_reports;
use disktriage::model::AtaAttribute;
use disktriage::smart::parse_smartctl_json;
use disktriage::smart::{Meaning, meaning_of, read_by_meaning};

/// Every ATA attribute table of the shared JSON reports, with its file name.
fn tables(dir: &std::path::Path) -> Vec<(String, disktriage::model::AtaSmart)> {
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir.join("json"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(report) = parse_smartctl_json(&text, None) else {
            continue;
        };
        if let Some(ata) = report.ata {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            out.push((name, ata));
        }
    }
    out
}

/// The same row as a drive sends it: no name, no printed raw value.
fn native(a: &AtaAttribute) -> AtaAttribute {
    AtaAttribute {
        raw_text: None,
        name: "Unknown_Attribute".into(),
        ..a.clone()
    }
}

/// What a rule judges of a row: the meanings whose count or value decides something.
fn judged(m: Meaning) -> bool {
    m.is_count() || matches!(m, Meaning::PowerOnTime | Meaning::Temperature)
}

#[test]
fn native_raw_values_read_as_smartctl_printed_them() {
    let Some(dir) = smart_reports("smart_meaning") else {
        return;
    };
    let tables = tables(&dir);
    assert!(tables.len() > 100, "{} ATA tables", tables.len());
    let (mut rows, mut differ) = (0, Vec::new());
    for (file, ata) in &tables {
        for a in &ata.attributes {
            let by_smartctl = read_by_meaning(a, &ata.drive);
            if !judged(by_smartctl.meaning) {
                continue;
            }
            // Same meaning, the raw bits read natively: only the layout differs.
            let raw_only = AtaAttribute {
                raw_text: None,
                ..a.clone()
            };
            let ours = read_by_meaning(&raw_only, &ata.drive);
            rows += 1;
            if ours.count != by_smartctl.count {
                differ.push(format!(
                    "{file}: {} {} raw {} printed {:?}: ours {:?}, smartctl's {:?}",
                    a.id, a.name, a.raw, a.raw_text, ours.count, by_smartctl.count
                ));
            }
        }
    }
    eprintln!("{rows} judged rows, {} read differently", differ.len());
    assert!(rows > 500, "{rows}");
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn a_table_read_natively_means_what_smartctl_named_it() {
    let Some(dir) = smart_reports("smart_meaning") else {
        return;
    };
    let (mut rows, mut differ) = (0, Vec::new());
    for (file, ata) in tables(&dir) {
        for a in &ata.attributes {
            let named = meaning_of(a, &ata.drive);
            let ours = meaning_of(&native(a), &ata.drive);
            // The meanings a rule judges by (a count, the life left); an unknown name
            // (Unknown_Attribute) has nothing to agree with.
            let matters = |m: Meaning| m.is_count() || m == Meaning::LifeLeft;
            if a.name.starts_with("Unknown") || !(matters(named) || matters(ours)) {
                continue;
            }
            rows += 1;
            if named != ours {
                differ.push(format!(
                    "{file} ({:?}): {} {} is {named:?} by name, {ours:?} natively",
                    ata.drive.model, a.id, a.name
                ));
            }
        }
    }
    eprintln!(
        "{rows} rows, {} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
    assert!(rows > 500, "{rows}");
    // The native table knows the families the reports show; what it does not know (a
    // vendor's own id for its wear) stays judged by the drive's threshold alone.
    let share = differ.len() as f64 / rows as f64;
    assert!(share < 0.02, "{:.1} % differ", share * 100.0);
}
