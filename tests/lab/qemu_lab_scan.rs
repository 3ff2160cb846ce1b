//! The surface scan on emulated devices whose bad, slow and stalling areas are known: boots
//! the QEMU lab once (`tests/vm/lab.sh`, disk set `standard`), runs `tests/vm/scan-guest.sh`
//! with the static binary, and asserts on what the guest printed:
//!
//! - scsi_debug with 16 unrecoverable sectors at LBA 8192 (`opts=2`): exactly those sectors
//!   unreadable in the JSON, the mapfile, the badblocks list and for ddrescuelog, every other
//!   byte read; through SG_IO (the sd disk itself) and through plain reads (dm-linear over it);
//! - a dm-delay segment of 300 ms over null_blk: exactly that segment slow, nothing else;
//! - a dm-error segment: exactly those sectors, EIO;
//! - a dm-delay segment slower than `--timeout`: TIME, waited for (not enforced on dm);
//! - a scan stopped with SIGINT and run again with its mapfile reads only the rest (the
//!   device's read counter);
//! - a scsi_debug disk that answers after 25 s: through SG_IO every block is abandoned at the
//!   kernel's shortest SG_IO timeout (7 s, `--timeout 1s` asked), well before; through
//!   dm-linear (at 10 s) it is waited for;
//! - no sector written on any scanned device (their write counters);
//! - `scan --repair` on the scsi_debug disk: refused while dm-linear holds it, without the
//!   typed name and with another one, writing nothing; then it writes exactly the 16 bad
//!   sectors (the write counter, and a pattern around them that stays), reads them back still
//!   unreadable (scsi_debug takes a WRITE over its medium errors but keeps failing READs there)
//!   and says so, with the SMART counts "not available" (scsi_debug has none), exit status 5.
//!
//! `DISKTRIAGE_LAB_SCAN_RESULTS=FILE` reads a saved guest output (target/lab/qemu-lab-scan-
//! results.log) instead of booting: for working on the assertions.
//!
//! Root only, like the other lab tests. Skipped with the reason when the lab cannot run,
//! failing instead with `DISKTRIAGE_REQUIRE_ROOT=1`.

use crate::common;
use crate::{Boot, Results, boot, booted_once, on_host};

use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

/// Host tools the guest gets: dmsetup builds the dm tables, ddrescuelog reads the mapfiles
/// back (optional: without it that check is skipped and said so).
const LAB_TOOLS: [&str; 2] = ["dmsetup", "ddrescuelog"];
const MIB: u64 = 1 << 20;
/// scsi_debug's size (`dev_size_mb=16`) and its bad sectors.
const SD_SIZE: u64 = 16 * MIB;
const SD_BAD_LBA: u64 = 8192;
const SD_BAD_COUNT: u64 = 16;

impl Results {
    /// The `/sys/block/X/stat` lines of a section (`stat NAME f0 f1 ...`), in order.
    fn stats(&self, name: &str) -> Vec<(String, Vec<u64>)> {
        self.text(name)
            .lines()
            .filter_map(|l| l.strip_prefix("stat "))
            .map(|l| {
                let mut words = l.split_whitespace();
                let dev = words.next().unwrap().to_string();
                (dev, words.map(|w| w.parse().unwrap()).collect())
            })
            .collect()
    }

    /// The numbers a section lists, one a line (a badblocks list, ddrescuelog -l).
    fn numbers(&self, name: &str) -> Vec<u64> {
        self.text(name)
            .lines()
            .take_while(|l| !l.starts_with("rc="))
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                l.trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("{name}: not a number: {l:?}"))
            })
            .collect()
    }
}

/// `/sys/block/X/stat` fields.
const SECTORS_READ: usize = 2;
const WRITES: usize = 4;
const SECTORS_WRITTEN: usize = 6;

/// The regions of a ddrescue mapfile: (pos, size, status).
fn mapfile_regions(text: &str) -> Vec<(u64, u64, char)> {
    let hex = |w: &str| u64::from_str_radix(w.trim_start_matches("0x"), 16).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() == 3 && w[0].starts_with("0x") && w[1].starts_with("0x"))
        .map(|w| (hex(w[0]), hex(w[1]), w[2].chars().next().unwrap()))
        .collect()
}

