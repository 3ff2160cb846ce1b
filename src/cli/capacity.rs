//! `disktriage capacity`'s arguments and help (the fake-capacity probe).

use std::path::PathBuf;

use clap::Args;

pub(super) const CAPACITY_HELP: &str = "\
Before any write the sectors the probe overwrites are appended to a journal and made durable \
(default: capacity-NAME.journal in the history directory; --journal FILE, on another disk than \
DEV). At the end every one is written back, last saved first, and read back. After a crash or \
a power cut: disktriage restore --capacity JOURNAL. The probe: the first 64 MiB stamped and \
read back, one sector every 64 MiB read (a wrap of any period returns a stamp that names it), \
then a bisection of single-sector writes for a dropped or failing tail. See docs/capacity.md.

Exit status: 0 real, 4 fake, 5 unknown (stopped or failed), 1 a sector not put back (the \
journal is kept), 128 + N after signal N.

Examples:
  disktriage capacity /dev/sdb --confirm sdb
  disktriage capacity /dev/sdb --confirm sdb --journal /root/sdb.journal --json
  disktriage restore --capacity /var/lib/disktriage/capacity-sdb.journal";

#[derive(Debug, Args)]
pub struct CapacityArgs {
    /// The block device (e.g. /dev/sdb).
    pub device: PathBuf,

    /// The device's own name (sdb or /dev/sdb), to confirm the probe may write to it (every
    /// sector it writes is saved first and put back).
    #[arg(long, value_name = "NAME", conflicts_with = "destroy_data")]
    pub confirm: Option<String>,

    /// The device's own name: probe without saving anything (faster; what the probe wrote
    /// stays written).
    #[arg(long, value_name = "NAME")]
    pub destroy_data: Option<String>,

    /// Where the saved sectors go, on another disk than DEV (default:
    /// capacity-NAME.journal in the history directory).
    #[arg(long, value_name = "FILE", conflicts_with = "destroy_data")]
    pub journal: Option<PathBuf>,

    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}
