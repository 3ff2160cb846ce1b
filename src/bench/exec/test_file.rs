//! The test file a run makes when its target does not exist: where one may not be made (a
//! bare device name, under /dev, /proc or /sys), its size, laying it out with the run's data,
//! and removing it again (only the file this run made, never one put at its path since).

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use anyhow::{Context, bail};

use crate::bench::exec::pattern::DataPattern;
use crate::bench::plan::DataKind;
use crate::bench::plan::params::{DEFAULT_SEED, TestParams};
use crate::model::Bytes;
use crate::sys::SysRoot;
use crate::sys::direct;

/// Size of a test file created when the target does not exist and no --size is given.
pub const DEFAULT_FILE_SIZE: u64 = 1 << 30;

/// The default size of a new test file with `free` bytes free (the TUI's file dialog): 1 GiB
/// when that fits, else whole MiBs of 90 % of the free space (the file system needs room for
/// its own blocks). 1 GiB when not even 1 MiB fits: the run is then refused with the sizes.
pub fn default_file_size_within(free: u64) -> u64 {
    const MIB: u64 = 1 << 20;
    if DEFAULT_FILE_SIZE <= free {
        return DEFAULT_FILE_SIZE;
    }
    match free / 10 * 9 / MIB * MIB {
        0 => DEFAULT_FILE_SIZE,
        fits => fits,
    }
}

/// Where a new test file must not be created (`refuse_system_directory`,
/// `refuse_bare_device_name`).
pub(crate) fn refuse_new_file_path(path: &Path) -> anyhow::Result<()> {
    refuse_bare_device_name(path)?;
    refuse_system_directory(path)
}

/// `run loop4` without `./loop4` would create a 1 GiB file `loop4`, and `--destroy-data loop4`
/// reads as if it named the device: a missing bare name that is a block device's kernel name
/// is refused with both ways to say what was meant. `./loop4` still creates the file.
fn refuse_bare_device_name(path: &Path) -> anyhow::Result<()> {
    let mut components = path.components();
    let (Some(std::path::Component::Normal(name)), None) = (components.next(), components.next())
    else {
        return Ok(());
    };
    // `./loop4` has a CurDir component first; a bare `loop4` has only its name.
    if path.as_os_str().as_encoded_bytes().contains(&b'/') {
        return Ok(());
    }
    let name = name.to_string_lossy();
    if !SysRoot::host().has_block_device(&name) {
        return Ok(());
    }
    bail!(
        "{name} does not exist in this directory, and {name} is a block device: to test the \
         device give its path, /dev/{name}; to create a test file named {name} here, give \
         ./{name}"
    )
}

