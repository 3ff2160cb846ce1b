//! disktriage: storage triage for the Linux console.
//!
//! The crate is a library with a thin binary (`src/main.rs`). `sys` is the only module that
//! touches the operating system; `model` holds plain data; `smart` decodes drive pages;
//! `control` reads drive state and polls temperature; `changes` makes journaled, undoable
//! setting changes; `report` renders headless output; `commands` are the command bodies;
//! `install` generates the man page and the shell completions.
//! `run` dispatches a parsed command line.

pub mod app;
pub mod bench;
pub mod changes;
pub mod cli;
pub mod commands;
pub mod control;
pub mod event;
pub mod install;
pub mod model;
pub mod report;
pub mod smart;
pub mod sys;
pub mod tui;
pub mod ui;

use std::io::{self, Write};
use std::process::ExitCode;

use cli::{Cli, Command, DebugCommand, ListArgs};
use sys::SysRoot;

/// Width used for tables when stdout is not a terminal.
pub const DEFAULT_WIDTH: usize = 80;

/// Runs one invocation and returns the process exit code.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let root = SysRoot::new(&cli.root);
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
        Some(Command::Run(args)) => commands::run::run(&root, &args),
        Some(Command::Completions { shell }) => {
            write_stdout(&install::completion_script(shell))?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Man) => {
            write_stdout(&install::man_page()?)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Tests) => {
            write_stdout(&commands::run::list_tests())?;
            Ok(ExitCode::SUCCESS)
        }
        None => tui::run(root, &cli.journal_dir),
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

/// The terminal's width when stdout is one (at least 80), else 80.
fn output_width() -> usize {
    use std::io::IsTerminal;
    if io::stdout().is_terminal()
        && let Ok((cols, _)) = crossterm::terminal::size()
    {
        return usize::from(cols).max(DEFAULT_WIDTH);
    }
    DEFAULT_WIDTH
}

/// Writes to stderr and never fails: on the way out (a signal, a panic, a terminal that hung
/// up) stderr may be a dead terminal, and `eprintln!` would panic there (inside a panic hook
/// that aborts the process). The message is lost; what matters was done before it.
pub fn write_stderr(text: &str) {
    let mut err = io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// Writes a report to stdout; a closed pipe (`disktriage list | head -1`) is not an error.
pub(crate) fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        // Said as what it is: the report could not be written (a full disk under a
        // redirection, a closed terminal), not an error of the device under test.
        Err(e) => Err(anyhow::anyhow!(
            "cannot write the report to standard output: {}",
            sys::error::describe_io(&e)
        )),
        Ok(()) => Ok(()),
    }
}
