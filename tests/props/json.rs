//! Properties of the `smartctl -j` parser, fed with smartctl's own output for the QEMU lab's
//! drives mutated node by node: values of the wrong type, missing and extra keys, huge arrays,
//! numbers beyond every integer type, control characters in strings; then, sometimes, broken
//! as text (cut, flipped bytes, deep nesting).

use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::{Map, Value};

use disktriage::model::{LogRead, SelfTestOutcome};
use disktriage::model::{SmartReading, Transport, Verdict};
use disktriage::smart;
use disktriage::smart::{parse_smartctl_json, parse_smartctl_logs};

use super::strategies::{apply, fixture, hostile_text, mutation};
use super::{Outcome, accepted, display_safe, expect_accepted, plausible_celsius, run};

/// A string value that is replaced by its content as a raw JSON token after serialization:
/// numbers no Rust integer holds, exponents, negative zero.
const RAW: &str = "\u{1}RAW:";

/// Keys smartctl uses (so that mutations hit what the parser reads) and a few others.
const KEYS: &[&str] = &[
    "json_format_version",
    "smartctl",
    "version",
    "exit_status",
    "messages",
    "string",
    "device",
    "protocol",
    "smart_support",
    "available",
    "smart_status",
    "passed",
    "scsi",
    "ie_string",
    "temperature",
    "current",
    "power_on_time",
    "hours",
    "ata_smart_attributes",
    "table",
    "id",
    "name",
    "value",
    "worst",
    "thresh",
    "when_failed",
    "flags",
    "prefailure",
    "raw",
    "nvme_smart_health_information_log",
    "critical_warning",
    "available_spare",
    "percentage_used",
    "media_errors",
    "warning_temp_time",
    "scsi_grown_defect_list",
    "ata_smart_data",
    "self_test",
    "status",
    "polling_minutes",
    "ata_smart_error_log",
    "summary",
    "extended",
    "count",
    "error_number",
    "lifetime_hours",
    "error_description",
    "ata_smart_self_test_log",
    "standard",
    "type",
    "scsi_self_test_0",
    "scsi_error_counter_log",
    "read",
    "total_uncorrected_errors",
    "x",
];

fn leaf() -> BoxedStrategy<Value> {
    let raw_numbers = prop::sample::select(vec![
        "1e999",
        "-1e999",
        "18446744073709551616",
        "-9223372036854775809",
        "340282366920938463463374607431768211456",
        "0.5",
        "-0",
        "1E2",
        "-1",
        "256",
        "65536",
        "9223372036854775807",
        "-9223372036854775808",
        "4294967296",
    ]);
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop::sample::select(vec![
            0i64,
            1,
            -1,
            255,
            256,
            -273,
            65535,
            65536,
            i64::MAX,
            i64::MIN
        ])
        .prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        hostile_text(20).prop_map(Value::String),
        prop::sample::select(vec!["now", "past", "", "-", "nvme", "ata", "scsi"])
            .prop_map(|s| Value::String(s.into())),
        raw_numbers.prop_map(|n| Value::String(format!("{RAW}{n}"))),
    ]
    .boxed()
}

fn value() -> BoxedStrategy<Value> {
    leaf()
        .prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                vec(inner.clone(), 0..6).prop_map(Value::Array),
                vec((prop::sample::select(KEYS), inner), 0..6).prop_map(|kv| {
                    Value::Object(
                        kv.into_iter()
                            .map(|(k, v)| ((*k).to_string(), v))
                            .collect::<Map<_, _>>(),
                    )
                }),
            ]
        })
        .boxed()
}

/// One edit of a JSON tree, at the node numbered `at` in pre-order (modulo the node count).
#[derive(Debug, Clone)]
enum Edit {
    Replace {
        at: usize,
        with: Value,
    },
    Delete {
        at: usize,
    },
    AddKey {
        at: usize,
        key: &'static str,
        with: Value,
    },
    /// Repeats an array's elements (or wraps a value in an array) up to `times` elements.
    Grow {
        at: usize,
        times: usize,
    },
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), value()).prop_map(|(at, with)| Edit::Replace { at, with }),
        2 => any::<usize>().prop_map(|at| Edit::Delete { at }),
        2 => (any::<usize>(), prop::sample::select(KEYS), value())
            .prop_map(|(at, key, with)| Edit::AddKey { at, key, with }),
        1 => (any::<usize>(), prop_oneof![1usize..64, Just(20_000usize)])
            .prop_map(|(at, times)| Edit::Grow { at, times }),
    ]
}

