//! An I/O that failed: where, what, the OS error and what was found about the target, in the
//! words every output says it in.

use serde::Serialize;

use crate::bench::plan::OpKind;
use crate::sys::error::{FailureFacts, describe_errno, errno_hint};

/// An I/O that failed: where, what, and the OS error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IoFailure {
    pub worker: u32,
    pub op: OpKind,
    pub offset: u64,
    pub len: u64,
    /// The errno, or None for a short transfer.
    pub errno: Option<i32>,
    /// Bytes transferred when the transfer was short.
    pub transferred: Option<u64>,
    /// What was found about the target after the failure (filled in by the runner).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facts: Option<FailureFacts>,
    /// Handing I/O to the kernel (`io_uring_enter`) failed, not an I/O: no offset or length
    /// applies. Left out of the JSON when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub submission: bool,
    /// The read of a block to rewrite it (`--preserve`) failed: its write was not made.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_back: bool,
}

impl IoFailure {
    /// "read of 1M at offset 123456 failed: Input/output error (EIO)".
    pub fn describe(&self) -> String {
        let what = match self.op {
            OpKind::Read => "read",
            OpKind::Write => "write",
        };
        let reason = match (self.errno, self.transferred) {
            (Some(e), _) => {
                let errno = nix::errno::Errno::from_raw(e);
                let hint = errno_hint(errno, self.facts.as_ref());
                format!("{}{hint}", describe_errno(errno))
            }
            (None, Some(0)) => {
                "the device returned no data (its end moved: it shrank or was removed)".to_string()
            }
            (None, Some(n)) => format!("short transfer: {n} of {} bytes", self.len),
            (None, None) => "unknown error".to_string(),
        };
        if self.submission {
            return format!("submitting I/O to the kernel (io_uring_enter) failed: {reason}");
        }
        let why = if self.read_back {
            " (to rewrite them; they were not written)"
        } else {
            ""
        };
        format!(
            "{what} of {} bytes at offset {}{why} failed: {reason}",
            self.len, self.offset
        )
    }
}
