//! disktriage: storage triage for the Linux console.
//!
//! A library with a thin binary (`src/main.rs`). Layers only point down: the modules are
//! listed bottom up, and each uses only those listed before it.
//!
//! - `model`: plain data (devices, units, usage, caches, SMART, recorded changes, safe text).
//! - `smart`: decodes drive pages (ATA, NVMe, SCSI sense, smartctl JSON) into a verdict, and
//!   builds the commands that ask for them.
//! - `scan`: the surface scan's pure core (latency buckets, range lists, the block map,
//!   ddrescue mapfiles, badblocks lists, bisecting a failed block, the verdict), over a
//!   `BlockReader` that `sys::scan` implements.
//! - `flush`: the flush check's pure core (the timing verdict against one revolution; the
//!   power-cut check's records, LOG and verify).
//! - `trim`: whether a discard does what the device claims (claim bits, scratch range,
//!   pattern, read back, sentence).
//! - `smr`: the write-cliff probe's pure core (scratch range, random places, per-second
//!   samples, the cliff detector and what a cliff means).
//! - `capacity`: the fake-capacity probe's pure core (stamps, where to write and read, the
//!   put-back), over a `SectorIo` that `sys` implements.
//! - `sys`: the only module that touches the operating system (`/sys`, `/proc`, `/dev`,
//!   ioctls, io_uring, signals) and the only one allowed `unsafe` (granted below). Drive
//!   commands go through its `DriveControl` trait (`LinuxDrives`, `FakeDrives` in tests).
//! - `drive_state`: read-only views of a drive (cache, SMART health, scheduler, temperature).
//! - `changes`: journaled, undoable setting changes and the guard that restores them.
//! - `bench`: the I/O test engine, in floors that only point down: `plan` (the plan types),
//!   `catalog` (one row per test), `results` (what a run produced), `exec` (running a plan)
//!   and `analysis` (comparison, figures, curves, several-disk verdicts, setting sweeps).
//! - `history`: the run history (JSON lines under /var/lib/disktriage), keyed by the disk's
//!   stable identity.
//! - `triage`: one verdict per disk (healthy, suspect, failing, unknown) from gathered facts
//!   and one table of stated rules, and the gathering itself (read-only, time-bounded).
//! - `persist`: the udev rule that makes a scheduler permanent (by WWN or serial).
//! - `report`: headless output (text, JSON, CSV, fio), exports, the number formats every
//!   screen shares, and stdout/stderr.
//! - `flow`: the orchestration both faces share (the progress line, the setting-sweep state
//!   machine); it draws no screen and parses no command line.
//! - `theme`: the colours and glyphs every screen shares (sixteen-colour safe; only the Linux
//!   console's glyphs on `TERM=linux`).
//! - `draw`: the drawing helpers every screen and dialog shares (fitting text and noting what
//!   is cut, the marks for what is out of sight, the clock, the sweep charts).
//! - `event` (messages and commands), `app` (state and `update(Msg)`), `ui` (drawing) and
//!   `tui` (terminal, loop, executor and the one job runner): the interactive program.
//! - `cli` parses the command line; `commands`: the CLI's command bodies; `install`
//!   generates the man page and the shell completions. Above the screen, so the screen cannot
//!   use CLI code: what both need is in `flow` or lower.
//!
//! `run` dispatches a parsed command line.

pub mod app;
pub mod bench;
pub mod capacity;
pub mod changes;
pub mod cli;
pub mod commands;
pub mod draw;
pub mod drive_state;
pub mod event;
pub mod flow;
pub mod flush;
pub mod history;
pub mod install;
pub mod model;
pub mod persist;
pub mod report;
pub mod scan;
pub mod smart;
pub mod smr;
// The one exemption from the crate's `unsafe_code = "deny"`: ioctls, io_uring and signal
// handlers, each `unsafe` block with a `SAFETY:` comment.
#[allow(unsafe_code)]
pub mod sys;
pub mod theme;
pub mod triage;
pub mod trim;
pub mod tui;
pub mod ui;

