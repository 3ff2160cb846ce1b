//! The flush check (issue 27) on emulated devices whose honesty is known, in the triage's
//! boot (tests/vm/triage-guest.sh runs tests/vm/flush-guest.sh after the triage; disk set
//! `triage`), so it costs no boot of its own:
//!
//! - the timing check on the 7200 rpm SATA disk, whose writes and flushes QEMU acknowledges
//!   from the host's memory (`cache=unsafe`), reports a volatile cache (exit 3) against a
//!   floor of one revolution, 8.33 ms;
//! - on dm-delay over that disk (every write and flush held 20 ms) it reports that commits
//!   wait for the medium (exit 0), with the rotation rate of the disk beneath;
//! - the power-cut check on null_blk with a volatile cache (`cache_size`), the power cut by
//!   configfs (`power` 0): the honest device (the kernel sends its flushes) loses nothing
//!   acknowledged (exit 0); the liar (`queue/write_cache` "write through": the kernel strips
//!   the flushes, null_blk still caches) is caught, the lost sequence numbers named (exit 4);
//! - a LOG on a file system stacked on the device checked (a loop device over it), beside
//!   the image a loop target lives in, or the device's own node, is refused (exit 1, with
//!   the reason).
//!
//! Before each disktriage step the guest checks the device with shell tools (ioping, dd and
//! the power cycle), and the tests assert those first: a lab that does not behave as built
//! fails as such, not as a wrong verdict.
//!
//! Run as root: `cargo test --test lab flush -- --nocapture` (one boot of the triage's lab,
//! shared with the triage's and the capacity lab's tests when they run: about two minutes
//! under TCG for the triage and this lab, the capacity lab after them several more; the JSON
//! of each check is printed). The guest's output is kept in target/lab/qemu-lab-triage-*.log.
//!
//! `DISKTRIAGE_LAB_FLUSH_RESULTS=FILE` reads a saved guest output (target/lab/qemu-lab-triage-
//! results.log, or the output of flush-guest.sh run alone as the lab's guest script) instead
//! of booting; `DISKTRIAGE_LAB_TRIAGE_RESULTS` (the same boot's log) serves too.
//!
//! Root only, like the other lab tests. Skipped with the reason when the lab cannot run,
//! failing instead with `DISKTRIAGE_REQUIRE_ROOT=1`.

use crate::{Results, booted_once};

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

/// dm-delay's write and flush delay (tests/vm/flush-guest.sh).
const DM_DELAY_MS: f64 = 20.0;
/// null_blk's volatile cache (tests/vm/flush-guest.sh), in 4 KiB pages: the most records the
/// liar can lose, as every lost record had at least one of its blocks in the cache.
const NULLB_CACHE_PAGES: usize = 4 * 256;
/// The SATA disk's rotation rate (tests/vm/lab.sh, disk set `triage`) and one revolution.
const RPM: u64 = 7200;
const FLOOR_MS: f64 = 60_000.0 / RPM as f64;

fn flush_results() -> &'static Results {
    static SAVED: OnceLock<Result<Results, String>> = OnceLock::new();
    match std::env::var_os("DISKTRIAGE_LAB_FLUSH_RESULTS") {
        Some(saved) => booted_once(&SAVED, || {
            Results::parse(&std::fs::read_to_string(saved).unwrap())
        }),
        None => crate::qemu_lab_triage::triage_boot(),
    }
}

/// Lab prerequisites: those of the triage's boot, unless a saved output is replayed.
fn lab_or_skip(test: &str) -> bool {
    std::env::var_os("DISKTRIAGE_LAB_FLUSH_RESULTS").is_some()
        || crate::qemu_lab_triage::lab_or_skip(test)
}

