//! Command-line arguments (clap) for the binary. Raw flags are parsed here; validation into a
//! plan happens in the command that uses them.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::bench::exec::engines;
use crate::bench::plan::params::EngineKind;
use crate::model::{Bytes, KernelWriteCache, SelfTestKind, TimeSpan};

mod capacity;
mod flushcheck;
mod scan;
mod smrcheck;
mod trimcheck;
use capacity::CAPACITY_HELP;
pub use capacity::CapacityArgs;
use flushcheck::FLUSHCHECK_HELP;
pub use flushcheck::FlushcheckArgs;
use scan::SCAN_HELP;
pub use scan::ScanArgs;
use smrcheck::SMRCHECK_HELP;
pub use smrcheck::SmrcheckArgs;
use trimcheck::TRIMCHECK_HELP;
pub use trimcheck::TrimcheckArgs;

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

    /// Keep the run history in this directory (default /var/lib/disktriage, or
    /// $DISKTRIAGE_HISTORY_DIR when set).
    #[arg(long, global = true, value_name = "DIR")]
    pub history_dir: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// The history's directory: `--history-dir`, else `$DISKTRIAGE_HISTORY_DIR`, else
    /// `/var/lib/disktriage`.
    pub fn history_dir(&self) -> PathBuf {
        self.history_dir
            .clone()
            .or_else(|| {
                std::env::var_os(crate::history::HISTORY_DIR_ENV)
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            })
            .unwrap_or_else(|| PathBuf::from(crate::history::DEFAULT_HISTORY_DIR))
    }
}

/// The column legend of `list`, with the WCACHE words the table prints.
fn list_help() -> String {
    format!(
        "Columns: TRAN is the transport; TYPE comes from the kernel's rotational flag; WCACHE \
         is the kernel's flush policy from queue/write_cache (\"{}\" = it sends cache flushes, \
         \"{}\" = it does not), not the drive's own setting.",
        KernelWriteCache::WriteBack.short(),
        KernelWriteCache::WriteThrough.short()
    )
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List block devices: model, size, transport, scheduler, the kernel's write-cache view and
    /// whether the device is in use (mounted, swap, held by md/dm/LVM). Works as a normal user.
    #[command(after_help = list_help())]
    List(ListArgs),

    /// Run a test on a block device or a file and print its figures.
    #[command(after_help = RUN_HELP)]
    Run(Box<RunArgs>),

    /// List the tests `run` knows, with their defaults and origins.
    Tests,

    /// Read a whole disk (or a part) read-only, block by block, timing each: where it is
    /// unreadable (to the sector) and where it is slow; a ddrescue mapfile and a badblocks
    /// list on request.
    #[command(after_help = SCAN_HELP)]
    Scan(ScanArgs),

    /// One verdict per disk (healthy, suspect, failing, unknown) with the findings behind it:
    /// SMART, the drive's logs, the link against the best it could run at, a sampled surface
    /// read, sequential and random read speed and the temperature. Read-only and time-bounded.
    #[command(after_help = TRIAGE_HELP)]
    Triage(TriageArgs),

    /// Does the drive keep what it acknowledged? Times durable 4 KiB commits (O_DSYNC, and
    /// write + flush) with the write cache as found and off, and one flush after 64 MiB of
    /// dirty data, against the physical floor (one revolution per commit on a rotating disk).
    /// With --record LOG and, after a power cut, --verify LOG: the power-cut check. Writes
    /// (except --verify): needs --destroy-data NAME.
    #[command(after_help = FLUSHCHECK_HELP)]
    Flushcheck(FlushcheckArgs),

    /// Does the device store what it claims? Finds the real size of a fake (a stick that
    /// claims 2 TB and stores 100 MiB) in minutes: writes wrapping onto earlier sectors at any
    /// period, dropped writes, failing reads. Writes, and puts back every sector it wrote:
    /// needs --confirm NAME (or --destroy-data NAME to save nothing).
    #[command(after_help = CAPACITY_HELP)]
    Capacity(CapacityArgs),

    /// Does a discard (TRIM, UNMAP, Deallocate) do what the device claims? Saves a 4 MiB
    /// scratch range, writes a pattern, discards it and reads it back: zeros, the old data or
    /// other, against the drive's claim (RZAT/DRAT, LBPRZ, DLFEAT). Puts the range back:
    /// needs --confirm NAME.
    #[command(after_help = TRIMCHECK_HELP)]
    Trimcheck(TrimcheckArgs),

    /// Does sustained random writing fall off a cliff, as a drive-managed SMR disk's does
    /// once its media cache fills? Saves a scratch range, writes random 4 KiB blocks in it
    /// for up to --minutes with the MB/s of each second, and puts the range back: needs
    /// --confirm NAME.
    #[command(after_help = SMRCHECK_HELP)]
    Smrcheck(SmrcheckArgs),

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

    /// Past runs from the history (every finished run is added to it), oldest first: when,
    /// disk, test, settings and figures. With DEV, only that disk's runs, found by its WWN
    /// or serial even under another kernel name.
    #[command(after_help = HISTORY_HELP)]
    History(HistoryArgs),

    /// Print the shell completion script for bash, zsh or fish to standard output.
    #[command(after_help = COMPLETIONS_HELP)]
    Completions {
        /// The shell to complete in.
        shell: CompletionShell,
    },

    /// Print the manual page (roff) to standard output.
    #[command(after_help = MAN_HELP)]
    Man,

    /// Developer tools: raw device pages, a long-lived session for restore tests.
    #[command(hide = true, subcommand)]
    Debug(DebugCommand),
}