fn count(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(count).sum(),
        Value::Object(o) => o.values().map(count).sum(),
        _ => 0,
    }
}

/// Applies `f` to the node numbered `target` (pre-order) and to its parent's entry when the
/// edit removes it. Returns true when the node was found.
fn visit(v: &mut Value, target: &mut usize, edit: &Edit) -> bool {
    if *target == 0 {
        match edit {
            Edit::Replace { with, .. } => *v = with.clone(),
            Edit::AddKey { key, with, .. } => match v {
                Value::Object(o) => {
                    o.insert((*key).to_string(), with.clone());
                }
                other => *other = with.clone(),
            },
            Edit::Grow { times, .. } => {
                let items = match v.take() {
                    Value::Array(a) if !a.is_empty() => a,
                    other => vec![other],
                };
                // Bounded: about 200,000 nodes whatever is repeated.
                let size: usize = items.iter().map(count).sum::<usize>().max(1);
                let times = (*times).min(200_000 * items.len() / size).max(1);
                *v = Value::Array(items.iter().cycle().take(times).cloned().collect());
            }
            Edit::Delete { .. } => *v = Value::Null,
        }
        return true;
    }
    *target -= 1;
    match v {
        Value::Array(a) => {
            for i in 0..a.len() {
                if *target == 0 && matches!(edit, Edit::Delete { .. }) {
                    a.remove(i);
                    return true;
                }
                if visit(&mut a[i], target, edit) {
                    return true;
                }
            }
        }
        Value::Object(o) => {
            let keys: Vec<String> = o.keys().cloned().collect();
            for k in keys {
                if *target == 0 && matches!(edit, Edit::Delete { .. }) {
                    o.remove(&k);
                    return true;
                }
                if visit(o.get_mut(&k).unwrap(), target, edit) {
                    return true;
                }
            }
        }
        _ => {}
    }
    false
}

fn at(edit: &Edit) -> usize {
    match edit {
        Edit::Replace { at, .. }
        | Edit::Delete { at }
        | Edit::AddKey { at, .. }
        | Edit::Grow { at, .. } => *at,
    }
}

/// Serializes, then turns the marked strings into raw number tokens.
fn to_text(v: &Value) -> String {
    let text = v.to_string();
    let marker = serde_json::to_string(RAW).unwrap();
    let marker = &marker[..marker.len() - 1]; // the opening quote and the escaped marker
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find(marker) {
        out.push_str(&rest[..i]);
        let after = &rest[i + marker.len()..];
        let end = after.find('"').unwrap_or(after.len());
        out.push_str(&after[..end]);
        rest = &after[(end + 1).min(after.len())..];
    }
    out.push_str(rest);
    out
}

#[derive(Debug, Clone)]
enum Breakage {
    None,
    Bytes(Vec<super::strategies::Mutation>),
    Nest(usize),
}

