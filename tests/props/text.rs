//! Properties of the text parsers in `sys::parse` and the `FromStr` values of `model`:
//! procfs tables, sysfs attribute values and display cleaning.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::TestCaseResult;

use disktriage::model;
use disktriage::model::MountEntry;
use disktriage::model::ParseValueError;
use disktriage::model::{CacheAgreement, CacheStatus, DriveCache};
use disktriage::model::{DevNum, KernelWriteCache, SchedulerSet, Transport};
use disktriage::model::{SwapEntry, SwapKind};
use disktriage::sys;
use disktriage::sys::{classify_holder, classify_transport, dev_node_path};

use super::strategies::{hostile_bytes, hostile_text, kernel_escape, number_text};
use super::{Outcome, display_safe, run};

/// Text with octal escapes, well-formed and not: `\040`, `\7`, `\777`, `\9x`, a lone `\`.
fn escape_soup() -> BoxedStrategy<String> {
    let piece = prop_oneof![
        3 => hostile_text(6),
        2 => "\\\\[0-7]{3}",
        1 => "\\\\[0-9]{0,4}",
        1 => Just("\\".to_string()),
    ];
    vec(piece, 0..12).prop_map(|p| p.concat()).boxed()
}

pub fn unescape_octal(cases: u32) -> Result<Outcome, String> {
    let input = prop_oneof![
        escape_soup(),
        hostile_text(40).prop_map(|t| kernel_escape(&t)),
        any::<String>(),
    ];
    run(cases, (input, hostile_text(40)), |(s, raw)| {
        let out = model::unescape_octal(&s);
        prop_assert!(display_safe(&out), "control character in {out:?}");
        // An escape turns four characters into one; nothing ever grows.
        prop_assert!(out.chars().count() <= s.chars().count());
        if !s.contains('\\') {
            prop_assert_eq!(&out, &model::neutralize_controls(&s));
        }
        // What the kernel escapes comes back, with controls made visible.
        prop_assert_eq!(
            model::unescape_octal(&kernel_escape(&raw)),
            model::neutralize_controls(&raw)
        );
        Ok(())
    })
}

pub fn neutralize_controls(cases: u32) -> Result<Outcome, String> {
    let input = prop_oneof![hostile_text(60), any::<String>()];
    run(cases, input, |s| {
        let out = model::neutralize_controls(&s);
        prop_assert!(display_safe(&out));
        prop_assert_eq!(out.chars().count(), s.chars().count());
        for (a, b) in s.chars().zip(out.chars()) {
            let kept = if a.is_control() { b == '?' } else { a == b };
            prop_assert!(kept, "{:?} became {:?}", a, b);
        }
        prop_assert_eq!(model::neutralize_controls(&out), out);
        Ok(())
    })
}

pub fn clean_text(cases: u32) -> Result<Outcome, String> {
    let pad = prop::sample::select(vec!["", " ", "\n", "\0\0", "   \n", "\t", "\u{3000}"]);
    let input = (pad.clone(), hostile_bytes(80), pad).prop_map(|(a, body, b)| {
        let mut v = a.as_bytes().to_vec();
        v.extend_from_slice(&body);
        v.extend_from_slice(b.as_bytes());
        v
    });
    run(cases, input, |raw| {
        match model::clean_text(&raw) {
            Some(s) => {
                prop_assert!(display_safe(&s), "control character in {s:?}");
                prop_assert!(!s.is_empty());
                prop_assert_eq!(s.trim(), s.as_str(), "not trimmed");
                prop_assert!(s.chars().count() <= raw.len());
                // Cleaning clean text changes nothing.
                let again = model::clean_text(s.as_bytes());
                prop_assert_eq!(again.as_deref(), Some(s.as_str()));
            }
            None => {
                let lossy = String::from_utf8_lossy(&raw);
                prop_assert!(lossy.chars().all(|c| c.is_whitespace() || c == '\0'));
            }
        }
        Ok(())
    })
}

