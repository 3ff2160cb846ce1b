//! Properties of the `smartctl -x`/`-a` text parser, fed with real drives' reports
//! (`tests/fixtures/smartctl-text/`) edited line by line (lines dropped, repeated, swapped,
//! cut, hostile text put in, the attribute table turned into `-a`'s layout, CRLF line ends)
//! and then, sometimes, byte by byte.

use proptest::collection::vec;
use proptest::prelude::*;

use disktriage::model::{SmartReading, Transport};
use disktriage::smart;
use disktriage::smart::parse_saved_report;

use super::strategies::{apply, hostile_text, mutation};
use super::{Outcome, accepted, display_safe, expect_accepted, plausible_celsius, run};

const FIXTURES: [&str; 3] = [
    "HDD__HGST__HCC545050A7E380__0F10E45DEEEE.txt",
    "NVMe__Crucial__CT500P1SSD8__1AA37AE5B55C.txt",
    "SSD__Crucial__CT750MX300SSD1__27CAF7DC753C.txt",
];

fn report(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/smartctl-text")
        .join(name);
    String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned()
}

/// One edit of the report's lines; positions are taken modulo the line count.
#[derive(Debug, Clone)]
enum Edit {
    Drop(usize),
    Repeat(usize),
    Swap(usize, usize),
    /// Keep the first `keep` bytes of the line.
    Cut(usize, usize),
    /// Put the text into the line at a byte position (at a character boundary).
    Put(usize, usize, String),
    /// `-x`'s FLAGS and FAIL columns as `-a` prints them (FLAG TYPE UPDATED WHEN_FAILED).
    OldLayout,
    CrLf,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => any::<usize>().prop_map(Edit::Drop),
        2 => any::<usize>().prop_map(Edit::Repeat),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Swap(a, b)),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Cut(a, b)),
        3 => (any::<usize>(), any::<usize>(), hostile_text(12))
            .prop_map(|(a, b, t)| Edit::Put(a, b, t)),
        1 => Just(Edit::OldLayout),
        1 => Just(Edit::CrLf),
    ]
}

/// Rewrites the `-x` attribute table in `-a`'s columns.
fn old_layout(lines: &mut [String]) {
    let mut table = false;
    for l in lines.iter_mut() {
        if l.trim_start().starts_with("ID#") {
            *l = "ID# ATTRIBUTE_NAME          FLAG     VALUE WORST THRESH TYPE      UPDATED  \
                  WHEN_FAILED RAW_VALUE"
                .into();
            table = true;
            continue;
        }
        if !table {
            continue;
        }
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() < 8 || w[0].parse::<u8>().is_err() {
            table = false;
            continue;
        }
        let kind = if w[2].starts_with('P') {
            "Pre-fail"
        } else {
            "Old_age"
        };
        let failed = match w[6] {
            "NOW" => "FAILING_NOW",
            "Past" => "In_the_past",
            other => other,
        };
        *l = format!(
            "{:>3} {:<23} 0x0033   {}   {}   {}    {kind:<9} Always   {failed:>11} {}",
            w[0],
            w[1],
            w[3],
            w[4],
            w[5],
            w[7..].join(" ")
        );
    }
}

fn edited(base: &str, edits: &[Edit]) -> String {
    let mut lines: Vec<String> = base.lines().map(str::to_string).collect();
    let mut crlf = false;
    for e in edits {
        let n = lines.len().max(1);
        match e {
            Edit::Drop(i) if !lines.is_empty() => {
                lines.remove(i % n);
            }
            Edit::Repeat(i) if !lines.is_empty() => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Edit::Swap(a, b) if !lines.is_empty() => lines.swap(a % n, b % n),
            Edit::Cut(i, keep) if !lines.is_empty() => {
                let l = &mut lines[i % n];
                let at = keep % (l.len() + 1);
                let at = (0..=at).rev().find(|a| l.is_char_boundary(*a)).unwrap_or(0);
                l.truncate(at);
            }
            Edit::Put(i, at, text) if !lines.is_empty() => {
                let l = &mut lines[i % n];
                let at = at % (l.len() + 1);
                let at = (0..=at).rev().find(|a| l.is_char_boundary(*a)).unwrap_or(0);
                l.insert_str(at, text);
            }
            Edit::OldLayout => old_layout(&mut lines),
            Edit::CrLf => crlf = true,
            _ => {}
        }
    }
    lines.join(if crlf { "\r\n" } else { "\n" })
}

/// A text report, edited, then sometimes broken byte by byte: parsed whole, or refused with a
/// reason; what it returns is display-safe, in range, and judged without a panic.
pub fn smartctl_text(cases: u32) -> Result<Outcome, String> {
    let bases: Vec<String> = FIXTURES.iter().map(|n| report(n)).collect();
    let input = (
        prop::sample::select(bases),
        vec(edit(), 0..8),
        prop::option::weighted(0.3, vec(mutation(), 1..4)),
    );
    let outcome = run(cases, input, |(base, edits, bytes)| {
        let mut text = edited(&base, &edits);
        if let Some(ms) = &bytes {
            let mut b = text.into_bytes();
            for m in ms {
                apply(&mut b, m);
            }
            text = String::from_utf8_lossy(&b).into_owned();
        }
        let saved = match parse_saved_report(&text, "sda") {
            Ok(s) => s,
            Err(e) => {
                prop_assert!(!e.to_string().is_empty());
                return Ok(());
            }
        };
        accepted();
        let r = &saved.report;
        for s in r
            .messages
            .iter()
            .chain(&r.protocol)
            .chain(&r.version)
            .chain(&r.scsi_ie_string)
        {
            prop_assert!(display_safe(s), "{s:?}");
        }
        let id = &saved.identity;
        for s in [
            &id.model_family,
            &id.model,
            &id.serial,
            &id.wwn,
            &id.firmware,
            &id.form_factor,
        ]
        .into_iter()
        .flatten()
        {
            prop_assert!(display_safe(s), "{s:?}");
        }
        prop_assert!(plausible_celsius(r.temperature_c), "{:?}", r.temperature_c);
        if let Some(ata) = &r.ata {
            for a in &ata.attributes {
                prop_assert!(a.id != 0);
                prop_assert!(a.raw < 1 << 48);
                prop_assert!(display_safe(&a.name), "name {:?}", a.name);
                prop_assert!(
                    a.raw_text.as_deref().is_some_and(display_safe),
                    "raw {:?}",
                    a.raw_text
                );
            }
        }
        if let Some(n) = &r.nvme {
            prop_assert!(plausible_celsius(n.temperature_c()));
        }
        super::pages::check_logs(&saved.logs)?;
        let mut health = smart::assess(
            "sda",
            Transport::Sata,
            SmartReading::Smartctl(Box::new(saved.report.clone())),
        );
        smart::judge_logs(&mut health, &saved.logs);
        super::pages::check_health(&health)?;
        Ok(())
    });
    expect_accepted(outcome, "smartctl text reports")
}