/// Test files are never created under /dev, /proc or /sys (a typo in a device name would fill
/// RAM with 1 GiB in devtmpfs): the error lists the block devices. A file system mounted below
/// /dev that holds files (/dev/shm) is not /dev itself and is allowed.
fn refuse_system_directory(path: &Path) -> anyhow::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(dir) = std::fs::canonicalize(parent) else {
        // A missing directory: creating the file fails with its own message.
        return Ok(());
    };
    let fs_type = direct::filesystem_type(&dir);
    let file_system_below_dev = dir.starts_with("/dev")
        && fs_type
            .as_deref()
            .is_some_and(|t| !matches!(t, "devtmpfs" | "devpts" | "mqueue" | "hugetlbfs"));
    let under = ["/dev", "/proc", "/sys"]
        .into_iter()
        .find(|top| dir.starts_with(top) && !file_system_below_dev)
        .map(|top| format!("under {top}"));
    let refused = under.or_else(|| {
        fs_type
            .as_deref()
            .filter(|t| matches!(*t, "devtmpfs" | "proc" | "sysfs"))
            .map(|t| format!("on a {t} file system ({} is one)", dir.display()))
    });
    let Some(where_) = refused else {
        return Ok(());
    };
    let names: Vec<String> = match SysRoot::host().inventory() {
        Ok(inv) => inv
            .visible(false)
            .flat_map(|d| {
                std::iter::once(d.name.clone()).chain(d.partitions.iter().map(|p| p.name.clone()))
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    let list = if names.is_empty() {
        "none found".to_string()
    } else {
        names.join(", ")
    };
    bail!(
        "{} does not exist, and test files are not created {where_}: name an existing block \
         device (block devices: {list})",
        path.display()
    )
}

/// A test file this run created. Until `keep` (the run started), dropping it removes the file,
/// so a failed start leaves nothing the next run would take for the admin's own file.
pub struct CreatedFile {
    path: PathBuf,
    pub fd: OwnedFd,
    keep: bool,
}

impl CreatedFile {
    /// The run has started on the file: it stays.
    pub fn keep(mut self) {
        self.keep = true;
    }

    /// Removes the file now, if it is still the one this run created, and says what failed.
    pub fn remove(mut self) -> std::io::Result<bool> {
        self.keep = true;
        direct::remove_file_if_same(&self.path, &self.fd)
    }
}

impl Drop for CreatedFile {
    fn drop(&mut self) {
        if !self.keep {
            // Only the file this run created: not whatever may have been renamed there since.
            let _ = direct::remove_file_if_same(&self.path, &self.fd);
        }
    }
}

/// The size of a new test file: `--size` (default 1 GiB) up to a whole number of 4 KiB.
pub fn test_file_size(params: &TestParams) -> u64 {
    params
        .size
        .unwrap_or(DEFAULT_FILE_SIZE)
        .div_ceil(4096)
        .saturating_mul(4096)
}

/// Creates a test file of `--size` (default 1 GiB) filled with the run's data pattern, so
/// reads read real data, not holes. On failure or `stop` the partial file is removed.
/// `laid_out` follows the bytes written.
pub(crate) fn create_test_file(
    path: &Path,
    params: &TestParams,
    stop: Option<&AtomicBool>,
    laid_out: Option<&AtomicU64>,
) -> anyhow::Result<CreatedFile> {
    const CHUNK: usize = 1 << 20;
    if params.size == Some(0) {
        bail!("--size must be larger than 0 to create {}", path.display());
    }
    let size = test_file_size(params);
    let kind = if params.zeros {
        DataKind::Zeros
    } else {
        DataKind::Random {
            seed: params.seed.unwrap_or(DEFAULT_SEED),
        }
    };
    // Laying the file out is not measured: the data sits in ordinary pages.
    let pattern = DataPattern::new(kind, CHUNK, false)?;
    let fd = direct::create_file(path)
        .with_context(|| format!("cannot create the test file {}", path.display()))?;
    let created = CreatedFile {
        path: path.to_path_buf(),
        fd,
        keep: false,
    };
    let stopped = || stop.is_some_and(|s| s.load(Ordering::Relaxed));
    // The file is removed here only if it is still at its path (renamed, it is left alone).
    let interrupted = || anyhow::anyhow!("interrupted");
    let result = (|| -> anyhow::Result<()> {
        let mut offset = 0u64;
        while offset < size {
            if stopped() {
                return Err(interrupted());
            }
            let len = CHUNK.min((size - offset) as usize);
            let n = direct::write_at(&created.fd, pattern.expected(offset, len), offset).map_err(
                |e| {
                    anyhow::anyhow!(
                        "writing the test file failed at offset {offset}: {}",
                        crate::sys::error::describe_io(&e)
                    )
                },
            )?;
            if n == 0 {
                bail!("writing the test file made no progress at offset {offset}");
            }
            offset += n as u64;
            if let Some(l) = laid_out {
                l.store(offset, Ordering::Relaxed);
            }
        }
        direct::sync_data(&created.fd).context("cannot flush the new test file")?;
        if stopped() {
            return Err(interrupted());
        }
        // Start cold: reads must come from the device, not the pages this layout cached.
        let _ = direct::drop_cache(&created.fd);
        Ok(())
    })();
    match result {
        Ok(()) => Ok(created),
        Err(_) if stopped() => {
            let what = match created.remove() {
                Ok(true) => "it was removed".to_string(),
                Ok(false) => "it is no longer at that path (renamed or replaced meanwhile), \
                              so it was left where it is"
                    .to_string(),
                Err(e) => format!(
                    "it could not be removed ({}): remove it by hand",
                    crate::sys::error::describe_io(&e)
                ),
            };
            Err(anyhow::anyhow!(
                "interrupted while creating the test file {}: {what} (nothing was tested)",
                path.display()
            ))
        }
        Err(e) => Err(e.context(format!(
            "cannot create the {} test file {} (removed again)",
            Bytes(size).iec(),
            path.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_file_size_fits_the_free_space() {
        assert_eq!(default_file_size_within(3 << 30), DEFAULT_FILE_SIZE);
        assert_eq!(default_file_size_within(1 << 30), DEFAULT_FILE_SIZE);
        assert_eq!(default_file_size_within(600 << 20), 540 << 20);
        assert_eq!(default_file_size_within((1 << 30) - 1), 921 << 20);
        for free in [2u64 << 20, 5 << 20, 123_456_789, (1 << 30) - 4096] {
            let size = default_file_size_within(free);
            assert!(size <= free && size.is_multiple_of(4096), "{free}: {size}");
        }
        // Nothing fits: the 1 GiB the run then refuses, naming both sizes.
        assert_eq!(default_file_size_within(4096), DEFAULT_FILE_SIZE);
        assert_eq!(default_file_size_within(1 << 20), DEFAULT_FILE_SIZE);
    }
}
