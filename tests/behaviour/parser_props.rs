//! Property-based robustness tests for every parser of outside bytes (see `tests/props/`):
//! a short run of each property in the normal `cargo test`. The long run is
//! `cargo bench --bench parser_props` (same properties, a million cases or more).

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::props;

/// Cases per property in the normal test run: enough to catch a regression in the shapes
/// the generators make, small enough to keep this file's run to seconds in debug builds.
const CASES: u32 = 128;

fn check(name: &str) {
    let property = props::ALL
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no property {name:?}"));
    let cases = (CASES / property.cost).max(8);
    if let Err(report) = (property.check)(cases) {
        panic!("{}: {report}", property.name);
    }
}

#[test]
fn every_property_has_a_test() {
    let tested = [
        "unescape_octal",
        "neutralize_controls",
        "clean_text",
        "parse_mountinfo",
        "parse_swaps",
        "sysfs values (flag, number, dev, stat, inflight, scheduler, write_cache)",
        "parse_stat_start_time",
        "parse_vpd_serial",
        "sysfs reader (read_device, inventory)",
        "ATA IDENTIFY",
        "ATA SMART data + thresholds + verdict",
        "SCSI sense + ATA/SCSI outcome",
        "SCSI caching mode page",
        "NVMe Identify Controller",
        "NVMe SMART/Health log + verdict",
        "smartctl JSON + verdict",
        "ATA SMART logs (error, self-test, extended) + status byte",
        "NVMe Error Information + Device Self-test logs",
        "smartctl JSON logs",
        "smartctl text + logs + verdict",
        "drive cache vs kernel flush policy",
    ];
    let all: Vec<&str> = props::ALL.iter().map(|p| p.name).collect();
    assert_eq!(all, tested);
}

#[test]
fn unescape_octal() {
    check("unescape_octal");
}

#[test]
fn neutralize_controls() {
    check("neutralize_controls");
}

#[test]
fn clean_text() {
    check("clean_text");
}

#[test]
fn mountinfo() {
    check("parse_mountinfo");
}

#[test]
fn swaps() {
    check("parse_swaps");
}

#[test]
fn sysfs_values() {
    check("sysfs values (flag, number, dev, stat, inflight, scheduler, write_cache)");
}

#[test]
fn stat_start_time() {
    check("parse_stat_start_time");
}

#[test]
fn vpd_serial() {
    check("parse_vpd_serial");
}

#[test]
fn sysfs_reader() {
    check("sysfs reader (read_device, inventory)");
}

#[test]
fn ata_identify() {
    check("ATA IDENTIFY");
}

#[test]
fn ata_smart() {
    check("ATA SMART data + thresholds + verdict");
}

#[test]
fn sense() {
    check("SCSI sense + ATA/SCSI outcome");
}

#[test]
fn caching_page() {
    check("SCSI caching mode page");
}

#[test]
fn nvme_identify() {
    check("NVMe Identify Controller");
}

#[test]
fn nvme_health() {
    check("NVMe SMART/Health log + verdict");
}

#[test]
fn smartctl_json() {
    check("smartctl JSON + verdict");
}

#[test]
fn cache_status() {
    check("drive cache vs kernel flush policy");
}

#[test]
fn ata_logs() {
    check("ATA SMART logs (error, self-test, extended) + status byte");
}

#[test]
fn nvme_logs() {
    check("NVMe Error Information + Device Self-test logs");
}

#[test]
fn smartctl_logs() {
    check("smartctl JSON logs");
}

#[test]
fn smartctl_text() {
    check("smartctl text + logs + verdict");
}
