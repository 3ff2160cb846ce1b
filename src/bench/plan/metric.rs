//! The figure a test is judged on (MB/s, IOPS, mean latency): which way is better and how it
//! is written. Each test's is in its catalogue row; setting sweeps compare it.

use serde::Serialize;

/// The figure a test's sweep compares: the headline of its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// MB/s (10^6 bytes per second): sequential and concurrent tests; for tests of several
    /// phases (sweeps, CrystalDiskMark) the peak over the phases, as Results shows them.
    MbPerSec,
    /// I/Os per second: random tests.
    Iops,
    /// Mean time per write in ms: `sync-latency` ("ms per I/O on average").
    MeanLatencyMs,
}

impl Metric {
    /// The unit as the tables head it.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::MbPerSec => "MB/s",
            Metric::Iops => "IOPS",
            Metric::MeanLatencyMs => "ms/write",
        }
    }

    pub fn higher_is_better(self) -> bool {
        !matches!(self, Metric::MeanLatencyMs)
    }

    /// "MB/s, higher is better".
    pub fn describe(self) -> String {
        let way = if self.higher_is_better() {
            "higher"
        } else {
            "lower"
        };
        format!("{}, {way} is better", self.unit())
    }

    /// A value as every output prints it (one text for the CLI, the JSON reader and the TUI).
    pub fn format(self, v: f64) -> String {
        match self {
            Metric::MbPerSec => format!("{v:.1}"),
            Metric::Iops => format!("{v:.0}"),
            Metric::MeanLatencyMs => format!("{v:.3}"),
        }
    }
}
