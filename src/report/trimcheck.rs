//! The TRIM check's report: what kernel and drive say of discards, the range written and
//! discarded, what read back, the verdict ("discard works, reads zeros", "claims zeros,
//! returns old data", ...) and whether every byte was put back; as 80-column text and JSON.

use std::time::Duration;

use serde::Serialize;

use crate::capacity::journal::PutBack;
use crate::flush::timing::thousands;
use crate::model::Bytes;
use crate::model::text::neutralize_controls;
use crate::report::table::wrap;
use crate::trim::{Claim, DiscardLimits, Promise, Readback, Scratch, TrimEnd, Verdict};

/// What the report shows.
#[derive(Debug, Clone)]
pub struct TrimReport<'a> {
    /// The path the admin named.
    pub device: &'a str,
    /// The kernel name the guard checked.
    pub name: &'a str,
    pub model: Option<&'a str>,
    /// The logical sector size.
    pub sector: u64,
    pub limits: &'a DiscardLimits,
    pub claim: &'a Claim,
    pub scratch: Option<Scratch>,
    pub end: &'a TrimEnd,
    pub discard_time: Option<Duration>,
    pub put_back: Option<&'a PutBack>,
    pub elapsed: Duration,
    /// Where the saved bytes are kept, when the put-back did not finish.
    pub journal_kept: Option<&'a str>,
}

/// The verdict in one word, for JSON and scripts.
pub fn verdict_word(end: &TrimEnd) -> &'static str {
    match end {
        TrimEnd::NoDiscard => "no-discard",
        TrimEnd::NoRange(_) => "not-tested",
        TrimEnd::Refused(_) => "refused",
        TrimEnd::Judged { verdict, .. } => match verdict {
            Verdict::Works => "works",
            Verdict::Kept => "kept",
            Verdict::Broken => "broken",
        },
        TrimEnd::Stopped | TrimEnd::Failed(_) => "unknown",
    }
}

/// The verdict's sentence.
pub fn verdict_sentence(end: &TrimEnd) -> String {
    match end {
        TrimEnd::NoDiscard => "does not discard: the kernel sends it no discards \
                               (queue/discard_max_bytes is 0); nothing written"
            .into(),
        TrimEnd::NoRange(why) => format!("not tested: {why}; nothing written"),
        TrimEnd::Refused(why) => format!(
            "discard refused ({why}), though the kernel's queue/discard_max_bytes says it \
             discards"
        ),
        TrimEnd::Judged { sentence, .. } => sentence.clone(),
        TrimEnd::Stopped => "unknown: the check was stopped".into(),
        TrimEnd::Failed(why) => format!("unknown: {why}"),
    }
}

fn promise_words(c: &Claim) -> String {
    let what = match c.promise {
        Promise::Zeros => "a discarded block reads as zeros",
        Promise::Ones => "a discarded block reads as all ones",
        Promise::Deterministic => "a discarded block reads the same each time (not which)",
        Promise::Nothing => "nothing promised",
    };
    format!("{what} ({})", neutralize_controls(&c.source))
}

fn readback_words(seen: Readback) -> String {
    match seen {
        Readback::Zeros => "zeros".into(),
        Readback::Ones => "all ones".into(),
        Readback::Unchanged => "the pattern written before the discard, every byte".into(),
        Readback::Mixed { still: 0 } => "other data: neither zeros nor the pattern".into(),
        Readback::Mixed { still } => {
            format!("mixed: {} bytes still the pattern", thousands(still as u64))
        }
    }
}

fn put_back_line(p: &PutBack, sector: u64, kept: Option<&str>) -> String {
    let mut line = format!(
        "{} sectors written back, {} read back as saved",
        thousands(p.sectors),
        thousands(p.as_saved + p.shared)
    );
    if let Some(first) = p.not_back.first() {
        line.push_str(&format!(
            ", {} not (the first at LBA {first})",
            thousands(p.not_back.len() as u64)
        ));
    }
    if let Some(e) = &p.error {
        line.push_str(&format!("; {e}"));
    }
    if let Some(path) = kept {
        let path = neutralize_controls(path);
        line.push_str(&format!(
            "; the saved {sector}-byte sectors are kept in {path}: `disktriage restore \
             --capacity {path}`"
        ));
    }
    line
}

