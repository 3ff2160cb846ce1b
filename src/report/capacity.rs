//! The capacity probe's report: claimed and stored size, the verdict (`real`, or `fake:
//! stores X of the Y it claims`), how it fails past its real end, the probe's cost, and
//! whether every overwritten sector was put back; as 80-column text and JSON.

use std::time::Duration;

use serde::Serialize;

use crate::capacity::{Capacity, Fake, ProbeEnd, Restored};
use crate::flush::timing::thousands;
use crate::model::Bytes;
use crate::model::text::neutralize_controls;
use crate::report::table::wrap;

/// What the report shows.
#[derive(Debug, Clone)]
pub struct CapacityReport<'a> {
    /// The path the admin named.
    pub device: &'a str,
    /// The kernel name the guard checked.
    pub name: &'a str,
    pub model: Option<&'a str>,
    pub end: &'a ProbeEnd,
    pub elapsed: Duration,
    /// `None` under `--destroy-data`: nothing was saved.
    pub restored: Option<&'a Restored>,
    /// Where the saved sectors are kept, when the put-back did not finish.
    pub journal_kept: Option<&'a str>,
}

/// "100.0 MiB (104.9 MB)": binary as lsblk says it, decimal as the box does.
fn both(bytes: u64) -> String {
    format!("{} ({})", Bytes(bytes).iec(), Bytes(bytes).si())
}

/// The verdict's words: "real", or "fake: stores 100.0 MiB (104.9 MB) of the 2.0 TB
/// (1.8 TiB) it claims".
pub fn verdict(c: &Capacity) -> String {
    if c.is_real() {
        return "real".into();
    }
    let claimed = c.claimed * c.sector;
    format!(
        "fake: stores {} of the {} ({}) it claims",
        both(c.real * c.sector),
        Bytes(claimed).si(),
        Bytes(claimed).iec()
    )
}

/// How the device fails past its real end, in a sentence.
pub fn how(fake: Fake) -> String {
    match fake {
        Fake::Wraps { first, onto: 0 } => format!(
            "a write to LBA {first} lands on LBA 0: the device wraps every {} sectors",
            thousands(first)
        ),
        Fake::Wraps { first, onto } => {
            format!("a write to LBA {first} lands on LBA {onto}, which it overwrites")
        }
        Fake::Drops { first } => {
            format!("what is written from LBA {first} on does not read back (dropped)")
        }
        Fake::Fails { first } => format!("reads or writes fail from LBA {first} on"),
    }
}

/// The next step for the admin.
fn next_step(c: &Capacity) -> String {
    if c.is_real() {
        return "nothing to do: it stores every sector it claims".into();
    }
    format!(
        "use at most its first {} (a partition ending at LBA {}), or return it; a file \
         system across its claimed size loses data silently",
        both(c.real * c.sector),
        c.real.saturating_sub(1)
    )
}

fn put_back_line(r: &Restored, kept: Option<&str>) -> String {
    let mut line = format!(
        "{} sectors written back, {} read back as saved",
        thousands(r.sectors),
        thousands(r.verified)
    );
    if !r.mismatched.is_empty() {
        line.push_str(&format!(
            ", {} not (the first at LBA {})",
            thousands(r.mismatched.len() as u64),
            r.mismatched[0]
        ));
    }
    if let Some(e) = &r.error {
        line.push_str(&format!("; {e}"));
    }
    if let Some(path) = kept {
        line.push_str(&format!(
            "; the saved sectors are kept in {path}: `disktriage restore --capacity {path}`"
        ));
    }
    line
}

/// The text report, each line at most `width` columns.
pub fn render_text(r: &CapacityReport, width: usize) -> String {
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
    match r.end {
        ProbeEnd::Done(c) => {
            let claimed = c.claimed * c.sector;
            field(
                "Claimed",
                &format!(
                    "{} ({}): {} sectors of {} bytes",
                    Bytes(claimed).si(),
                    Bytes(claimed).iec(),
                    thousands(c.claimed),
                    c.sector
                ),
            );
            field(
                "Stores",
                &format!(
                    "{}: the last good LBA is {}",
                    both(c.real * c.sector),
                    c.real.saturating_sub(1)
                ),
            );
            field("Verdict", &verdict(c));
            if let Some(f) = c.fake {
                field("How", &how(f));
            }
            field("Next", &next_step(c));
            field(
                "Probe",
                &format!(
                    "{} reads and {} writes in {:.1} s",
                    thousands(c.reads),
                    thousands(c.writes),
                    r.elapsed.as_secs_f64()
                ),
            );
        }
        ProbeEnd::Stopped => field("Verdict", "unknown: the probe was stopped"),
        ProbeEnd::Failed(why) => field("Verdict", &format!("unknown: {why}")),
    }
    match r.restored {
        Some(rest) => field("Put back", &put_back_line(rest, r.journal_kept)),
        None => field("Put back", "nothing: --destroy-data, no sector was saved"),
    }
    out
}

