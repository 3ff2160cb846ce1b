//! The exit statuses every command shares, and the usage error that the binary turns into
//! exit status 2 wherever it was found: clap finds most usage errors while parsing, the
//! commands find the rest (a value out of range, a missing confirmation) after it.
//!
//! The numbers mean one thing across commands: 0 a clean result, 1 an error, 2 a usage error,
//! 3 suspect (something to look at), 4 failing (data lost or at risk), 5 unknown (no verdict
//! could be reached), 128 + N stopped by signal N; [`TABLE`] says it per command.

use std::fmt;

/// An error, printed on standard error with what to do.
pub const ERROR: u8 = 1;
/// A usage error, found before anything was touched.
pub const USAGE: u8 = 2;
/// Suspect: triage suspect, smart WARNING, a volatile cache.
pub const SUSPECT: u8 = 3;
/// Failing: triage failing, smart FAILED, lost records.
pub const FAILING: u8 = 4;
/// Unknown: no verdict could be reached.
pub const UNKNOWN: u8 = 5;

/// Every exit status per command (the man page and `docs/commands.md`).
pub const TABLE: &[(&str, &str)] = &[
    (
        "0",
        "The clean result: a run or a setting done, smart PASSED, scan every block read, \
         triage healthy, flushcheck commits wait for the medium or nothing acknowledged was lost, \
         capacity real, trimcheck the discard reads as claimed (or nothing is claimed, or the \
         device does not discard), smrcheck no write cliff.",
    ),
    (
        "1",
        "An error, printed on standard error with what to do: a device that cannot be opened, \
         a write refused (in use, another name typed), a setting that did not take effect.",
    ),
    (
        "2",
        "A usage error, found before anything was read or written: an option missing or out of \
         range, or a write (run, scan --repair, flushcheck) asked without --destroy-data.",
    ),
    (
        "3",
        "Suspect: triage suspect, smart WARNING, scan blocks abandoned at --timeout (none \
         unreadable), flushcheck a volatile cache acknowledges commits, trimcheck a discard \
         refused though the kernel says the device discards, smrcheck a write cliff \
         (drive-managed SMR behaviour, or an SSD's write cache running out).",
    ),
    (
        "4",
        "Failing: triage failing, smart FAILED, scan sectors that cannot be read, flushcheck \
         --verify acknowledged records lost or torn, capacity fake (it stores less than it \
         claims), trimcheck a broken claim (it promises zeros after a discard and returns the \
         old data or other).",
    ),
    (
        "5",
        "Unknown: triage unknown, smart not available (no drive answers: loop, zram, md, dm), \
         a scan that could not finish (the device went away or changed), flushcheck timing \
         that cannot tell, a capacity probe, a trimcheck or an smrcheck stopped or failed \
         before its verdict.",
    ),
    (
        "128 + N",
        "Stopped by signal N (130 Ctrl-C, 129 SIGHUP, 143 SIGTERM), after what was done was \
         printed and every setting put back.",
    ),
];

/// A usage error found after parsing: exit status [`USAGE`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Is `err` (anywhere in its chain) a usage error?
pub fn is_usage(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<UsageError>())
}

/// Returns early with a [`UsageError`] built like `format!`.
macro_rules! usage_bail {
    ($($arg:tt)*) => {
        return Err($crate::model::UsageError(format!($($arg)*)).into())
    };
}
pub(crate) use usage_bail;

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn a_usage_error_is_found_under_context() {
        let err: anyhow::Result<()> = Err(UsageError("--rpm 1".into()).into());
        let err = err.context("flushcheck").unwrap_err();
        assert!(is_usage(&err));
        assert!(!is_usage(&anyhow::anyhow!("cannot open")));
    }
}