/// The text report, each line at most `width` columns.
pub fn render_text(r: &TrimReport, width: usize) -> String {
    let mut out = String::new();
    let mut field =
        |label: &str, text: &str| out.push_str(&wrap(&format!("{label:<11}"), text, width));
    let model = r.model.map(|m| format!(", {}", neutralize_controls(m)));
    field(
        "Device",
        &format!(
            "{} ({}{})",
            neutralize_controls(r.device),
            r.name,
            model.unwrap_or_default()
        ),
    );
    let l = r.limits;
    let discards = if l.max_bytes == 0 {
        "none (queue/discard_max_bytes 0)".to_string()
    } else {
        format!(
            "up to {} a request, in granules of {} bytes (alignment {}); write zeroes {}",
            Bytes(l.max_bytes).iec(),
            thousands(l.granularity),
            l.alignment,
            if l.write_zeroes_max > 0 { "yes" } else { "no" }
        )
    };
    field("Discards", &discards);
    field("Claim", &promise_words(r.claim));
    if let Some(s) = r.scratch {
        let took = r
            .discard_time
            .map(|t| format!(", discarded in {:.1} ms", t.as_secs_f64() * 1e3))
            .unwrap_or_default();
        field(
            "Range",
            &format!(
                "{} at byte {} (LBA {}), saved, written with a pattern and read back{took}",
                Bytes(s.len).iec(),
                thousands(s.offset),
                s.offset / r.sector.max(1)
            ),
        );
    }
    if let TrimEnd::Judged { seen, .. } = r.end {
        field("Read back", &readback_words(*seen));
    }
    field("Verdict", &verdict_sentence(r.end));
    match r.put_back {
        Some(p) => field("Put back", &put_back_line(p, r.sector, r.journal_kept)),
        None => field("Put back", "nothing: nothing was written"),
    }
    field("Took", &format!("{:.1} s", r.elapsed.as_secs_f64()));
    out
}

#[derive(Serialize)]
struct Json<'a> {
    device: &'a str,
    name: &'a str,
    model: Option<&'a str>,
    verdict: &'static str,
    sentence: String,
    discard_max_bytes: u64,
    discard_granularity: u64,
    discard_alignment: u64,
    write_zeroes_max_bytes: u64,
    claim: &'static str,
    claim_source: &'a str,
    read_back: Option<&'static str>,
    still_pattern_bytes: Option<usize>,
    range_offset: Option<u64>,
    range_bytes: Option<u64>,
    discard_ms: Option<f64>,
    seconds: f64,
    put_back: Option<PutBackJson<'a>>,
    journal_kept: Option<&'a str>,
}

#[derive(Serialize)]
struct PutBackJson<'a> {
    sectors: u64,
    verified: u64,
    mismatched: &'a [u64],
    error: Option<&'a str>,
}