#[derive(Serialize)]
struct Json<'a> {
    device: &'a str,
    name: &'a str,
    model: Option<&'a str>,
    verdict: String,
    sector_bytes: Option<u64>,
    claimed_sectors: Option<u64>,
    claimed_bytes: Option<u64>,
    real_sectors: Option<u64>,
    real_bytes: Option<u64>,
    last_good_lba: Option<u64>,
    fake: Option<FakeJson>,
    reads: Option<u64>,
    writes: Option<u64>,
    seconds: f64,
    ended: Option<String>,
    put_back: Option<PutBackJson<'a>>,
    journal_kept: Option<&'a str>,
}

#[derive(Serialize)]
struct FakeJson {
    kind: &'static str,
    first_lba: u64,
    onto_lba: Option<u64>,
    how: String,
}

#[derive(Serialize)]
struct PutBackJson<'a> {
    sectors: u64,
    verified: u64,
    mismatched: &'a [u64],
    error: Option<&'a str>,
}

/// The JSON report (one object).
pub fn render_json(r: &CapacityReport) -> String {
    let done = match r.end {
        ProbeEnd::Done(c) => Some(c),
        _ => None,
    };
    let fake = done.and_then(|c| c.fake).map(|f| {
        let (kind, onto) = match f {
            Fake::Wraps { onto, .. } => ("wraps", Some(onto)),
            Fake::Drops { .. } => ("drops", None),
            Fake::Fails { .. } => ("fails", None),
        };
        FakeJson {
            kind,
            first_lba: f.first(),
            onto_lba: onto,
            how: how(f),
        }
    });
    let json = Json {
        device: r.device,
        name: r.name,
        model: r.model,
        verdict: done.map_or_else(
            || "unknown".into(),
            |c| {
                if c.is_real() {
                    "real".into()
                } else {
                    "fake".into()
                }
            },
        ),
        sector_bytes: done.map(|c| c.sector),
        claimed_sectors: done.map(|c| c.claimed),
        claimed_bytes: done.map(|c| c.claimed * c.sector),
        real_sectors: done.map(|c| c.real),
        real_bytes: done.map(|c| c.real * c.sector),
        last_good_lba: done.and_then(|c| c.real.checked_sub(1)),
        fake,
        reads: done.map(|c| c.reads),
        writes: done.map(|c| c.writes),
        seconds: r.elapsed.as_secs_f64(),
        ended: match r.end {
            ProbeEnd::Done(_) => None,
            ProbeEnd::Stopped => Some("stopped".into()),
            ProbeEnd::Failed(why) => Some(why.clone()),
        },
        put_back: r.restored.map(|x| PutBackJson {
            sectors: x.sectors,
            verified: x.verified,
            mismatched: &x.mismatched,
            error: x.error.as_deref(),
        }),
        journal_kept: r.journal_kept,
    };
    serde_json::to_string_pretty(&json).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}")) + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_stick() -> Capacity {
        Capacity {
            sector: 512,
            claimed: 3_906_250_000,
            real: 204_800,
            fake: Some(Fake::Wraps {
                first: 204_800,
                onto: 0,
            }),
            reads: 31_000,
            writes: 64,
        }
    }

    #[test]
    fn a_fake_says_what_it_stores_of_what_it_claims_in_both_units() {
        assert_eq!(
            verdict(&fake_stick()),
            "fake: stores 100.0 MiB (104.9 MB) of the 2.0 TB (1.8 TiB) it claims"
        );
        let real = Capacity {
            real: 3_906_250_000,
            fake: None,
            ..fake_stick()
        };
        assert_eq!(verdict(&real), "real");
        assert_eq!(
            how(Fake::Wraps {
                first: 12_345,
                onto: 0
            }),
            "a write to LBA 12345 lands on LBA 0: the device wraps every 12,345 sectors"
        );
    }

    #[test]
    fn the_text_fits_80_columns_and_the_json_carries_the_figures() {
        let end = ProbeEnd::Done(fake_stick());
        let restored = Restored {
            sectors: 131_136,
            verified: 131_136,
            ..Restored::default()
        };
        let r = CapacityReport {
            device: "/dev/sdb",
            name: "sdb",
            model: Some("USB DISK 2.0"),
            end: &end,
            elapsed: Duration::from_secs(72),
            restored: Some(&restored),
            journal_kept: None,
        };
        let text = render_text(&r, 80);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(
            text.contains("Stores     100.0 MiB (104.9 MB): the last good LBA is 204799"),
            "{text}"
        );
        assert!(
            text.contains("131,136 sectors written back, 131,136 read back as saved"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&render_json(&r)).expect("json");
        assert_eq!(json["verdict"], "fake");
        assert_eq!(json["real_bytes"], 104_857_600);
        assert_eq!(json["last_good_lba"], 204_799);
        assert_eq!(json["fake"]["kind"], "wraps");
        assert_eq!(json["put_back"]["mismatched"], serde_json::json!([]));
    }
}
