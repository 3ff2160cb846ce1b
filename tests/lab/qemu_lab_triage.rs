//! The triage on emulated disks whose faults are known: boots the QEMU lab once
//! (`tests/vm/lab.sh`, disk set `triage`), runs `tests/vm/triage-guest.sh` with the static
//! binary, and asserts on the verdicts `disktriage triage --json` gave:
//!
//! - the NVMe disk whose controller reports critical warning 4 is failing, and the sentence
//!   names the warning (reliability degraded);
//! - scsi_debug with unrecoverable sectors (`opts=2`) is failing or suspect, and its finding
//!   names the unreadable LBAs the sampled surface read hit;
//! - a dm-delay segment over null_blk makes its disk suspect (slow samples, in the segment);
//! - the plain SATA (7200 rpm), NVMe, SCSI and virtio disks are healthy;
//! - of three virtio disks of the same size, which QEMU throttles to 32, 32 and 8 MB/s (the fast
//!   two too, so that the emulator's load does not set their speed), the slow one is suspect as
//!   the outlier;
//! - the exit status is the worst verdict (4 with a failing disk, 0 for the healthy ones
//!   alone, 3 for the slow one alone);
//! - the triage of every lab disk at once ends within its bound, and writes nothing.
//!
//! The wall time of the triage of the lab's disks is printed (`cargo test --test lab triage
//! -- --nocapture`): the figure the docs quote.
//!
//! The same boot then runs the flush check's lab (tests/vm/flush-guest.sh, asserted by
//! `qemu_lab_flush`): it writes to the SATA disk, so it comes after the triage; then the
//! capacity probe's (tests/vm/capacity-guest.sh, asserted by `qemu_lab_capacity`).
//!
//! `DISKTRIAGE_LAB_TRIAGE_RESULTS=FILE` reads a saved guest output (target/lab/qemu-lab-triage-
//! results.log) instead of booting: for working on the assertions.
//!
//! Root only, like the other lab tests. Skipped with the reason when the lab cannot run,
//! failing instead with `DISKTRIAGE_REQUIRE_ROOT=1`.

use crate::{Boot, Results, boot, booted_once};

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

/// Host tools the guest gets: dmsetup builds the dm-delay tables (and the capacity lab's, in
/// the same boot); ioping witnesses the flush lab's write latencies (tests/vm/flush-guest.sh);
/// mdadm makes the array the fitness sections judge an ERC against.
const LAB_TOOLS: [&str; 3] = ["dmsetup", "ioping", "mdadm"];
const MIB: u64 = 1 << 20;
/// QEMU's throttle of DT-VIRTIO-2, the outlier, in MB/s (tests/vm/lab.sh; its siblings 32).
const OUTLIER_MB_PER_S: f64 = 8.0;
/// scsi_debug's unrecoverable sectors (keep in step with tests/vm/triage-guest.sh).
const SD_BAD_LBA: u64 = 524_288;
const SD_BAD_COUNT: u64 = 8192;
/// dtslow's dm-delay segment (tests/vm/triage-guest.sh).
const SLOW_AT: u64 = 80 * MIB;
const SLOW_LEN: u64 = 2 * MIB;
const SLOW_MS: f64 = 400.0;
/// The disks of the guest, by the names triage-guest.sh gives them in its DEVICES section.
const HEALTHY: [&str; 5] = ["sata", "nvme", "scsi", "virtio0", "virtio1"];
const ALL: [&str; 9] = [
    "sata", "nvme", "nvmewarn", "scsi", "virtio0", "virtio1", "virtio2", "sdbg", "dtslow",
];

impl Results {
    /// The JSON document in a section: from its first `{` line to the `rc=` line.
    fn triage_json(&self, name: &str) -> Value {
        let body: String = self
            .text(name)
            .lines()
            .skip_while(|l| !l.starts_with('{'))
            .take_while(|l| !l.starts_with("rc="))
            .collect::<Vec<_>>()
            .join("\n");
        serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("section {name:?} is not JSON ({e}):\n{}", self.text(name)))
    }

    /// The guest's wall time of the step in a section (`wall=S`).
    fn wall(&self, name: &str) -> f64 {
        self.text(name)
            .lines()
            .find_map(|l| l.strip_prefix("wall="))
            .unwrap_or_else(|| panic!("no wall= in {name:?}"))
            .trim()
            .parse()
            .unwrap()
    }

    /// The lab's disks: name in the guest script -> kernel name.
    fn triage_devices(&self) -> BTreeMap<String, String> {
        let line = self.text("DEVICES").lines().next().unwrap_or_default();
        let devices: BTreeMap<String, String> = line
            .split_whitespace()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        for name in ALL {
            assert!(
                devices.get(name).is_some_and(|d| !d.is_empty()),
                "the guest did not find {name}: {line}"
            );
        }
        devices
    }

    /// The `/sys/block/X/stat` lines of a section (`stat NAME f0 f1 ...`).
    fn triage_stats(&self, name: &str) -> BTreeMap<String, Vec<u64>> {
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
}