pub fn smartctl(cases: u32) -> Result<Outcome, String> {
    let docs: Vec<Value> = [
        "smartctl-qemu-sata-0.json",
        "smartctl-qemu-nvme-0.json",
        "smartctl-qemu-nvme-warn.json",
        "smartctl-qemu-scsi-0.json",
        "smartctl-qemu-virtio-0.json",
    ]
    .iter()
    .map(|n| serde_json::from_str(&std::fs::read_to_string(fixture(n)).unwrap()).unwrap())
    .collect();
    let breakage = prop_oneof![
        8 => Just(Breakage::None),
        2 => vec(mutation(), 1..4).prop_map(Breakage::Bytes),
        1 => prop_oneof![1usize..200, Just(100_000usize)].prop_map(Breakage::Nest),
    ];
    let input = (
        prop::sample::select(docs),
        vec(edit(), 0..6),
        breakage,
        prop::option::of(any::<i32>()),
    );
    let outcome = run(cases, input, |(mut doc, edits, breakage, exit)| {
        for e in &edits {
            let mut target = at(e) % count(&doc);
            visit(&mut doc, &mut target, e);
        }
        let text = match &breakage {
            Breakage::None => to_text(&doc),
            Breakage::Bytes(ms) => {
                let mut bytes = to_text(&doc).into_bytes();
                for m in ms {
                    apply(&mut bytes, m);
                }
                String::from_utf8_lossy(&bytes).into_owned()
            }
            Breakage::Nest(depth) => {
                format!(
                    "{}{}{}",
                    "{\"smartctl\":[".repeat(*depth),
                    to_text(&doc),
                    "]}".repeat(*depth)
                )
            }
        };
        let report = match parse_smartctl_json(&text, exit) {
            Ok(r) => r,
            Err(e) => {
                prop_assert!(!e.to_string().is_empty());
                return Ok(());
            }
        };
        accepted();
        for m in &report.messages {
            prop_assert!(display_safe(m), "message {m:?}");
        }
        for s in [&report.protocol, &report.scsi_ie_string, &report.version]
            .into_iter()
            .flatten()
        {
            prop_assert!(display_safe(s), "{s:?}");
        }
        prop_assert!(
            plausible_celsius(report.temperature_c),
            "temperature {:?}",
            report.temperature_c
        );
        if let Some(ata) = &report.ata {
            let rows = doc
                .pointer("/ata_smart_attributes/table")
                .and_then(Value::as_array)
                .map_or(usize::MAX, Vec::len);
            prop_assert!(ata.attributes.len() <= rows);
            for a in &ata.attributes {
                prop_assert!(a.id != 0);
                prop_assert!(a.raw < 1 << 48);
                prop_assert!(display_safe(&a.name), "name {:?}", a.name);
            }
        }
        if let Some(n) = &report.nvme {
            prop_assert!(
                plausible_celsius(n.temperature_c()),
                "{} K",
                n.temperature_kelvin
            );
        }
        let unreadable = report.exit_status & 0x03 != 0;
        let health = smart::assess(
            "sdb",
            Transport::Scsi,
            SmartReading::Smartctl(Box::new(report)),
        );
        super::pages::check_health(&health)?;
        if unreadable {
            prop_assert_eq!(health.verdict, Verdict::Unavailable);
        }
        Ok(())
    });
    expect_accepted(outcome, "smartctl documents")
}

/// The logs in smartctl's JSON (`parse_smartctl_logs`): from the documents with an error log,
/// a self-test log and a self-test state, mutated node by node and as text.
pub fn smartctl_logs(cases: u32) -> Result<Outcome, String> {
    let docs: Vec<Value> = [
        "smartctl-qemu-sata-0-aftertest.json",
        "smartctl-qemu-sata-0.json",
        "smartctl-qemu-scsi-0.json",
    ]
    .iter()
    .map(|n| serde_json::from_str(&std::fs::read_to_string(fixture(n)).unwrap()).unwrap())
    .collect();
    let breakage = prop_oneof![
        8 => Just(Breakage::None),
        2 => vec(mutation(), 1..4).prop_map(Breakage::Bytes),
    ];
    let input = (
        prop::sample::select(docs),
        vec(edit(), 0..6),
        breakage,
        prop::option::weighted(0.3, hostile_text(16)),
    );
    let outcome = run(cases, input, |(mut doc, edits, breakage, poison)| {
        // Every string a terminal could be driven by, at once: the log texts included.
        if let Some(p) = &poison {
            poison_strings(&mut doc, &format!("{p}\u{1b}[2J"));
        }
        for e in &edits {
            let mut target = at(e) % count(&doc);
            visit(&mut doc, &mut target, e);
        }
        let text = match &breakage {
            Breakage::Bytes(ms) => {
                let mut bytes = to_text(&doc).into_bytes();
                for m in ms {
                    apply(&mut bytes, m);
                }
                String::from_utf8_lossy(&bytes).into_owned()
            }
            _ => to_text(&doc),
        };
        let logs = match parse_smartctl_logs(&text, "sda", Transport::Sata) {
            Ok(l) => l,
            Err(e) => {
                prop_assert!(!e.to_string().is_empty());
                return Ok(());
            }
        };
        accepted();
        super::pages::check_logs(&logs)?;
        // disktriage never claims it can start a self-test through smartctl.
        prop_assert!(!logs.self_test.supported);
        if let LogRead::Read(l) = &logs.self_test_log {
            for e in &l.entries {
                prop_assert!(e.first_failing_lba.is_none() || e.outcome == SelfTestOutcome::Failed);
            }
        }
        Ok(())
    });
    expect_accepted(outcome, "smartctl documents with logs")
}

/// Replaces every string in a document with `with`.
fn poison_strings(v: &mut Value, with: &str) {
    match v {
        Value::String(s) => *s = with.to_string(),
        Value::Array(a) => a.iter_mut().for_each(|x| poison_strings(x, with)),
        Value::Object(o) => o.values_mut().for_each(|x| poison_strings(x, with)),
        _ => {}
    }
}
