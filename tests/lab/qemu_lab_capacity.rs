//! The capacity probe (issue 38) on emulated devices whose real size is known, in the
//! triage's boot (tests/vm/triage-guest.sh runs tests/vm/flush-guest.sh, then
//! tests/vm/capacity-guest.sh; disk set `triage`), so it costs no boot of its own:
//!
//! - scsi_debug with 24 MiB of store claimed as 1 GiB (`virtual_gb`): a write past the store
//!   lands on it again; the probe says it wraps every 49,152 sectors, onto LBA 0 (within its
//!   64 MiB region);
//! - a dm table of linear segments repeating the first 147,461 sectors (72 MiB + 5 sectors,
//!   no power of two, longer than the region: found by the giant steps) of an NVMe disk, 2 GiB
//!   claimed: it wraps every 147,461 sectors;
//! - dm-linear (40 MiB + 7 sectors) then dm-zero to 2 GiB: dropped from LBA 81,927 (in the
//!   region);
//! - dm-linear (66 MiB + 5 sectors) then dm-error to 2 GiB: fails from LBA 135,173 (past the
//!   region: a giant step's read fails, the bisection finds the sector);
//! - scsi_debug again without `virtual_gb`, 80 MiB: real;
//! - a probe of the scsi_debug disk killed (SIGKILL) once its journal holds 30 MiB, past the
//!   store (its wrapped writes have overwritten its first ones): `restore --capacity` puts
//!   every byte back.
//!
//! The start of each store (64 MiB at most, the probe's region) is filled with random bytes,
//! and the sha256 of the whole store (busybox sha256sum, past the page cache) must be the
//! same before and after each probe and after the restore. Before
//! any probe the guest checks each device with busybox dd (a marker written past the real end
//! read back where the device put it, dropped, or failing), and the tests assert those first:
//! a lab that does not behave as built fails as such, not as a wrong verdict.
//!
//! Run as root: `cargo test --test lab capacity -- --nocapture` (the triage's boot, shared with
//! the triage's and the flush check's tests when they run: 10 minutes in all on a loaded
//! two-core host, this lab about 7 of them); it prints a table of each device's claimed and
//! real size, time and checksums. The guest's output is kept in
//! target/lab/qemu-lab-triage-*.log.
//!
//! `DISKTRIAGE_LAB_CAPACITY_RESULTS=FILE` reads a saved guest output (target/lab/qemu-lab-
//! triage-results.log, or the output of capacity-guest.sh run alone as the lab's guest script)
//! instead of booting; `DISKTRIAGE_LAB_TRIAGE_RESULTS` (the same boot's log) serves too.
//!
//! Root only, like the other lab tests. Skipped with the reason when the lab cannot run,
//! failing instead with `DISKTRIAGE_REQUIRE_ROOT=1`.

use crate::{Results, booted_once};

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

/// The devices of tests/vm/capacity-guest.sh (keep in step), in sectors of 512 bytes.
const SD_REAL: u64 = 24 * 2048;
const SD_CLAIMED: u64 = 2 * 1024 * 1024;
const WRAP_PERIOD: u64 = 147_461;
const ZERO_REAL: u64 = 81_927;
const ERROR_REAL: u64 = 135_173;
const DM_CLAIMED: u64 = 4_194_304;
const REAL_SECTORS: u64 = 80 * 2048;
/// The probe's region (`ProbeConfig::new`): it stamps and saves this much at the start.
const REGION: u64 = 64 * 2048;
const _: () = assert!(WRAP_PERIOD > REGION && ERROR_REAL > REGION && ZERO_REAL < REGION);
/// The journal size at which the killed probe is killed.
const KILL_AT: u64 = 30 << 20;

/// One probed device: its section's key, what it claims, what it stores and how it fails.
struct Case {
    key: &'static str,
    what: &'static str,
    claimed: u64,
    real: u64,
    /// `fake.kind`, `None` for a real device.
    kind: Option<&'static str>,
}

