//! Exports of a test record to a file: the format, the text, the file's name and where it
//! goes. The TUI's `e` key writes files with it; the CLI's `--json`/`--csv` print the same text.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::run;
use crate::bench::outcome::RunReport;

/// What an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Json,
    Csv,
    Fio,
}

impl ExportFormat {
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Json => "json",
            ExportFormat::Csv => "csv",
            ExportFormat::Fio => "fio.sh",
        }
    }
}

/// The file name (without directory or extension) of a record's export, e.g.
/// `disktriage-loop0-rand-read-3` for the third record, a rand-read on loop0.
pub fn file_stem(device: &str, test_id: &str, record_number: usize) -> String {
    format!("disktriage-{device}-{test_id}-{record_number}")
}

/// Where exports go: the current directory when writable (rescue systems often have a
/// read-only one), else /tmp.
pub fn export_dir() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/tmp"));
    let probe = cwd.join(format!(".disktriage-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            cwd
        }
        Err(_) => PathBuf::from("/tmp"),
    }
}

/// Writes a record's runs in `format` into the export directory, never overwriting a file;
/// returns the file's path.
pub fn export(reports: &[RunReport], format: ExportFormat, stem: &str) -> anyhow::Result<PathBuf> {
    let text = render(reports, format)?;
    write_export(&export_dir(), stem, format, &text)
}

/// The text of an export: JSON (one report, or an array of repeats), CSV (the series, each
/// repeat under a `# repeat N` line) or a shell script of equivalent fio commands.
pub fn render(reports: &[RunReport], format: ExportFormat) -> anyhow::Result<String> {
    let first = reports.first().context("nothing to export")?;
    Ok(match format {
        ExportFormat::Json if reports.len() == 1 => run::render_json(first)?,
        ExportFormat::Json => {
            let safe: Vec<_> = reports.iter().map(run::json_safe).collect();
            let mut s = serde_json::to_string_pretty(&safe)?;
            s.push('\n');
            s
        }
        ExportFormat::Csv => reports
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let csv = run::render_csv(r);
                if reports.len() > 1 {
                    format!("# repeat {}\n{csv}", i + 1)
                } else {
                    csv
                }
            })
            .collect(),
        ExportFormat::Fio => format!(
            "#!/bin/sh\n# fio jobs equivalent to disktriage's {}\n{}",
            first.test,
            run::fio_commands(&first.plan, &first.target.path, Some(&first.outcome))
        ),
    })
}

/// Writes an export into `dir` without overwriting anything; returns its path.
pub fn write_export(
    dir: &Path,
    stem: &str,
    format: ExportFormat,
    text: &str,
) -> anyhow::Result<PathBuf> {
    let path = unique_path(dir, stem, format.extension());
    let mut f = std::fs::File::create(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// `dir/stem.ext`, or `dir/stem-2.ext` and so on: an export never overwrites a file.
fn unique_path(dir: &Path, stem: &str, ext: &str) -> PathBuf {
    let mut path = dir.join(format!("{stem}.{ext}"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{stem}-{n}.{ext}"));
        n += 1;
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_stems_name_device_test_and_record() {
        assert_eq!(
            file_stem("loop0", "rand-read", 3),
            "disktriage-loop0-rand-read-3"
        );
    }

    #[test]
    fn nothing_to_export_is_said() {
        let err = render(&[], ExportFormat::Csv).unwrap_err();
        assert_eq!(err.to_string(), "nothing to export");
    }

    #[test]
    fn exports_never_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_export(
            dir.path(),
            "disktriage-loop0-seq-read-1",
            ExportFormat::Json,
            "{}",
        )
        .unwrap();
        let b = write_export(
            dir.path(),
            "disktriage-loop0-seq-read-1",
            ExportFormat::Json,
            "[]",
        )
        .unwrap();
        assert_eq!(a.file_name().unwrap(), "disktriage-loop0-seq-read-1.json");
        assert_eq!(b.file_name().unwrap(), "disktriage-loop0-seq-read-1-2.json");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "{}");
        let c = write_export(dir.path(), "x", ExportFormat::Fio, "fio").unwrap();
        assert_eq!(c.extension().unwrap(), "sh");
    }
}