/// The lab's triage of every disk: the guest output, the JSON, and the kernel names.
struct Lab {
    results: &'static Results,
    doc: Value,
    devices: BTreeMap<String, String>,
}

impl Lab {
    /// The report of the disk the guest script calls `name`.
    fn disk(&self, name: &str) -> &Value {
        let device = &self.devices[name];
        self.doc["disks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["device"] == device.as_str())
            .unwrap_or_else(|| panic!("{name} ({device}) not in the triage:\n{:#}", self.doc))
    }
}

/// The guest output of the triage's boot, booted once for the whole test binary: the flush
/// lab (`qemu_lab_flush`, tests/vm/flush-guest.sh) runs in the same boot, after the triage,
/// and the capacity lab (`qemu_lab_capacity`, tests/vm/capacity-guest.sh) after it.
pub(crate) fn triage_boot() -> &'static Results {
    static BOOT: OnceLock<Result<Results, String>> = OnceLock::new();
    booted_once(&BOOT, || {
        match std::env::var_os("DISKTRIAGE_LAB_TRIAGE_RESULTS") {
            Some(saved) => Results::parse(&std::fs::read_to_string(saved).unwrap()),
            None => {
                let work = tempfile::Builder::new()
                    .prefix("disktriage-lab-triage.")
                    .tempdir()
                    .unwrap();
                run_lab(work.path())
            }
        }
    })
}

fn shared_lab() -> &'static Lab {
    static LAB: OnceLock<Result<Lab, String>> = OnceLock::new();
    booted_once(&LAB, || {
        let results = triage_boot();
        let doc = results.triage_json("TRIAGE-ALL");
        let devices = results.triage_devices();
        Lab {
            results,
            doc,
            devices,
        }
    })
}

fn run_lab(work: &Path) -> Results {
    boot(
        work,
        &Boot {
            script: "triage-guest.sh",
            diskset: "triage",
            label: "-triage",
            tools: &LAB_TOOLS,
            prepare: None,
            // The triage, then the flush lab (about two minutes more) and the capacity lab
            // (about six more).
            timeout_s: 1500,
        },
    )
}

/// Lab prerequisites: root, the packages `lab.sh check` wants, and the guest's tools.
pub(crate) fn lab_or_skip(test: &str) -> bool {
    crate::lab_or_skip(test, Some("DISKTRIAGE_LAB_TRIAGE_RESULTS"), &LAB_TOOLS)
}

fn findings(disk: &Value) -> &Vec<Value> {
    disk["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings list: {disk:#}"))
}

/// The disk's finding of the rule `id`, which must have given the disk its verdict.
fn finding<'a>(disk: &'a Value, id: &str) -> &'a Value {
    let found = findings(disk)
        .iter()
        .find(|f| f["rule"] == id)
        .unwrap_or_else(|| panic!("no {id} finding: {disk:#}"));
    assert_eq!(found["severity"], disk["verdict"], "{disk:#}");
    found
}

/// The exit status of a verdict, as the contract sets it.
fn exit_status(verdict: &str) -> i64 {
    match verdict {
        "healthy" => 0,
        "suspect" => 3,
        "failing" => 4,
        "unknown" => 5,
        other => panic!("not a verdict: {other:?}"),
    }
}

/// The whole numbers written in a text ("LBA 40960-40963" -> 40960, 40963).
fn numbers_in(text: &str) -> Vec<u64> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .filter_map(|w| w.parse().ok())
        .collect()
}

