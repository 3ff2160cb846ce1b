//! `disktriage flushcheck`'s arguments and help (the flush-honesty check).

use std::path::PathBuf;

use clap::Args;

pub(super) const FLUSHCHECK_HELP: &str = "\
Exit status: 0 commits wait for the medium (timing) or nothing acknowledged was lost \
(--verify); 3 a volatile cache acknowledges commits; 4 acknowledged records were lost or torn; \
5 timing cannot tell; 1 an error; 2 a usage error.

Examples:
  disktriage flushcheck /dev/sdb --destroy-data sdb
  disktriage flushcheck /dev/sdb --record /root/flush.log --destroy-data sdb
  (cut the power; after the reboot:)
  disktriage flushcheck /dev/sdb --verify /root/flush.log";

#[derive(Debug, Args)]
pub struct FlushcheckArgs {
    /// The block device (e.g. /dev/sdb). Its data is destroyed (except by --verify).
    pub device: PathBuf,

    /// The power-cut check, step one: write sequence-numbered records to DEV, flushing after
    /// each, and append every acknowledged number to LOG (on another device) until the power
    /// goes.
    #[arg(long, value_name = "LOG", conflicts_with = "verify")]
    pub record: Option<PathBuf>,

    /// The power-cut check, step two (after the reboot): read the records back and report
    /// every acknowledged one that is missing or torn. Read-only.
    #[arg(long, value_name = "LOG")]
    pub verify: Option<PathBuf>,

    /// The device's own name (sdb or /dev/sdb), to confirm that its data may be destroyed.
    #[arg(long, value_name = "NAME")]
    pub destroy_data: Option<String>,

    /// The rotation rate in rpm, when the drive does not say it (behind a USB bridge or a
    /// RAID controller); 0 for a disk that does not rotate.
    #[arg(long, value_name = "RPM")]
    pub rpm: Option<u32>,

    /// Print the result as JSON (the timing check, --verify; --record prints its progress on
    /// stderr).
    #[arg(long, conflicts_with = "record")]
    pub json: bool,
}
