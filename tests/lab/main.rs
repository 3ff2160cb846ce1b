//! The QEMU lab, one test binary: every lab test reads the results of one shared boot
//! (`qemu_lab::shared_lab`, a process-wide `OnceLock`), so all of them must stay in this
//! binary.
//!
//! A new file of lab tests is one more `mod` line below; it reaches the shared boot through
//! `crate::qemu_lab`, or boots a lab of its own (`qemu_lab_scan`: the scan's guest;
//! `qemu_lab_triage`: the triage's, which `qemu_lab_flush` and `qemu_lab_capacity` share) with
//! the static binary (`build_static_binary`) and reads its guest's sections (`Results`) below;
//! `qemu_lab_console` drives its guest while it runs (`start_boot`).

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

#[path = "../common/mod.rs"]
mod common;

mod qemu_lab;
mod qemu_lab_capacity;
mod qemu_lab_console;
mod qemu_lab_discard;
mod qemu_lab_flush;
mod qemu_lab_scan;
mod qemu_lab_triage;
mod qemu_lab_zoned;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Builds the binary the lab boots with `scripts/release.sh`: the static, stripped executable
/// a release ships, checked against its SHA256SUMS. In its own target directory so it does not
/// wait for the lock of the running test build. Once per test process: the labs boot in
/// parallel, and one build's SHA256SUMS read while another rewrites it was empty (CI saw it).
pub fn build_static_binary() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    booted_once(&BUILT, build_static_binary_now).clone()
}

fn build_static_binary_now() -> PathBuf {
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

/// The lab is booted once per lab: every test of it reads the same guest output. `init`
/// boots (or reads a saved log); a boot that failed is remembered as its message, so the
/// other tests fail with it rather than booting again.
pub fn booted_once<T: Send + Sync>(
    cell: &'static OnceLock<Result<T, String>>,
    init: impl FnOnce() -> T + std::panic::UnwindSafe,
) -> &'static T {
    let lab = cell.get_or_init(|| {
        std::panic::catch_unwind(init).map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "the lab boot panicked".to_string())
        })
    });
    match lab {
        Ok(lab) => lab,
        Err(why) => panic!("{why}"),
    }
}

/// One boot of the lab: `tests/vm/lab.sh run WORK tests/vm/SCRIPT DISKSET` with the static
/// binary and `tools` copied into the guest.
pub struct Boot<'a> {
    /// The guest script under tests/vm/.
    pub script: &'a str,
    pub diskset: &'a str,
    /// The kept logs' name: target/lab/qemu-lab{label}-results.log (`""`, `"-scan"`).
    pub label: &'a str,
    pub tools: &'a [&'a str],
    /// A shell line lab.sh runs on the host before the boot (`$WORK` is its directory).
    pub prepare: Option<&'a str>,
    pub timeout_s: u32,
}

/// Boots the lab, keeps its logs under target/lab where a developer reads them after a
/// failure, and returns the guest's output.
pub fn boot(work: &Path, b: &Boot) -> Results {
    let status = start_boot(work, b)
        .wait()
        .expect("wait for tests/vm/lab.sh");
    finish_boot(work, b, status)
}

/// Starts the boot [`boot`] waits for, for a test that drives the guest while it runs (the
/// console's keys): the lab.sh process.
pub fn start_boot(work: &Path, b: &Boot) -> std::process::Child {
    let bin = build_static_binary();
    let mut cmd = Command::new(repo().join("tests/vm/lab.sh"));
    cmd.arg("run")
        .arg(work)
        .arg(repo().join("tests/vm").join(b.script))
        .arg(b.diskset)
        .env("DISKTRIAGE_BIN", &bin)
        .env("LAB_TOOLS", b.tools.join(" "))
        .env("LAB_TIMEOUT", b.timeout_s.to_string());
    if let Some(prepare) = b.prepare {
        cmd.env("LAB_PREPARE", prepare);
    }
    cmd.spawn().expect("run tests/vm/lab.sh")
}

/// After lab.sh ended with `status`: keeps the logs and returns the guest's output.
pub fn finish_boot(work: &Path, b: &Boot, status: std::process::ExitStatus) -> Results {
    let keep = repo().join("target/lab");
    std::fs::create_dir_all(&keep).unwrap();
    let kept = |log: &str| format!("target/lab/qemu-lab{}-{log}", b.label);
    for log in ["results.log", "console.log"] {
        let _ = std::fs::copy(work.join(log), repo().join(kept(log)));
    }
    assert!(
        status.success(),
        "the lab did not run to the end; see {} and {}",
        kept("console.log"),
        kept("results.log")
    );
    Results::parse(&std::fs::read_to_string(work.join("results.log")).unwrap())
}

/// Is `tool` on the host's PATH?
pub fn on_host(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Lab prerequisites: root, the packages `lab.sh check` wants, and each of `needed` on the
/// host. With `replay_env` set in the environment (a saved results log), no boot is needed.
pub fn lab_or_skip(test: &str, replay_env: Option<&str>, needed: &[&str]) -> bool {
    if replay_env.is_some_and(|v| std::env::var_os(v).is_some()) {
        return true;
    }
    if !common::root_or_skip(test) {
        return false;
    }
    let check = Command::new(repo().join("tests/vm/lab.sh"))
        .arg("check")
        .output()
        .expect("run tests/vm/lab.sh check");
    if !check.status.success() {
        return common::skip(test, String::from_utf8_lossy(&check.stdout).trim());
    }
    for tool in needed {
        if !on_host(tool) {
            return common::skip(
                test,
                &format!("{tool} missing (scripts/install-test-deps.sh installs it)"),
            );
        }
    }
    true
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
