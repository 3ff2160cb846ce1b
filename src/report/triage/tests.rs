//! The triage's outputs on a made-up triage of four disks: the table (an insta snapshot), the
//! JSON's field set against the contract's schema, the Prometheus text's shape.

use std::collections::BTreeSet;

use super::*;
use crate::model::{AtaAttribute, AtaSmart, AtaSmartStatus, AttributeState, SmartReading};
use crate::model::{NvmeHealth, Transport};
use crate::scan::Span;
use crate::scan::buckets::{Bucket, BucketCounts};
use crate::triage::{LinkState, SeqPosition, SeqRead, SurfaceSample, Unreadable, judge_all};

fn attribute(id: u8, raw: u64) -> AtaAttribute {
    AtaAttribute {
        id,
        name: crate::smart::ata::attribute_name(id).unwrap_or("?").into(),
        known: true,
        flags: 0,
        prefailure: false,
        value: 100,
        worst: 100,
        threshold: Some(0),
        raw,
        raw_text: None,
        decoded: None,
        state: AttributeState::NoThreshold,
    }
}

fn seq(mb: f64) -> Vec<SeqRead> {
    [SeqPosition::Start, SeqPosition::Middle, SeqPosition::End]
        .into_iter()
        .enumerate()
        .map(|(i, position)| SeqRead {
            position,
            offset: i as u64 * 500_000_000_000,
            bytes: 64 << 20,
            mb_per_s: mb - i as f64 * 10.0,
        })
        .collect()
}

fn sata(device: &str, pending: u64) -> DiskFacts {
    let mut d = DiskFacts::default();
    d.identity.device = device.into();
    d.identity.model = Some("WDC WD40EFRX-68N32N0 with a long name".into());
    d.identity.serial = Some(format!("WD-{device}"));
    d.identity.capacity_bytes = 4_000_787_030_016;
    d.identity.logical_block_size = 512;
    d.identity.transport = Some(Transport::Sata);
    d.identity.rotation_rpm = Some(5400);
    d.smart = Some(crate::smart::assess(
        device,
        Transport::Sata,
        SmartReading::Ata(AtaSmart {
            smart_supported: true,
            smart_enabled: true,
            status: AtaSmartStatus::Good,
            status_note: None,
            attributes: vec![attribute(5, 0), attribute(197, pending), attribute(9, 4660)],
            drive: Default::default(),
            attribute_problem: None,
        }),
    ));
    let mut buckets = BucketCounts::default();
    for _ in 0..3990 {
        buckets.add(Bucket::Under20);
    }
    d.measurements.surface = Some(SurfaceSample {
        reads: 4000,
        read_bytes: 4096,
        buckets,
        unreadable: if pending > 0 {
            vec![
                // Found by the split inside its sample, and a sample that failed at its start.
                Unreadable {
                    sample: Span::new(512 * 123_450, 4096),
                    at: Span::new(512 * 123_456, 512),
                    errno: 5,
                },
                Unreadable {
                    sample: Span::new(512 * 7_654_321, 4096),
                    at: Span::new(512 * 7_654_321, 512),
                    errno: 5,
                },
            ]
        } else {
            vec![]
        },
        slow: vec![],
        slow_once: 0,
    });
    d.measurements.seq = seq(180.0);
    d.measurements.random_read_p50_ms = Some(12.5);
    d.measurements.random_read_p99_ms = Some(31.0);
    d.measurements.temperature_min_c = Some(31);
    d.measurements.temperature_max_c = Some(34);
    d.seconds = 41.2;
    d
}

fn nvme_disk() -> DiskFacts {
    let mut d = DiskFacts::default();
    d.identity.device = "nvme0n1".into();
    d.identity.model = Some("Samsung \"980\"\nPRO".into());
    d.identity.serial = Some("S5\\X".into());
    d.identity.capacity_bytes = 1_000_204_886_016;
    d.identity.logical_block_size = 512;
    d.identity.transport = Some(Transport::Nvme);
    d.identity.rotation_rpm = Some(0);
    let n = NvmeHealth {
        critical_warning: 0x04,
        critical_warnings: crate::smart::nvme::critical_warning_names(0x04),
        temperature_kelvin: 318,
        available_spare_pct: 100,
        available_spare_threshold_pct: 10,
        percentage_used: 3,
        data_units_read: 0,
        data_units_written: 0,
        host_read_commands: 0,
        host_write_commands: 0,
        controller_busy_minutes: 0,
        power_cycles: 0,
        power_on_hours: 100,
        unsafe_shutdowns: 0,
        media_errors: 2,
        error_log_entries: 0,
        warning_temp_minutes: 0,
        critical_temp_minutes: 0,
        temperature_sensors_kelvin: vec![],
    };
    d.smart = Some(crate::smart::assess(
        "nvme0n1",
        Transport::Nvme,
        SmartReading::Nvme(n),
    ));
    d.link = Some(LinkState {
        kind: "pcie".into(),
        current: "8.0 GT/s PCIe".into(),
        current_rate: Some(8.0),
        best: Some("8.0 GT/s PCIe".into()),
        best_rate: Some(8.0),
        width: Some(4),
        max_width: Some(4),
    });
    d.measurements.seq = seq(2500.0);
    d.seconds = 12.0;
    d
}