/// One mountinfo line as the kernel writes it, from raw (unescaped) fields.
#[derive(Debug, Clone)]
struct MountLine {
    id: u32,
    parent: u32,
    dev: DevNum,
    root: String,
    mount_point: String,
    options: String,
    optional: Vec<String>,
    fstype: String,
    source: String,
    super_options: String,
}

impl MountLine {
    fn fields(&self) -> Vec<String> {
        let mut f = vec![
            self.id.to_string(),
            self.parent.to_string(),
            self.dev.to_string(),
            kernel_escape(&self.root),
            kernel_escape(&self.mount_point),
            self.options.clone(),
        ];
        f.extend(self.optional.iter().cloned());
        f.push("-".into());
        f.push(kernel_escape(&self.fstype));
        f.push(kernel_escape(&self.source));
        f.push(self.super_options.clone());
        f
    }

    fn expected(&self) -> MountEntry {
        MountEntry {
            dev: Some(self.dev),
            mount_point: model::neutralize_controls(&self.mount_point),
            fstype: model::neutralize_controls(&self.fstype),
            source: model::neutralize_controls(&self.source),
        }
    }
}

fn devnum() -> impl Strategy<Value = DevNum> {
    (any::<u32>(), any::<u32>()).prop_map(|(major, minor)| DevNum { major, minor })
}

fn mount_line() -> impl Strategy<Value = MountLine> {
    let options = "(rw|ro)(,[a-z_]{1,10}(=[0-9]{1,5})?){0,4}";
    let optional = vec("(shared|master|propagate_from):[0-9]{1,4}|unbindable", 0..3);
    (
        (any::<u32>(), any::<u32>(), devnum()),
        hostile_text(20).prop_map(|s| format!("/{s}")),
        hostile_text(30).prop_map(|s| format!("/{s}")),
        options,
        optional,
        (hostile_text(10), hostile_text(30), "[a-z,=0-9]{0,30}"),
    )
        .prop_map(
            |((id, parent, dev), root, mount_point, options, optional, (fstype, source, sup))| {
                MountLine {
                    id,
                    parent,
                    dev,
                    root,
                    mount_point,
                    options,
                    optional,
                    fstype,
                    source,
                    super_options: sup,
                }
            },
        )
}

/// A line that is not quite mountinfo: a well-formed one with fields dropped, repeated,
/// swapped or re-spaced, or plain hostile text.
#[derive(Debug, Clone)]
enum MountText {
    Good(MountLine),
    Broken(String),
}

fn broken_mount_line() -> impl Strategy<Value = String> {
    let edit = (any::<usize>(), 0u8..5);
    prop_oneof![
        hostile_text(80),
        (mount_line(), vec(edit, 1..4)).prop_map(|(line, edits)| {
            let mut f = line.fields();
            for (at, op) in edits {
                let at = at % f.len().max(1);
                match op {
                    0 if !f.is_empty() => {
                        f.remove(at);
                    }
                    1 if !f.is_empty() => f.insert(at, f[at].clone()),
                    2 if !f.is_empty() => {
                        let last = f.len() - 1;
                        f.swap(at, last);
                    }
                    3 => f.insert(at.min(f.len()), "-".into()),
                    _ => f.insert(at.min(f.len()), String::new()),
                }
            }
            f.join(" ")
        }),
    ]
}