/// `key=value` words of a section's lines.
fn words(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .flat_map(|l| l.split_whitespace())
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The kernel names the guest found: sata, dm, honest, liar.
fn devices(r: &Results) -> BTreeMap<String, String> {
    let mut found = words(r.text("FLUSH-SETUP"));
    found.extend(words(r.text("FLUSH-DM-SETUP")));
    found.extend(words(r.text("FLUSH-NULLB-SETUP")));
    for name in ["sata", "dm", "honest", "liar"] {
        assert!(
            found.get(name).is_some_and(|d| !d.is_empty()),
            "the guest did not find {name}: {found:?}"
        );
    }
    found
}

/// ioping's `-B` line in a section: (count, min, avg, max) with times in ms.
fn ioping(r: &Results, section: &str) -> (u64, f64, f64, f64) {
    let line = r
        .text(section)
        .lines()
        .find_map(|l| l.strip_prefix("ioping-dsync "))
        .unwrap_or_else(|| panic!("no ioping line in {section}:\n{}", r.text(section)));
    let f: Vec<f64> = line
        .split_whitespace()
        .map(|w| w.parse().unwrap_or(f64::NAN))
        .collect();
    assert!(
        f.len() >= 7 && f.iter().take(7).all(|x| x.is_finite()),
        "ioping failed in {section}: {line}"
    );
    // count runtime iops bytes/s min avg max (nanoseconds)
    (f[0] as u64, f[4] / 1e6, f[5] / 1e6, f[6] / 1e6)
}

/// The null_blk proof line of one case (`CASE key=value ...`).
fn proof(r: &Results, case: &str) -> BTreeMap<String, String> {
    let text = r.text("FLUSH-PROOF-NULLB");
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(case))
        .unwrap_or_else(|| panic!("no {case} in FLUSH-PROOF-NULLB:\n{text}"));
    words(line)
}