fn unreadable_disk() -> DiskFacts {
    let mut d = DiskFacts::default();
    d.identity.device = "vdb".into();
    d.identity.transport = Some(Transport::Virtio);
    d.problems = vec![
        "SMART: not available on virtio".into(),
        "surface: cannot open /dev/vdb: No such device or address".into(),
    ];
    d
}

fn report() -> TriageReport {
    let facts = vec![
        sata("sda", 0),
        unreadable_disk(),
        sata("sdb", 24),
        nvme_disk(),
    ];
    let judgements = judge_all(&facts);
    let disks = facts
        .into_iter()
        .zip(judgements)
        .map(|(facts, judgement)| {
            let changes = if facts.identity.device == "sdb" {
                vec![Change {
                    what: "pending sectors".into(),
                    before: 0.0,
                    after: 24.0,
                    since_unix: 1_795_000_000,
                }]
            } else {
                vec![]
            };
            DiskReport {
                facts,
                judgement,
                changes,
            }
        })
        .collect();
    TriageReport {
        host: Some("web01".into()),
        started_unix: 1_795_600_000,
        seconds: 42.3,
        bound_seconds: 60.0,
        disks,
        of: TriageOf::Disks,
    }
}

#[test]
fn the_table_fits_80_columns_worst_first() {
    let text = render_table(&report(), 80);
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{line:?} is too wide");
    }
    let order: Vec<&str> = text
        .lines()
        .skip(3)
        .take(4)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(order, ["vdb", "nvme0n1", "sdb", "sda"]);
    insta::assert_snapshot!("triage_table_80", text);
    // Narrower than 80 is drawn at 80; wider uses the room.
    assert_eq!(render_table(&report(), 40), text);
    let wide = render_table(&report(), 160);
    assert!(wide.lines().all(|l| l.chars().count() <= 160));
}

#[test]
fn an_empty_triage_says_so() {
    let mut r = report();
    r.disks.clear();
    let text = render_table(&r, 80);
    assert!(text.contains("No disks to triage"), "{text}");
    assert_eq!(r.worst(), TriageVerdict::Healthy);
    assert_eq!(to_json(&r)["exit_status"], 0);
}

