//! What a drive has logged about itself, as plain data: its error log, its self-test log, and
//! the state of its self-test (running with progress, or what the last one came to). Filled
//! by the decoders in `crate::smart::{ata_log, nvme_log, smartctl}`; judged (a failed last
//! self-test is a warning) in `crate::smart::verdict`.

use std::fmt;

use serde::Serialize;

use super::device::Transport;

/// The self-tests disktriage starts, and the abort.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SelfTestKind {
    /// Minutes: electrical and mechanical checks, a partial surface read.
    Short,
    /// Reads the whole surface: hours on a large disk drive.
    Long,
    /// Stops the running self-test.
    Abort,
}

impl SelfTestKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SelfTestKind::Short => "short",
            SelfTestKind::Long => "long",
            SelfTestKind::Abort => "abort",
        }
    }
}

impl fmt::Display for SelfTestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One log as read: its contents, or why there are none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum LogRead<T> {
    Read(T),
    /// The drive (or disktriage on this transport) has no such log: why.
    NotSupported {
        reason: String,
    },
    /// The drive has it but reading it failed: what failed.
    Failed {
        error: String,
    },
}

impl<T> LogRead<T> {
    pub fn read(&self) -> Option<&T> {
        match self {
            LogRead::Read(t) => Some(t),
            _ => None,
        }
    }
}

/// One entry of a drive's error log, newest first in `ErrorLog::entries`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorEntry {
    /// The drive's number for the error (its error count then).
    pub number: u64,
    /// Power-on hours when it happened (ATA), if the log says.
    pub power_on_hours: Option<u64>,
    /// The LBA the failing command addressed, where the log gives one.
    pub lba: Option<u64>,
    /// The error in words ("UNC: uncorrectable data", "NVMe status 0x0281 ...").
    pub error: String,
    /// The command that failed, or the queue and command id (NVMe).
    pub command: Option<String>,
    /// The drive's state then ("active or idle"), if logged.
    pub state: Option<String>,
}

/// A drive's error log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorLog {
    /// Which log this is ("ATA SMART summary error log (0x01)").
    pub source: String,
    /// Errors the drive counted over its life.
    pub count: u64,
    /// The last entries, newest first (the log keeps only the last few).
    pub entries: Vec<ErrorEntry>,
}

/// How a self-test ended (or that it runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SelfTestOutcome {
    Passed,
    /// Stopped by the host, a reset or a command: not a verdict on the drive.
    Aborted,
    /// A fatal, read, electrical, servo or handling failure.
    Failed,
    InProgress,
    Unknown,
}

/// One entry of the self-test log, newest first in `SelfTestLog::entries`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SelfTestEntry {
    /// "short", "extended", "conveyance", "selective", "vendor (0x..)"...
    pub kind: String,
    pub outcome: SelfTestOutcome,
    /// The result in the drive's words ("read failure").
    pub result: String,
    /// Power-on hours when it ran.
    pub power_on_hours: u64,
    /// The first LBA that failed, where the log gives one.
    pub first_failing_lba: Option<u64>,
    /// For a test still running: the percentage left.
    pub remaining_pct: Option<u8>,
}

/// A drive's self-test log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SelfTestLog {
    pub source: String,
    pub entries: Vec<SelfTestEntry>,
}

/// What the drive says about its self-test now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SelfTestStatus {
    /// The drive runs self-tests that disktriage can start.
    pub supported: bool,
    /// Why not, when it cannot ("not supported by this drive: ...").
    pub unsupported_reason: Option<String>,
    /// A self-test is running: which (when the drive says) and how far it is.
    pub running: Option<SelfTestProgress>,
    /// What the last self-test came to, in words, when none runs.
    pub last: Option<String>,
    /// The drive's own estimate of a short and a long test, in minutes.
    pub short_minutes: Option<u32>,
    pub long_minutes: Option<u32>,
}

/// A running self-test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SelfTestProgress {
    pub kind: Option<String>,
    /// 0 to 100.
    pub percent_done: u8,
}

impl SelfTestStatus {
    /// The status of a drive that cannot run self-tests, saying why.
    pub fn unsupported(reason: impl Into<String>) -> Self {
        SelfTestStatus {
            supported: false,
            unsupported_reason: Some(reason.into()),
            running: None,
            last: None,
            short_minutes: None,
            long_minutes: None,
        }
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }
}

/// Everything a drive logged, as one read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriveLogs {
    pub device: String,
    pub transport: Transport,
    /// Where it came from ("ATA SMART logs", "NVMe log pages", "smartctl 7.3").
    pub source: String,
    pub error_log: LogRead<ErrorLog>,
    pub self_test_log: LogRead<SelfTestLog>,
    pub self_test: SelfTestStatus,
}

impl DriveLogs {
    /// The logs of a device with none readable, each with the reason.
    pub fn unavailable(device: &str, transport: Transport, reason: &str) -> Self {
        DriveLogs {
            device: device.to_string(),
            transport,
            source: "none".into(),
            error_log: LogRead::NotSupported {
                reason: reason.to_string(),
            },
            self_test_log: LogRead::NotSupported {
                reason: reason.to_string(),
            },
            self_test: SelfTestStatus::unsupported(reason),
        }
    }

    /// The newest finished self-test, if the log has one.
    pub fn last_finished_self_test(&self) -> Option<&SelfTestEntry> {
        self.self_test_log
            .read()?
            .entries
            .iter()
            .find(|e| e.outcome != SelfTestOutcome::InProgress)
    }
}
