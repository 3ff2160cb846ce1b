//! Zoned disks (issue 38) in a boot of their own (tests/vm/zoned-guest.sh, disk set `zoned`):
//! scsi_debug `zbc=host-managed` and null_blk `zoned=1`, each 64 MiB in zones of 4 MiB, and
//! QEMU's SATA disk, which claims TRIM at 7,200 rpm.
//!
//! Each zoned device is witnessed first with shell tools: the kernel's zone attributes, a
//! sequential read, and a 4 KiB write ahead of a zone's write pointer, which the device must
//! reject (else the lab is not what it is built as). Then what disktriage says of them: the
//! device list (text and JSON) names the zone model with its zones, the SATA disk the SMR
//! hint; the triage's fitness has the kernel's zones and a note, and its surface read finds
//! nothing unreadable; a random and a sequential write test are refused up front with the
//! sentence, and nothing on the device changes (its sha256); a read test and a scan run.
//!
//! Run as root: `cargo test --test lab zoned -- --nocapture` (one boot). The guest's output
//! is kept in target/lab/qemu-lab-zoned-*.log; `DISKTRIAGE_LAB_ZONED_RESULTS=FILE` replays a
//! saved one without booting.

use std::sync::OnceLock;

use serde_json::Value;

use crate::{Boot, Results, boot, booted_once, lab_or_skip};

const REPLAY: &str = "DISKTRIAGE_LAB_ZONED_RESULTS";

fn results() -> &'static Results {
    static LAB: OnceLock<Result<Results, String>> = OnceLock::new();
    booted_once(&LAB, || match std::env::var_os(REPLAY) {
        Some(saved) => Results::parse(&std::fs::read_to_string(saved).unwrap()),
        None => {
            let work = tempfile::Builder::new()
                .prefix("disktriage-lab-zoned.")
                .tempdir()
                .unwrap();
            boot(
                work.path(),
                &Boot {
                    script: "zoned-guest.sh",
                    diskset: "zoned",
                    label: "-zoned",
                    tools: &[],
                    prepare: None,
                    timeout_s: 900,
                },
            )
        }
    })
}

/// The value of `key=` on the first line that has it in section `name`.
fn field<'a>(r: &'a Results, name: &str, key: &str) -> &'a str {
    let text = r.text(name);
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {name}:\n{text}"))
}

/// The kernel names of the three devices, as the guest found them.
fn devices(r: &Results) -> [String; 3] {
    ["sdbg", "nullb", "sata"].map(|k| field(r, "ZONED-SETUP", k).to_string())
}

#[test]
fn qemu_lab_zoned_devices_behave_as_built() {
    if !lab_or_skip("qemu_lab_zoned_witness", Some(REPLAY), &[]) {
        return;
    }
    let r = results();
    for case in ["sdbg", "nullb"] {
        let name = format!("ZONED-WITNESS-{case}");
        println!("{case}: {}", r.text(&name).trim());
        assert_eq!(field(r, &name, "zoned"), "host-managed", "{case}");
        assert_eq!(field(r, &name, "nr_zones"), "16", "{case}");
        assert_eq!(field(r, &name, "chunk_sectors"), "8192", "{case}");
        assert_eq!(field(r, &name, "read"), "ok", "{case}");
        assert_eq!(field(r, &name, "random-write"), "rejected", "{case}");
    }
}

