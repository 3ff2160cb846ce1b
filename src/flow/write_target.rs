//! The guard for the checks that write a device themselves (flush check, capacity probe, TRIM
//! check, write-cliff probe), and the place of their journal of saved sectors, off that device.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};

use crate::bench::exec::safety::{self, WriteRefusal};
use crate::model::ChosenDevice;
use crate::model::text::neutralize_controls;
use crate::sys::SysRoot;
use crate::sys::activity::target_family;
use crate::sys::flush::{FlushDevice, PinnedDevice};
use crate::sys::flush_log::LogDir;

/// A device a write check may write: opened exclusively, checked against the live system.
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

/// The directory of a file that must outlive a failure of the target (the flush check's LOG,
/// the capacity probe's journal), refused when its file system shares a disk with the target:
/// `label` names the file, `why` says what would be lost and what to do.
pub fn dir_off_target(
    path: &Path,
    target: &FlushDevice,
    writing: bool,
    label: &str,
    why: &str,
) -> anyhow::Result<LogDir> {
    let shown = neutralize_controls(&path.display().to_string());
    let dir = LogDir::open(path, writing).with_context(|| format!("{label} {shown}"))?;
    if target_family(target.dev).contains(&dir.fs_dev) {
        bail!(
            "{label} {shown} is on a file system that shares a disk with {} (the device checked, \
             what it lives on, a partition of either, or something stacked on them): {why}",
            target.name.as_deref().unwrap_or("the device")
        );
    }
    Ok(dir)
}

/// The directory of the journal of saved sectors: refused on a file system that shares a disk
/// with `target`; allowed in RAM (tmpfs) with a warning pushed to `warnings`.
pub fn journal_dir(
    journal: &Path,
    target: &FlushDevice,
    warnings: &mut Vec<String>,
) -> anyhow::Result<LogDir> {
    let dir = dir_off_target(
        journal,
        target,
        true,
        "the journal",
        "a failure of the disk would take the saved sectors with it; name a journal on \
         another disk (--journal FILE, or Tab in the screen's confirmation)",
    )?;
    if dir.in_ram {
        warnings.push(format!(
            "the journal {} is in RAM (tmpfs): it survives a crash of disktriage, not a power \
             cut; a journal on another disk keeps it through one (--journal FILE, or Tab in the \
             screen's confirmation)",
            neutralize_controls(&journal.display().to_string())
        ));
    }
    Ok(dir)
}

/// A run id no earlier run used: the time and the process.
pub fn run_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}