#[test]
fn qemu_lab_triage_the_nvme_critical_warning_is_failing_and_named() {
    if !lab_or_skip("qemu_lab_triage_the_nvme_critical_warning_is_failing_and_named") {
        return;
    }
    let lab = shared_lab();
    let disk = lab.disk("nvmewarn");
    assert_eq!(disk["verdict"], "failing", "{disk:#}");
    assert_eq!(disk["smart"]["critical_warning"], 4, "{disk:#}");
    assert_eq!(disk["identity"]["serial"], "DT-NVME-WARN", "{disk:#}");
    // Bit 2 of the critical warning: the NVM subsystem's reliability is degraded.
    let warning = finding(disk, "nvme-critical-warning");
    let sentence = warning["sentence"].as_str().unwrap().to_lowercase();
    assert!(
        sentence.contains("reliability") && sentence.contains("degraded"),
        "the sentence does not name the warning: {warning:#}"
    );
    assert_eq!(warning["value"], 4.0, "{warning:#}");
}

#[test]
fn qemu_lab_triage_medium_errors_are_found_and_their_lbas_named() {
    if !lab_or_skip("qemu_lab_triage_medium_errors_are_found_and_their_lbas_named") {
        return;
    }
    let lab = shared_lab();
    let disk = lab.disk("sdbg");
    let verdict = disk["verdict"].as_str().unwrap();
    assert!(
        verdict == "failing" || verdict == "suspect",
        "scsi_debug with medium errors: {disk:#}"
    );
    let surface = &disk["measurements"]["surface"];
    let read_sectors = surface["read_bytes"].as_u64().unwrap() / 512;
    let unreadable: Vec<u64> = surface["unreadable"]
        .as_array()
        .unwrap_or_else(|| panic!("no surface sample: {disk:#}"))
        .iter()
        .map(|u| u["lba"].as_u64().unwrap())
        .collect();
    assert!(
        !unreadable.is_empty(),
        "the sample missed the bad sectors: {disk:#}"
    );
    // Every unreadable sample is a read that touches the bad sectors, and only those.
    let bad = SD_BAD_LBA..SD_BAD_LBA + SD_BAD_COUNT;
    for lba in &unreadable {
        assert!(
            *lba < bad.end && lba + read_sectors > bad.start,
            "LBA {lba} (a {read_sectors}-sector read) is not in the bad sectors {bad:?}: {disk:#}"
        );
    }
    // The finding names them: a number in its sentence is an unreadable sample's LBA.
    let found = finding(disk, "surface-unreadable");
    let named: Vec<u64> = numbers_in(found["sentence"].as_str().unwrap())
        .into_iter()
        .filter(|n| unreadable.contains(n))
        .collect();
    assert!(!named.is_empty(), "the LBAs are not named: {found:#}");
}

#[test]
fn qemu_lab_triage_a_slow_region_makes_its_disk_suspect() {
    if !lab_or_skip("qemu_lab_triage_a_slow_region_makes_its_disk_suspect") {
        return;
    }
    let lab = shared_lab();
    let r = &lab.results;
    let alone = r.triage_json("TRIAGE-SLOW");
    for disk in [lab.disk("dtslow"), &alone["disks"][0]] {
        assert_eq!(disk["device"], lab.devices["dtslow"].as_str(), "{disk:#}");
        assert_eq!(disk["verdict"], "suspect", "{disk:#}");
        let surface = &disk["measurements"]["surface"];
        assert_eq!(surface["unreadable"], serde_json::json!([]), "{disk:#}");
        let read_bytes = surface["read_bytes"].as_u64().unwrap();
        let slow: Vec<(u64, f64)> = surface["slow"]
            .as_array()
            .unwrap_or_else(|| panic!("no surface sample: {disk:#}"))
            .iter()
            .map(|s| (s["offset"].as_u64().unwrap(), s["ms"].as_f64().unwrap()))
            .collect();
        let in_segment = |offset: u64| offset < SLOW_AT + SLOW_LEN && offset + read_bytes > SLOW_AT;
        // The slowest sample is named by its LBA (512-byte sectors on null_blk), in the segment.
        let found = finding(disk, "surface-slow");
        assert!(
            numbers_in(found["sentence"].as_str().unwrap())
                .iter()
                .any(|n| in_segment(n * 512)),
            "the sentence names no LBA in the segment: {found:#}"
        );
        assert!(
            slow.iter()
                .any(|&(offset, ms)| in_segment(offset) && ms >= SLOW_MS),
            "no slow sample in the dm-delay segment: {disk:#}"
        );
        // The emulator has hiccups, but none as long as dm-delay's.
        for &(offset, ms) in &slow {
            assert!(
                in_segment(offset) || ms < SLOW_MS,
                "a {ms} ms sample at {offset} outside the segment: {disk:#}"
            );
        }
    }
    assert_eq!(r.rc("TRIAGE-SLOW"), 3);
    assert_eq!(alone["exit_status"], 3);
}

