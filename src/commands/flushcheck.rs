//! `disktriage flushcheck`: does the drive keep what it acknowledged? The timing check
//! (`timing`, the default) and the power-cut check (`powercut`: `--record LOG`, then after
//! the power cut `--verify LOG`). The timing check and `--record` write, so the write tests'
//! guard applies to them (`prepare_write`); `--verify` only reads.

pub mod powercut;
pub mod timing;

use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;

use crate::cli::FlushcheckArgs;
pub use crate::flow::flushcheck::target::add_to_history;
pub use crate::flow::write_target::{WriteTarget, prepare_write};
use crate::sys::SysRoot;

/// Exit status of the timing check when a volatile cache acknowledges commits.
pub const EXIT_VOLATILE_CACHE: u8 = crate::model::exit::SUSPECT;
/// Exit status of `--verify` when acknowledged records were lost or torn.
pub const EXIT_LOST: u8 = crate::model::exit::FAILING;
/// Exit status of the timing check when timing cannot tell.
pub const EXIT_UNKNOWN: u8 = crate::model::exit::UNKNOWN;

/// Runs the command.
pub fn flushcheck(
    root: &SysRoot,
    journal_dir: &Path,
    history_dir: &Path,
    args: &FlushcheckArgs,
) -> anyhow::Result<ExitCode> {
    match (&args.record, &args.verify) {
        (Some(log), None) => powercut::record(history_dir, args, log),
        (None, Some(log)) => powercut::verify(history_dir, args, log),
        (None, None) => timing::timing(root, journal_dir, history_dir, args),
        (Some(_), Some(_)) => bail!("--record and --verify are two steps: give one"),
    }
}