pub fn mountinfo(cases: u32) -> Result<Outcome, String> {
    let line = prop_oneof![
        3 => mount_line().prop_map(MountText::Good),
        1 => broken_mount_line().prop_map(MountText::Broken),
    ];
    run(cases, vec(line, 0..12), |lines| {
        let mut all = Vec::new();
        let mut text = String::new();
        for line in &lines {
            let one = match line {
                MountText::Good(l) => {
                    let t = l.fields().join(" ");
                    let parsed = sys::parse_mountinfo(&t);
                    prop_assert_eq!(&parsed, &vec![l.expected()], "line {:?}", t);
                    t
                }
                MountText::Broken(t) => {
                    let parsed = sys::parse_mountinfo(t);
                    prop_assert!(parsed.len() <= t.split('\n').count());
                    t.clone()
                }
            };
            // In the table a line ends at "\n" or "\r\n": a last field ending in "\r"
            // loses it, as `str::lines` does (the kernel never ends a line with "\r";
            // the super options, which are not read, are the last field).
            all.extend(sys::parse_mountinfo(one.strip_suffix('\r').unwrap_or(&one)));
            text.push_str(&one);
            text.push('\n');
        }
        // The table is the lines' entries, in order, whatever their neighbours.
        let table = sys::parse_mountinfo(&text);
        prop_assert_eq!(&table, &all);
        for m in &table {
            prop_assert!(display_safe(&m.mount_point) && display_safe(&m.fstype));
            prop_assert!(display_safe(&m.source));
        }
        Ok(())
    })
}

/// `/proc/swaps` as the kernel prints it (`swap_show`): the path escaped and padded to 40
/// columns with spaces, then tab-separated type, size, used and priority.
fn swap_line(path: &str, kind: &str, size: u64, used: u64, prio: i32) -> String {
    let path = kernel_escape(path);
    let pad = 40usize.saturating_sub(path.chars().count()).max(1);
    format!(
        "{path}{}{kind}\t{size}\t\t{used}\t\t{prio}",
        " ".repeat(pad)
    )
}