#[test]
fn qemu_lab_triage_the_plain_disks_are_healthy() {
    if !lab_or_skip("qemu_lab_triage_the_plain_disks_are_healthy") {
        return;
    }
    let lab = shared_lab();
    // Every plain disk that is not healthy, with what was found, in one message.
    let mut not_healthy = Vec::new();
    for name in HEALTHY {
        let disk = lab.disk(name);
        let seq = disk["measurements"]["seq_read"].as_array().unwrap();
        assert_eq!(seq.len(), 3, "{name}: start, middle, end: {disk:#}");
        if disk["verdict"] != "healthy" || !findings(disk).is_empty() {
            let found: Vec<String> = findings(disk)
                .iter()
                .map(|f| format!("{}: {}", f["rule"], f["sentence"]))
                .collect();
            not_healthy.push(format!("{name} {}: {found:?}", disk["verdict"]));
        }
    }
    assert!(
        not_healthy.is_empty(),
        "plain disks not healthy:\n{}",
        not_healthy.join("\n")
    );
    let sata = lab.disk("sata");
    assert_eq!(sata["identity"]["serial"], "DT-SATA-0");
    assert_eq!(sata["identity"]["rotation_rpm"], 7200, "{sata:#}");
    assert_eq!(sata["smart"]["verdict"], "PASSED", "{sata:#}");
    assert_eq!(lab.disk("nvme")["smart"]["critical_warning"], 0);
    // The healthy ones alone: the table a person reads, exit status 0.
    let r = &lab.results;
    let text = r.text("TRIAGE-HEALTHY");
    assert_eq!(r.rc("TRIAGE-HEALTHY"), 0, "{text}");
    let table: Vec<&str> = text.lines().take_while(|l| !l.starts_with("rc=")).collect();
    for line in &table {
        assert!(line.chars().count() <= 80, "line too wide:\n{line}");
    }
    for name in HEALTHY {
        let device = &lab.devices[name];
        assert!(
            table
                .iter()
                .any(|l| l.contains(device.as_str()) && l.contains("healthy")),
            "{name} ({device}) is not a healthy line:\n{text}"
        );
    }
}

#[test]
fn qemu_lab_triage_the_throttled_virtio_disk_is_the_outlier() {
    if !lab_or_skip("qemu_lab_triage_the_throttled_virtio_disk_is_the_outlier") {
        return;
    }
    let lab = shared_lab();
    let disk = lab.disk("virtio2");
    // The three are equal: same transport, same capacity (virtio has no model).
    for name in ["virtio0", "virtio1", "virtio2"] {
        let identity = &lab.disk(name)["identity"];
        assert_eq!(identity["capacity_bytes"], 256 * MIB, "{name}: {identity}");
        assert_eq!(
            identity["transport"],
            lab.disk("virtio0")["identity"]["transport"]
        );
    }
    assert_eq!(disk["verdict"], "suspect", "{disk:#}");
    let outlier = finding(disk, "outlier-seq-read");
    // Its sequential reads are QEMU's throttle, well below its siblings'.
    let mean = |name: &str| {
        let seq = lab.disk(name)["measurements"]["seq_read"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["mb_per_s"].as_f64().unwrap())
            .collect::<Vec<_>>();
        seq.iter().sum::<f64>() / seq.len() as f64
    };
    let (slow, sibling) = (mean("virtio2"), mean("virtio0").min(mean("virtio1")));
    assert!(
        slow <= OUTLIER_MB_PER_S * 1.5 && slow < 0.8 * sibling,
        "virtio2 {slow} MB/s, its siblings at least {sibling} MB/s: {outlier:#}"
    );
}

