//! Command-line arguments (clap) for the binary. Raw flags are parsed here; validation into a
//! plan happens in the command that uses them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

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
