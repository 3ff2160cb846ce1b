//! Gathers the facts of the chosen disks, read-only and within a time bound: SMART and the
//! drive's logs, the link, a sampled surface read, sequential reads at the start, middle and
//! end, QD1 random read latency and the temperature throughout. Disks are gathered in
//! parallel (one thread each); progress goes out per disk as it happens.
//!
//! SKELETON: the body is the `h7-gather` helper's work.

use std::sync::mpsc::Sender;
use std::time::Duration;

use super::facts::DiskFacts;
use crate::sys::SysRoot;

/// How long and how much.
#[derive(Debug, Clone, PartialEq)]
pub struct GatherOptions {
    /// The whole triage ends within this (default 60 s; `--quick` about 10 s).
    pub bound: Duration,
    pub quick: bool,
}

impl Default for GatherOptions {
    fn default() -> Self {
        GatherOptions {
            bound: Duration::from_secs(60),
            quick: false,
        }
    }
}

/// One disk's progress, as the TUI's per-disk line and the CLI's stderr show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Index of the disk in the order it was asked for.
    pub disk: usize,
    pub device: String,
    /// What it is doing now: "SMART", "surface 1200/4000", "seq read middle", "done".
    pub step: String,
    /// 0.0 ..= 1.0 of this disk's work.
    pub fraction: f64,
    /// Set once, with the disk's facts, when it is done.
    pub done: Option<Box<DiskFacts>>,
}

/// Gathers the facts of `devices` (kernel names) in parallel, sending progress on `progress`
/// (the receiver may be gone: progress is then dropped). Returns the facts in the order asked;
/// a disk that could not be read at all has its reasons in `problems`.
pub fn gather(
    root: &SysRoot,
    devices: &[String],
    options: &GatherOptions,
    progress: Option<Sender<Progress>>,
) -> Vec<DiskFacts> {
    let _ = (root, options, progress);
    devices
        .iter()
        .map(|device| DiskFacts {
            identity: super::facts::DiskIdentityFacts {
                device: device.clone(),
                ..Default::default()
            },
            problems: vec!["not gathered yet (skeleton)".to_string()],
            ..Default::default()
        })
        .collect()
}