#[test]
fn qemu_lab_triage_the_exit_status_is_the_worst_verdict() {
    if !lab_or_skip("qemu_lab_triage_the_exit_status_is_the_worst_verdict") {
        return;
    }
    let lab = shared_lab();
    let doc = &lab.doc;
    assert_eq!(doc["schema"], 1);
    let disks = doc["disks"].as_array().unwrap();
    assert_eq!(disks.len(), ALL.len(), "{doc:#}");
    // Worst first: the verdicts' exit statuses never rise down the list.
    let statuses: Vec<i64> = disks
        .iter()
        .map(|d| exit_status(d["verdict"].as_str().unwrap()))
        .collect();
    assert!(statuses.windows(2).all(|w| w[0] >= w[1]), "{statuses:?}");
    let worst = doc["disks"][0]["verdict"].as_str().unwrap();
    assert_eq!(doc["verdict"], worst);
    assert_eq!(doc["exit_status"], exit_status(worst));
    assert_eq!(i64::from(lab.results.rc("TRIAGE-ALL")), exit_status(worst));
    // With a failing disk (and nothing unknown), that is 4.
    assert_eq!(lab.results.rc("TRIAGE-ALL"), 4, "{doc:#}");
    // The other runs: their status is the worst verdict they report (the table's title line
    // says it: "Triage of 5 disks on HOST: healthy (took ...)").
    let title = lab
        .results
        .text("TRIAGE-HEALTHY")
        .lines()
        .find(|l| l.starts_with("Triage of "))
        .unwrap_or_else(|| panic!("no title line:\n{}", lab.results.text("TRIAGE-HEALTHY")));
    let worst = title
        .rsplit_once("): ")
        .and_then(|(_, v)| v.split_whitespace().next())
        .unwrap_or_else(|| panic!("no verdict in {title:?}"));
    assert_eq!(
        i64::from(lab.results.rc("TRIAGE-HEALTHY")),
        exit_status(worst),
        "{title}"
    );
    let alone = lab.results.triage_json("TRIAGE-SLOW");
    let worst = alone["verdict"].as_str().unwrap();
    assert_eq!(i64::from(lab.results.rc("TRIAGE-SLOW")), exit_status(worst));
    assert_eq!(alone["exit_status"], exit_status(worst));
}

#[test]
fn qemu_lab_triage_of_every_lab_disk_ends_within_its_bound_and_writes_nothing() {
    if !lab_or_skip("qemu_lab_triage_of_every_lab_disk_ends_within_its_bound_and_writes_nothing") {
        return;
    }
    let lab = shared_lab();
    let (doc, r) = (&lab.doc, &lab.results);
    let bound = doc["bound_seconds"].as_f64().unwrap();
    let seconds = doc["seconds"].as_f64().unwrap();
    let wall = r.wall("TRIAGE-ALL");
    eprintln!(
        "the triage of the lab's {} disks: {wall:.1} s wall ({seconds:.1} s in the report, \
         bound {bound} s)",
        ALL.len()
    );
    assert_eq!(bound, 60.0, "the default bound");
    assert!(
        seconds <= bound,
        "{seconds} s in the report, bound {bound} s"
    );
    assert!(wall <= bound, "{wall} s wall, bound {bound} s");
    for disk in doc["disks"].as_array().unwrap() {
        assert!(disk["seconds"].as_f64().unwrap() <= bound, "{disk:#}");
    }
    // Read-only: no write reached any disk (SG_IO reads are not counted, writes would be).
    const WRITES: usize = 4;
    const SECTORS_WRITTEN: usize = 6;
    let (before, after) = (
        r.triage_stats("STATS-BEFORE"),
        r.triage_stats("STATS-AFTER"),
    );
    assert_eq!(before.len(), ALL.len());
    for (dev, b) in &before {
        let a = &after[dev];
        assert_eq!(a[WRITES], b[WRITES], "{dev}: writes completed");
        assert_eq!(
            a[SECTORS_WRITTEN], b[SECTORS_WRITTEN],
            "{dev}: sectors written"
        );
    }
}

#[test]
fn qemu_lab_triage_device_nodes_without_udev_are_the_devices_of_their_numbers() {
    if !lab_or_skip("qemu_lab_triage_device_nodes_without_udev_are_the_devices_of_their_numbers") {
        return;
    }
    let lab = shared_lab();
    let r = &lab.results;
    let nodes = r.text("NAMES-NODES");
    // No udev in the lab: dmsetup made a device node, not a link.
    assert!(
        nodes
            .lines()
            .any(|l| l.starts_with('b') && l.contains("/dev/mapper/dtslow")),
        "{nodes}"
    );
    assert_eq!(
        nodes.matches("sched-rc=0").count(),
        2,
        "sched by node:\n{nodes}"
    );
    assert!(nodes.contains(lab.devices["dtslow"].as_str()), "{nodes}");
    assert!(nodes.contains(lab.devices["sata"].as_str()), "{nodes}");
    let doc = r.triage_json("NAMES-TRIAGE");
    let mut named: Vec<&str> = doc["disks"]
        .as_array()
        .unwrap_or_else(|| panic!("{doc:#}"))
        .iter()
        .map(|d| d["device"].as_str().unwrap())
        .collect();
    named.sort_unstable();
    let mut want = vec![lab.devices["dtslow"].as_str(), lab.devices["sata"].as_str()];
    want.sort_unstable();
    assert_eq!(named, want, "{doc:#}");
}

