//! The TRIM check (issue 38) on emulated devices whose discards are known, in a boot of its
//! own (tests/vm/discard-guest.sh, disk set `discard`):
//!
//! - scsi_debug with `lbpu=1 lbprz=1` (UNMAP, LBPRZ 1): the claim is zeros, read from READ
//!   CAPACITY(16), and an unmapped range reads zeros: "discard works";
//! - scsi_debug with `lbpu=1 lbprz=0`: no claim (LBPRZ 0), and the range reads as the guest's
//!   shell tools saw it (scsi_debug leaves the data of an unmapped block alone then);
//! - null_blk (configfs, `memory_backed=1 discard=1`): no drive to ask, reads zeros;
//! - null_blk with `discard=0`: the kernel sends it no discards; reported without a write;
//! - QEMU's SATA, NVMe, SCSI and virtio disks over raw images (QEMU's default
//!   `discard=ignore`): whatever each claims and returns, the check reports what the shell
//!   witnessed, and a claim of zeros answered with the old data is a broken claim (exit 4).
//!
//! Before each check the guest discards a MiB with blkdiscard and compares what comes back
//! with cmp; the tests assert that witness first. Every check must put back every sector.
//!
//! Run as root: `cargo test --test lab discard -- --nocapture` (one boot; the eight checks
//! take 0.15 to 1.5 s each under TCG; each device's claim, read back, verdict and discard
//! time are printed). The
//! guest's output is kept in target/lab/qemu-lab-discard-*.log;
//! `DISKTRIAGE_LAB_DISCARD_RESULTS=FILE` replays a saved one without booting.

use std::sync::OnceLock;

use serde_json::Value;

use crate::{Boot, Results, boot, booted_once, lab_or_skip};

const REPLAY: &str = "DISKTRIAGE_LAB_DISCARD_RESULTS";

fn results() -> &'static Results {
    static LAB: OnceLock<Result<Results, String>> = OnceLock::new();
    booted_once(&LAB, || match std::env::var_os(REPLAY) {
        Some(saved) => Results::parse(&std::fs::read_to_string(saved).unwrap()),
        None => {
            let work = tempfile::Builder::new()
                .prefix("disktriage-lab-discard.")
                .tempdir()
                .unwrap();
            boot(
                work.path(),
                &Boot {
                    script: "discard-guest.sh",
                    diskset: "discard",
                    label: "-discard",
                    tools: &[],
                    prepare: None,
                    timeout_s: 900,
                },
            )
        }
    })
}

/// One case: what the shell saw, the check's JSON and its exit status.
struct Case {
    witness: String,
    written: bool,
    json: Value,
    rc: i32,
}

fn case(r: &Results, name: &str) -> Case {
    let seen = r.text(&format!("DISCARD-WITNESS-{name}"));
    let witness = seen
        .lines()
        .find_map(|l| l.strip_prefix("witness="))
        .unwrap_or_else(|| panic!("no witness for {name}:\n{seen}"))
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string();
    let c = Case {
        witness,
        written: seen.lines().any(|l| l == "written=yes"),
        json: r.json(&format!("DISCARD-{name}")),
        rc: r.rc(&format!("DISCARD-{name}")),
    };
    println!(
        "{name:16} claim {:13} ({}) witness {:8} read back {:9} verdict {:10} rc {} discard {} ms",
        c.json["claim"].as_str().unwrap_or("?"),
        c.json["claim_source"].as_str().unwrap_or("?"),
        c.witness,
        c.json["read_back"].as_str().unwrap_or("-"),
        c.json["verdict"].as_str().unwrap_or("?"),
        c.rc,
        c.json["discard_ms"]
            .as_f64()
            .map_or_else(|| "-".into(), |ms| format!("{ms:.2}")),
    );
    c
}