// The map above, no import circles and no big files: checked on every test run.
#[cfg(test)]
mod shape;

use std::process::ExitCode;

use cli::{Cli, Command, DebugCommand, ListArgs};
use report::output::{output_width, write_stdout};
use sys::SysRoot;

/// Runs one invocation and returns the process exit code.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let root = SysRoot::new(&cli.root);
    let history_dir = cli.history_dir();
    // Before anything is opened: a captured tree is read, never switched. A boot rule written
    // into another system's image (`--persist --target-root DIR`) reaches nothing live.
    let into_an_image = |c: &Command| {
        matches!(c, Command::Sched(a) if a.persist
            && SysRoot::new(&a.target_root).switching_refused().is_some())
    };
    if let Some(why) = root.switching_refused()
        && cli
            .command
            .as_ref()
            .is_some_and(|c| c.switches() && !into_an_image(c))
    {
        return Err(model::UsageError(why).into());
    }
    match cli.command {
        Some(Command::List(args)) => list(&root, &args),
        Some(Command::Cache(args)) => {
            commands::cache(&root, &cli.journal_dir, &args, output_width())
        }
        Some(Command::Smart(args)) => commands::smart(&root, &args, output_width()),
        Some(Command::Sched(args)) => {
            commands::sched(&root, &cli.journal_dir, &args, output_width())
        }
        Some(Command::Restore(args)) => commands::restore(&root, &cli.journal_dir, &args),
        Some(Command::Debug(DebugCommand::Pages { device })) => {
            commands::debug_pages(&root, &device)
        }
        Some(Command::Debug(DebugCommand::Temp {
            device,
            count,
            interval,
        })) => commands::debug_temp(&root, &device, count, interval),
        Some(Command::Debug(DebugCommand::Hold {
            device,
            cache,
            sched,
            seconds,
            panic,
        })) => commands::debug_hold(
            &root,
            &cli.journal_dir,
            &commands::HoldPlan {
                device: &device,
                cache,
                sched: sched.as_deref(),
                seconds,
                panic,
            },
        ),
        Some(Command::Run(args)) if args.sweep_sched.is_some() || args.sweep_cache => {
            commands::setting_sweep::run(&root, &cli.journal_dir, &history_dir, &args)
        }
        Some(Command::Run(args)) if commands::several::wanted(&args) => {
            commands::several::run(&root, &history_dir, &args)
        }
        Some(Command::Run(args)) => commands::run::run(&root, &history_dir, &args),
        Some(Command::Scan(args)) => commands::scan::scan(&history_dir, &args),
        Some(Command::Triage(args)) => commands::triage::triage(&root, &history_dir, &args),
        Some(Command::Capacity(args)) => commands::capacity::capacity(&history_dir, &args),
        Some(Command::Trimcheck(args)) => commands::trimcheck::trimcheck(&history_dir, &args),
        Some(Command::Smrcheck(args)) => commands::smrcheck::smrcheck(&history_dir, &args),
        Some(Command::Flushcheck(args)) => {
            commands::flushcheck::flushcheck(&root, &cli.journal_dir, &history_dir, &args)
        }
        Some(Command::History(args)) => commands::history::history(&root, &history_dir, &args),
        Some(Command::Completions { shell }) => {
            write_stdout(&install::completion_script(shell))?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Man) => {
            write_stdout(&install::man_page()?)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Tests) => {
            write_stdout(&commands::run::list_tests(output_width()))?;
            Ok(ExitCode::SUCCESS)
        }
        None => tui::run(root, &cli.journal_dir, &history_dir),
    }
}

fn list(root: &SysRoot, args: &ListArgs) -> anyhow::Result<ExitCode> {
    let inventory = root.inventory()?;
    let text = if args.json {
        report::list::render_json(&inventory, args.all)?
    } else {
        report::list::render_table(&inventory, args.all, output_width())
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
