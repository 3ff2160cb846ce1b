//! The QEMU lab, one test binary: every lab test reads the results of one shared boot
//! (`qemu_lab::shared_lab`, a process-wide `OnceLock`), so all of them must stay in this
//! binary.
//!
//! A new file of lab tests is one more `mod` line below; it reaches the shared boot through
//! `crate::qemu_lab`, or boots a lab of its own (`qemu_lab_scan`: the scan's guest;
//! `qemu_lab_triage`: the triage's) with the static binary (`build_static_binary`) and reads
//! its guest's sections (`Results`) below.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

#[path = "../common/mod.rs"]
mod common;

mod qemu_lab;
mod qemu_lab_scan;
mod qemu_lab_triage;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Builds the binary the lab boots with `scripts/release.sh`: the static, stripped executable
/// a release ships, checked against its SHA256SUMS. In its own target directory so it does not
/// wait for the lock of the running test build.
pub fn build_static_binary() -> PathBuf {
    let target_dir = repo().join("target/lab");
    let dist = target_dir.join("dist");
    let out = Command::new(repo().join("scripts/release.sh"))
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("DIST_DIR", &dist)
        .output()
        .expect("run scripts/release.sh");
    assert!(
        out.status.success(),
        "scripts/release.sh failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    assert!(sums.trim_end().ends_with("  disktriage"), "{sums}");
    dist.join("disktriage")
}

/// The guest's output, split at `===== NAME` lines.
pub struct Results {
    pub sections: BTreeMap<String, String>,
}

impl Results {
    pub fn parse(log: &str) -> Results {
        let mut sections = BTreeMap::new();
        let mut name: Option<String> = None;
        let mut body = String::new();
        for line in log.lines() {
            let line = line.trim_end_matches('\r');
            if let Some(next) = line.strip_prefix("===== ") {
                if let Some(n) = name.take() {
                    sections.insert(n, std::mem::take(&mut body));
                }
                name = Some(next.to_string());
            } else if name.is_some() {
                body.push_str(line);
                body.push('\n');
            }
        }
        if let Some(n) = name {
            sections.insert(n, body);
        }
        Results { sections }
    }

    pub fn text(&self, name: &str) -> &str {
        self.sections
            .get(name)
            .unwrap_or_else(|| panic!("no section {name:?} in the guest output"))
    }

    /// The JSON document in a section: from its first line that opens one (`{` or `[`; lines
    /// before it, a stat line say, are skipped) to the `rc=` line.
    pub fn json(&self, name: &str) -> serde_json::Value {
        let body: String = self
            .text(name)
            .lines()
            .skip_while(|l| !l.starts_with('{') && !l.starts_with('['))
            .take_while(|l| !l.starts_with("rc="))
            .collect::<Vec<_>>()
            .join("\n");
        serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("section {name:?} is not JSON ({e}):\n{}", self.text(name)))
    }

    /// The exit status printed in a section (`rc=N`, the first one).
    pub fn rc(&self, name: &str) -> i32 {
        self.text(name)
            .lines()
            .find_map(|l| l.strip_prefix("rc="))
            .unwrap_or_else(|| panic!("no rc= in {name:?}:\n{}", self.text(name)))
            .trim()
            .parse()
            .unwrap()
    }
}
