//! The flush check's write guard and its history line, for the timing check (the CLI's and the
//! TUI's) and the CLI's power-cut `--record`: the write tests' guard before anything is
//! written, and the finished check added to the history.

use std::path::Path;

use anyhow::{Context, bail};

use crate::bench::exec::safety::{self, WriteRefusal};
use crate::history::{History, HistoryEntry};
use crate::model::ChosenDevice;
use crate::model::text::neutralize_controls;
use crate::report::output::write_stderr;
use crate::sys::SysRoot;
use crate::sys::flush::{FlushDevice, PinnedDevice};

/// A device the flush check may write: opened exclusively, checked against the live system.
pub struct WriteTarget {
    pub device: FlushDevice,
    /// The kernel name the guard checked.
    pub name: String,
    /// The device as the guard saw it in the live inventory (identity for the history).
    pub chosen: ChosenDevice,
}

/// The write tests' guard for `path`, before anything is written: the device must be known
/// to the live system (whatever `--root` says), unused (not mounted, swap, held by md/dm/LVM,
/// nor a partition of it), confirmed by its name in `confirmation`, not read-only; then the
/// O_DIRECT|O_RDWR|O_EXCL descriptor is checked to be that same device.
pub fn prepare_write(path: &Path, confirmation: Option<&str>) -> anyhow::Result<WriteTarget> {
    let shown = neutralize_controls(&path.display().to_string());
    let pinned = PinnedDevice::pin(path).with_context(|| format!("cannot open {shown}"))?;
    let name = pinned.name.clone().ok_or_else(|| WriteRefusal::Unknown {
        name: format!("device {}", pinned.dev),
    })?;
    let live = SysRoot::host()
        .inventory()
        .context("cannot read the running system's devices to check that the target is unused")?;
    safety::check_device_write(&live, &name, confirmation)?;
    let device = pinned
        .open(true)
        .with_context(|| format!("cannot open {shown} for writing (O_DIRECT, exclusively)"))?;
    if device.read_only().unwrap_or(false) {
        return Err(WriteRefusal::ReadOnly { name }.into());
    }
    let chosen = live
        .chosen(&name)
        .ok_or_else(|| WriteRefusal::Unknown { name: name.clone() })?;
    match device.refuse_unless_chosen(&chosen) {
        Ok(Ok(())) => {}
        Ok(Err(why)) => bail!("{}", neutralize_controls(&why)),
        Err(e) => {
            return Err(anyhow::Error::new(e)
                .context(format!("cannot check that {name} is the device checked")));
        }
    }
    Ok(WriteTarget {
        device,
        name,
        chosen,
    })
}

/// Adds a flush check's entry to the history in `dir`; says on stderr what the history warns
/// of, or that the entry is not in it (never a failed check). `stop` ends a wait for the
/// history's lock.
pub fn add_to_history(dir: &Path, entry: &HistoryEntry, stop: &dyn Fn() -> bool) {
    match History::new(dir).append_unless(entry, stop) {
        Ok(warnings) => {
            for w in warnings {
                write_stderr(&format!(
                    "disktriage: history: {}\n",
                    neutralize_controls(&w)
                ));
            }
        }
        Err(e) => write_stderr(&format!(
            "disktriage: warning: the check is not in the history: {}\n",
            neutralize_controls(&format!("{e:#}"))
        )),
    }
}