impl Command {
    /// Does this command switch a setting (a scheduler, a write cache, a boot rule), start a
    /// self-test or put settings back? Those are refused under a captured `--root`.
    pub fn switches(&self) -> bool {
        match self {
            Command::Cache(a) => a.state.is_some(),
            Command::Sched(a) => a.name.is_some() && !a.dry_run,
            Command::Smart(a) => a.self_test.is_some(),
            Command::Run(a) => a.sweep_sched.is_some() || a.sweep_cache,
            Command::Restore(a) => !a.list,
            // The timing and the record switch the drive's cache off and back; --verify reads.
            Command::Flushcheck(a) => a.verify.is_none(),
            Command::Debug(DebugCommand::Hold { cache, sched, .. }) => {
                cache.is_some() || sched.is_some()
            }
            _ => false,
        }
    }
}

const RUN_HELP: &str = "\
Sizes take k, M, G, T suffixes in powers of 1024 (4k = 4096; KiB/MiB/GiB also accepted); durations take ms, s, m, h (a bare number is seconds).

Safety: read tests always run. A test that writes to a block device runs only with --destroy-data <name of the device> and never on a device that is mounted, active swap, held by md/dm/LVM, or whose partition is; it opens the device exclusively (O_EXCL). A missing file target is created at --size (default 1 GiB) and may be written freely; overwriting an existing file needs --destroy-data <file name>.

