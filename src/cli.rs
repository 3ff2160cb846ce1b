//! Command-line arguments (clap) for the binary. Raw flags are parsed here; validation into a
//! plan happens in the command that uses them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Where the change journal lives unless told otherwise: a tmpfs, so a reboot (which resets
/// every setting disktriage changes) also empties it.
pub const DEFAULT_JOURNAL_DIR: &str = "/run/disktriage";

/// Storage triage for the Linux console: list block devices and their schedulers, test them,
/// switch settings, retest, compare.
#[derive(Debug, Parser)]
#[command(name = "disktriage", version, about, long_about = None)]
pub struct Cli {
    /// Read sysfs and procfs below this directory instead of `/` (for captured trees).
    #[arg(long, global = true, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,

    /// Keep the change journal in this directory (for tests).
    #[arg(
        long,
        global = true,
        value_name = "DIR",
        default_value = DEFAULT_JOURNAL_DIR,
        hide = true
    )]
    pub journal_dir: PathBuf,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List block devices: model, size, transport, scheduler, the kernel's write-cache view and
    /// whether the device is in use (mounted, swap, held by md/dm/LVM). Works as a normal user.
    #[command(
        after_help = "Columns: TRAN is the transport; TYPE comes from the kernel's \
        rotational flag; WCACHE is the kernel's flush policy from queue/write_cache (\"back\" = \
        it sends cache flushes, \"thru\" = it does not), not the drive's own setting."
    )]
    List(ListArgs),

    /// Show or switch the drive's own volatile write cache (what `hdparm -W` does), natively
    /// for SATA, SCSI, NVMe and virtio. Needs root.
    #[command(after_help = CACHE_HELP)]
    Cache(CacheArgs),

    /// SMART health: PASSED, WARNING or FAILED with the reasons, temperature, power-on hours
    /// and the attribute table or NVMe health log. Needs root.
    #[command(after_help = SMART_HELP)]
    Smart(SmartArgs),

    /// Show or switch the I/O scheduler of a disk (a partition means its disk). Switching
    /// needs root.
    #[command(after_help = SCHED_HELP)]
    Sched(SchedArgs),

    /// Put back every setting disktriage changed and did not keep (from the journal in
    /// /run/disktriage), reading each back. Needs root.
    #[command(after_help = RESTORE_HELP)]
    Restore(RestoreArgs),

    /// Developer tools: raw device pages, a long-lived session for restore tests.
    #[command(hide = true, subcommand)]
    Debug(DebugCommand),
}

const CACHE_HELP: &str = "\
Without on/off, prints what the drive reports and, separately, the kernel's flush policy \
(queue/write_cache: whether the kernel sends cache flushes), with a line when they disagree.

With on/off, the change persists (it is what you asked for) and the original state is \
recorded in /run/disktriage: `disktriage restore` puts it back. --keep makes the change \
permanent: nothing is recorded. Either way the state printed afterwards is read back from \
the drive. Drives forget the setting at power cycle.

Not supported on loop, zram, md, dm, mmc, or USB bridges that refuse the commands.";

const SMART_HELP: &str = "\
ATA drives are read natively (SMART RETURN STATUS, attributes and thresholds), NVMe drives \
from the SMART/Health log. Other devices use `smartctl -j -a` when it is installed. \
Vendor-specific attributes are shown raw and never decide the verdict.

Exit status: 0 PASSED or not available, 1 error, 2 WARNING, 3 FAILED.";

const SCHED_HELP: &str = "\
Without NAME, prints the active scheduler and the ones offered. With NAME, switches, reads \
back and prints the active one; an unknown name lists the available ones.

The change persists and the original is recorded in /run/disktriage: `disktriage restore` \
puts it back. --keep makes it permanent: nothing is recorded.";

const RESTORE_HELP: &str = "\
Each recorded change is put back and read back, newest first, and reported one per line. \
Changes held by a disktriage that is still running are left to it unless --force. A device \
that was removed or replaced since is dropped from the journal (it came back with its \
defaults).";

#[derive(Debug, Args, Default)]
pub struct ListArgs {
    /// Print every field as JSON (sizes in bytes) instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Also show unused placeholders: loop devices with no backing file, zram with no size.
    #[arg(long)]
    pub all: bool,
}

/// The two states of a write cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

impl OnOff {
    pub fn enabled(self) -> bool {
        self == OnOff::On
    }
}

#[derive(Debug, Args)]
pub struct CacheArgs {
    /// The device: `sda`, `/dev/sda`, `nvme0n1`; a partition means its disk.
    pub device: String,

    /// Turn the cache on or off; without it, only show.
    pub state: Option<OnOff>,

    /// Make the change permanent: do not record the original for `disktriage restore`.
    #[arg(long, requires = "state")]
    pub keep: bool,

    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SmartArgs {
    /// The device: `sda`, `/dev/sda`, `nvme0n1`; a partition means its disk.
    pub device: String,

    /// Print the health report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SchedArgs {
    /// The device: `sda`, `/dev/sda`; a partition means its disk.
    pub device: String,

    /// The scheduler to activate (e.g. none, mq-deadline, kyber, bfq); without it, only show.
    pub name: Option<String>,

    /// Make the change permanent: do not record the original for `disktriage restore`.
    #[arg(long, requires = "name")]
    pub keep: bool,

    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// Only list what would be put back.
    #[arg(long)]
    pub list: bool,

    /// Also restore changes held by a disktriage that is still running.
    #[arg(long)]
    pub force: bool,

    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum DebugCommand {
    /// Dump the raw pages the drive returns (IDENTIFY, SMART, NVMe logs, mode pages) as hex,
    /// for test fixtures.
    Pages { device: String },
    /// Read the temperature with the poller a run uses, COUNT times.
    Temp {
        device: String,
        #[arg(long, default_value_t = 3)]
        count: usize,
        /// Poll interval in seconds (at least 1).
        #[arg(long, default_value_t = 1)]
        interval: u64,
    },
    /// Change settings as a long-lived session would (journaled, restored on exit, SIGINT,
    /// SIGTERM or panic), then wait: the stand-in for `run` in restore tests.
    Hold {
        device: String,
        /// Set the drive's write cache.
        #[arg(long)]
        cache: Option<OnOff>,
        /// Set the scheduler.
        #[arg(long)]
        sched: Option<String>,
        /// Exit normally after this many seconds (default: wait for a signal).
        #[arg(long)]
        seconds: Option<u64>,
        /// Panic after applying (to test the panic path).
        #[arg(long)]
        panic: bool,
    },
}