fn shared_lab() -> &'static Results {
    static LAB: OnceLock<Result<Results, String>> = OnceLock::new();
    booted_once(&LAB, || {
        if let Some(saved) = std::env::var_os("DISKTRIAGE_LAB_SCAN_RESULTS") {
            return Results::parse(&std::fs::read_to_string(saved).unwrap());
        }
        let work = tempfile::Builder::new()
            .prefix("disktriage-lab-scan.")
            .tempdir()
            .unwrap();
        run_lab(work.path())
    })
}

fn run_lab(work: &Path) -> Results {
    // The witnesses the host has (each optional to the scan's checks).
    let tools: Vec<&str> = LAB_TOOLS.iter().copied().filter(|t| on_host(t)).collect();
    boot(
        work,
        &Boot {
            script: "scan-guest.sh",
            diskset: "standard",
            label: "-scan",
            tools: &tools,
            prepare: None,
            timeout_s: 480,
        },
    )
}

/// Lab prerequisites: root, the packages `lab.sh check` wants, and dmsetup.
fn lab_or_skip(test: &str) -> bool {
    crate::lab_or_skip(test, Some("DISKTRIAGE_LAB_SCAN_RESULTS"), &["dmsetup"])
}

fn errors(doc: &Value) -> Vec<(u64, u64, i64)> {
    doc["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["offset"].as_u64().unwrap(),
                e["length"].as_u64().unwrap(),
                e["errno"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// The (offset, length) of a list of ranges (`slow`, `timeouts`).
fn ranges(doc: &Value, key: &str) -> Vec<(u64, u64)> {
    doc[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {doc}"))
        .iter()
        .map(|r| (r["offset"].as_u64().unwrap(), r["length"].as_u64().unwrap()))
        .collect()
}

fn bucket(doc: &Value, label: &str) -> u64 {
    doc["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["label"] == label)
        .unwrap()["blocks"]
        .as_u64()
        .unwrap()
}

/// The medium errors of the scsi_debug disk, as `section` reported them (JSON, mapfile,
/// badblocks list with --bb-size 512).
fn assert_sixteen_bad_sectors(r: &Results, scan: &str, map: &str, bb: &str, enforced: bool) {
    let doc = r.json(scan);
    let bad = (SD_BAD_LBA * 512, SD_BAD_COUNT * 512);
    assert_eq!(r.rc(scan), 4, "{scan}: some sectors unreadable");
    assert_eq!(doc["timeout_enforced"], enforced, "{scan}: {doc}");
    assert_eq!(doc["end"], "finished", "{scan}");
    // Exactly the 16 sectors, with the errno a plain read gets for an unrecovered read error.
    assert_eq!(
        errors(&doc),
        vec![(bad.0, bad.1, i64::from(libc::ENODATA))],
        "{scan}"
    );
    assert_eq!(doc["bytes_unreadable"], bad.1, "{scan}");
    assert_eq!(doc["bytes_read"], SD_SIZE - bad.1, "{scan}");
    assert_eq!(doc["bytes_abandoned"], 0, "{scan}");
    assert_eq!(
        doc["verdict"], "16 unreadable sectors at LBA 8192-8207",
        "{scan}"
    );
    assert_eq!(
        mapfile_regions(r.text(map)),
        vec![
            (0, bad.0, '+'),
            (bad.0, bad.1, '-'),
            (bad.0 + bad.1, SD_SIZE - bad.0 - bad.1, '+'),
        ],
        "{map}"
    );
    assert_eq!(
        r.numbers(bb),
        (SD_BAD_LBA..SD_BAD_LBA + SD_BAD_COUNT).collect::<Vec<_>>(),
        "{bb}"
    );
}

#[test]
fn qemu_lab_scan_medium_errors_to_the_sector() {
    if !lab_or_skip("qemu_lab_scan_medium_errors_to_the_sector") {
        return;
    }
    let r = shared_lab();
    // Through SG_IO on the sd disk, and through plain reads of a dm-linear over it.
    assert_sixteen_bad_sectors(r, "SCAN-SD", "SD-MAPFILE", "SD-BADBLOCKS", true);
    assert_sixteen_bad_sectors(r, "SCAN-SDLIN", "SDLIN-MAPFILE", "SDLIN-BADBLOCKS", false);
    // With the disk's largest transfer at 64 KiB, each 1 MiB block is 16 commands sent
    // together through its sg node: the same 16 sectors, nothing else.
    assert_sixteen_bad_sectors(r, "SCAN-SD-PIECES", "SDP-MAPFILE", "SDP-BADBLOCKS", true);
    let doc = r.json("SCAN-SD-PIECES");
    assert_eq!(doc["block"], 1 << 20, "{doc}");
    let reason = doc["timeout_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("SG_IO READ through /dev/sg")
            && reason.contains("a 1.0 MiB block is 16 commands of 64.0 KiB, sent together"),
        "{reason}"
    );
    let reason = r.json("SCAN-SDLIN")["timeout_reason"].clone();
    assert!(
        reason
            .as_str()
            .unwrap()
            .contains("is not a SCSI or SATA disk"),
        "{reason}"
    );
}

#[test]
fn qemu_lab_scan_ddrescuelog_agrees() {
    if !lab_or_skip("qemu_lab_scan_ddrescuelog_agrees") {
        return;
    }
    let r = shared_lab();
    if r.text("DDRESCUELOG-SD-BAD").contains("not found") || !on_host("ddrescuelog") {
        common::skip(
            "qemu_lab_scan_ddrescuelog_agrees",
            "ddrescuelog missing (Debian's gddrescue)",
        );
        return;
    }
    // ddrescuelog reads our mapfile back: the bad blocks are the JSON's, nothing is left
    // untried.
    let doc = r.json("SCAN-SD");
    let json_bad: Vec<u64> = errors(&doc)
        .iter()
        .flat_map(|&(offset, length, _)| offset / 512..(offset + length) / 512)
        .collect();
    assert_eq!(r.rc("DDRESCUELOG-SD-BAD"), 0);
    assert_eq!(r.numbers("DDRESCUELOG-SD-BAD"), json_bad);
    assert_eq!(r.rc("DDRESCUELOG-SD-UNDONE"), 0);
    assert_eq!(r.numbers("DDRESCUELOG-SD-UNDONE"), Vec::<u64>::new());
    let doc = r.json("SCAN-ERR");
    let json_bad: Vec<u64> = errors(&doc)
        .iter()
        .flat_map(|&(offset, length, _)| offset / 512..(offset + length) / 512)
        .collect();
    assert_eq!(r.numbers("DDRESCUELOG-ERR-BAD"), json_bad);
    assert_eq!(json_bad, (40970..41010).collect::<Vec<_>>());
}

#[test]
fn qemu_lab_scan_a_dm_delay_segment_is_the_only_slow_area() {
    if !lab_or_skip("qemu_lab_scan_a_dm_delay_segment_is_the_only_slow_area") {
        return;
    }
    let r = shared_lab();
    let doc = r.json("SCAN-SLOW");
    assert_eq!(r.rc("SCAN-SLOW"), 0, "{doc}");
    assert_eq!(ranges(&doc, "slow"), vec![(24 * MIB, MIB)], "{doc}");
    let slow = &doc["slow"][0];
    // dm-delay holds the request 300 ms; the second read, later, too.
    assert!(slow["ms"].as_u64().unwrap() >= 300, "{slow}");
    assert!(slow["reread_ms"].as_u64().unwrap() >= 300, "{slow}");
    assert_eq!(errors(&doc), vec![], "{doc}");
    assert_eq!(ranges(&doc, "timeouts"), vec![], "{doc}");
    assert_eq!(doc["bytes_read"], 64 * MIB);
    // dm's largest request is 127 KiB: the guest reads 64 KiB blocks, 16 of them slow.
    assert_eq!(doc["block"], 64 << 10);
    assert_eq!(bucket(&doc, "<500"), 16, "{doc}");
}

#[test]
fn qemu_lab_scan_dm_error_sectors_are_named_with_eio() {
    if !lab_or_skip("qemu_lab_scan_dm_error_sectors_are_named_with_eio") {
        return;
    }
    let r = shared_lab();
    let doc = r.json("SCAN-ERR");
    assert_eq!(r.rc("SCAN-ERR"), 4, "{doc}");
    assert_eq!(
        errors(&doc),
        vec![(40970 * 512, 40 * 512, i64::from(libc::EIO))],
        "{doc}"
    );
    assert_eq!(doc["errors"][0]["errno_name"], "EIO");
    assert_eq!(doc["bytes_read"], 64 * MIB - 40 * 512);
    assert_eq!(
        mapfile_regions(r.text("ERR-MAPFILE")),
        vec![
            (0, 40970 * 512, '+'),
            (40970 * 512, 40 * 512, '-'),
            (41010 * 512, 64 * MIB - 41010 * 512, '+'),
        ]
    );
    assert_eq!(ranges(&doc, "slow"), vec![], "{doc}");
}

#[test]
fn qemu_lab_scan_a_segment_slower_than_the_timeout_is_time_on_dm() {
    if !lab_or_skip("qemu_lab_scan_a_segment_slower_than_the_timeout_is_time_on_dm") {
        return;
    }
    let r = shared_lab();
    let doc = r.json("SCAN-TIME");
    // Waited for (dm has no per-command timeout), read, and counted TIME.
    assert_eq!(r.rc("SCAN-TIME"), 0, "{doc}");
    assert_eq!(doc["timeout_enforced"], false);
    assert_eq!(ranges(&doc, "timeouts"), vec![(8 * MIB, 64 << 10)], "{doc}");
    assert_eq!(bucket(&doc, "TIME"), 1, "{doc}");
    assert_eq!(ranges(&doc, "slow"), vec![], "{doc}");
    assert_eq!(errors(&doc), vec![], "{doc}");
    assert_eq!(doc["bytes_read"], 32 * MIB);
    assert_eq!(doc["bytes_abandoned"], 0);
}

#[test]
fn qemu_lab_scan_a_stopped_scan_resumes_reading_only_the_rest() {
    if !lab_or_skip("qemu_lab_scan_a_stopped_scan_resumes_reading_only_the_rest") {
        return;
    }
    let r = shared_lab();
    let size = 64 * MIB;
    let first = r.json("RESUME-FIRST");
    assert_eq!(r.rc("RESUME-FIRST"), 130, "{first}");
    assert_eq!(first["end"], "stopped");
    let read1 = first["bytes_read"].as_u64().unwrap();
    assert!(read1 > 0 && read1 < size, "stopped part way: {first}");
    let s1 = r.stats("RESUME-FIRST");
    assert_eq!(
        (s1[1].1[SECTORS_READ] - s1[0].1[SECTORS_READ]) * 512,
        read1,
        "the first run's reads"
    );
    // The mapfile saved at the stop has what was read as read, the rest untried.
    assert_eq!(
        mapfile_regions(r.text("RESUME-MAPFILE")),
        vec![(0, read1, '+'), (read1, size - read1, '?')]
    );
    let second = r.json("RESUME-SECOND");
    assert_eq!(r.rc("RESUME-SECOND"), 0, "{second}");
    assert_eq!(second["end"], "finished");
    assert_eq!(second["bytes_planned"], size - read1, "{second}");
    assert_eq!(second["bytes_read"], size - read1, "{second}");
    let s2 = r.stats("RESUME-SECOND");
    // Nothing read between the runs, and the second read only the rest.
    assert_eq!(s2[0].1[SECTORS_READ], s1[1].1[SECTORS_READ]);
    assert_eq!(
        (s2[1].1[SECTORS_READ] - s2[0].1[SECTORS_READ]) * 512,
        size - read1,
        "the second run's reads"
    );
    assert!(r.text("RESUME-SECOND").contains("resuming from"));
}

/// A scan of the stalled scsi_debug disk (every command answered after 25 s): every block
/// abandoned, `blocks` of them over `bytes`, none read, no bad sector invented.
fn assert_all_abandoned(r: &Results, scan: &str, blocks: u64, bytes: u64) -> Value {
    let doc = r.json(scan);
    assert_eq!(
        r.rc(scan),
        3,
        "{scan}: abandoned, nothing unreadable: {doc}"
    );
    assert_eq!(doc["timeout_enforced"], true, "{scan}: {doc}");
    assert_eq!(ranges(&doc, "timeouts"), vec![(0, bytes)], "{scan}: {doc}");
    assert_eq!(bucket(&doc, "TIME"), blocks, "{scan}: {doc}");
    assert_eq!(doc["bytes_abandoned"], bytes, "{scan}");
    assert_eq!(doc["bytes_read"], 0, "{scan}");
    assert_eq!(errors(&doc), vec![], "{scan}: {doc}");
    doc
}

/// A section's text with its whitespace folded (the text report wraps).
fn flat(r: &Results, name: &str) -> String {
    r.text(name)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn qemu_lab_scan_a_block_is_abandoned_at_the_timeout_through_the_sg_node() {
    if !lab_or_skip("qemu_lab_scan_a_block_is_abandoned_at_the_timeout_through_the_sg_node") {
        return;
    }
    let r = shared_lab();
    assert!(r.text("SD-DELAY").contains("delay=6250 rc=0"));
    // Through the disk's sg node: both 64 KiB blocks abandoned, not after the disk's 25 s nor
    // at SG_IO's 7 s but at the 1 s asked (the block layer rounds its timer up to the next
    // second, and the abort takes its time).
    let doc = assert_all_abandoned(r, "SCAN-SD-TIMEOUT", 2, 128 << 10);
    assert_eq!(doc["timeout_ms"], 1000, "{doc}");
    assert_eq!(doc["abandon_after_ms"], 1000, "{doc}");
    let reason = doc["timeout_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("SG_IO READ through /dev/sg")
            && reason.contains("the sg node of the SCSI disk sd"),
        "{reason}"
    );
    let seconds = doc["seconds"].as_f64().unwrap();
    eprintln!("through the sg node, two 64 KiB blocks abandoned at 1 s: {seconds:.2} s");
    assert!(
        (2.0..7.0).contains(&seconds),
        "two blocks abandoned at 1 s took {seconds} s (the disk answers after 25 s)"
    );
    let text = flat(r, "SCAN-SD-TIMEOUT-TEXT");
    assert!(
        text.contains("Timeout a read is abandoned after 1000 ms (SG_IO READ through /dev/sg")
            && text.contains(
                "Verdict: 128 sectors not read: abandoned at the command timeout, the first at LBA \
                 0-127."
            ),
        "{text}"
    );
    // Nothing unreadable, only abandoned: suspect.
    assert_eq!(r.rc("SCAN-SD-TIMEOUT-TEXT"), 3);
    // One 128 KiB block in two 64 KiB commands sent together (2 s each): both abandoned at
    // once, the block TIME, none of it read; one after the other would take 4 s at least.
    let doc = assert_all_abandoned(r, "SCAN-SD-TIMEOUT-PIECES", 1, 128 << 10);
    let reason = doc["timeout_reason"].as_str().unwrap();
    assert!(
        reason.contains("a 128.0 KiB block is 2 commands of 64.0 KiB, sent together"),
        "{reason}"
    );
    let seconds = doc["seconds"].as_f64().unwrap();
    eprintln!("one block of two commands sent together, abandoned at 2 s: {seconds:.2} s");
    assert!(
        (2.0..4.0).contains(&seconds),
        "two commands in flight together, each abandoned at 2 s, took {seconds} s"
    );
    // Through dm-linear over the same disk: waited for, then TIME.
    let doc = r.json("SCAN-SDLIN-TIMEOUT");
    assert_eq!(r.rc("SCAN-SDLIN-TIMEOUT"), 0, "{doc}");
    assert_eq!(doc["timeout_enforced"], false, "{doc}");
    assert_eq!(ranges(&doc, "timeouts"), vec![(0, 64 << 10)], "{doc}");
    assert_eq!(doc["bytes_read"], 64 << 10);
    let seconds = doc["seconds"].as_f64().unwrap();
    assert!(seconds >= 9.0, "the disk's delay: {seconds} s");
}

#[test]
fn qemu_lab_scan_without_the_sg_module_a_block_is_abandoned_at_the_kernels_7_s() {
    if !lab_or_skip("qemu_lab_scan_without_the_sg_module_a_block_is_abandoned_at_the_kernels_7_s") {
        return;
    }
    let r = shared_lab();
    assert!(r.text("SCAN-SD-TIMEOUT-PIECES").contains("rmmod sg rc=0"));
    // SG_IO on the block device: both blocks abandoned at the kernel's shortest SG_IO
    // timeout, 7 s (1 s asked), and the Timeout line says why and what would do better.
    let doc = assert_all_abandoned(r, "SCAN-SD-TIMEOUT-NO-SG", 2, 128 << 10);
    assert_eq!(doc["abandon_after_ms"], 7000, "{doc}");
    let reason = doc["timeout_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("SG_IO READ on the SCSI disk sd")
            && reason.contains("the kernel's shortest for SG_IO on a block device")
            && reason.contains("modprobe sg"),
        "{reason}"
    );
    let seconds = doc["seconds"].as_f64().unwrap();
    eprintln!("without sg, two 64 KiB blocks abandoned at 7 s (1 s asked): {seconds:.2} s");
    assert!(
        (14.0..2.0 * 12.0).contains(&seconds),
        "two blocks abandoned at 7 s took {seconds} s (the disk answers after 25 s)"
    );
    let text = flat(r, "SCAN-SD-TIMEOUT-NO-SG-TEXT");
    assert!(
        text.contains("Timeout a read is abandoned after 7000 ms (SG_IO READ on the SCSI disk sd")
            && text.contains("one that takes 1000 ms or more but answers before is counted TIME"),
        "{text}"
    );
    assert_eq!(r.rc("SCAN-SD-TIMEOUT-NO-SG-TEXT"), 3);
    assert!(
        r.text("SCAN-SD-TIMEOUT-NO-SG-TEXT")
            .contains("insmod sg rc=0")
    );
}

#[test]
fn qemu_lab_scan_writes_no_sector() {
    if !lab_or_skip("qemu_lab_scan_writes_no_sector") {
        return;
    }
    let r = shared_lab();
    let before = r.stats("STATS-BEFORE");
    let after = r.stats("STATS-AFTER");
    assert_eq!(before.len(), 7, "every scanned device: {before:?}");
    assert_eq!(
        before.iter().map(|(d, _)| d).collect::<Vec<_>>(),
        after.iter().map(|(d, _)| d).collect::<Vec<_>>()
    );
    for ((dev, b), (_, a)) in before.iter().zip(&after) {
        assert_eq!(a[WRITES], b[WRITES], "{dev}: writes completed");
        assert_eq!(
            a[SECTORS_WRITTEN], b[SECTORS_WRITTEN],
            "{dev}: sectors written"
        );
        // The scans did read them (the sd disk through dm-linear: SG_IO is not counted).
        assert!(a[SECTORS_READ] > b[SECTORS_READ], "{dev}: read");
    }
}

/// The growth of (writes completed, sectors written) between the first and last `stat` lines
/// of a section.
fn writes_in(r: &Results, name: &str) -> (u64, u64) {
    let s = r.stats(name);
    assert!(s.len() >= 2, "{name}: two stat lines: {}", r.text(name));
    let (first, last) = (&s[0].1, &s[s.len() - 1].1);
    (
        last[WRITES] - first[WRITES],
        last[SECTORS_WRITTEN] - first[SECTORS_WRITTEN],
    )
}

#[test]
fn qemu_lab_scan_repair_refusals_write_nothing() {
    if !lab_or_skip("qemu_lab_scan_repair_refusals_write_nothing") {
        return;
    }
    let r = shared_lab();
    let sd = r
        .text("REPAIR")
        .lines()
        .find_map(|l| l.strip_prefix("device "))
        .unwrap()
        .trim()
        .to_string();
    // A refusal is an error (1); a write asked without --destroy-data a usage error (2).
    for (section, words, code) in [
        // dm-linear (sdlin) over the disk: held by dm.
        ("REPAIR-HELD", format!("refusing to write to {sd}:"), 1),
        (
            "REPAIR-NO-NAME",
            format!("pass --destroy-data {sd} to confirm"),
            2,
        ),
        (
            "REPAIR-WRONG-NAME",
            format!("does not name the target {sd}"),
            1,
        ),
    ] {
        let text = r.text(section);
        assert_eq!(r.rc(section), code, "{section}: {text}");
        assert!(text.contains(&words), "{section}: {words:?} in {text}");
        assert!(
            !text.contains('{'),
            "{section}: a refused repair printed a report"
        );
        assert_eq!(writes_in(r, section), (0, 0), "{section}: written");
    }
}

#[test]
fn qemu_lab_scan_repair_writes_only_the_bad_sectors_and_says_they_stay_bad() {
    if !lab_or_skip("qemu_lab_scan_repair_writes_only_the_bad_sectors_and_says_they_stay_bad") {
        return;
    }
    let r = shared_lab();
    assert!(r.text("REPAIR-SETUP").contains("pattern rc=0"));
    let doc = r.json("REPAIR");
    // The scan found the 16 sectors, the repair wrote them and nothing else...
    let bad = (SD_BAD_LBA * 512, SD_BAD_COUNT * 512);
    assert_eq!(errors(&doc), vec![(bad.0, bad.1, i64::from(libc::ENODATA))]);
    let (writes, sectors) = writes_in(r, "REPAIR");
    assert_eq!(sectors, SD_BAD_COUNT, "sectors written: {doc}");
    assert!(writes >= 1, "{writes} writes");
    // ... and read them back still unreadable: said so, status 5.
    let repair = &doc["repair"];
    assert_eq!(repair["sectors_attempted"], SD_BAD_COUNT, "{repair}");
    assert_eq!(repair["repaired"], 0, "{repair}");
    assert_eq!(repair["still_unreadable"], SD_BAD_COUNT, "{repair}");
    assert_eq!(
        ranges(repair, "still_unreadable_ranges"),
        vec![bad],
        "{repair}"
    );
    assert!(repair["stopped"].is_null(), "{repair}");
    assert_eq!(r.rc("REPAIR"), 4);
    // No SMART on scsi_debug: the counts are null, with the reason, before and after.
    for when in ["smart_before", "smart_after"] {
        for count in ["reallocated", "pending"] {
            assert!(repair[when][count].is_null(), "{when}.{count}: {repair}");
        }
        assert!(
            !repair[when]["note"].as_str().unwrap_or("").is_empty(),
            "{when}: a reason: {repair}"
        );
    }
    // The files say what the disk is now: the sectors still bad.
    assert_eq!(
        mapfile_regions(r.text("REPAIR-MAPFILE")),
        vec![
            (0, bad.0, '+'),
            (bad.0, bad.1, '-'),
            (bad.0 + bad.1, SD_SIZE - bad.0 - bad.1, '+'),
        ]
    );
    assert_eq!(
        r.numbers("REPAIR-BADBLOCKS"),
        (SD_BAD_LBA..SD_BAD_LBA + SD_BAD_COUNT).collect::<Vec<_>>()
    );
    // The text, over the 64 KiB around them: the same 16 sectors written, the counts "not
    // available".
    let text = r.text("REPAIR-TEXT");
    assert_eq!(writes_in(r, "REPAIR-TEXT").1, SD_BAD_COUNT, "{text}");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for words in [
        "16 sectors attempted: 0 repaired, 16 still unreadable",
        "Reallocated sectors (SMART 5): not available",
        "Pending sectors (SMART 197): not available",
    ] {
        assert!(flat.contains(words), "{words:?} in {text}");
    }
    assert_eq!(r.rc("REPAIR-TEXT"), 4);
    // A witness: a plain read of LBA 8192 still fails.
    assert_ne!(r.rc("REPAIR-REREAD"), 0, "{}", r.text("REPAIR-REREAD"));
    // With the errors off: zeros over exactly LBA 8192-8207, the pattern around them intact.
    assert_eq!(r.rc("REPAIR-CONTENT"), 0, "{}", r.text("REPAIR-CONTENT"));
}

#[test]
fn qemu_lab_scan_a_disk_removed_while_read_in_pieces_ends_the_scan_with_what_was_read() {
    if !lab_or_skip(
        "qemu_lab_scan_a_disk_removed_while_read_in_pieces_ends_the_scan_with_what_was_read",
    ) {
        return;
    }
    let r = shared_lab();
    let doc = r.json("SCAN-SD-REMOVED");
    assert!(r.text("SCAN-SD-REMOVED").contains("delete rc=0"), "{doc}");
    assert!(
        doc["timeout_reason"]
            .as_str()
            .unwrap()
            .contains("a 1.0 MiB block is 16 commands of 64.0 KiB, sent together"),
        "{doc}"
    );
    assert_eq!(r.rc("SCAN-SD-REMOVED"), 5, "{doc}");
    assert_eq!(doc["end"], "gone", "{doc}");
    assert!(
        doc["end_reason"].as_str().unwrap().contains("removed"),
        "{doc}"
    );
    let read = doc["bytes_read"].as_u64().unwrap();
    assert!(read > 0 && read < SD_SIZE, "{read} of {SD_SIZE}");
    // The commands the removal cut short are not bad sectors.
    assert_eq!(errors(&doc), vec![], "{doc}");
}
