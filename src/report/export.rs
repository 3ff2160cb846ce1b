//! Exports of a test record to a file: format, text, name and place. The TUI's `e` key writes
//! them; the CLI's `--json`/`--csv` print the same text. Each format is one file in `export/`
//! and one arm in `ExportFormat::row`.

mod csv;
mod fio;
mod json;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::bench::results::outcome::RunReport;
use crate::model::variants::with_all;

with_all! {
    /// What an export writes: one file each in `export/`, one row each in `ExportFormat::row`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ExportFormat {
        Json,
        Csv,
        Fio,
    }
}

/// Everything about an export format.
pub struct FormatRow {
    /// Its key in the export dialog.
    pub key: char,
    /// Its short name, in the lists of formats ("JSON").
    pub name: &'static str,
    /// What the export dialog says it writes.
    pub offer: &'static str,
    /// The export file's extension.
    pub extension: &'static str,
    /// The text of a record's runs, the first one given apart (there is at least one).
    pub render: fn(first: &RunReport, all: &[RunReport]) -> anyhow::Result<String>,
}

impl ExportFormat {
    /// The format's row (exhaustive: a new format does not build without one).
    pub fn row(self) -> &'static FormatRow {
        match self {
            ExportFormat::Json => &json::ROW,
            ExportFormat::Csv => &csv::ROW,
            ExportFormat::Fio => &fio::ROW,
        }
    }

    pub fn extension(self) -> &'static str {
        self.row().extension
    }

    /// The format the export dialog's `key` picks, if any.
    pub fn for_key(key: char) -> Option<ExportFormat> {
        ExportFormat::ALL
            .iter()
            .copied()
            .find(|f| f.row().key == key)
    }

    /// The dialog's line for this format: "  j  JSON: summary and per-interval series".
    pub fn dialog_line(self) -> String {
        format!("  {}  {}", self.row().key, self.row().offer)
    }

    /// Every format's short name: "JSON, CSV, fio".
    pub fn names() -> String {
        let names: Vec<&str> = ExportFormat::ALL.iter().map(|f| f.row().name).collect();
        names.join(", ")
    }
}

/// A record's export file stem: `disktriage-loop0-rand-read-3` for record 3, rand-read on loop0.
pub fn file_stem(device: &str, test_id: &str, record_number: usize) -> String {
    format!("disktriage-{device}-{test_id}-{record_number}")
}

/// Where exports go: `exports/` beside the history (`/var/lib/disktriage/exports` by default),
/// one known place whatever the working directory; the export dialog names it.
pub fn export_dir(history_dir: &Path) -> PathBuf {
    history_dir.join("exports")
}

/// Writes a record's runs in `format` into `dir` (made when missing, for root only), never
/// overwriting a file; returns the file's path.
pub fn export(
    reports: &[RunReport],
    format: ExportFormat,
    stem: &str,
    dir: &Path,
) -> anyhow::Result<PathBuf> {
    let text = render(reports, format)?;
    prepare_dir(dir)?;
    write_export(dir, stem, format, &text)
}

/// Makes the export directory if missing and checks it: a link (to /etc, say) or a directory
/// anyone can write to (another user could plant names) is refused.
fn prepare_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create the export directory {}", dir.display()))?;
    let meta = std::fs::symlink_metadata(dir)
        .with_context(|| format!("cannot read the export directory {}", dir.display()))?;
    if !meta.file_type().is_dir() {
        anyhow::bail!(
            "{} is not a directory (a link?): exports are written only into a real directory",
            dir.display()
        );
    }
    if meta.mode() & 0o002 != 0 {
        anyhow::bail!(
            "{} can be written by anyone: exports are not written there (chmod o-w it)",
            dir.display()
        );
    }
    Ok(())
}

/// The text of an export: JSON (one report, or an array of repeats), CSV (the series, each
/// repeat under a `# repeat N` line) or a shell script of equivalent fio commands.
pub fn render(reports: &[RunReport], format: ExportFormat) -> anyhow::Result<String> {
    let first = reports.first().context("nothing to export")?;
    (format.row().render)(first, reports)
}

/// Writes an export into `dir` as `stem.ext`, or `stem-2.ext` and so on; returns its path.
/// O_CREAT|O_EXCL claims the name, so an existing file or a link planted there is never
/// written through or overwritten.
pub fn write_export(
    dir: &Path,
    stem: &str,
    format: ExportFormat,
    text: &str,
) -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::OpenOptionsExt;
    let ext = format.extension();
    for n in 1..=10_000u32 {
        let path = if n == 1 {
            dir.join(format!("{stem}.{ext}"))
        } else {
            dir.join(format!("{stem}-{n}.{ext}"))
        };
        let created = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path);
        match created {
            Ok(mut f) => {
                f.write_all(text.as_bytes())
                    .with_context(|| format!("cannot write {}", path.display()))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
        }
    }
    anyhow::bail!(
        "{} holds 10,000 exports named {stem}: clear some out",
        dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::exec::engines::SYNC;

    #[test]
    fn file_stems_name_device_test_and_record() {
        assert_eq!(
            file_stem("loop0", "rand-read", 3),
            "disktriage-loop0-rand-read-3"
        );
    }

    #[test]
    fn every_format_has_a_complete_row_its_key_and_a_text() {
        let one = [crate::report::run::tests::report(1, SYNC, false)];
        let mut keys = Vec::new();
        for &f in ExportFormat::ALL {
            let row = f.row();
            assert!(!row.name.is_empty() && !row.offer.is_empty(), "{f:?}");
            assert!(!row.extension.is_empty() && !row.extension.starts_with('.'));
            assert_eq!(ExportFormat::for_key(row.key), Some(f));
            assert!(!render(&one, f).unwrap().is_empty(), "{f:?}");
            keys.push(row.key);
        }
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(
            keys.len(),
            ExportFormat::ALL.len(),
            "two formats share a key"
        );
        assert_eq!(ExportFormat::for_key('x'), None);
        assert_eq!(ExportFormat::names(), "JSON, CSV, fio");
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

    #[test]
    fn an_export_never_writes_through_a_link_at_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        // Dangling and live links at the first names an export would take.
        std::os::unix::fs::symlink(&victim, dir.path().join("r.json")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("nowhere"), dir.path().join("r-2.json"))
            .unwrap();
        let path = write_export(dir.path(), "r", ExportFormat::Json, "{}").unwrap();
        assert_eq!(path.file_name().unwrap(), "r-3.json");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!dir.path().join("nowhere").exists());
    }

    #[test]
    fn the_export_directory_is_made_and_must_be_a_private_directory() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let history = base.path().join("history");
        let dir = export_dir(&history);
        assert_eq!(dir, history.join("exports"));
        prepare_dir(&dir).unwrap();
        assert!(dir.is_dir());

        let elsewhere = base.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let linked = base.path().join("linked");
        std::os::unix::fs::symlink(&elsewhere, &linked).unwrap();
        let err = prepare_dir(&linked).unwrap_err().to_string();
        assert!(err.contains("is not a directory (a link?)"), "{err}");

        let open = base.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = prepare_dir(&open).unwrap_err().to_string();
        assert!(err.contains("can be written by anyone"), "{err}");
    }
}
