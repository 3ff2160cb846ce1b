//! `disktriage triage --report FILE...`: saved smartctl reports judged as disks, without
//! touching a device. Each file (`-`: standard input) is read as the admin named it (a regular
//! file, at most `MAX_REPORT` bytes), read as smartctl's text or JSON, and becomes one disk's
//! facts named by its file name; the same rules judge them and the same report prints them.
//! Nothing goes into the history: the reports are no disks of this host. A file that cannot
//! be read or is no smartctl report is named on stderr with why, and the others are still
//! judged; the exit status is then 1 (an error), else the worst verdict's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::bail;

use super::{prom_output, write_outputs};
use crate::cli::TriageArgs;
use crate::flow::{self, triage::TriageRun};
use crate::model::text::neutralize_controls;
use crate::report::output::write_stderr;
use crate::report::triage::TriageOf;
use crate::smart::parse_saved_report_bytes;
use crate::sys::error::describe_io;
use crate::sys::input_file::read_input;
use crate::triage::{DiskFacts, facts_of_report};

/// The largest report read: `smartctl -x` of a drive with full logs is well under 1 MiB.
const MAX_REPORT: u64 = 16 << 20;

/// Each file's name in the report: its file name, or the path as given where two files share
/// one (`a/x.txt`, `b/x.txt`); standard input is "stdin".
fn names(paths: &[PathBuf]) -> Vec<String> {
    let base = |p: &Path| -> String {
        if p == Path::new("-") {
            return "stdin".into();
        }
        p.file_name()
            .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
    };
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for p in paths {
        *seen.entry(base(p)).or_default() += 1;
    }
    paths
        .iter()
        .map(|p| {
            let b = base(p);
            if seen.get(&b).copied().unwrap_or(0) > 1 && p != Path::new("-") {
                p.display().to_string()
            } else {
                b
            }
        })
        .collect()
}

/// One file as a disk's facts, or why not, in words that name the file.
fn read_report(path: &Path, name: &str) -> Result<DiskFacts, String> {
    let shown = neutralize_controls(&path.display().to_string());
    let bytes = read_input(path, MAX_REPORT)
        .map_err(|e| format!("{shown}: cannot read it: {}", describe_io(&e)))?;
    let saved = parse_saved_report_bytes(&bytes, name)
        .map_err(|e| format!("{shown}: not a smartctl report: {}", e.problem))?;
    Ok(facts_of_report(name, saved))
}

/// Runs `triage --report`.
pub(super) fn triage_reports(args: &TriageArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let prom_out = prom_output(args)?;
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut facts = Vec::new();
    let mut refused = Vec::new();
    for (path, name) in args.reports.iter().zip(names(&args.reports)) {
        match read_report(path, &name) {
            Ok(f) => facts.push(f),
            Err(why) => {
                write_stderr(&format!("disktriage: {}\n", neutralize_controls(&why)));
                refused.push(neutralize_controls(&path.display().to_string()));
            }
        }
    }
    if facts.is_empty() {
        bail!(
            "no report could be judged ({} named, each above with why)",
            args.reports.len()
        );
    }
    let mut report = flow::triage::assemble(
        facts,
        &[],
        None,
        TriageRun {
            host: None,
            started_unix,
            seconds: started.elapsed().as_secs_f64(),
            bound_seconds: 0.0,
        },
    );
    report.of = TriageOf::SavedReports;
    write_outputs(&report, args, prom_out.as_ref())?;
    if !refused.is_empty() {
        bail!(
            "{} of {} files were not judged: {}",
            refused.len(),
            args.reports.len(),
            refused.join(", ")
        );
    }
    Ok(ExitCode::from(report.worst().exit_status()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_named_by_its_file_name_unless_two_share_it() {
        let paths: Vec<PathBuf> = ["a/x.txt", "b/x.txt", "c/y.json", "-"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(names(&paths), ["a/x.txt", "b/x.txt", "y.json", "stdin"]);
    }

    #[test]
    fn a_file_that_is_missing_or_no_report_is_named_with_why() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_report(&dir.path().join("gone.txt"), "gone.txt").unwrap_err();
        assert!(
            e.ends_with("gone.txt: cannot read it: No such file or directory (ENOENT)"),
            "{e}"
        );
        let junk = dir.path().join("x.txt");
        std::fs::write(&junk, "hello\n").unwrap();
        let e = read_report(&junk, "x.txt").unwrap_err();
        assert!(e.contains("x.txt: not a smartctl report: "), "{e}");
    }
}
