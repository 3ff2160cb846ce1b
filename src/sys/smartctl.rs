//! Runs `smartctl -j -a DEV` when it is installed: the fallback for devices disktriage does
//! not read natively (SCSI disks, USB bridges needing a vendor pass-through).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::error::DriveError;

/// Where to look besides `$PATH`: a rescue shell's PATH often lacks the sbin directories.
const EXTRA_DIRS: [&str; 4] = ["/usr/sbin", "/sbin", "/usr/local/sbin", "/usr/bin"];

/// The smartctl executable, if installed.
pub fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(EXTRA_DIRS.iter().map(PathBuf::from))
        .map(|dir| dir.join("smartctl"))
        .find(|p| p.is_file())
}

/// smartctl's JSON and exit code, or `None` when smartctl is not installed.
pub fn run(device: &Path) -> Result<Option<(String, Option<i32>)>, DriveError> {
    let Some(exe) = find() else {
        return Ok(None);
    };
    let out = Command::new(&exe)
        .args(["-j", "-a"])
        .arg(device)
        .output()
        .map_err(|e| DriveError::from_io(format!("run {}", exe.display()), device, &e))?;
    Ok(Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code(),
    )))
}