const CASES: [Case; 5] = [
    Case {
        key: "sd",
        what: "scsi_debug 24 MiB as 1 GiB",
        claimed: SD_CLAIMED,
        real: SD_REAL,
        kind: Some("wraps"),
    },
    Case {
        key: "wrap",
        what: "dm linear x29 of 147461 s",
        claimed: DM_CLAIMED,
        real: WRAP_PERIOD,
        kind: Some("wraps"),
    },
    Case {
        key: "zero",
        what: "dm linear + dm-zero",
        claimed: DM_CLAIMED,
        real: ZERO_REAL,
        kind: Some("drops"),
    },
    Case {
        key: "error",
        what: "dm linear + dm-error",
        claimed: DM_CLAIMED,
        real: ERROR_REAL,
        kind: Some("fails"),
    },
    Case {
        key: "real",
        what: "scsi_debug 80 MiB",
        claimed: REAL_SECTORS,
        real: REAL_SECTORS,
        kind: None,
    },
];

fn capacity_results() -> &'static Results {
    static SAVED: OnceLock<Result<Results, String>> = OnceLock::new();
    match std::env::var_os("DISKTRIAGE_LAB_CAPACITY_RESULTS") {
        Some(saved) => booted_once(&SAVED, || {
            Results::parse(&std::fs::read_to_string(saved).unwrap())
        }),
        None => crate::qemu_lab_triage::triage_boot(),
    }
}

/// Lab prerequisites: those of the triage's boot, unless a saved output is replayed.
fn lab_or_skip(test: &str) -> bool {
    std::env::var_os("DISKTRIAGE_LAB_CAPACITY_RESULTS").is_some()
        || crate::qemu_lab_triage::lab_or_skip(test)
}

/// `key=value` words of a text's lines.
fn words(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .flat_map(|l| l.split_whitespace())
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The `key=value` words of a section's first line that starts with `first`.
fn line_words(r: &Results, section: &str, first: &str) -> BTreeMap<String, String> {
    let text = r.text(section);
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(first))
        .unwrap_or_else(|| panic!("no {first} line in {section}:\n{text}"));
    words(line)
}

/// A sha256 printed as `name=HEX`.
fn sha(w: &BTreeMap<String, String>, name: &str) -> String {
    let s = w.get(name).cloned().unwrap_or_default();
    assert!(
        s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "{name} is no sha256: {w:?}"
    );
    s
}

