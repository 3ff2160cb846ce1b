//! `disktriage history` and the history record a headless run leaves: the disk's identity
//! (`SysRoot::disk_identity`), the drive's cache as read after the run, and the report's
//! figures, appended to the history; a history that cannot be written is a warning.

use std::path::Path;
use std::process::ExitCode;

use crate::bench::results::outcome::{RunReport, TargetClass};
use crate::cli::HistoryArgs;
use crate::history::{History, HistoryEntry};
use crate::model::DiskIdentity;
use crate::model::text::neutralize_controls;
use crate::report::output::{write_stderr, write_stdout};
use crate::sys::signals::{Catch, StopSignals};
use crate::sys::{DriveControl, LinuxDrives, SysRoot};
use crate::{drive_state, report};

/// Adds a finished headless test (`runs`: its repeats on one target) to the history as one
/// entry; a failure is a warning on stderr.
pub fn record_run(root: &SysRoot, dir: &Path, runs: &[RunReport]) {
    let Some(report) = runs.first() else { return };
    let disk = crate::history::identity_of(root, &report.target);
    // Read after the run, so the ioctl cannot disturb it; as root only (it needs the drive).
    let drive_cache = match (&report.target.device, report.target.kind) {
        (Some(name), TargetClass::BlockDevice) if crate::sys::privilege::is_root() => {
            let drives = LinuxDrives::new(root.clone());
            // Not known when it cannot be read: the history's one spelling for that is none.
            drives
                .device(name)
                .ok()
                .and_then(|dev| drive_state::cache_status(&drives, &dev).ok())
                .map(|s| s.drive_word().to_string())
        }
        _ => None,
    };
    // Another process holding the history's lock must not keep a stop signal from ending
    // this one: the (bounded) wait polls the signals' flag.
    let stop = StopSignals::catch(Catch::Command).ok();
    let stopped = || stop.as_ref().is_some_and(|s| s.is_set());
    match History::new(dir).record_test(disk, runs, drive_cache, &stopped) {
        Some(Ok((_, warnings))) => {
            for w in warnings {
                write_stderr(&format!(
                    "disktriage: history: {}\n",
                    neutralize_controls(&w)
                ));
            }
        }
        Some(Err(not_added)) => write_stderr(&format!(
            "disktriage: warning: {}\n",
            neutralize_controls(&not_added)
        )),
        None => {}
    }
}

/// The identity `disktriage history DEV` filters by: a block device's (a partition means its
/// disk), else an existing file's full path, else the name as a kernel name recorded then.
fn wanted(root: &SysRoot, arg: &str) -> (DiskIdentity, Option<String>) {
    let drives = LinuxDrives::new(root.clone());
    if let Ok(target) = drives.resolve(arg) {
        let name = target.device.name;
        return (root.disk_identity(&name), Some(name));
    }
    let path = Path::new(arg);
    if path.is_file() {
        let full = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        return (DiskIdentity::File(full.display().to_string()), None);
    }
    let name = arg.strip_prefix("/dev/").unwrap_or(arg).to_string();
    (DiskIdentity::Name(name), None)
}

/// `disktriage history [--json] [DEV]`.
pub fn history(root: &SysRoot, dir: &Path, args: &HistoryArgs) -> anyhow::Result<ExitCode> {
    // Checked before the history is read: every name the history holds is UTF-8 text.
    let device = match args.device.as_deref().map(|d| d.to_str()) {
        Some(None) => crate::model::exit::usage_bail!(
            "the device {:?} is not UTF-8: no disk or file the history names is called that \
             (a kernel name, a /dev path or a test file's path as `disktriage history` lists it)",
            args.device.as_deref().unwrap_or_default()
        ),
        Some(Some(d)) => Some(d),
        None => None,
    };
    let history = History::new(dir);
    let loaded = history.load()?;
    let filter = device.map(|d| wanted(root, d));
    let entries: Vec<&HistoryEntry> = match &filter {
        Some((disk, _)) => loaded
            .entries
            .iter()
            .filter(|e| match disk {
                // A disk that is gone now: the runs recorded under that name.
                DiskIdentity::Name(n) => &e.disk == disk || &e.device == n,
                _ => &e.disk == disk,
            })
            .collect(),
        None => loaded.entries.iter().collect(),
    };
    for p in &loaded.problems {
        write_stderr(&format!(
            "disktriage: history: {}\n",
            neutralize_controls(p)
        ));
    }
    let text = if args.json {
        report::history::render_json(&entries)?
    } else {
        report::history::render_text(
            &entries,
            &history.file(),
            filter.as_ref().map(|(d, name)| (d, name.as_deref())),
        )
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
