//! Where reports go: standard output (a closed pipe is not an error), standard error (never
//! fails, even on a dead terminal) and the width tables are laid out for.

use std::io::{self, Write};

/// Width used for tables when stdout is not a terminal.
pub const DEFAULT_WIDTH: usize = 80;

/// The terminal's width when stdout is one (at least 80), else 80.
pub fn output_width() -> usize {
    use std::io::IsTerminal;
    if io::stdout().is_terminal()
        && let Ok((cols, _)) = ratatui::crossterm::terminal::size()
    {
        return usize::from(cols).max(DEFAULT_WIDTH);
    }
    DEFAULT_WIDTH
}

/// Writes to stderr and never fails: on the way out (signal, panic, hung-up terminal) stderr
/// may be dead, and `eprintln!` would panic there (in a panic hook: abort). The message is
/// lost; what matters was done before.
pub fn write_stderr(text: &str) {
    let mut err = io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// Writes a report to stdout; a closed pipe (`disktriage list | head -1`) is not an error.
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        // Not an error of the device under test (a full disk under a redirection, say).
        Err(e) => Err(anyhow::anyhow!(
            "cannot write the report to standard output: {}",
            crate::sys::error::describe_io(&e)
        )),
        Ok(()) => Ok(()),
    }
}