#[test]
fn qemu_lab_zoned_the_device_list_names_the_zone_model() {
    if !lab_or_skip("qemu_lab_zoned_list", Some(REPLAY), &[]) {
        return;
    }
    let r = results();
    let [sdbg, nullb, sata] = devices(r);
    let list = r.text("ZONED-LIST");
    println!("{list}");
    assert_eq!(r.rc("ZONED-LIST"), 0, "{list}");
    for dev in [&sdbg, &nullb] {
        let line = format!("{dev}: zoned: host-managed, 16 zones of 4 MiB");
        assert!(list.lines().any(|l| l == line), "{line:?} in\n{list}");
    }
    let hint = format!("{sata}: SMR suspected: TRIM on a rotating disk (a hint, not proof)");
    assert!(list.lines().any(|l| l == hint), "{hint:?} in\n{list}");

    let json = r.json("ZONED-LIST-JSON");
    let zoning = |dev: &str| -> Value {
        json["devices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == dev)
            .unwrap_or_else(|| panic!("{dev} not in {json:#}"))["zoning"]
            .clone()
    };
    for dev in [&sdbg, &nullb] {
        let z = zoning(dev);
        assert_eq!(z["kernel"], "host-managed", "{dev}: {z:#}");
        assert_eq!(z["nr_zones"], 16, "{dev}: {z:#}");
        assert_eq!(z["zone_bytes"], 4 << 20, "{dev}: {z:#}");
    }
    let z = zoning(&sata);
    assert_eq!(z["kernel"], Value::Null, "{z:#}");
    assert_eq!(z["trim_rotating"], true, "{z:#}");
}

#[test]
fn qemu_lab_zoned_triage_reads_them_and_notes_the_zones() {
    if !lab_or_skip("qemu_lab_zoned_triage", Some(REPLAY), &[]) {
        return;
    }
    let r = results();
    let [sdbg, nullb, sata] = devices(r);
    let json = r.json("ZONED-TRIAGE");
    let disk = |dev: &str| -> Value {
        json["disks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["device"] == dev)
            .unwrap_or_else(|| panic!("{dev} not in {json:#}"))
            .clone()
    };
    for dev in [&sdbg, &nullb] {
        let d = disk(dev);
        println!(
            "{dev}: {} {} notes {}",
            d["verdict"], d["fitness"], d["notes"]
        );
        assert_eq!(d["fitness"]["kernel_zoned"], "host-managed", "{d:#}");
        assert_eq!(d["fitness"]["nr_zones"], 16, "{d:#}");
        assert!(
            d["notes"].as_array().unwrap().iter().any(|n| n
                .as_str()
                .unwrap()
                .starts_with("a zoned disk (host-managed, 16 zones, as the kernel says)")),
            "{d:#}"
        );
        // Reading a host-managed disk is fine: no sample unreadable.
        assert_eq!(
            d["measurements"]["surface"]["unreadable"],
            serde_json::json!([]),
            "{d:#}"
        );
        assert_ne!(d["verdict"], "failing", "{d:#}");
    }
    let d = disk(&sata);
    println!("{sata}: {} notes {}", d["verdict"], d["notes"]);
    assert!(
        d["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("it rotates and supports TRIM")),
        "{d:#}"
    );
}

#[test]
fn qemu_lab_zoned_write_tests_are_refused_up_front_and_reads_run() {
    if !lab_or_skip("qemu_lab_zoned_run", Some(REPLAY), &[]) {
        return;
    }
    let r = results();
    let [sdbg, nullb, _] = devices(r);
    for (case, dev) in [("sdbg", &sdbg), ("nullb", &nullb)] {
        let before = field(r, &format!("ZONED-WITNESS-{case}"), "sum");
        for t in ["rand-write", "seq-write"] {
            let name = format!("ZONED-RUN-{t}-{case}");
            let text = r.text(&name);
            println!("{name}: {}", text.trim());
            assert_eq!(r.rc(&name), 1, "{text}");
            assert!(
                text.contains(&format!(
                    "refusing to write to {dev}: it is a host-managed zoned device \
                     (host-managed, 16 zones of 4 MiB)"
                )),
                "{text}"
            );
            assert_eq!(field(r, &name, "sum"), before, "{name}: the device changed");
        }
        let read = format!("ZONED-READ-{case}");
        assert_eq!(r.rc(&read), 0, "{}", r.text(&read));
        let scan = format!("ZONED-SCAN-{case}");
        let s = r.json(&scan);
        println!("{scan}: rc {} errors {}", r.rc(&scan), s["errors"]);
        assert_eq!(r.rc(&scan), 0, "{}", r.text(&scan));
        assert_eq!(s["errors"], serde_json::json!([]), "{s:#}");
    }
}
