//! `disktriage triage --report PATH...`: saved smartctl reports (text or JSON) judged as
//! disks, by the same rules and report, without touching a device. Each file (`-`: standard
//! input; a regular file, at most `MAX_REPORT` bytes) is one disk named by its file name. A
//! directory stands for the files directly in it, in name order (a subdirectory is skipped with
//! a note, a dot-file quietly). Nothing goes into the history: these are no disks of this host.
//! A path that cannot be read or judged is named on stderr and the others are still judged;
//! the exit status is then 1, else the worst verdict's.

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
use crate::sys::input_file::{EntryKind, is_input_dir, list_input_dir, read_input};
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

/// One thing the paths on the command line stand for, in order: a file to read, a path
/// refused before reading (a directory with nothing to read, a FIFO in a directory), or a
/// note on what a directory held and was not read (a subdirectory), which is no error.
#[derive(Debug, PartialEq)]
enum Item {
    File(PathBuf),
    Refused {
        path: PathBuf,
        /// The whole message, naming the path.
        why: String,
        directory: bool,
    },
    Skipped(String),
}

/// The paths as items: a file (or `-`) as itself, a directory as the files directly in it.
fn expand(paths: &[PathBuf]) -> Vec<Item> {
    let mut out = Vec::new();
    for path in paths {
        if is_input_dir(path) {
            expand_dir(path, &mut out);
        } else {
            out.push(Item::File(path.clone()));
        }
    }
    out
}

fn expand_dir(dir: &Path, out: &mut Vec<Item>) {
    let shown = dir.display().to_string();
    let refused = |why: String| Item::Refused {
        path: dir.to_path_buf(),
        why: format!("{shown}: {why}"),
        directory: true,
    };
    let listing = match list_input_dir(dir) {
        Ok(l) => l,
        Err(e) => return out.push(refused(format!("cannot list it: {}", describe_io(&e)))),
    };
    let mut read = 0;
    let mut subdirs = 0;
    for entry in listing.entries {
        match entry.kind {
            EntryKind::File => {
                read += 1;
                out.push(Item::File(entry.path));
            }
            EntryKind::Directory => {
                subdirs += 1;
                out.push(Item::Skipped(format!(
                    "{}: skipped: a directory (only the files directly in {shown} are read)",
                    entry.path.display()
                )));
            }
            // Refused from the listing: a device is never opened, a FIFO never waited on.
            EntryKind::NotAFile(kind) => {
                read += 1;
                let why = format!(
                    "{}: cannot read it: it is {kind}, not a file",
                    entry.path.display()
                );
                out.push(Item::Refused {
                    path: entry.path,
                    why,
                    directory: false,
                });
            }
        }
    }
    if read > 0 {
        return;
    }
    let why = if listing.hidden == 0 && subdirs == 0 {
        "no report in it: the directory is empty".to_string()
    } else {
        let counted = [
            (listing.hidden, "dot-file", "dot-files"),
            (subdirs, "directory", "directories"),
        ]
        .iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|&(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
        .collect::<Vec<_>>()
        .join(" and ");
        format!(
            "no report in it: {counted} skipped (only the files directly in a directory are read)"
        )
    };
    out.push(refused(why));
}

/// One file as a disk's facts, or why not, in words that name the file.
fn read_report(path: &Path, name: &str) -> Result<DiskFacts, String> {
    let shown = neutralize_controls(&path.display().to_string());
    let bytes = read_input(path, MAX_REPORT)
        .map_err(|e| format!("{shown}: cannot read it: {}", describe_io(&e)))?;
    let saved = parse_saved_report_bytes(&bytes, name)
        .map_err(|e| format!("{shown}: not a smartctl report: {}", e.problem))?;
    let mut facts = facts_of_report(name, saved);
    // The path as given, so that a fleet's JSON leads back to the file.
    facts.saved_report = Some(path.to_string_lossy().into_owned());
    Ok(facts)
}

/// Runs `triage --report`.
pub(super) fn triage_reports(args: &TriageArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let prom_out = prom_output(args)?;
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let items = expand(&args.reports);
    let files: Vec<PathBuf> = items
        .iter()
        .filter_map(|i| match i {
            Item::File(p) => Some(p.clone()),
            _ => None,
        })
        .collect();
    let mut names = names(&files).into_iter();
    let say = |why: &str| write_stderr(&format!("disktriage: {}\n", neutralize_controls(why)));
    let mut facts = Vec::new();
    let mut tried = 0;
    let mut refused = Vec::new();
    let mut refused_dir = false;
    // In the order named and listed, so that the messages come in that order.
    for item in items {
        let (path, why, directory) = match item {
            Item::Skipped(note) => {
                say(&note);
                continue;
            }
            Item::Refused {
                path,
                why,
                directory,
            } => (path, why, directory),
            Item::File(path) => {
                let name = names.next().unwrap_or_default();
                match read_report(&path, &name) {
                    Ok(f) => {
                        tried += 1;
                        facts.push(f);
                        continue;
                    }
                    Err(why) => (path, why, false),
                }
            }
        };
        tried += 1;
        say(&why);
        refused.push(neutralize_controls(&path.display().to_string()));
        refused_dir |= directory;
    }
    if facts.is_empty() {
        bail!("no report could be judged ({tried} tried, each above with why)");
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
            "{} of {tried} {} not judged: {}",
            refused.len(),
            if refused_dir {
                "files and directories were"
            } else {
                "files were"
            },
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
