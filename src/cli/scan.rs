//! `disktriage scan`'s arguments and help (the surface scan).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::{parse_duration, parse_size};

pub(super) const SCAN_HELP: &str = "\
Read-only (unless --repair): the device is opened with O_RDONLY|O_DIRECT and never written; \
a scan is allowed on a mounted or held device. The scan goes on past every error. Buckets (as MHDD/Victoria): \
<5, <20, <50, <150, <500, >=500 ms, ERR (unreadable) and TIME (--timeout or longer). A block \
that fails is read again in halves down to the logical block size, so the report names the \
exact unreadable sectors with the kernel's errno; a slow block (--slow or longer) is read a \
second time later in the scan (not at once, which the drive's cache would answer), and both \
times are kept.

Timeouts: on a SCSI or SATA disk (the sd driver: SATA, SAS, USB, virtio-scsi) the blocks are \
read with SCSI READ commands that carry --timeout as their own timeout, through the disk's sg \
node (/dev/sgN; without one, SG_IO on the block device, where the kernel gives a command at \
least 7 s: modprobe sg): a block the disk has not answered by then is abandoned (no kernel \
retries), counted TIME, left not tried ('*') in the mapfile and makes the exit status 3 (4 \
if a sector is unreadable). A block larger than the disk's largest transfer is several \
commands, sent together through the sg node. Elsewhere (loop, NVMe, virtio-blk, md, dm) a plain \
O_DIRECT read cannot be abandoned: a weak sector is waited for through the kernel's own \
retries and then counted TIME. The output says which, and why (JSON: timeout_enforced, \
timeout_reason).

--mapfile FILE writes GNU ddrescue's mapfile ('+' read, '-' bad sector, '?' not tried), read \
by ddrescuelog and ddrescueview. Given an existing mapfile of the same device, the scan \
resumes: it reads only what is not tried ('?', and ddrescue's '*' and '/'); --retry also \
reads the bad sectors ('-') again. The mapfile is saved every 30 s, at the end, and on \
Ctrl-C, SIGTERM or SIGHUP before the exit (a stop takes effect between two reads: a read in \
progress is finished first). --badblocks FILE writes the unreadable blocks in \
--bb-size units (default 4096, the file system's block size), one number a line, for \
`e2fsck -l FILE` / `mke2fs -l FILE`. Neither file may be on the disk being scanned.

--repair --destroy-data NAME writes zeros over the sectors this scan found unreadable, and \
nothing else, then reads each again (JSON: repair). It is guarded like a write test, before \
anything is read: refused without the device's own name, on a device that is mounted, active \
swap, held by md/dm/LVM or whose partition (or a device stacked on it) is in use, and on a \
read-only device. The writes go through an O_DIRECT|O_WRONLY|O_EXCL descriptor checked to be \
the device before each write. The drive's reallocated and pending sector counts (SMART 5 and \
197) are shown before and after, \"not available\" when SMART does not give them.

Exit status: 0 every block of the range was read (now or in the mapfile's earlier runs), 1 \
error, 2 usage, 3 no sector unreadable but blocks abandoned at --timeout, 4 some sectors could \
not be read (they are listed), 5 the scan could not finish (the device went away or changed; \
what was read is reported), 128 + the signal when stopped (130 for Ctrl-C). With --repair: 0 when every unreadable sector reads after its \
rewrite, else the scan's own status.

Examples:
  disktriage scan /dev/sdb
  disktriage scan /dev/sdb --json > sdb-scan.json
  disktriage scan /dev/sdb --mapfile sdb.map      (again later: resumes)
  disktriage scan /dev/sdb1 --badblocks bad.txt && e2fsck -l bad.txt /dev/sdb1
  disktriage scan /dev/nvme0n1 --offset 100G --size 10G --slow 50ms
  disktriage scan /dev/sdb --repair --destroy-data sdb   (writes: zeros over the unreadable sectors)";

#[derive(Debug, Args)]
pub struct ScanArgs {
    /// The block device to read: a disk or a partition (e.g. /dev/sdb).
    pub target: PathBuf,

    /// Where the scan starts (a multiple of the logical block size).
    #[arg(long, value_parser = parse_size)]
    pub offset: Option<u64>,

    /// Bytes to scan from --offset (default: to the end of the device).
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u64>,

    /// Bytes per read (default 1M, at most 64M; on a SCSI or SATA disk whose largest
    /// transfer is smaller, read as several SG_IO commands sent together).
    #[arg(long, value_parser = parse_size)]
    pub block: Option<u64>,

    /// A block that takes this long or longer is slow, and is read a second time.
    #[arg(long, value_parser = parse_duration, default_value = "150ms")]
    pub slow: Duration,

    /// A block that takes this long or longer is counted TIME; on a SCSI or SATA disk it is
    /// abandoned then.
    #[arg(long, value_parser = parse_duration, default_value = "3s")]
    pub timeout: Duration,

    /// Print the result as JSON: bytes_read, seconds, buckets, errors, slow, timeouts and the
    /// target's identity.
    #[arg(long)]
    pub json: bool,

    /// Write (and resume from) a GNU ddrescue mapfile.
    #[arg(long, value_name = "FILE")]
    pub mapfile: Option<PathBuf>,

    /// With --mapfile: read the sectors it marks bad ('-') again.
    #[arg(long, requires = "mapfile")]
    pub retry: bool,

    /// Write the unreadable blocks to FILE, one block number a line (e2fsck -l, mke2fs -l).
    #[arg(long, value_name = "FILE")]
    pub badblocks: Option<PathBuf>,

    /// The block size of the --badblocks numbers.
    #[arg(long, value_name = "N", value_parser = parse_size, default_value = "4096", requires = "badblocks")]
    pub bb_size: u64,

    /// After the scan, overwrite each unreadable sector it found with zeros (its data is
    /// already lost; the write lets the drive remap it), read it again and report it repaired
    /// or still unreadable, with the drive's reallocated and pending counts (SMART 5, 197)
    /// before and after. Nothing else is written. Needs --destroy-data NAME; refused, before
    /// anything is read, on a device that is mounted, active swap, held by md/dm/LVM or whose
    /// partition is.
    #[arg(long)]
    pub repair: bool,

    /// With --repair: the device's own name (sdb or /dev/sdb), to confirm the write.
    #[arg(long, value_name = "NAME", requires = "repair")]
    pub destroy_data: Option<String>,
}
