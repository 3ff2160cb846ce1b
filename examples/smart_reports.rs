//! The table `scripts/smart-reports.sh` prints: what `disktriage triage --report --json` said
//! of the shared set of real drives' smartctl reports, against what the set's MANIFEST.tsv
//! and the SMART standard say of them. Run by the script, which runs the triage first:
//!
//!     cargo run --example smart_reports -- DIR TRIAGE_JSON [TRIAGE_STDERR]
//!
//! Per kind (the manifest's: HDD, SSD, NVMe, SCSI): the reports; the clean drives (health
//! PASSED, or SCSI's OK, and no errors by the manifest) called anything but healthy; the
//! drives the SMART standard calls failing (as issue 36's goals define it: `Signs`) called
//! failing, suspect, healthy or unknown; the goals' rates. Then,
//! per finding rule, how many clean drives it fired on: each a false alarm or an early one.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};
use serde_json::Value;

use disktriage::smart::parse_saved_report_bytes;

const KINDS: [&str; 4] = ["HDD", "SSD", "NVMe", "SCSI"];

/// MANIFEST.tsv's rows by file (`text/...`); fields may be quoted as CSV quotes them.
fn manifest(dir: &Path) -> anyhow::Result<BTreeMap<String, BTreeMap<String, String>>> {
    let path = dir.join("MANIFEST.tsv");
    let text = std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let (mut row, mut field, mut quoted) = (Vec::new(), String::new(), false);
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
    if rows.is_empty() {
        bail!("{}: empty", path.display());
    }
    let header = rows.remove(0);
    Ok(rows
        .into_iter()
        .map(|r| {
            let fields: BTreeMap<String, String> = header.iter().cloned().zip(r).collect();
            (fields.get("file").cloned().unwrap_or_default(), fields)
        })
        .collect())
}

/// What the goals say of a drive, read from the report itself.
#[derive(Clone, Copy, PartialEq, Default)]
struct Signs {
    /// The SMART standard calls it failing: health FAILED, an attribute other than a
    /// temperature at or below its nonzero threshold now, pending or offline-uncorrectable
    /// sectors where smartctl names the attribute so (a plausible count above 0), an NVMe
    /// critical warning, or the NVMe spare below its threshold.
    failing: bool,
    /// A hard disk with reallocated sectors or reported-uncorrectable errors (never healthy).
    damaged_hdd: bool,
    /// It holds an attribute table or an NVMe health log (never unknown).
    has_data: bool,
}

fn signs(dir: &Path, file: &str, row: &BTreeMap<String, String>, kind: &str) -> Signs {
    use disktriage::smart::{Count, Meaning, read_by_meaning};
    let mut signs = Signs {
        failing: row.get("smart_status").map(String::as_str) == Some("FAILED"),
        ..Signs::default()
    };
    let Ok(bytes) = std::fs::read(dir.join(file)) else {
        return signs;
    };
    let Ok(saved) = parse_saved_report_bytes(&bytes, file) else {
        return signs;
    };
    if let Some(n) = &saved.report.nvme {
        signs.has_data = true;
        signs.failing |=
            n.critical_warning != 0 || n.available_spare_pct < n.available_spare_threshold_pct;
    }
    if let Some(ata) = &saved.report.ata {
        signs.has_data |= !ata.attributes.is_empty();
        for a in &ata.attributes {
            let reading = read_by_meaning(a, &ata.drive);
            let now = a.threshold.is_some_and(|t| t > 0 && a.value <= t);
            let count = match reading.count {
                Count::Value(n) => n,
                _ => 0,
            };
            signs.failing |= now && reading.meaning != Meaning::Temperature;
            signs.failing |= count > 0
                && matches!(
                    a.name.as_str(),
                    "Current_Pending_Sector" | "Offline_Uncorrectable"
                );
            signs.damaged_hdd |= kind == "HDD"
                && count > 0
                && matches!(
                    a.name.as_str(),
                    "Reallocated_Sector_Ct" | "Reported_Uncorrect"
                );
        }
    }
    signs
}