/// The disk of a triage's JSON by kernel name.
fn disk_named<'a>(doc: &'a Value, device: &str) -> &'a Value {
    doc["disks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["device"] == device)
        .unwrap_or_else(|| panic!("{device} not in the triage:\n{doc:#}"))
}

#[test]
fn qemu_lab_triage_fitness_erc_against_the_kernels_timeout_and_a_zoned_disk() {
    if !lab_or_skip("qemu_lab_triage_fitness_erc_against_the_kernels_timeout_and_a_zoned_disk") {
        return;
    }
    let lab = shared_lab();
    // mdadm's status is 1: md refuses the null_blk member (ADD_NEW_DISK: Invalid argument)
    // and md9 runs degraded on the SATA disk alone, which is what is judged: its holder.
    let setup = lab.results.text("FITNESS-SETUP");
    let word = |key: &str| {
        setup
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in {setup}"))
            .to_string()
    };
    let zoned = word("zoned=");
    assert_eq!(word("queue/zoned="), "host-managed", "{setup}");
    assert_eq!(word("nr_zones="), "4", "{setup}");
    assert_eq!(word("holders="), "md9", "{setup}");
    let sata = &lab.devices["sata"];

    // At the kernel's 30 s: QEMU's IDE disk has no SCT (IDENTIFY word 206 is 0), so the
    // array member may retry longer than the kernel waits.
    let doc = lab.results.triage_json("FITNESS-30");
    let disk = disk_named(&doc, sata);
    let erc = finding(disk, "erc-longer-than-timeout");
    assert_eq!(
        erc["sentence"],
        "the drive has no SCT Error Recovery Control: it may retry a sector for minutes, the \
         kernel waits 30 s: md may fail it out of md9 at a bad sector instead of rewriting the \
         sector",
        "{disk:#}"
    );
    assert!(
        erc["next_step"]
            .as_str()
            .unwrap()
            .contains(&format!("/sys/block/{sata}/device/timeout")),
        "{erc:#}"
    );
    assert_eq!(erc["threshold"], 30.0, "{erc:#}");
    assert_eq!(disk["fitness"]["erc"]["state"], "not-supported", "{disk:#}");
    assert_eq!(disk["fitness"]["timeout_s"], 30, "{disk:#}");
    assert_eq!(
        disk["fitness"]["arrays"],
        serde_json::json!(["md9"]),
        "{disk:#}"
    );
    // QEMU's IDE disk claims TRIM (IDENTIFY word 169) at 7,200 rpm: the hint of drive-managed
    // SMR fires on it, as it would on a real disk that said the same.
    let smr = finding(disk, "smr-in-array");
    assert!(
        smr["sentence"].as_str().unwrap().starts_with(
            "most likely a drive-managed shingled (SMR) disk (it rotates and supports TRIM), in md9"
        ),
        "{smr:#}"
    );
    // The zoned null_blk is in no array: a note, not a finding.
    let z = disk_named(&doc, &zoned);
    assert!(
        findings(z).iter().all(|f| f["rule"] != "smr-in-array"),
        "{z:#}"
    );
    assert!(
        z["notes"].to_string().contains(
            "a zoned disk (host-managed, 4 zones, as the kernel says): unfit for a RAID array"
        ),
        "{z:#}"
    );

    // At 180 s the kernel outwaits the drive: no ERC finding (the SMR one stays).
    let doc = lab.results.triage_json("FITNESS-180");
    let disk = disk_named(&doc, sata);
    assert_eq!(disk["fitness"]["timeout_s"], 180, "{disk:#}");
    assert!(
        findings(disk)
            .iter()
            .all(|f| f["rule"] != "erc-longer-than-timeout"),
        "{disk:#}"
    );
    // Everything put back: the timeout, no holder.
    let down = lab.results.text("FITNESS-TEARDOWN");
    assert!(down.contains("mdadm rc=0"), "{down}");
    assert!(
        down.contains("timeout=30 holders=\n") || down.trim_end().ends_with("timeout=30 holders="),
        "{down}"
    );
}
