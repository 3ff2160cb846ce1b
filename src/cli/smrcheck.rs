//! `disktriage smrcheck`'s arguments and help (does sustained random writing fall off a
//! cliff, as a drive-managed SMR disk's does).

use std::path::PathBuf;

use clap::Args;

pub(super) const SMRCHECK_HELP: &str = "\
A scratch range (256 MiB, a quarter of a device under 1 GiB; whole MiB in the middle of the \
device) is saved whole to a journal and made durable (default: smrcheck-NAME.journal in the \
history directory; --journal FILE, on another disk than DEV). Then random 4 KiB writes (the \
physical block when larger) go to it with O_DIRECT, a flush ending each second, for up to \
--minutes, the MB/s and latencies of each second kept. A drive-managed SMR disk takes them \
at full speed into its media cache, then falls off a cliff once the cache is full: a window \
of 10 s with 8 s below a fifth of the first seconds' rate ends the run early. On a disk \
that does not rotate, a cliff is its fast (SLC) write cache running out, not SMR. Then the \
saved range is written back and read back. After a crash or a power cut: disktriage \
restore --capacity JOURNAL. No cliff in N minutes does not prove a disk is CMR: a large \
empty media cache may outlast the run. See docs/smrcheck.md.

Exit status: 0 no write cliff, 3 a write cliff (drive-managed SMR behaviour, or an SSD's \
cache running out), 5 unknown (stopped, failed, too short, no scratch range), 1 a sector \
not put back (the journal is kept) or a write refused, 128 + N after signal N.

Examples:
  disktriage smrcheck /dev/sdb --confirm sdb
  disktriage smrcheck /dev/sdc --confirm sdc --minutes 15 --journal /root/sdc.journal --json";

#[derive(Debug, Args)]
pub struct SmrcheckArgs {
    /// The block device (e.g. /dev/sdb).
    pub device: PathBuf,

    /// The device's own name (sdb or /dev/sdb), to confirm the probe may write to it (the
    /// range it writes is saved first and put back).
    #[arg(long, value_name = "NAME")]
    pub confirm: Option<String>,

    /// Where the saved range goes, on another disk than DEV (default:
    /// smrcheck-NAME.journal in the history directory).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,

    /// Write for at most this many minutes (fractions allowed; it ends early on a proven
    /// cliff).
    #[arg(long, value_name = "N", default_value_t = 5.0)]
    pub minutes: f64,

    /// Print the result as JSON, with the MB/s and latencies of every second.
    #[arg(long)]
    pub json: bool,
}
