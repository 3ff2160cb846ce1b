//! `disktriage trimcheck`'s arguments and help (does a discard do what the device claims).

use std::path::PathBuf;

use clap::Args;

pub(super) const TRIMCHECK_HELP: &str = "\
Where the kernel sends the device discards (queue/discard_max_bytes above 0), a scratch range \
of 4 MiB (whole discard granules, near the middle) is saved to a journal and made durable \
(default: trimcheck-NAME.journal in the history directory; --journal FILE, on another disk \
than DEV), written with a pattern, flushed and read back, discarded (BLKDISCARD) and read back \
with O_DIRECT. What it reads is judged against the drive's claim (ATA IDENTIFY word 69 \
RZAT/DRAT, SCSI LBPRZ, NVMe DLFEAT): discard works, reads zeros; discard accepted, data still \
there; claims zeros, returns old data. Then the saved bytes are written back and read back. \
After a crash or a power cut: disktriage restore --capacity JOURNAL. A device the kernel sends \
no discards is reported without a write. See docs/trimcheck.md.

Exit status: 0 the discard does what is claimed (or nothing is claimed, or the device does not \
discard), 4 the claim is broken (it promised zeros or ones and read otherwise), 3 the discard \
refused though the kernel says it discards, 5 unknown (stopped, failed, no scratch range), 1 a \
sector not put back (the journal is kept), 128 + N after signal N.

Examples:
  disktriage trimcheck /dev/sdb --confirm sdb
  disktriage trimcheck /dev/nvme0n1 --confirm nvme0n1 --journal /root/nvme.journal --json";

#[derive(Debug, Args)]
pub struct TrimcheckArgs {
    /// The block device (e.g. /dev/sdb).
    pub device: PathBuf,

    /// The device's own name (sdb or /dev/sdb), to confirm the check may write to it (the
    /// range it writes and discards is saved first and put back).
    #[arg(long, value_name = "NAME")]
    pub confirm: Option<String>,

    /// Where the saved bytes go, on another disk than DEV (default:
    /// trimcheck-NAME.journal in the history directory).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,

    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}