fn u64_of(doc: &Value, field: &str) -> u64 {
    doc[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} is not a count: {doc:#}"))
}

/// The kernel names the guest found: sd, wrapbase, tailbase, sata; the dm devices; real.
fn devices(r: &Results) -> BTreeMap<String, String> {
    let mut found = words(r.text("CAP-SETUP"));
    for section in [
        "CAP-WRAP-SETUP",
        "CAP-ZERO-SETUP",
        "CAP-ERROR-SETUP",
        "CAP-REAL-SETUP",
    ] {
        found.extend(words(r.text(section)));
    }
    for name in [
        "sd", "real", "wrapbase", "tailbase", "sata", "wrap", "zero", "error",
    ] {
        assert!(
            found.get(name).is_some_and(|d| !d.is_empty()),
            "the guest did not find {name}: {found:?}"
        );
    }
    found
}

/// The probe of one case, held to what the device is: the verdict, the sizes to the sector,
/// how it fails, the exit status, the put-back, the store's sha256 and the journal gone.
fn assert_probe(r: &Results, case: &Case) -> Value {
    let section = format!("CAP-PROBE-{}", case.key);
    let text = r.text(&section);
    let doc = r.json(&section);
    let dev = devices(r);
    let w = words(text);
    let name = &dev[case.key];
    assert_eq!(doc["name"], name.as_str(), "{text}");
    assert_eq!(doc["sector_bytes"], 512, "{text}");
    assert_eq!(u64_of(&doc, "claimed_sectors"), case.claimed, "{text}");
    assert_eq!(
        u64_of(&doc, "real_sectors"),
        case.real,
        "{}: the real size to the sector:\n{text}",
        case.key
    );
    assert_eq!(u64_of(&doc, "real_bytes"), case.real * 512, "{text}");
    assert_eq!(u64_of(&doc, "last_good_lba"), case.real - 1, "{text}");
    match case.kind {
        None => {
            assert_eq!(doc["verdict"], "real", "{text}");
            assert_eq!(doc["fake"], Value::Null, "{text}");
            assert_eq!(r.rc(&section), 0, "a real device is exit 0:\n{text}");
        }
        Some(kind) => {
            assert_eq!(doc["verdict"], "fake", "{text}");
            assert_eq!(doc["fake"]["kind"], kind, "{text}");
            assert_eq!(u64_of(&doc["fake"], "first_lba"), case.real, "{text}");
            if kind == "wraps" {
                assert_eq!(doc["fake"]["onto_lba"], 0, "{text}");
            }
            assert_eq!(r.rc(&section), 4, "a fake device is exit 4:\n{text}");
        }
    }
    let put_back = &doc["put_back"];
    assert_eq!(put_back["mismatched"], serde_json::json!([]), "{text}");
    assert_eq!(put_back["error"], Value::Null, "{text}");
    // Every sector of the region below the real end was compared with its saved copy.
    assert!(
        u64_of(put_back, "verified") >= REGION.min(case.real),
        "{text}"
    );
    assert_eq!(doc["journal_kept"], Value::Null, "{text}");
    assert_eq!(
        w["journal_left"], "no",
        "the journal goes once all is back:\n{text}"
    );
    assert_eq!(
        sha(&w, "sha_after"),
        sha(&w, "sha_before"),
        "{}: every byte of the store is back:\n{text}",
        case.key
    );
    // The journal was on another disk (ext2 on the SATA disk), not in RAM: nothing to warn.
    let stderr = text.split_once("\nstderr:\n").map_or("", |(_, e)| e);
    assert!(!stderr.contains("warning"), "{text}");
    doc
}

/// The dm table's lines in a section (`START LENGTH TARGET ...`, as dmsetup prints them).
fn table_has(r: &Results, section: &str, line: &str) {
    let text = r.text(section);
    assert!(
        text.lines().any(|l| l.trim_end().starts_with(line)),
        "{section}: no table line {line:?}:\n{text}"
    );
}

#[test]
fn qemu_lab_capacity_the_devices_behave_as_built() {
    if !lab_or_skip("qemu_lab_capacity_the_devices_behave_as_built") {
        return;
    }
    let r = capacity_results();
    let dev = devices(r);
    let setup = words(r.text("CAP-SETUP"));
    assert_eq!(setup["dm_zero"], "yes", "dm-zero is loaded: {setup:?}");
    assert_eq!(
        setup["mount_rc"], "0",
        "the journals' file system: {setup:?}"
    );
    let size = |key: &str| {
        line_words(r, "CAP-SETUP", &dev[key])
            .get("size")
            .and_then(|s| s.parse::<u64>().ok())
    };
    assert!(size("wrapbase").is_some_and(|s| s >= WRAP_PERIOD));
    assert!(size("tailbase").is_some_and(|s| s >= ZERO_REAL.max(ERROR_REAL)));

    // scsi_debug: a marker one store past sector 100 is read at sector 100.
    let sd = line_words(r, "CAP-PROOF-sd", "sd");
    assert_eq!(
        sd["size"],
        SD_CLAIMED.to_string(),
        "scsi_debug's claim: {sd:?}"
    );
    assert_eq!(sd["write_rc"], "0", "{sd:?}");
    assert_eq!(sd["at_store"], "marker", "scsi_debug does not wrap: {sd:?}");
    assert_eq!(sd["at_written"], "marker", "{sd:?}");

    // The repeated segments: 29, the last cut short; a marker in the third period reads in
    // the second and on the disk beneath.
    let segments = words(r.text("CAP-WRAP-SETUP"));
    assert_eq!(segments["segments"], "29", "{segments:?}");
    let last_start = 28 * WRAP_PERIOD;
    table_has(
        r,
        "CAP-WRAP-SETUP",
        &format!("{last_start} {} linear", DM_CLAIMED - last_start),
    );
    let wrap = line_words(r, "CAP-PROOF-wrap", "wrap");
    assert_eq!(wrap["size"], DM_CLAIMED.to_string(), "{wrap:?}");
    assert_eq!(wrap["write_rc"], "0", "{wrap:?}");
    assert_eq!(wrap["at_base"], "marker", "{wrap:?}");
    assert_eq!(wrap["at_first_period"], "marker", "{wrap:?}");
    assert_ne!(wrap["before_period"], "marker", "{wrap:?}");

    // dm-zero: the write is taken and dropped, zeros read; the linear part keeps a marker.
    table_has(r, "CAP-ZERO-SETUP", &format!("0 {ZERO_REAL} linear"));
    table_has(
        r,
        "CAP-ZERO-SETUP",
        &format!("{ZERO_REAL} {} zero", DM_CLAIMED - ZERO_REAL),
    );
    let zero = line_words(r, "CAP-PROOF-zero", "zero");
    assert_eq!(zero["past_write_rc"], "0", "{zero:?}");
    assert_eq!(zero["past"], "zeros", "{zero:?}");
    assert_eq!(zero["first_past"], "zeros", "{zero:?}");
    assert_eq!(zero["last_write_rc"], "0", "{zero:?}");
    assert_eq!(zero["last"], "marker", "{zero:?}");

    // dm-error: a write and a read past the linear part fail; below it they do not (at the
    // last whole 4 KiB page: busybox dd goes through the page cache, and the page across the
    // end fails for it; the table above says where the end is).
    table_has(r, "CAP-ERROR-SETUP", &format!("0 {ERROR_REAL} linear"));
    table_has(
        r,
        "CAP-ERROR-SETUP",
        &format!("{ERROR_REAL} {} error", DM_CLAIMED - ERROR_REAL),
    );
    let error = line_words(r, "CAP-PROOF-error", "error");
    assert_ne!(error["past_write_rc"], "0", "{error:?}");
    assert_eq!(error["first_past"], "fail", "{error:?}");
    assert_eq!(error["page_last_write_rc"], "0", "{error:?}");
    assert_eq!(error["page_last"], "marker", "{error:?}");

    // The real scsi_debug keeps a marker at its last sector, and only there.
    let real = line_words(r, "CAP-PROOF-real", "real");
    assert_eq!(real["size"], REAL_SECTORS.to_string(), "{real:?}");
    assert_eq!(real["write_rc"], "0", "{real:?}");
    assert_eq!(real["at_last"], "marker", "{real:?}");
    assert_ne!(real["at_100"], "marker", "{real:?}");
    for (section, key) in [
        ("CAP-WRAP-SETUP", "capwrap"),
        ("CAP-ZERO-SETUP", "capzero"),
        ("CAP-ERROR-SETUP", "caperror"),
    ] {
        let w = line_words(r, section, key);
        assert_eq!(w["size"], DM_CLAIMED.to_string(), "{section}: {w:?}");
    }
}

#[test]
fn qemu_lab_capacity_scsi_debug_wraps_onto_its_store() {
    if !lab_or_skip("qemu_lab_capacity_scsi_debug_wraps_onto_its_store") {
        return;
    }
    assert_probe(capacity_results(), &CASES[0]);
}

#[test]
fn qemu_lab_capacity_repeated_dm_segments_wrap_with_their_period() {
    if !lab_or_skip("qemu_lab_capacity_repeated_dm_segments_wrap_with_their_period") {
        return;
    }
    let doc = assert_probe(capacity_results(), &CASES[1]);
    // Past the region (WRAP_PERIOD > REGION): the giant steps found it, with few reads (no
    // read of the whole claim).
    let reads = u64_of(&doc, "reads");
    assert!(reads < 1000, "{reads} reads: {doc:#}");
}

#[test]
fn qemu_lab_capacity_a_dm_zero_tail_drops() {
    if !lab_or_skip("qemu_lab_capacity_a_dm_zero_tail_drops") {
        return;
    }
    assert_probe(capacity_results(), &CASES[2]);
}

#[test]
fn qemu_lab_capacity_a_dm_error_tail_fails() {
    if !lab_or_skip("qemu_lab_capacity_a_dm_error_tail_fails") {
        return;
    }
    assert_probe(capacity_results(), &CASES[3]);
}

#[test]
fn qemu_lab_capacity_a_real_disk_is_real() {
    if !lab_or_skip("qemu_lab_capacity_a_real_disk_is_real") {
        return;
    }
    assert_probe(capacity_results(), &CASES[4]);
}

#[test]
fn qemu_lab_capacity_a_probe_killed_mid_way_is_undone_by_restore() {
    if !lab_or_skip("qemu_lab_capacity_a_probe_killed_mid_way_is_undone_by_restore") {
        return;
    }
    let r = capacity_results();
    let dev = devices(r);
    let killed = words(r.text("CAP-KILL-sd"));
    assert_eq!(
        killed["running"],
        "yes",
        "the probe ended before the kill:\n{}",
        r.text("CAP-KILL-sd")
    );
    let journal: u64 = killed["journal_bytes"].parse().unwrap();
    assert!(journal >= KILL_AT, "{killed:?}");
    let before = sha(&killed, "sha_before");
    assert_ne!(
        sha(&killed, "sha_killed"),
        before,
        "the kill left no stamp on the store"
    );
    let text = r.text("CAP-RESTORE-sd");
    let w = words(text);
    assert_eq!(r.rc("CAP-RESTORE-sd"), 0, "{text}");
    assert!(
        text.starts_with(&format!("{}: ", dev["sd"])),
        "the restore names the device:\n{text}"
    );
    assert!(text.contains("the journal is removed"), "{text}");
    assert_eq!(w["journal_left"], "no", "{text}");
    assert_eq!(sha(&w, "sha_after"), before, "every byte is back:\n{text}");
}

/// The first 12 hex digits of a sha256 printed as `name=HEX`, for the table.
fn short(w: &BTreeMap<String, String>, name: &str) -> String {
    w.get(name)
        .map_or("?", String::as_str)
        .chars()
        .take(12)
        .collect()
}

/// The table the docs quote: each device's claim, real size, last good LBA, the probe's own
/// time and the guest's wall time, the exit status and the store's sha256 before and after
/// (their first 12 hex digits); then the killed probe and its restore.
#[test]
fn qemu_lab_capacity_prints_its_results() {
    if !lab_or_skip("qemu_lab_capacity_prints_its_results") {
        return;
    }
    let r = capacity_results();
    let mut table = format!(
        "{:<34} {:>10} {:>8} {:>9} {:<11} {:>6} {:>6} {:>2}  sha256 before / after\n",
        "device", "claimed", "real", "last good", "verdict", "probe", "wall", "rc"
    );
    for case in &CASES {
        let section = format!("CAP-PROBE-{}", case.key);
        let doc = r.json(&section);
        let w = words(r.text(&section));
        let verdict = format!(
            "{} {}",
            doc["verdict"].as_str().unwrap_or("?"),
            doc["fake"]["kind"].as_str().unwrap_or("")
        );
        table.push_str(&format!(
            "{:<34} {:>10} {:>8} {:>9} {:<11} {:>5.1}s {:>5}s {:>2}  {} / {}\n",
            format!("{} ({})", case.what, doc["name"].as_str().unwrap_or("?")),
            u64_of(&doc, "claimed_sectors"),
            u64_of(&doc, "real_sectors"),
            u64_of(&doc, "last_good_lba"),
            verdict.trim_end(),
            doc["seconds"].as_f64().unwrap_or(f64::NAN),
            w.get("wall").map_or("?", String::as_str),
            r.rc(&section),
            short(&w, "sha_before"),
            short(&w, "sha_after"),
        ));
    }
    let killed = words(r.text("CAP-KILL-sd"));
    let restored = words(r.text("CAP-RESTORE-sd"));
    table.push_str(&format!(
        "scsi_debug probe SIGKILLed at {} MiB of journal; restore --capacity: rc {} in {} s; \
         sha256 before {} / killed {} / restored {}\n",
        killed
            .get("journal_bytes")
            .and_then(|b| b.parse::<u64>().ok())
            .unwrap_or(0)
            >> 20,
        r.rc("CAP-RESTORE-sd"),
        restored.get("wall").map_or("?", String::as_str),
        short(&killed, "sha_before"),
        short(&killed, "sha_killed"),
        short(&restored, "sha_after"),
    ));
    // (Each section read above must be there and hold its JSON, or this test fails.)
    eprintln!("sectors of 512 bytes; probe: its own clock, wall: the guest's\n{table}");
}
