//! The write-cliff probe's report: the device (rotating or not), the scratch range, the
//! writes, MB/s every ten seconds, the verdict ("no write cliff in 5 min", "write cliff after
//! X MiB written: ...") and whether every byte was put back; as 80-column text and JSON with
//! the per-second series.

use std::time::Duration;

use serde::Serialize;

use crate::capacity::journal::PutBack;
use crate::flush::timing::thousands;
use crate::model::Bytes;
use crate::model::text::neutralize_controls;
use crate::report::table::wrap;
use crate::smr::{Finding, Medium, Sample, Scratch, SmrEnd, minutes_words, sentence};

/// What the report shows.
#[derive(Debug, Clone)]
pub struct SmrReport<'a> {
    /// The path the admin named.
    pub device: &'a str,
    /// The kernel name the guard checked.
    pub name: &'a str,
    pub model: Option<&'a str>,
    /// The logical sector size.
    pub sector: u64,
    /// Each write's size.
    pub block: u64,
    pub medium: Medium,
    pub medium_source: &'a str,
    pub scratch: Option<Scratch>,
    pub minutes: f64,
    pub end: &'a SmrEnd,
    pub series: &'a [Sample],
    pub put_back: Option<&'a PutBack>,
    pub elapsed: Duration,
    /// Where the saved bytes are kept, when the put-back did not finish.
    pub journal_kept: Option<&'a str>,
}

/// The verdict in one word, for JSON and scripts.
pub fn verdict_word(end: &SmrEnd) -> &'static str {
    match end {
        SmrEnd::NoRange(_) => "not-tested",
        SmrEnd::Judged(Finding::Steady { .. }) => "no-cliff",
        SmrEnd::Judged(Finding::Cliff { .. }) => "cliff",
        SmrEnd::Judged(Finding::TooShort { .. }) | SmrEnd::Stopped | SmrEnd::Failed(_) => "unknown",
    }
}

/// The verdict's sentence.
pub fn verdict_sentence(end: &SmrEnd, medium: Medium, minutes: f64) -> String {
    match end {
        SmrEnd::NoRange(why) => format!("not tested: {why}; nothing written"),
        SmrEnd::Judged(f) => sentence(f, medium, minutes),
        SmrEnd::Stopped => "unknown: the probe was stopped".into(),
        SmrEnd::Failed(why) => format!("unknown: {why}"),
    }
}

fn medium_words(m: Medium, source: &str) -> String {
    let what = match m {
        Medium::Rotating => "rotating (a hard disk)",
        Medium::SolidState => "solid state (does not rotate)",
        Medium::Unknown => "not known",
    };
    format!("{what}, from {}", neutralize_controls(source))
}