fn f64_of(doc: &Value, field: &str) -> f64 {
    doc[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} is not a number: {doc:#}"))
}

/// The sequence numbers in a JSON list.
fn seqs(doc: &Value, field: &str) -> Vec<u64> {
    doc[field]
        .as_array()
        .unwrap_or_else(|| panic!("{field} is not a list: {doc:#}"))
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

/// The JSON's device names the kernel device `name` (a path or the bare name).
fn names_device(doc: &Value, name: &str) -> bool {
    doc["device"]
        .as_str()
        .is_some_and(|d| d == name || d == format!("/dev/{name}"))
}

#[test]
fn qemu_lab_flush_the_devices_behave_as_built() {
    if !lab_or_skip("qemu_lab_flush_the_devices_behave_as_built") {
        return;
    }
    let r = flush_results();
    let dev = devices(r);
    let setup = words(r.text("FLUSH-SETUP"));
    assert_eq!(setup["rotational"], "1", "{setup:?}");
    // QEMU acknowledges the SATA disk's durable writes from memory: far below a revolution.
    let (count, min, avg, _) = ioping(r, "FLUSH-PROOF-SATA");
    assert!(count >= 100, "{count} writes");
    assert!(
        avg < FLOOR_MS / 2.0,
        "O_DSYNC writes on the SATA disk take {avg} ms (min {min}): not a volatile cache"
    );
    // dm-delay over it holds every write (and flush): above a revolution, each one.
    let dm = words(r.text("FLUSH-DM-SETUP"));
    assert_eq!(dm["slaves"], dev["sata"], "{dm:?}");
    let (_, min, _, _) = ioping(r, "FLUSH-PROOF-DM");
    assert!(
        min >= DM_DELAY_MS,
        "an O_DSYNC write on dm-delay in {min} ms"
    );
    // null_blk: the cache is discarded at power-off, a flush keeps the data, and with
    // "write through" the kernel sends no flush, so nothing is kept.
    let honest_nosync = proof(r, "honest-nosync");
    let honest_fsync = proof(r, "honest-fsync");
    let liar_fsync = proof(r, "liar-fsync");
    for p in [&honest_nosync, &honest_fsync, &liar_fsync] {
        assert_eq!(p["before"], "pattern", "written and read back: {p:?}");
    }
    assert_eq!(
        honest_nosync["write_cache"], "write-back",
        "{honest_nosync:?}"
    );
    assert_eq!(honest_nosync["after"], "zeros", "{honest_nosync:?}");
    assert_ne!(honest_fsync["flushes"], "0", "{honest_fsync:?}");
    assert_eq!(honest_fsync["after"], "pattern", "{honest_fsync:?}");
    assert_eq!(liar_fsync["write_cache"], "write-through", "{liar_fsync:?}");
    assert_eq!(liar_fsync["flushes"], "0", "{liar_fsync:?}");
    assert_eq!(liar_fsync["after"], "zeros", "{liar_fsync:?}");
}

#[test]
fn qemu_lab_flush_timing_finds_the_volatile_cache_of_the_sata_disk() {
    if !lab_or_skip("qemu_lab_flush_timing_finds_the_volatile_cache_of_the_sata_disk") {
        return;
    }
    let r = flush_results();
    let dev = devices(r);
    let doc = r.json("FLUSH-TIMING-SATA");
    eprintln!("timing on the SATA disk:\n{doc:#}");
    assert!(names_device(&doc, &dev["sata"]), "{doc:#}");
    assert_eq!(doc["serial"], "DT-SATA-0", "{doc:#}");
    assert_eq!(doc["verdict"], "volatile-cache", "{doc:#}");
    assert_eq!(r.rc("FLUSH-TIMING-SATA"), 3, "{doc:#}");
    assert_eq!(doc["rpm"], RPM, "{doc:#}");
    let floor = f64_of(&doc, "floor_ms");
    assert!((floor - FLOOR_MS).abs() < 0.01, "floor {floor} ms: {doc:#}");
    let commit = f64_of(&doc, "commit_ms");
    assert!(commit < floor, "commits in {commit} ms: {doc:#}");
    assert_eq!(doc["kernel_write_cache"], "write back", "{doc:#}");
    for field in ["write_flush_ms", "flush_after_dirty_ms"] {
        assert!(f64_of(&doc, field) >= 0.0, "{field}: {doc:#}");
    }
    for field in ["sentence", "next_step"] {
        assert!(
            doc[field].as_str().is_some_and(|s| !s.is_empty()),
            "{field}: {doc:#}"
        );
    }
}

#[test]
fn qemu_lab_flush_timing_finds_that_commits_wait_on_dm_delay() {
    if !lab_or_skip("qemu_lab_flush_timing_finds_that_commits_wait_on_dm_delay") {
        return;
    }
    let r = flush_results();
    let dev = devices(r);
    let doc = r.json("FLUSH-TIMING-DM");
    eprintln!("timing on dm-delay over the SATA disk:\n{doc:#}");
    assert!(names_device(&doc, &dev["dm"]), "{doc:#}");
    assert_eq!(doc["verdict"], "waits-for-medium", "{doc:#}");
    assert_eq!(r.rc("FLUSH-TIMING-DM"), 0, "{doc:#}");
    // The rotation rate is the SATA disk's, beneath the dm device.
    assert_eq!(doc["rpm"], RPM, "{doc:#}");
    let floor = f64_of(&doc, "floor_ms");
    assert!((floor - FLOOR_MS).abs() < 0.01, "floor {floor} ms: {doc:#}");
    let commit = f64_of(&doc, "commit_ms");
    assert!(
        commit >= DM_DELAY_MS && commit >= floor,
        "commits in {commit} ms: {doc:#}"
    );
    assert!(
        r.text("FLUSH-DM-TEARDOWN").contains("rc=0"),
        "{}",
        r.text("FLUSH-DM-TEARDOWN")
    );
}

/// The record's section: it ran until the power was cut and ended on its own with status 0,
/// having acknowledged records to its LOG.
fn assert_recorded(r: &Results, section: &str) {
    let text = r.text(section);
    assert!(
        !text.contains("\nrc=hung"),
        "the record did not end, even on SIGKILL:\n{text}"
    );
    let w = words(text);
    assert_eq!(
        w["running"], "yes",
        "the record had ended before the power cut:\n{text}"
    );
    assert_eq!(
        r.rc(section),
        0,
        "the record's status after the power cut:\n{text}"
    );
    assert!(
        w.get("log_lines")
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n > 0),
        "nothing in the LOG:\n{text}"
    );
    // It told the admin when to cut the power (its stderr follows `stderr:`).
    let stderr = text
        .split_once("\nstderr:\n")
        .unwrap_or_else(|| panic!("no stderr in {section}:\n{text}"))
        .1;
    assert!(
        stderr.to_lowercase().contains("power"),
        "no word of the power cut on stderr:\n{text}"
    );
}

#[test]
fn qemu_lab_flush_the_honest_cache_loses_nothing_acknowledged() {
    if !lab_or_skip("qemu_lab_flush_the_honest_cache_loses_nothing_acknowledged") {
        return;
    }
    let r = flush_results();
    let dev = devices(r);
    assert_recorded(r, "FLUSH-RECORD-honest");
    let doc = r.json("FLUSH-VERIFY-honest");
    eprintln!("verify on the honest null_blk:\n{doc:#}");
    assert!(names_device(&doc, &dev["honest"]), "{doc:#}");
    assert_eq!(doc["verdict"], "nothing-lost", "{doc:#}");
    assert_eq!(seqs(&doc, "lost"), Vec::<u64>::new(), "{doc:#}");
    assert_eq!(seqs(&doc, "torn"), Vec::<u64>::new(), "{doc:#}");
    let acknowledged = doc["acknowledged"].as_u64().unwrap();
    let verified = doc["verified"].as_u64().unwrap();
    assert!(acknowledged > 0 && verified > 0, "{doc:#}");
    assert!(verified <= acknowledged, "{doc:#}");
    assert_eq!(r.rc("FLUSH-VERIFY-honest"), 0, "{doc:#}");
}

#[test]
fn qemu_lab_flush_the_lying_cache_is_caught_with_the_lost_records_named() {
    if !lab_or_skip("qemu_lab_flush_the_lying_cache_is_caught_with_the_lost_records_named") {
        return;
    }
    let r = flush_results();
    let dev = devices(r);
    assert!(
        r.text("FLUSH-RECORD-liar")
            .contains("write_cache=write through"),
        "{}",
        r.text("FLUSH-RECORD-liar")
    );
    assert_recorded(r, "FLUSH-RECORD-liar");
    let doc = r.json("FLUSH-VERIFY-liar");
    eprintln!("verify on the lying null_blk:\n{doc:#}");
    assert!(names_device(&doc, &dev["liar"]), "{doc:#}");
    assert_eq!(doc["verdict"], "lost", "{doc:#}");
    assert_eq!(r.rc("FLUSH-VERIFY-liar"), 4, "{doc:#}");
    let lost = seqs(&doc, "lost");
    assert!(!lost.is_empty(), "{doc:#}");
    // No more than the cache held at the power cut: what was evicted to null_blk's memory
    // before it survived, and the verify must not call it lost.
    assert!(
        lost.len() <= NULLB_CACHE_PAGES,
        "{} lost, more than the {NULLB_CACHE_PAGES} pages of the cache: {doc:#}",
        lost.len()
    );
    assert!(lost.windows(2).all(|w| w[0] < w[1]), "not sorted: {lost:?}");
    let torn = seqs(&doc, "torn");
    assert!(torn.iter().all(|t| lost.contains(t)), "{doc:#}");
    let acknowledged = doc["acknowledged"].as_u64().unwrap();
    let verified = doc["verified"].as_u64().unwrap();
    assert!(
        verified + lost.len() as u64 <= acknowledged,
        "more verified and lost than acknowledged: {doc:#}"
    );
}

/// A refused record: status 1 and a reason on stderr that names the device or the LOG.
fn assert_refused(r: &Results, section: &str, names: &[&str]) {
    let text = r.text(section);
    assert_eq!(r.rc(section), 1, "{section}:\n{text}");
    let stderr: String = text
        .lines()
        .skip_while(|l| !l.starts_with("rc="))
        .skip(1)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        names.iter().any(|n| stderr.contains(n)),
        "{section}: the reason names none of {names:?}:\n{text}"
    );
}