pub fn swaps(cases: u32) -> Result<Outcome, String> {
    let entry = (
        hostile_text(30).prop_map(|s| format!("/{s}")),
        prop::sample::select(vec!["partition", "file"]),
        any::<u64>(),
        any::<u64>(),
        any::<i32>(),
    );
    let garbage = vec(hostile_text(50), 0..3);
    run(cases, (vec(entry, 0..8), garbage), |(entries, garbage)| {
        let mut text = String::from("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
        for (path, kind, size, used, prio) in &entries {
            text.push_str(&swap_line(path, kind, *size, *used, *prio));
            text.push('\n');
        }
        let parsed = sys::parse_swaps(&text);
        let expected: Vec<SwapEntry> = entries
            .iter()
            .map(|(path, kind, ..)| SwapEntry {
                path: model::neutralize_controls(path),
                kind: SwapKind::from_proc(kind),
                file: None,
            })
            .collect();
        prop_assert_eq!(parsed, expected, "table {:?}", text);
        for g in &garbage {
            text.push_str(g);
            text.push('\n');
        }
        let parsed = sys::parse_swaps(&text);
        prop_assert!(parsed.len() <= text.lines().count().saturating_sub(1));
        prop_assert!(parsed.iter().all(|s| display_safe(&s.path)));
        Ok(())
    })
}

fn whitespace_run() -> impl Strategy<Value = String> {
    "[ \t]{1,4}"
}

fn check_parse_error(e: &ParseValueError) -> TestCaseResult {
    prop_assert!(e.found.chars().count() <= 64, "error text not bounded: {e}");
    Ok(())
}

pub fn sysfs_values(cases: u32) -> Result<Outcome, String> {
    let stat = (vec(any::<u64>(), 0..20), vec(whitespace_run(), 20));
    let scheduler_word = prop_oneof![
        3 => "[a-z][a-z0-9_-]{0,10}",
        1 => "\\[[a-z-]{1,10}\\]",
        1 => hostile_text(8),
    ];
    let schedulers = (vec(scheduler_word, 0..6), whitespace_run());
    let known_set = (
        vec("[a-z][a-z0-9_-]{0,10}", 1..6),
        any::<prop::sample::Index>(),
    );
    let write_cache = prop_oneof![
        Just("write back\n".to_string()),
        Just("write through\n".to_string()),
        hostile_text(20)
    ];
    let inputs = (
        (number_text(), any::<u64>(), devnum(), hostile_text(20)),
        stat,
        schedulers,
        known_set,
        write_cache,
    );
    run(
        cases,
        inputs,
        |((num, n, dev, junk), (counters, gaps), (words, sep), (names, active), wc)| {
            // Booleans.
            let flag = sys::parse_flag(&num);
            prop_assert_eq!(flag.is_some(), matches!(num.trim(), "0" | "1"));
            prop_assert_eq!(
                sys::parse_flag(&junk).is_some(),
                matches!(junk.trim(), "0" | "1")
            );

            // Numbers: a number the kernel prints comes back; anything accepted is a number.
            prop_assert_eq!(sys::parse_number::<u64>(&format!("{n}\n")), Some(n));
            for text in [&num, &junk] {
                if let Some(v) = sys::parse_number::<u64>(text) {
                    let digits = text.trim().trim_start_matches('+');
                    prop_assert!(digits.bytes().all(|b| b.is_ascii_digit()));
                    prop_assert_eq!(digits.parse::<u128>().ok(), Some(u128::from(v)));
                }
                let _ = sys::parse_number::<u32>(text);
                let _ = sys::parse_number::<i64>(text);
            }

            // Device numbers.
            prop_assert_eq!(sys::parse_devnum(&format!("{dev}\n")), Some(dev));
            for text in [&num, &junk] {
                match text.parse::<DevNum>() {
                    Ok(d) => prop_assert!(text.contains(':') && d.to_string().contains(':')),
                    Err(e) => check_parse_error(&e)?,
                }
            }

            // stat and inflight.
            let line: String = counters
                .iter()
                .zip(&gaps)
                .map(|(c, g)| format!("{g}{c}"))
                .collect();
            let stat = sys::parse_disk_stat(&format!("{line}\n"));
            if counters.len() >= 11 {
                let s = stat.unwrap();
                prop_assert_eq!(
                    [
                        s.read_ios,
                        s.read_sectors,
                        s.write_ios,
                        s.io_ticks_ms,
                        s.time_in_queue_ms
                    ],
                    [
                        counters[0],
                        counters[2],
                        counters[4],
                        counters[9],
                        counters[10]
                    ]
                );
            } else {
                prop_assert!(stat.is_none());
            }
            let inflight = sys::parse_inflight(&line);
            prop_assert_eq!(
                inflight,
                (counters.len() >= 2).then(|| (counters[0], counters[1]))
            );
            let _ = sys::parse_disk_stat(&junk);
            let _ = sys::parse_inflight(&junk);
            let _ = sys::parse_stat_start_time(&junk);

            // Scheduler lists: whatever is accepted is consistent.
            let text = words.join(&sep);
            match text.parse::<SchedulerSet>() {
                Ok(set) => {
                    prop_assert_eq!(set.available.len(), text.split_whitespace().count());
                    for name in &set.available {
                        prop_assert!(
                            !name.is_empty()
                                && name
                                    .chars()
                                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                        );
                    }
                    if let Some(a) = &set.active {
                        prop_assert!(set.offers(a));
                    }
                }
                Err(e) => check_parse_error(&e)?,
            }
            // ... and a list as the kernel prints it comes back.
            let active = active.index(names.len());
            let printed: Vec<String> = names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    if i == active {
                        format!("[{n}]")
                    } else {
                        n.clone()
                    }
                })
                .collect();
            let set: SchedulerSet = format!("{}\n", printed.join(" ")).parse().unwrap();
            prop_assert_eq!(&set.available, &names);
            prop_assert_eq!(set.active.as_ref(), Some(&names[active]));

            // Transport and holder classification from names and sysfs paths.
            let transport = classify_transport(&junk, &format!("devices/{junk}/{num}"), Some(&num));
            if junk.starts_with("nvme") {
                prop_assert_eq!(transport, Transport::Nvme);
            }
            let _ = classify_holder(&junk, Some(&num));
            let _ = dev_node_path(&junk);

            // The kernel's flush policy.
            match wc.parse::<KernelWriteCache>() {
                Ok(k) => prop_assert_eq!(k.as_str(), wc.trim()),
                Err(e) => check_parse_error(&e)?,
            }
            Ok(())
        },
    )
}