/// The check says what the shell saw, its verdict follows from the claim and what it read,
/// and every sector it wrote is back.
fn assert_consistent(name: &str, c: &Case) {
    let j = &c.json;
    if c.witness == "refused" {
        assert!(
            j["verdict"] == "no-discard" || j["verdict"] == "refused",
            "{name}: blkdiscard was refused, the check says {j:#}"
        );
        return;
    }
    assert!(
        c.written,
        "{name}: the shell's MiB did not read back before the discard"
    );
    let read_back = j["read_back"]
        .as_str()
        .unwrap_or_else(|| panic!("{name}: {j:#}"));
    match c.witness.as_str() {
        "zeros" => assert_eq!(read_back, "zeros", "{name}: {j:#}"),
        "old" => assert_eq!(read_back, "unchanged", "{name}: {j:#}"),
        _ => assert!(read_back == "mixed" || read_back == "ones", "{name}: {j:#}"),
    }
    let (verdict, rc) = match (j["claim"].as_str().unwrap(), read_back) {
        ("zeros", "zeros") | ("ones", "ones") => ("works", 0),
        ("zeros" | "ones", _) => ("broken", 4),
        (_, "unchanged") => ("kept", 0),
        (_, "mixed") if j["still_pattern_bytes"].as_u64() > Some(0) => ("kept", 0),
        _ => ("works", 0),
    };
    assert_eq!(j["verdict"], verdict, "{name}: {j:#}");
    assert_eq!(c.rc, rc, "{name}: {j:#}");
    assert_eq!(
        j["put_back"]["mismatched"],
        serde_json::json!([]),
        "{name}: {j:#}"
    );
    assert_eq!(j["put_back"]["error"], Value::Null, "{name}: {j:#}");
    assert_eq!(j["journal_kept"], Value::Null, "{name}");
}

#[test]
fn qemu_lab_discard_scsi_debug_with_lbprz_reads_zeros_as_claimed() {
    if !lab_or_skip("qemu_lab_discard_scsi_debug_lbprz1", Some(REPLAY), &[]) {
        return;
    }
    let c = case(results(), "sdbg-lbprz1");
    assert_eq!(c.witness, "zeros", "scsi_debug lbprz=1 unmaps to zeros");
    assert_eq!(c.json["claim"], "zeros");
    assert_eq!(c.json["claim_source"], "SCSI LBPRZ 1");
    assert_eq!(
        c.json["sentence"],
        "discard works, reads zeros as SCSI LBPRZ 1 says"
    );
    assert_consistent("sdbg-lbprz1", &c);
}

#[test]
fn qemu_lab_discard_scsi_debug_without_lbprz_reports_what_it_returns() {
    if !lab_or_skip("qemu_lab_discard_scsi_debug_lbprz0", Some(REPLAY), &[]) {
        return;
    }
    let c = case(results(), "sdbg-lbprz0");
    assert_eq!(c.json["claim"], "nothing");
    assert_eq!(c.json["claim_source"], "SCSI LBPRZ 0");
    assert_ne!(c.witness, "refused", "scsi_debug lbpu=1 takes UNMAP");
    assert_consistent("sdbg-lbprz0", &c);
    if c.witness == "old" {
        assert!(
            c.json["sentence"]
                .as_str()
                .unwrap()
                .starts_with("discard accepted, data still there"),
            "{:#}",
            c.json
        );
    }
}

#[test]
fn qemu_lab_discard_null_blk_with_and_without_discard() {
    if !lab_or_skip("qemu_lab_discard_null_blk", Some(REPLAY), &[]) {
        return;
    }
    let r = results();
    let with = case(r, "nullb-discard");
    assert_ne!(with.witness, "refused", "null_blk discard=1 takes discards");
    assert_eq!(with.json["claim"], "nothing");
    assert_eq!(with.json["claim_source"], "no drive to ask: null_blk");
    assert_consistent("nullb-discard", &with);

    let without = case(r, "nullb-nodiscard");
    assert_eq!(without.witness, "refused", "null_blk discard=0 takes none");
    assert_eq!(without.json["discard_max_bytes"], 0);
    assert_eq!(without.json["verdict"], "no-discard");
    assert_eq!(without.json["put_back"], Value::Null, "nothing written");
    assert_eq!(without.rc, 0);
}

#[test]
fn qemu_lab_discard_qemus_disks_are_reported_as_witnessed() {
    if !lab_or_skip("qemu_lab_discard_qemu_disks", Some(REPLAY), &[]) {
        return;
    }
    let r = results();
    for name in ["sata", "nvme", "scsi", "virtio"] {
        let c = case(r, name);
        assert_consistent(name, &c);
    }
    // Where the claim is asked of a drive, it names the drive's own bits.
    assert!(
        case(r, "sata").json["claim_source"]
            .as_str()
            .unwrap()
            .starts_with("ATA IDENTIFY word 69")
            || case(r, "sata").witness == "refused"
    );
    assert!(
        case(r, "nvme").json["claim_source"]
            .as_str()
            .unwrap()
            .starts_with("NVMe DLFEAT")
    );
}