#[test]
fn saved_reports_say_what_they_are_and_fit_80_columns() {
    let mut r = report();
    r.of = TriageOf::SavedReports;
    r.host = None;
    for d in &mut r.disks {
        d.facts.identity.device = format!(
            "HDD__Seagate__ST4000DM000-1F2168__{}.txt",
            d.facts.identity.device
        );
        d.changes.clear();
    }
    let text = render_table(&r, 80);
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{line:?} is too wide");
    }
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("Triage of 4 saved smartctl reports: unknown")
    );
    assert!(
        lines
            .next()
            .unwrap()
            .contains("not recorded in the history"),
        "{text}"
    );
    // The file name is cut in the table and whole in the block under it, without /dev/.
    assert!(
        text.contains("\nHDD__Seagate__ST4000DM0~ failing"),
        "{text}"
    );
    assert!(
        text.contains("\nHDD__Seagate__ST4000DM000-1F2168__sdb.txt: failing"),
        "{text}"
    );
    assert!(!text.contains("/dev/HDD"), "{text}");
    r.disks[0].facts.saved_report = Some("reports/web01__sdb.txt".into());
    let v = to_json(&r);
    assert_eq!(v["source"], "saved-reports");
    let paths: Vec<&Value> = v["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["report"])
        .collect();
    assert!(
        paths.contains(&&json!("reports/web01__sdb.txt")),
        "{paths:?}"
    );
    assert_eq!(v["bound_seconds"], Value::Null, "no bound applies");
    assert_eq!(v["host"], Value::Null);
    assert_eq!(to_json(&report())["source"], "disks");
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

fn set(words: &str) -> BTreeSet<String> {
    words.split_whitespace().map(str::to_string).collect()
}

#[test]
fn the_json_has_exactly_the_contracts_fields() {
    let v = to_json(&report());
    assert_eq!(
        keys(&v),
        set("schema source host started seconds bound_seconds verdict exit_status disks")
    );
    assert_eq!(v["schema"], 1);
    assert_eq!(v["host"], "web01");
    assert_eq!(v["started"], "2026-11-25T09:46:40Z");
    assert_eq!(v["verdict"], "unknown");
    assert_eq!(v["exit_status"], 5);
    let disks = v["disks"].as_array().unwrap();
    let order: Vec<&str> = disks
        .iter()
        .map(|d| d["device"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["vdb", "nvme0n1", "sdb", "sda"]);
    for d in disks {
        assert_eq!(
            keys(d),
            set(
                "device report verdict identity findings notes problems smart logs link \
                 fitness measurements changes seconds"
            )
        );
        assert_eq!(
            keys(&d["identity"]),
            set(
                "model serial wwn firmware capacity_bytes logical_block_size transport \
                 rotation_rpm"
            )
        );
        assert_eq!(
            keys(&d["measurements"]),
            set("surface seq_read random_read_qd1 temperature_c")
        );
        assert_eq!(
            keys(&d["fitness"]),
            set(
                "erc drive_zoned trim farm_power_on_hours farm_recording kernel_zoned nr_zones \
                 timeout_s arrays write_cache power_loss_protection"
            )
        );
        for f in d["findings"].as_array().unwrap() {
            assert_eq!(
                keys(f),
                set("rule severity sentence next_step value threshold")
            );
        }
    }
    let sdb = &disks[2];
    assert_eq!(sdb["verdict"], "failing");
    assert_eq!(
        sdb["report"],
        Value::Null,
        "a disk of this host: no saved report"
    );
    assert_eq!(
        keys(&sdb["smart"]),
        set(
            "verdict reallocated_sectors retired_blocks pending_sectors offline_uncorrectable crc_errors \
             reported_uncorrect critical_warning media_errors available_spare \
             available_spare_threshold percentage_used warning_temp_minutes \
             critical_temp_minutes power_on_hours temperature_c"
        )
    );
    assert_eq!(sdb["smart"]["verdict"], "WARNING");
    assert_eq!(sdb["smart"]["pending_sectors"], 24);
    assert_eq!(sdb["smart"]["crc_errors"], Value::Null, "not read: null");
    assert_eq!(
        sdb["smart"]["media_errors"],
        Value::Null,
        "ATA: no NVMe values"
    );
    assert_eq!(sdb["smart"]["power_on_hours"], 4660);
    assert_eq!(sdb["findings"][0]["rule"], "ata-pending-sectors");
    assert_eq!(sdb["findings"][0]["severity"], "failing");
    assert_eq!(sdb["findings"][0]["value"], 24.0);
    let surface = &sdb["measurements"]["surface"];
    assert_eq!(
        keys(surface),
        set("reads read_bytes buckets unreadable slow_once slow")
    );
    assert_eq!(keys(&surface["buckets"][0]), set("label upto_ms blocks"));
    assert_eq!(surface["buckets"][1]["label"], "<20");
    assert_eq!(surface["buckets"][1]["blocks"], 3990);
    assert_eq!(
        surface["unreadable"][0],
        json!({"offset": 512 * 123_456, "lba": 123_456, "sectors": 1, "errno": 5,
               "sample_lba": 123_450})
    );
    assert_eq!(
        keys(&sdb["measurements"]["seq_read"][0]),
        set("position offset bytes mb_per_s")
    );
    assert_eq!(sdb["measurements"]["seq_read"][1]["position"], "middle");
    assert_eq!(
        sdb["measurements"]["random_read_qd1"],
        json!({"p50_ms": 12.5, "p99_ms": 31.0})
    );
    assert_eq!(
        sdb["measurements"]["temperature_c"],
        json!({"min": 31, "max": 34})
    );
    assert_eq!(
        sdb["changes"],
        json!([{"what": "pending sectors", "before": 0.0, "after": 24.0,
                "since": "2026-11-18T11:06:40Z"}])
    );
    assert_eq!(sdb["identity"]["transport"], "sata");
    let nvme = &disks[1];
    assert_eq!(
        keys(&nvme["link"]),
        set("kind current current_rate best best_rate width max_width")
    );
    assert_eq!(nvme["smart"]["critical_warning"], 4);
    assert_eq!(nvme["smart"]["pending_sectors"], Value::Null);
    // The unreadable disk: nothing is null-ed into zeros.
    let vdb = &disks[0];
    assert_eq!(vdb["smart"], Value::Null);
    assert_eq!(vdb["logs"], Value::Null);
    assert_eq!(vdb["link"], Value::Null);
    assert_eq!(vdb["measurements"]["surface"], Value::Null);
    assert_eq!(vdb["measurements"]["random_read_qd1"], Value::Null);
    assert_eq!(vdb["measurements"]["seq_read"], json!([]));
    assert_eq!(vdb["identity"]["model"], Value::Null);
    assert_eq!(vdb["findings"][0]["severity"], "unknown");
}

/// A split stopped before its sector: the JSON's range (`sectors` above 1) and the text's
/// "somewhere in LBA a-b" are the same place.
#[test]
fn a_place_known_only_to_a_range_is_a_range_in_the_json_and_the_text() {
    let mut r = report();
    let sdb = r
        .disks
        .iter_mut()
        .find(|d| d.facts.identity.device == "sdb")
        .unwrap();
    if let Some(s) = sdb.facts.measurements.surface.as_mut() {
        s.unreadable = vec![Unreadable {
            sample: Span::new(512 * 2000, 65536),
            at: Span::new(512 * 2064, 512 * 64),
            errno: 5,
        }];
    }
    sdb.judgement = crate::triage::judge(&sdb.facts, &[]);
    let v = to_json(&r);
    let d = v["disks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["device"] == "sdb")
        .unwrap();
    assert_eq!(
        d["measurements"]["surface"]["unreadable"],
        json!([{"offset": 512 * 2064, "lba": 2064, "sectors": 64, "errno": 5,
                "sample_lba": 2000}])
    );
    let text = render_table(&r, 80);
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("1 of 4000 sampled reads failed: unreadable somewhere in LBA 2064-2127"),
        "{text}"
    );
}

#[test]
fn the_prom_text_has_help_type_and_one_verdict_per_disk() {
    let text = prom_text(&report());
    let mut typed = BTreeSet::new();
    let mut verdicts = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            assert!(rest.split_once(' ').is_some(), "{line}");
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert_eq!(kind, "gauge");
            assert!(typed.insert(name.to_string()), "{name} typed twice");
            continue;
        }
        // name{labels} value, or name value: the value is the last field.
        let (series, value) = line.rsplit_once(' ').unwrap();
        value.parse::<f64>().unwrap_or_else(|_| panic!("{line}"));
        let name = series.split('{').next().unwrap();
        assert!(typed.contains(name), "{name} has no TYPE before it");
        assert!(
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()),
            "{name}"
        );
        if name == "disktriage_verdict" {
            verdicts.push(line.to_string());
        }
    }
    assert_eq!(verdicts.len(), 4, "{verdicts:?}");
    assert!(
        text.contains(
            "disktriage_verdict{device=\"nvme0n1\",model=\"Samsung \\\"980\\\"\\nPRO\",serial=\"S5\\\\X\"} 2\n"
        ),
        "{text}"
    );
    assert!(text.contains("disktriage_verdict{device=\"vdb\",model=\"\",serial=\"\"} 3\n"));
    assert!(text.contains(
        "disktriage_seq_read_bytes_per_second{device=\"sda\",model=\"WDC WD40EFRX-68N32N0 \
         with a long name\",serial=\"WD-sda\",position=\"middle\"} 170000000\n"
    ));
    assert!(text.contains("disktriage_random_read_p99_seconds{device=\"sda\","));
    assert!(text.contains("disktriage_last_triage_timestamp_seconds 1795600000\n"));
    assert!(text.contains("disktriage_triage_duration_seconds 42.3\n"));
    // Absent values leave their series out: vdb has no SMART, no surface.
    for line in text.lines().filter(|l| l.contains("device=\"vdb\"")) {
        assert!(
            line.starts_with("disktriage_verdict") || line.starts_with("disktriage_findings"),
            "{line}"
        );
    }
    // Only NVMe disks have the NVMe series; only ATA the ATA ones.
    assert!(!text.contains("disktriage_smart_media_errors{device=\"sda\""));
    assert!(!text.contains("disktriage_smart_pending_sectors{device=\"nvme0n1\""));
    assert!(text.contains("disktriage_smart_pending_sectors{device=\"sdb\",model=\"WDC WD40EFRX-68N32N0 with a long name\",serial=\"WD-sdb\"} 24\n"));
}

#[test]
fn label_escaping() {
    assert_eq!(escape_label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    assert_eq!(escape_label("plain"), "plain");
}