/// MB/s over each run of ten intervals: "40.1 39.8 0.52 ...".
fn tens(series: &[Sample]) -> String {
    series
        .chunks(10)
        .map(|c| {
            let bytes: u64 = c.iter().map(|s| s.bytes).sum();
            let secs: f64 = c.iter().map(|s| s.seconds).sum();
            let mbps = if secs > 0.0 {
                bytes as f64 / secs / 1e6
            } else {
                0.0
            };
            if mbps >= 10.0 {
                format!("{mbps:.1}")
            } else {
                format!("{mbps:.2}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
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
pub fn render_text(r: &SmrReport, width: usize) -> String {
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
    field("Medium", &medium_words(r.medium, r.medium_source));
    if let Some(s) = r.scratch {
        field(
            "Range",
            &format!(
                "{} at byte {} (LBA {}), in the middle of the device, saved to the journal \
                 before the first write",
                Bytes(s.len).iec(),
                thousands(s.offset),
                s.offset / r.sector.max(1)
            ),
        );
    }
    if !r.series.is_empty() {
        let written: u64 = r.series.iter().map(|s| s.bytes).sum();
        let secs = r.series.last().map_or(0.0, |s| s.at_s);
        let writes: u64 = r.series.iter().map(|s| s.writes).sum();
        field(
            "Writes",
            &format!(
                "{} random {}-byte writes (O_DIRECT, a flush each second), {} in {secs:.0} s \
                 of the {} asked",
                thousands(writes),
                thousands(r.block),
                Bytes(written).iec(),
                minutes_words(r.minutes)
            ),
        );
        field("MB/s", &format!("each 10 s: {}", tens(r.series)));
    }
    field("Verdict", &verdict_sentence(r.end, r.medium, r.minutes));
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
    medium: Medium,
    medium_source: &'a str,
    block_bytes: u64,
    range_offset: Option<u64>,
    range_bytes: Option<u64>,
    minutes: f64,
    written_bytes: u64,
    finding: Option<&'a Finding>,
    series: &'a [Sample],
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

/// The JSON report (one object, with one element of `series` per interval).
pub fn render_json(r: &SmrReport) -> String {
    let json = Json {
        device: r.device,
        name: r.name,
        model: r.model,
        verdict: verdict_word(r.end),
        sentence: verdict_sentence(r.end, r.medium, r.minutes),
        medium: r.medium,
        medium_source: r.medium_source,
        block_bytes: r.block,
        range_offset: r.scratch.map(|s| s.offset),
        range_bytes: r.scratch.map(|s| s.len),
        minutes: r.minutes,
        written_bytes: r.series.iter().map(|s| s.bytes).sum(),
        finding: match r.end {
            SmrEnd::Judged(f) => Some(f),
            _ => None,
        },
        series: r.series,
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
    use crate::smr::detect;

    fn samples(rates: &[f64]) -> Vec<Sample> {
        rates
            .iter()
            .enumerate()
            .map(|(i, &mbps)| Sample {
                at_s: i as f64 + 1.0,
                seconds: 1.0,
                writes: (mbps * 1e6 / 4096.0) as u64,
                bytes: (mbps * 1e6 / 4096.0) as u64 * 4096,
                mean_ms: 0.1,
                max_ms: if mbps < 1.0 { 4200.0 } else { 12.0 },
                flush_ms: 3.0,
            })
            .collect()
    }

    #[test]
    fn a_cliff_says_so_in_80_columns_and_in_json_with_its_series() {
        let mut rates = vec![40.0; 30];
        rates.extend(vec![0.3; 12]);
        let series = samples(&rates);
        let end = SmrEnd::Judged(detect(&series));
        let back = PutBack {
            sectors: 524_288,
            as_saved: 524_288,
            ..PutBack::default()
        };
        let r = SmrReport {
            device: "/dev/sdb",
            name: "sdb",
            model: Some("WDC WD40EFAX-68JH4N0"),
            sector: 512,
            block: 4096,
            medium: Medium::Rotating,
            medium_source: "VPD page B1h of sdb",
            scratch: Some(Scratch {
                offset: 2_000_264_937_472,
                len: 256 << 20,
            }),
            minutes: 5.0,
            end: &end,
            series: &series,
            put_back: Some(&back),
            elapsed: Duration::from_secs(60),
            journal_kept: None,
        };
        let text = render_text(&r, 80);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(text.contains("Medium     rotating (a hard disk), from VPD page B1h"));
        assert!(
            text.contains("MB/s       each 10 s: 40.0 40.0 40.0 0.30 0.30"),
            "{text}"
        );
        assert!(
            text.contains("Verdict    write cliff after 1144.3 MiB written: 40.00 MB/s to"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&render_json(&r)).expect("json");
        assert!(
            json["sentence"]
                .as_str()
                .is_some_and(|s| s.ends_with("stalls up to 4.2 s: drive-managed SMR behaviour")),
            "{json:#}"
        );
        assert_eq!(json["verdict"], "cliff");
        assert_eq!(json["medium"], "rotating");
        assert_eq!(json["finding"]["kind"], "cliff");
        assert_eq!(json["finding"]["onset"], 30);
        assert_eq!(json["series"].as_array().map(Vec::len), Some(42));
        assert_eq!(json["series"][0]["max_ms"], 12.0);
        assert_eq!(json["put_back"]["verified"], 524_288);
    }

    #[test]
    fn a_device_too_small_is_not_tested_and_nothing_is_written() {
        let end = SmrEnd::NoRange("the device is too small".into());
        let r = SmrReport {
            device: "/dev/loop9",
            name: "loop9",
            model: None,
            sector: 512,
            block: 4096,
            medium: Medium::Unknown,
            medium_source: "no drive",
            scratch: None,
            minutes: 5.0,
            end: &end,
            series: &[],
            put_back: None,
            elapsed: Duration::from_millis(10),
            journal_kept: None,
        };
        let text = render_text(&r, 80);
        assert!(text.contains("Verdict    not tested: the device is too small"));
        assert!(text.contains("Put back   nothing: nothing was written"));
        assert!(!text.contains("Range"));
        let json: serde_json::Value = serde_json::from_str(&render_json(&r)).expect("json");
        assert_eq!(json["verdict"], "not-tested");
        assert_eq!(json["finding"], serde_json::Value::Null);
    }
}