/// One kind's counts.
#[derive(Default)]
struct Counts {
    reports: usize,
    clean: usize,
    clean_not_healthy: usize,
    failing: usize,
    /// Of the standard's failing drives: failing, suspect, healthy, unknown.
    called: [usize; 4],
    /// Reports with an attribute table or an NVMe health log, and of them called unknown.
    with_data: usize,
    with_data_unknown: usize,
    /// Hard disks with reallocated sectors or reported-uncorrectable errors, and of them
    /// called healthy.
    damaged: usize,
    damaged_healthy: usize,
}

fn pct(n: usize, of: usize) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{:.1} %", 100.0 * n as f64 / of as f64)
    }
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(dir), Some(json)) = (args.first(), args.get(1)) else {
        bail!("usage: smart_reports DIR TRIAGE_JSON [TRIAGE_STDERR]");
    };
    let dir = Path::new(dir);
    let manifest = manifest(dir)?;
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(json).with_context(|| json.clone())?)
            .with_context(|| format!("{json}: not the triage's JSON"))?;
    let Some(disks) = doc["disks"].as_array() else {
        bail!("{json}: no disks");
    };
    // The manifest's file of each disk: the disk is named by its file name (or the path as
    // given, where two share a name).
    let by_name: BTreeMap<&str, &str> = manifest
        .keys()
        .filter_map(|k| Some((Path::new(k).file_name()?.to_str()?, k.as_str())))
        .collect();
    let mut counts: BTreeMap<&str, Counts> = BTreeMap::new();
    let mut rules: BTreeMap<String, BTreeMap<&str, usize>> = BTreeMap::new();
    let mut unmatched = Vec::new();
    for disk in disks {
        let device = disk["device"].as_str().unwrap_or("");
        let file = by_name.get(device).copied().or_else(|| {
            manifest
                .keys()
                .find(|k| device.ends_with(&format!("/{k}")))
                .map(String::as_str)
        });
        let Some((file, row)) = file.and_then(|f| Some((f, manifest.get(f)?))) else {
            unmatched.push(device.to_string());
            continue;
        };
        let kind: &str = row
            .get("kind")
            .and_then(|k| KINDS.iter().find(|x| **x == k.as_str()))
            .copied()
            .unwrap_or("other");
        let verdict = disk["verdict"].as_str().unwrap_or("unknown");
        let status = row.get("smart_status").map_or("", String::as_str);
        let clean = matches!(status, "PASSED" | "SCSI:OK")
            && row.get("has_errors").map(String::as_str) == Some("no");
        let signs = signs(dir, file, row, kind);
        for k in [kind, "all"] {
            let c = counts.entry(k).or_default();
            c.reports += 1;
            if clean {
                c.clean += 1;
                c.clean_not_healthy += usize::from(verdict != "healthy");
            }
            let i = match verdict {
                "failing" => 0,
                "suspect" => 1,
                "healthy" => 2,
                _ => 3,
            };
            if signs.failing {
                c.failing += 1;
                c.called[i] += 1;
            }
            if signs.has_data {
                c.with_data += 1;
                c.with_data_unknown += usize::from(verdict == "unknown");
            }
            if signs.damaged_hdd {
                c.damaged += 1;
                c.damaged_healthy += usize::from(verdict == "healthy");
            }
        }
        if clean {
            let mut fired: Vec<&str> = disk["findings"]
                .as_array()
                .map(|f| f.iter().filter_map(|f| f["rule"].as_str()).collect())
                .unwrap_or_default();
            fired.sort_unstable();
            fired.dedup();
            for rule in fired {
                let per = rules.entry(rule.to_string()).or_default();
                *per.entry(kind).or_default() += 1;
                *per.entry("all").or_default() += 1;
            }
        }
    }

    let judged = disks.len();
    println!(
        "Real smartctl reports ({}): {} in the manifest, {judged} judged by `triage --report`",
        dir.display(),
        manifest.len()
    );
    println!(
        "clean: health PASSED (SCSI: OK) and no errors by the manifest; SMART failing: health \
         FAILED, an attribute other than a temperature at or below its nonzero threshold now, \
         pending or offline-uncorrectable sectors (so named, a plausible count above 0), an \
         NVMe critical warning or spare below its threshold\n"
    );
    println!(
        "{:<6} {:>7} {:>6} {:>17} {:>14} {:>8} {:>8} {:>8} {:>8}",
        "kind",
        "reports",
        "clean",
        "clean not healthy",
        "SMART failing",
        "failing",
        "suspect",
        "healthy",
        "unknown"
    );
    let mut order: Vec<&str> = KINDS.to_vec();
    if counts.contains_key("other") {
        order.push("other");
    }
    order.push("all");
    let none = Counts::default();
    for k in &order {
        let c = counts.get(k).unwrap_or(&none);
        println!(
            "{:<6} {:>7} {:>6} {:>6} {:>10} {:>14} {:>8} {:>8} {:>8} {:>8}",
            k,
            c.reports,
            c.clean,
            c.clean_not_healthy,
            pct(c.clean_not_healthy, c.clean),
            c.failing,
            c.called[0],
            c.called[1],
            c.called[2],
            c.called[3]
        );
    }
    let all = counts.get("all").unwrap_or(&none);
    println!("\nGoals (issue 36):");
    println!(
        "  reports with an attribute table or NVMe health log called unknown: {} of {} (goal 0)",
        all.with_data_unknown, all.with_data
    );
    for k in ["HDD", "SSD", "NVMe"] {
        let c = counts.get(k).unwrap_or(&none);
        println!(
            "  clean {k} called healthy: {} of {} = {} (goal >= 99.5 %)",
            c.clean - c.clean_not_healthy,
            c.clean,
            pct(c.clean - c.clean_not_healthy, c.clean)
        );
    }
    println!(
        "  SMART failing called failing: {} of {} = {} (goal >= 99 %), healthy {} (goal 0)",
        all.called[0],
        all.failing,
        pct(all.called[0], all.failing),
        all.called[2]
    );
    println!(
        "  hard disks with reallocated sectors or reported-uncorrectable errors called \
         healthy: {} of {} (goal 0)",
        all.damaged_healthy, all.damaged
    );
    println!("\nFindings on clean drives, by rule (each a false alarm or an early one):\n");
    println!(
        "{:<28} {:>5} {:>5} {:>5} {:>5} {:>5}",
        "rule", "HDD", "SSD", "NVMe", "SCSI", "all"
    );
    let mut by_count: Vec<(&String, &BTreeMap<&str, usize>)> = rules.iter().collect();
    by_count.sort_by_key(|(rule, per)| (std::cmp::Reverse(per.get("all").copied()), *rule));
    for (rule, per) in by_count {
        let n = |k: &str| per.get(k).copied().unwrap_or(0);
        println!(
            "{:<28} {:>5} {:>5} {:>5} {:>5} {:>5}",
            rule,
            n("HDD"),
            n("SSD"),
            n("NVMe"),
            n("SCSI"),
            n("all")
        );
    }
    if rules.is_empty() {
        println!("(none)");
    }
    if !unmatched.is_empty() {
        println!(
            "\nNot in the manifest ({}): {}",
            unmatched.len(),
            unmatched.join(", ")
        );
    }
    if let Some(stderr) = args.get(2)
        && let Ok(text) = std::fs::read_to_string(stderr)
    {
        let refused: Vec<&str> = text
            .lines()
            .filter(|l| l.contains(": not a smartctl report: ") || l.contains(": cannot read it: "))
            .collect();
        if !refused.is_empty() {
            println!("\nNot judged ({}):", refused.len());
            for l in refused {
                println!("  {}", l.trim_start_matches("disktriage: "));
            }
        }
    }
    Ok(())
}