/// The JSON report (one object).
pub fn render_json(r: &TrimReport) -> String {
    let seen = match r.end {
        TrimEnd::Judged { seen, .. } => Some(*seen),
        _ => None,
    };
    let json = Json {
        device: r.device,
        name: r.name,
        model: r.model,
        verdict: verdict_word(r.end),
        sentence: verdict_sentence(r.end),
        discard_max_bytes: r.limits.max_bytes,
        discard_granularity: r.limits.granularity,
        discard_alignment: r.limits.alignment,
        write_zeroes_max_bytes: r.limits.write_zeroes_max,
        claim: match r.claim.promise {
            Promise::Zeros => "zeros",
            Promise::Ones => "ones",
            Promise::Deterministic => "deterministic",
            Promise::Nothing => "nothing",
        },
        claim_source: &r.claim.source,
        read_back: seen.map(|s| match s {
            Readback::Zeros => "zeros",
            Readback::Ones => "ones",
            Readback::Unchanged => "unchanged",
            Readback::Mixed { .. } => "mixed",
        }),
        still_pattern_bytes: seen.map(|s| match s {
            Readback::Unchanged => r.scratch.map_or(0, |x| x.len as usize),
            Readback::Mixed { still } => still,
            Readback::Zeros | Readback::Ones => 0,
        }),
        range_offset: r.scratch.map(|s| s.offset),
        range_bytes: r.scratch.map(|s| s.len),
        discard_ms: r.discard_time.map(|t| t.as_secs_f64() * 1e3),
        seconds: r.elapsed.as_secs_f64(),
        put_back: r.put_back.map(|p| PutBackJson {
            sectors: p.sectors,
            verified: p.as_saved + p.shared,
            mismatched: &p.not_back,
            error: p.error.as_deref(),
        }),
        journal_kept: r.journal_kept,
    };
    serde_json::to_string_pretty(&json).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}")) + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trim::{classify, judge};

    fn report<'a>(
        end: &'a TrimEnd,
        claim: &'a Claim,
        limits: &'a DiscardLimits,
        back: Option<&'a PutBack>,
    ) -> TrimReport<'a> {
        TrimReport {
            device: "/dev/sdb",
            name: "sdb",
            model: Some("Samsung SSD 870 EVO 1TB"),
            sector: 512,
            limits,
            claim,
            scratch: Some(Scratch {
                offset: 500_105_216_000,
                len: 4 << 20,
            }),
            end,
            discard_time: Some(Duration::from_micros(1500)),
            put_back: back,
            elapsed: Duration::from_millis(800),
            journal_kept: None,
        }
    }

    #[test]
    fn a_broken_claim_says_so_in_80_columns_and_in_json() {
        let pattern = vec![7u8; 4096];
        let claim = Claim::from_ata_word69(0x4020);
        let (verdict, sentence) = judge(&claim, classify(&pattern, &pattern));
        let end = TrimEnd::Judged {
            seen: Readback::Unchanged,
            verdict,
            sentence,
        };
        let limits = DiscardLimits {
            max_bytes: 2 << 30,
            granularity: 512,
            alignment: 0,
            write_zeroes_max: 0,
        };
        let back = PutBack {
            sectors: 8192,
            as_saved: 8192,
            ..PutBack::default()
        };
        let r = report(&end, &claim, &limits, Some(&back));
        let text = render_text(&r, 80);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(
            text.contains(
                "Claim      a discarded block reads as zeros (ATA IDENTIFY word 69 (RZAT))"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "Verdict    claims zeros (ATA IDENTIFY word 69 (RZAT)), returns old data"
            ),
            "{text}"
        );
        assert!(text.contains("discarded in 1.5 ms"), "{text}");
        assert!(
            text.contains("8,192 sectors written back, 8,192 read back as saved"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&render_json(&r)).expect("json");
        assert_eq!(json["verdict"], "broken");
        assert_eq!(json["claim"], "zeros");
        assert_eq!(json["read_back"], "unchanged");
        assert_eq!(json["still_pattern_bytes"], 4 << 20);
        assert_eq!(json["put_back"]["verified"], 8192);
    }

    #[test]
    fn a_device_without_discards_is_reported_without_a_range() {
        let claim = Claim::none("no drive to ask: a loop device");
        let limits = DiscardLimits::default();
        let mut r = report(&TrimEnd::NoDiscard, &claim, &limits, None);
        r.scratch = None;
        r.discard_time = None;
        let text = render_text(&r, 80);
        assert!(
            text.contains("Discards   none (queue/discard_max_bytes 0)"),
            "{text}"
        );
        assert!(text.contains("Verdict    does not discard"), "{text}");
        assert!(
            text.contains("Put back   nothing: nothing was written"),
            "{text}"
        );
        assert!(!text.contains("Range"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&render_json(&r)).expect("json");
        assert_eq!(json["verdict"], "no-discard");
        assert_eq!(json["read_back"], serde_json::Value::Null);
    }
}