#[test]
fn qemu_lab_flush_a_log_on_the_device_checked_is_refused() {
    if !lab_or_skip("qemu_lab_flush_a_log_on_the_device_checked_is_refused") {
        return;
    }
    let r = flush_results();
    let dev = devices(r);
    let honest = dev["honest"].as_str();
    let stacked = words(r.text("FLUSH-LOG-STACKED"));
    for step in ["losetup_rc", "mke2fs_rc", "mount_rc"] {
        assert_eq!(
            stacked[step], "0",
            "the file system on the loop device: {stacked:?}"
        );
    }
    let loop_dev = stacked["losetup"].trim_start_matches("/dev/");
    assert_refused(
        r,
        "FLUSH-LOG-STACKED",
        &[honest, loop_dev, "stacked.log", "LOG"],
    );
    assert_refused(r, "FLUSH-LOG-SAME", &[honest, "LOG"]);
    // The target stacked on the LOG's disk: a loop device over an image on the file system
    // the LOG is on. The guard has nothing against the loop device; the LOG check refuses.
    let under = words(r.text("FLUSH-LOG-UNDER"));
    for step in ["mke2fs_rc", "mount_rc", "losetup_rc"] {
        assert_eq!(under[step], "0", "the LOG's file system: {under:?}");
    }
    let target = under["target"].trim_start_matches("/dev/");
    assert_refused(
        r,
        "FLUSH-LOG-UNDER",
        &[under["under"].as_str(), target, "beside.log"],
    );
    assert_eq!(
        under["log_exists"], "no",
        "the refused LOG was created: {under:?}"
    );
}
