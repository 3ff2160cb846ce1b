//! The engine a phase ran with and why: the probe's figures of each candidate, the choice,
//! and its words in every output (`exec::probe` makes the choice).

use serde::Serialize;

use crate::bench::plan::Mix;
use crate::bench::plan::engine_kind::IoShape;
use crate::bench::plan::params::EngineKind;

/// What one candidate did in its probe.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProbeFigures {
    pub iops: f64,
    /// CPU time of the whole process (the kernel's io_uring workers included) per I/O, in us.
    pub cpu_us_per_io: f64,
}

/// The probe of both candidates. `None` for a candidate that could not run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EngineProbe {
    /// Counted seconds of each candidate (two rounds, after their ramps).
    pub window_s: f64,
    /// Wall time of the whole probe, ramps included; part of the warm-up.
    pub total_s: f64,
    pub uring: Option<ProbeFigures>,
    pub sync: Option<ProbeFigures>,
    /// Rounds set aside as disturbed, of both candidates.
    pub set_aside: u32,
}

/// The engine a phase ran with and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineChoice {
    /// What the admin asked for: auto, io_uring or sync.
    pub asked: EngineKind,
    /// What ran: io_uring or sync.
    pub used: EngineKind,
    /// Why, in words: "auto: QD1, one pread at a time, as dd and fio's psync".
    pub reason: String,
    pub probe: Option<EngineProbe>,
    /// The choice (and `probe`) came from an earlier probe of the same target and job shape in
    /// the session: this phase did not probe.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reused: bool,
}

/// "812k", "3.8k", "950": IOPS in few characters.
pub fn kilo(v: f64) -> String {
    if v >= 100_000.0 {
        format!("{:.0}k", v / 1e3)
    } else if v >= 1_000.0 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// What the engine is called in reports: "sync (32 pread threads)", "io_uring (fixed
/// buffers)".
pub fn engine_label(used: EngineKind, threads: u32, fixed_buffers: bool, mix: Mix) -> String {
    let name = used.as_str();
    match used.row().shape {
        IoShape::Ring if fixed_buffers => format!("{name} (fixed buffers)"),
        IoShape::Ring => name.into(),
        IoShape::ThreadPerIo => {
            let call = match mix {
                Mix::Read => "pread",
                Mix::Write => "pwrite",
                Mix::Mixed { .. } => "pread/pwrite",
            };
            format!(
                "{name} ({threads} {call} thread{})",
                if threads == 1 { "" } else { "s" }
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::bench::exec::engines::{SYNC, URING};

    #[test]
    fn labels() {
        assert_eq!(
            engine_label(SYNC, 4, false, Mix::Read),
            "sync (4 pread threads)"
        );
        assert_eq!(
            engine_label(SYNC, 1, false, Mix::Write),
            "sync (1 pwrite thread)"
        );
        assert_eq!(
            engine_label(URING, 1, true, Mix::Read),
            "io_uring (fixed buffers)"
        );
        assert_eq!(kilo(3816.4), "3.8k");
        assert_eq!(kilo(950.0), "950");
    }
}