Measurement: O_DIRECT unless --buffered; latency is total latency (from just before the system call that hands the I/O to the kernel to its completion, fio's lat, not clat) in an HDR histogram with 3 significant digits. Each run states its warm-up, which is not counted. The kernel's own counters (/sys/dev/block/M:m/stat) are read around the measured part and compared with the test's; a difference over 2 % is flagged.

Examples:
  disktriage run /dev/sdb --test seq-read
  disktriage run /dev/sdb --test rand-read --bs 4k --qd 32 --time 30s
  disktriage run /dev/sdb --test rand-read --time 10s --repeats 5 --json
  disktriage run /dev/sdb --test seq-write --io-size 200M --destroy-data sdb
  disktriage run /mnt/scratch/test.bin --test cdm --size 1G
  disktriage run /dev/nvme0n1 --test size-sweep --min-bs 4k --max-bs 16M --csv
  disktriage run /dev/sdb /dev/sdc /dev/sdd --test seq-read --repeats 3
  disktriage run /dev/sdb /dev/sdc --test seq-write --io-size 200M --destroy-data sdb,sdc
  disktriage run /dev/md0 --members --test seq-read
  disktriage run /dev/sdb --test rand-read --time 5s --sweep-sched
  disktriage run /dev/sdb --test seq-read --sweep-sched none,bfq --repeats 5
  disktriage run /dev/sdb --sweep-cache --destroy-data sdb

Several targets: the same test runs on each at the same time (--one-by-one: in turn). One row per target, then the verdict: the target slower than the median of the others by more than the run-to-run noise (the spread of --repeats) is named; without repeats (no noise figure) one slower by 20 % is a possible outlier, to be confirmed with --repeats; else \"no outlier\". A write test needs every written device named in one --destroy-data list.

Sweeps: --sweep-sched and --sweep-cache run the test under each value of the setting, the value found at start first, then the others, --repeats times (default 3) in turns (a, b, c, a, b, c, ...) so that a drift hits every value alike. The table gives each value's figure (MB/s, IOPS for random tests, ms per write for sync-latency) as the mean of its repeats, their spread, the difference to the value found at start and whether it is beyond the noise (larger than the spread of either), and the winner. The setting is journaled and put back at the end, on Ctrl-C, SIGTERM, SIGHUP and errors; after a SIGKILL, `disktriage restore` (or the next start of the screen) puts it back. --sweep-cache needs a drive whose write cache the host can switch (not loop, zram, md, dm).";

const TRIAGE_HELP: &str = "\
Read-only: each disk is opened with O_RDONLY|O_DIRECT and never written (a mounted or held \
disk is triaged too); SMART and the drive's logs are read through the same read-only commands \
as `disktriage smart`. All disks are gathered at once, one thread each, and the whole triage \
ends within --bound (default 60 s, 10 s with --quick) even when a disk hangs: a disk not done \
by then is judged on what was gathered, and says where it stopped.

Per disk: identity, the SMART verdict and the counters that matter for failure, the error \
log and the last self-test, the negotiated link against the best both ends support (SATA, \
PCIe, USB), a sampled surface read (3000 reads of 64 KiB spread over the whole disk, 500 \
with --quick, in the scan's latency buckets; a failed one is split down to its first \
unreadable sector, which the report names), sequential reads at the start, middle and end \
(MB/s = 10^6 bytes/s), QD1 random 4 KiB read latency (p50, p99) and the temperature. Each \
disk is recorded in the history, and the next triage of the same disk says what changed.

Without DEV: every whole disk of the inventory (not partitions, RAM disks or empty devices).

With --report PATH...: saved smartctl reports (text of `smartctl -x` or `-a`, or `smartctl -j` \
JSON, from this host or any other) are judged instead, each by its SMART data and logs as the \
report gives them, named by its file name. A directory stands for the files directly in it \
(one level, not its subdirectories or dot-files). A file that is not a smartctl report is named \
with why, and the others are still judged (the exit status is then 1).

Exit status: the worst verdict: 0 healthy, 3 suspect, 4 failing, 5 unknown; 1 error, 2 usage; \
128 + the signal when stopped (Ctrl-C, SIGTERM, SIGHUP), after printing what was gathered.

Examples:
  disktriage triage
  disktriage triage sdb /dev/sdc --quick
  disktriage triage --json > triage.json
  disktriage triage --prom /var/lib/node_exporter/textfile/disktriage.prom
  smartctl -x /dev/sda > sda.txt; disktriage triage --report sda.txt other-host/*.json
  disktriage triage --json --report reports/";

/// Synchronous write modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SyncArg {
    /// O_DSYNC: each write waits until its data is durable (dd oflag=dsync).
    Dsync,
    /// O_SYNC: data and metadata (dd oflag=sync).
    Sync,
}

/// `--engine`'s values and their help: the registered engines' rows (`engines::ALL`).
impl ValueEnum for EngineKind {
    fn value_variants<'a>() -> &'a [Self] {
        engines::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let row = self.row();
        Some(clap::builder::PossibleValue::new(row.arg).help(row.help))
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Block device (e.g. /dev/sdb) or file to test; a directory for the metadata test.
    pub target: PathBuf,

    /// More targets: the same test runs on each (in parallel unless --one-by-one), with one
    /// row per target and a verdict that names the slow one.
    #[arg(value_name = "TARGET")]
    pub more_targets: Vec<PathBuf>,

    /// The test to run (see `disktriage tests`; default seq-read; with --sweep-cache alone,
    /// the seed's pair: a 1 GiB seq-write and sync-latency).
    #[arg(long, short = 't')]
    pub test: Option<String>,

    /// Request size (e.g. 4k, 1M).
    #[arg(long, value_parser = parse_size)]
    pub bs: Option<u64>,

    /// Queue depth: I/Os each worker keeps in flight (1..1024).
    #[arg(long)]
    pub qd: Option<u32>,

    /// Workers (threads), each with its own queue (1..256).
    #[arg(long)]
    pub jobs: Option<u32>,

    /// Measured time of each phase, at least 100ms (0 = no time limit).
    #[arg(long, value_parser = parse_run_time)]
    pub time: Option<Duration>,

    /// Warm-up before measuring, not counted.
    #[arg(long, value_parser = parse_duration)]
    pub warmup: Option<Duration>,

    /// Part of the target the test uses, from --offset; also the size of a new test file.
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u64>,

    /// Where the test region starts.
    #[arg(long, value_parser = parse_size)]
    pub offset: Option<u64>,

    /// Bytes each worker transfers (like dd's bs x count); replaces the default time limit.
    #[arg(long, value_parser = parse_size)]
    pub io_size: Option<u64>,

    /// I/Os each worker issues; replaces the default time limit.
    #[arg(long)]
    pub count: Option<u64>,

    /// Percentage of reads in rand-mixed (default 70) and qd-sweep.
    #[arg(long)]
    pub read_pct: Option<u8>,

    /// Sample interval of the series.
    #[arg(long, value_parser = parse_duration)]
    pub interval: Option<Duration>,

    /// Go through the page cache instead of O_DIRECT (every output says BUFFERED).
    #[arg(long)]
    pub buffered: bool,

    /// Hold the I/O buffers and write data in huge pages: a request of 1 MiB or more is then
    /// one piece for the kernel, which some devices split less than the 4 KiB pages of dd's
    /// and fio's buffers (fewer, larger requests; fio's --mem=mmaphuge). Every output says so.
    #[arg(long)]
    pub huge_pages: bool,

    /// Write zeros instead of incompressible random data.
    #[arg(long)]
    pub zeros: bool,

    /// Rewrite of existing data: each write reads its block and writes the same bytes back;
    /// only the write is timed. Still needs --destroy-data NAME.
    #[arg(long, conflicts_with = "zeros")]
    pub preserve: bool,

    /// Synchronous writes (sync-latency uses dsync by default).
    #[arg(long, value_enum)]
    pub sync: Option<SyncArg>,

    /// I/O engine.
    #[arg(long, value_enum, default_value = "auto")]
    pub engine: EngineKind,

    /// Smallest request size of size-sweep (default 4k).
    #[arg(long, value_parser = parse_size)]
    pub min_bs: Option<u64>,

    /// Largest request size of size-sweep (default 1M).
    #[arg(long, value_parser = parse_size)]
    pub max_bs: Option<u64>,

    /// Queue depths of qd-sweep (default 1,2,4,8,16,32).
    #[arg(long, value_delimiter = ',')]
    pub qds: Option<Vec<u32>>,

    /// Include the write columns of size-sweep.
    #[arg(long)]
    pub write: bool,

    /// Seed of the random offsets and data (runs repeat exactly by default).
    #[arg(long)]
    pub seed: Option<u64>,

    /// Files the metadata test creates, stats and deletes (default 16384, bonnie++ -n 16).
    #[arg(long)]
    pub files: Option<u64>,

    /// Confirms a write test: the target device's own name (e.g. sdb) or file name; with
    /// several targets, every written device's name, separated by commas (sdb,sdc).
    #[arg(long, value_name = "NAME")]
    pub destroy_data: Option<String>,

    /// Print the summary and the per-interval series as JSON.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,

    /// Print the per-interval series as CSV.
    #[arg(long)]
    pub csv: bool,

    /// Print the equivalent fio command line of each phase instead of running.
    #[arg(long)]
    pub fio: bool,
    /// With several targets: run them one after the other instead of at the same time.
    #[arg(long)]
    pub one_by_one: bool,

    /// Runs of the test on one target (the report gives the mean and spread over them, and
    /// --json every repeat's report), of each value in a sweep (default 3), or, with several
    /// targets or --members, of the whole set; the spread of the repeats is the noise that
    /// differences are weighed against.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=20))]
    pub repeats: Option<u32>,

    /// TARGET is an md array: test the array alone, then each of its members (read tests
    /// only: the members of an active array are held by it).
    #[arg(long)]
    pub members: bool,

    /// Run the test under each I/O scheduler the disk offers (or those listed, comma
    /// separated), --repeats times each, interleaved, and name the one that is better beyond
    /// the noise. The scheduler found at start is put back.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        num_args = 0..=1,
        conflicts_with_all = ["csv", "fio", "sweep_cache"]
    )]
    pub sweep_sched: Option<Vec<String>>,

    /// Run the test with the drive's own write cache on and off, --repeats times each,
    /// interleaved. Without --test: seed 000's pair, a 1 GiB seq-write and sync-latency. The
    /// state found at start is put back.
    #[arg(long, conflicts_with_all = ["csv", "fio"])]
    pub sweep_cache: bool,
}

#[derive(Debug, Args)]
pub struct TriageArgs {
    /// The disks to triage (sdb or /dev/sdb); every whole disk when none is named.
    #[arg(value_name = "DEV")]
    pub devices: Vec<String>,

    /// A shorter triage (about 10 s): fewer samples, shorter reads.
    #[arg(long)]
    pub quick: bool,

    /// Print the JSON report (schema 1, docs/triage.md) instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Also write the Prometheus text format to FILE (node_exporter's textfile collector),
    /// atomically: a temporary file in the same directory, synced, then renamed.
    #[arg(long, value_name = "FILE")]
    pub prom: Option<PathBuf>,

    /// The whole triage ends within this many seconds (default 60; 10 with --quick).
    #[arg(long, value_name = "SECS", value_parser = parse_bound)]
    pub bound: Option<Duration>,

    /// Judge saved smartctl reports instead of this host's disks: each file is `smartctl -x`
    /// or `-a` text or `smartctl -j` JSON (told apart by content; `-` is standard input),
    /// judged by the same rules and named by its file name; a directory is the files directly
    /// in it (not its subdirectories or dot-files). No device is touched and nothing is
    /// recorded in the history. `--report A B` and `--report A --report B` both work.
    #[arg(
        long = "report",
        value_name = "PATH",
        num_args = 1..,
        conflicts_with_all = ["devices", "quick", "bound"]
    )]
    pub reports: Vec<PathBuf>,
}

/// Parses --bound: a duration (a bare number is seconds) of at least one second and at most a
/// day.
pub fn parse_bound(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d < Duration::from_secs(1) || d > Duration::from_secs(86_400) {
        return Err("the bound is between 1 s and a day".into());
    }
    Ok(d)
}

/// The test `run` runs when --test is not given.
pub const DEFAULT_TEST: &str = "seq-read";

/// Parses "4096", "4k", "1M", "1MiB", "2G": powers of 1024 (`Bytes`'s `FromStr`), for clap.
pub fn parse_size(s: &str) -> Result<u64, String> {
    s.parse::<Bytes>().map(|b| b.0).map_err(|e| e.to_string())
}

/// Parses "10s", "500ms", "2m", "1h" or a bare number of seconds (`TimeSpan`'s `FromStr`),
/// for clap.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    s.parse::<TimeSpan>()
        .map(|t| t.0)
        .map_err(|e| e.to_string())
}

/// `--time`: a duration of 0 (no limit) or at least `MIN_TIME`, for clap.
fn parse_run_time(s: &str) -> Result<Duration, String> {
    let min = crate::bench::catalog::build::MIN_TIME;
    match parse_duration(s)? {
        t if t.is_zero() || t >= min => Ok(t),
        t => Err(format!(
            "{t:?} is too short to measure anything: give at least {min:?} (0 for no time limit)"
        )),
    }
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

The drive's own logs follow: the self-test state (running, with its progress), the error log \
(ATA: the extended comprehensive log where the drive has it, else the SMART summary log; \
NVMe: the Error Information log) with its count and last entries, and the self-test log. A \
failed last self-test makes the verdict WARNING.

--self-test short|long starts a self-test in the background: the drive changes no data and \
keeps serving I/O, slower while it runs. A long test reads the whole surface and takes \
hours on a large disk; --self-test abort stops it. Run `disktriage smart DEV` again to see \
its progress and result. ATA and NVMe drives (where the controller has Device Self-test).

Exit status: 0 PASSED, 1 error, 2 usage, 3 WARNING, 4 FAILED, 5 not available (no drive answers \
SMART: loop, zram, md, dm, a USB bridge that passes no commands).";

const SCHED_HELP: &str = "\
Without NAME, prints the active scheduler and the ones offered. With NAME, switches, reads \
back and prints the active one; an unknown name lists the available ones.

The change persists and the original is recorded in /run/disktriage: `disktriage restore` \
puts it back. --keep keeps it until the next boot: nothing is recorded.

--persist writes a udev rule instead (DIR/etc/udev/rules.d/60-disktriage-scheduler-*.rules, \
DIR from --target-root, default /) that sets NAME whenever the disk appears, at boot and on \
hotplug. The rule matches the disk by its world-wide id or serial number, never by its kernel \
name; a disk with neither is refused (--persist-class matches every rotational or \
non-rotational disk instead). A rule for the same disk is replaced. The running scheduler is \
not changed. --dry-run prints the rule without writing it.

Examples:
  disktriage sched sda mq-deadline --persist
  disktriage sched nvme0n1 none --persist --target-root /mnt/sysimage --dry-run
  disktriage sched sdb bfq --persist --persist-class";

const RESTORE_HELP: &str = "\
Each changed setting is put back to its first recorded original (the value before the \
earliest change still outstanding) and read back, newest first, one line per setting. \
Changes held by a disktriage that is still running are left to it unless --force. A device \
that was removed, or is another device now (another disk, a loop device attached to \
another image), is dropped from the journal without being written. An entry whose device \
name is not a plain kernel name is refused and left in the journal.";

const HISTORY_HELP: &str = "\
The history is /var/lib/disktriage/history.jsonl (--history-dir DIR, or \
$DISKTRIAGE_HISTORY_DIR, elsewhere): one JSON record per finished run, with the disk's \
identity (world-wide id or serial number; a loop device's image, a file's path, else the \
kernel name), the settings (test, request size, queue depth, workers, engine, O_DIRECT or \
buffered, scheduler, drive cache, kernel flush policy) and the figures Results shows. It is \
rotated at 4 MiB into history.jsonl.1. A line that does not parse is reported with its line \
number and left as it is.

Examples:
  disktriage history
  disktriage history sda
  disktriage history --json nvme0n1";

const COMPLETIONS_HELP: &str = "\
Save the script where the shell looks for it:
  bash  /usr/share/bash-completion/completions/disktriage
  zsh   _disktriage in a directory of $fpath,
        e.g. /usr/local/share/zsh/site-functions/_disktriage
  fish  ~/.config/fish/completions/disktriage.fish

For example:
  disktriage completions fish > ~/.config/fish/completions/disktriage.fish";

const MAN_HELP: &str = "\
Save it where man looks for it:
  disktriage man > /usr/local/share/man/man1/disktriage.1";

/// The shells `disktriage completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

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

/// What `smart --self-test` asks of the drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SelfTestArg {
    /// A few minutes: the drive's quick check.
    Short,
    /// The whole surface: hours on a large disk.
    Long,
    /// Stop the running self-test.
    Abort,
}

impl SelfTestArg {
    pub fn kind(self) -> SelfTestKind {
        match self {
            SelfTestArg::Short => SelfTestKind::Short,
            SelfTestArg::Long => SelfTestKind::Long,
            SelfTestArg::Abort => SelfTestKind::Abort,
        }
    }
}

#[derive(Debug, Args)]
pub struct SmartArgs {
    /// The device: `sda`, `/dev/sda`, `nvme0n1`; a partition means its disk.
    pub device: String,

    /// Print the health report as JSON.
    #[arg(long)]
    pub json: bool,

    /// Start a short or long self-test in the background, or abort the running one, then
    /// print what the drive says about it. No data is changed.
    #[arg(long, value_name = "KIND")]
    pub self_test: Option<SelfTestArg>,
}

#[derive(Debug, Args)]
pub struct SchedArgs {
    /// The device: `sda`, `/dev/sda`; a partition means its disk.
    pub device: String,

    /// The scheduler to activate (e.g. none, mq-deadline, kyber, bfq); without it, only show.
    pub name: Option<String>,

    /// Keep the change until the next boot: do not record the original for `disktriage
    /// restore` (--persist makes it survive a reboot).
    #[arg(long, requires = "name", conflicts_with = "persist")]
    pub keep: bool,

    /// Write a udev rule that sets NAME on this disk at every boot, matched by its WWN or
    /// serial (never its kernel name). The running scheduler is not changed.
    #[arg(long, requires = "name")]
    pub persist: bool,

    /// With --persist: the rule matches every rotational (or every non-rotational) disk, as
    /// this one is, instead of this disk alone.
    #[arg(long, requires = "persist")]
    pub persist_class: bool,

    /// With --persist: the installed system's root, where etc/udev/rules.d/ is (e.g.
    /// /mnt/sysimage or /sysroot in rescue mode).
    #[arg(long, value_name = "DIR", default_value = "/", requires = "persist")]
    pub target_root: PathBuf,

    /// With --persist: print the rule and where it would go; write nothing.
    #[arg(long, requires = "persist")]
    pub dry_run: bool,

    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Only this disk's runs (`sda`, `/dev/sda`; a partition means its disk; a file target's
    /// path).
    pub device: Option<std::ffi::OsString>,

    /// Print the records as JSON: {"schema", "runs": [...]}, oldest first.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// Only list what would be put back.
    #[arg(long)]
    pub list: bool,

    /// Put back the sectors a capacity probe or a TRIM check saved in JOURNAL and did not
    /// put back (a crash, a power cut), instead of the settings.
    #[arg(long, value_name = "JOURNAL", conflicts_with_all = ["list", "force"])]
    pub capacity: Option<PathBuf>,

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert!(parse_size("1.5M").is_err());
        assert!(parse_size("4x").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("10 parsecs").is_err());
    }

    #[test]
    fn clap_definition_is_valid() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
