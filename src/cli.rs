//! Command-line arguments (clap) for the binary. Raw flags are parsed here; validation into a
//! plan happens in the command that uses them.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Storage triage for the Linux console: list block devices and their schedulers, test them,
/// switch settings, retest, compare.
#[derive(Debug, Parser)]
#[command(name = "disktriage", version, about, long_about = None)]
pub struct Cli {
    /// Read sysfs and procfs below this directory instead of `/` (for captured trees).
    #[arg(long, global = true, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,

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

    /// Run a test on a block device or a file and print its figures.
    #[command(after_help = RUN_HELP)]
    Run(Box<RunArgs>),

    /// List the tests `run` knows, with their defaults and origins.
    Tests,
}

const RUN_HELP: &str = "\
Sizes take k, M, G, T suffixes in powers of 1024 (4k = 4096; KiB/MiB/GiB also accepted); durations take ms, s, m, h (a bare number is seconds).

Safety: read tests always run. A test that writes to a block device runs only with --destroy-data <name of the device> and never on a device that is mounted, active swap, held by md/dm/LVM, or whose partition is; it opens the device exclusively (O_EXCL). A missing file target is created at --size (default 1 GiB) and may be written freely; overwriting an existing file needs --destroy-data <file name>.

Measurement: O_DIRECT unless --buffered; latency is completion latency (submission to completion, like fio's clat) in an HDR histogram with 3 significant digits. Each run states its warm-up, which is not counted. The kernel's own counters (/sys/dev/block/M:m/stat) are read around the measured part and compared with the test's; a difference over 2 % is flagged.

Examples:
  disktriage run /dev/sdb --test seq-read
  disktriage run /dev/sdb --test rand-read --bs 4k --qd 32 --time 30s
  disktriage run /dev/sdb --test seq-write --io-size 200M --destroy-data sdb
  disktriage run /mnt/scratch/test.bin --test cdm --size 1G
  disktriage run /dev/nvme0n1 --test size-sweep --min-bs 4k --max-bs 16M --csv";

/// Synchronous write modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SyncArg {
    /// O_DSYNC: each write waits until its data is durable (dd oflag=dsync).
    Dsync,
    /// O_SYNC: data and metadata (dd oflag=sync).
    Sync,
}

/// The I/O engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// io_uring: a real queue of --qd I/Os from one thread per worker.
    Uring,
    /// pread/pwrite: one thread per outstanding I/O.
    Sync,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Block device (e.g. /dev/sdb) or file to test.
    pub target: PathBuf,

    /// The test to run (see `disktriage tests`).
    #[arg(long, short = 't', default_value = "seq-read")]
    pub test: String,

    /// Request size (e.g. 4k, 1M).
    #[arg(long, value_parser = parse_size)]
    pub bs: Option<u64>,

    /// Queue depth: I/Os each worker keeps in flight (1..1024).
    #[arg(long)]
    pub qd: Option<u32>,

    /// Workers (threads), each with its own queue (1..256).
    #[arg(long)]
    pub jobs: Option<u32>,

    /// Measured time of each phase (0 = no time limit).
    #[arg(long, value_parser = parse_duration)]
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

    /// Write zeros instead of incompressible random data.
    #[arg(long)]
    pub zeros: bool,

    /// Synchronous writes (sync-latency uses dsync by default).
    #[arg(long, value_enum)]
    pub sync: Option<SyncArg>,

    /// I/O engine.
    #[arg(long, value_enum, default_value = "uring")]
    pub engine: EngineArg,

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

    /// Confirms a write test: the target device's own name (e.g. sdb) or file name.
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
}

/// Parses "4096", "4k", "1M", "1MiB", "2G": powers of 1024.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits_end);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size (try 4k, 1M, 1G)"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("{s:?}: unknown unit (use k, M, G or T)")),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// Parses "10s", "500ms", "2m", "1h" or a bare number of seconds ("1.5").
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (try 500ms, 10s, 2m)"))?;
    let secs = match unit.trim() {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("{s:?}: unknown unit (use ms, s, m or h)")),
    };
    if !secs.is_finite() || !(0.0..=30.0 * 86_400.0).contains(&secs) {
        return Err(format!("{s:?} is out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
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

#[derive(Debug, Args, Default)]
pub struct ListArgs {
    /// Print every field as JSON (sizes in bytes) instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Also show unused placeholders: loop devices with no backing file, zram with no size.
    #[arg(long)]
    pub all: bool,
}
