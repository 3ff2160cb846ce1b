//! `disktriage flushcheck DEV`: the timing check (filled in by its helper).

use std::path::Path;
use std::process::ExitCode;

use crate::cli::FlushcheckArgs;
use crate::sys::SysRoot;

/// Runs the timing check.
pub fn timing(
    _root: &SysRoot,
    _journal_dir: &Path,
    _history_dir: &Path,
    _args: &FlushcheckArgs,
) -> anyhow::Result<ExitCode> {
    anyhow::bail!("the timing check is not built yet")
}