pub fn stat_start_time(cases: u32) -> Result<Outcome, String> {
    let well_formed = (
        any::<u32>(),
        hostile_text(16),
        prop::sample::select(vec!['R', 'S', 'D', 'Z', 'T', 'I']),
        vec(any::<i64>(), 18),
        any::<u64>(),
        vec(any::<u64>(), 0..31),
    );
    run(cases, (well_formed, hostile_text(80)), |(fields, junk)| {
        let (pid, comm, state, before, start, after) = fields;
        // Fields 4..=21, then 22 (start time), then the rest.
        let mut head = format!("{pid} ({comm}) {state}");
        for f in &before {
            head.push_str(&format!(" {f}"));
        }
        let mut line = format!("{head} {start}");
        for f in &after {
            line.push_str(&format!(" {f}"));
        }
        line.push('\n');
        prop_assert_eq!(sys::parse_stat_start_time(&line), Some(start), "{:?}", line);
        // A line that ends before field 22 has no start time.
        prop_assert_eq!(sys::parse_stat_start_time(&head), None, "{:?}", head);
        let _ = sys::parse_stat_start_time(&junk);
        Ok(())
    })
}

pub fn vpd_serial(cases: u32) -> Result<Outcome, String> {
    let page = (
        any::<u8>(),
        prop_oneof![3 => Just(0x80u8), 1 => any::<u8>()],
        prop::option::of(any::<u16>()),
        hostile_bytes(40),
    )
        .prop_map(|(qualifier, code, len, serial)| {
            let len = len.unwrap_or(serial.len() as u16);
            let mut p = vec![qualifier, code];
            p.extend_from_slice(&len.to_be_bytes());
            p.extend_from_slice(&serial);
            p
        });
    let page = prop_oneof![
        4 => page,
        1 => vec(any::<u8>(), 0..8),
    ];
    run(cases, page, |page| {
        let serial = sys::parse_vpd_serial(&page);
        if let Some(s) = &serial {
            prop_assert!(page.len() >= 4 && page[1] == 0x80);
            prop_assert!(display_safe(s));
            prop_assert!(s.chars().count() <= page.len() - 4);
        }
        if page.len() < 4 || page[1] != 0x80 {
            prop_assert_eq!(serial, None);
        }
        Ok(())
    })
}

pub fn cache_status(cases: u32) -> Result<Outcome, String> {
    let kernel = prop::option::of(prop::sample::select(vec![
        KernelWriteCache::WriteBack,
        KernelWriteCache::WriteThrough,
    ]));
    let drive = prop::result::maybe_ok(
        (
            prop::option::of(any::<bool>()),
            any::<bool>(),
            hostile_text(20),
        )
            .prop_map(|(enabled, changeable, source)| DriveCache {
                enabled,
                changeable,
                fixed_reason: None,
                source,
            }),
        hostile_text(30),
    );
    run(
        cases,
        (drive, kernel, hostile_text(12)),
        |(drive, kernel, name)| {
            let enabled = drive.as_ref().ok().map(|d| d.enabled);
            let status = CacheStatus::new(&name, Transport::Sata, drive, kernel);
            let expected = match (enabled, kernel) {
                (Some(Some(true)), Some(KernelWriteCache::WriteThrough)) => {
                    CacheAgreement::DangerousMismatch
                }
                (Some(Some(false) | None), Some(KernelWriteCache::WriteBack)) => {
                    CacheAgreement::HarmlessMismatch
                }
                _ => CacheAgreement::Agree,
            };
            prop_assert_eq!(status.agreement, expected);
            prop_assert_eq!(
                status.disagreement.is_some(),
                expected != CacheAgreement::Agree
            );
            prop_assert_eq!(status.drive.is_some(), status.drive_unavailable.is_none());
            Ok(())
        },
    )
}
