//! The timing check's report: the figures, the floor and the rotation rate's source, the
//! verdict and next step, as 80-column text and as JSON (the contract's fields, and more).

use serde::Serialize;

use crate::flush::timing::{
    DIRTY_BYTES, Judgement, Stats, TimingFacts, dirty_words, ms, thousands,
};
use crate::model::text::neutralize_controls;
use crate::report::table::wrap;

/// What the report shows.
#[derive(Debug, Clone)]
pub struct TimingReport<'a> {
    /// The path the admin named.
    pub device: &'a str,
    /// The kernel name the guard checked.
    pub name: &'a str,
    pub model: Option<&'a str>,
    pub serial: Option<&'a str>,
    pub facts: &'a TimingFacts,
    /// `None` when the run did not finish (then `ended` says why).
    pub judgement: Option<&'a Judgement>,
    /// Why the run ended early: stopped by a signal, or the failed operation.
    pub ended: Option<String>,
    /// What was put back (the write cache), in words.
    pub restored: Vec<String>,
}

/// The label column's width.
const LABEL: usize = 26;

fn stats_text(s: &Option<Stats>) -> String {
    match s {
        Some(s) => format!(
            "median {}, p99 {}, min {}",
            ms(s.median_ms),
            ms(s.p99_ms),
            ms(s.min_ms),
        ),
        None => "not measured".into(),
    }
}

/// "200 O_DSYNC 4 KiB commits": how many the figures are of (fewer after a stop).
fn counted(s: &Option<Stats>, what: &str) -> String {
    match s {
        Some(s) => format!("{} {what}", s.count),
        None => {
            let mut chars = what.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect())
                .unwrap_or_default()
        }
    }
}

fn row(label: &str, value: &str, width: usize) -> String {
    let prefix = format!("  {label:<LABEL$}");
    let wrapped = wrap(&prefix, value, width.max(LABEL + 20));
    // `wrap` indents by four when the label is wide: keep the values in one column.
    wrapped
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{l}\n")
            } else {
                format!("{}{}\n", " ".repeat(LABEL + 2), l.trim_start())
            }
        })
        .collect()
}

/// The report as text for `width` columns.
pub fn render_text(r: &TimingReport<'_>, width: usize) -> String {
    let f = r.facts;
    let mut who = vec![neutralize_controls(r.name)];
    if let Some(m) = r.model {
        who.push(neutralize_controls(m));
    }
    if let Some(s) = r.serial {
        who.push(format!("serial {}", neutralize_controls(s)));
    }
    let mut out = wrap(
        "",
        &format!(
            "Flush check of {} ({})",
            neutralize_controls(r.device),
            who.join(", ")
        ),
        width,
    );
    let size = dirty_words(f.block);
    out += &row(
        &counted(&f.commit, &format!("O_DSYNC {size} commits")),
        &stats_text(&f.commit),
        width,
    );
    out += &row(
        &counted(&f.write_flush, &format!("write+fdatasync {size}")),
        &stats_text(&f.write_flush),
        width,
    );
    let off = match (&f.cache_off_commit, &f.cache_off_note) {
        (Some(_), _) => stats_text(&f.cache_off_commit),
        (None, Some(why)) => format!("not measured: {}", neutralize_controls(why)),
        (None, None) => "not measured".into(),
    };
    out += &row(
        &counted(&f.cache_off_commit, "commits, cache off"),
        &off,
        width,
    );
    let dirty = dirty_words(f.dirty_bytes);
    let flush = match (f.flush_after_dirty_ms, f.dirty_write_ms) {
        (Some(fl), Some(w)) => format!("{} (writing the {dirty} took {})", ms(fl), ms(w)),
        (Some(fl), None) => ms(fl),
        _ => "not measured".into(),
    };
    out += &row(&format!("Flush after {dirty} dirty"), &flush, width);
    if f.dirty_bytes < DIRTY_BYTES {
        out += &row(
            "",
            &format!(
                "(the device is smaller than {}: {dirty} written)",
                dirty_words(DIRTY_BYTES)
            ),
            width,
        );
    }
    out += &row(
        "Kernel flush policy",
        f.kernel_write_cache.as_deref().unwrap_or("not known"),
        width,
    );
    let rate = match f.rotation.rpm {
        Some(0) => "does not rotate".to_string(),
        Some(rpm) => format!("{} rpm", thousands(rpm)),
        None => "not known".to_string(),
    };
    out += &row(
        "Rotation rate",
        &format!("{rate} (from {})", neutralize_controls(&f.rotation.source)),
        width,
    );
    let floor = match f.rotation.floor_ms() {
        Some(fl) => format!("{} (one revolution)", ms(fl)),
        None => "none (no rotation rate to judge by)".into(),
    };
    out += &row("Floor per commit", &floor, width);
    for line in &r.restored {
        out += &row("Write cache", &neutralize_controls(line), width);
    }
    if let Some(why) = &r.ended {
        out += &wrap(
            "Not finished: ",
            &format!("{}; no verdict", neutralize_controls(why)),
            width,
        );
    }
    if let Some(j) = r.judgement {
        out += &wrap(
            "Verdict: ",
            &format!("{}: {}", j.verdict.as_str(), j.sentence),
            width,
        );
        out += &wrap("Next step: ", &j.next_step, width);
    }
    out
}

#[derive(Serialize)]
struct JsonTiming<'a> {
    device: &'a str,
    name: &'a str,
    model: Option<&'a str>,
    serial: Option<&'a str>,
    commit_ms: Option<f64>,
    write_flush_ms: Option<f64>,
    cache_off_commit_ms: Option<f64>,
    floor_ms: Option<f64>,
    rpm: Option<u32>,
    rpm_source: &'a str,
    rotational: Option<bool>,
    flush_after_dirty_ms: Option<f64>,
    dirty_write_ms: Option<f64>,
    dirty_bytes: u64,
    kernel_write_cache: Option<&'a str>,
    verdict: Option<&'a str>,
    sentence: Option<&'a str>,
    next_step: Option<&'a str>,
    block_bytes: u64,
    commit: Option<Stats>,
    write_flush: Option<Stats>,
    cache_off_commit: Option<Stats>,
    cache_off_note: Option<&'a str>,
    restored: &'a [String],
    ended: Option<&'a str>,
}

/// The report as JSON.
pub fn render_json(r: &TimingReport<'_>) -> anyhow::Result<String> {
    let f = r.facts;
    let doc = JsonTiming {
        device: r.device,
        name: r.name,
        model: r.model,
        serial: r.serial,
        commit_ms: f.commit.map(|s| s.median_ms),
        write_flush_ms: f.write_flush.map(|s| s.median_ms),
        cache_off_commit_ms: f.cache_off_commit.map(|s| s.median_ms),
        floor_ms: f.rotation.floor_ms(),
        rpm: f.rotation.rpm,
        rpm_source: &f.rotation.source,
        rotational: f.rotation.rotational,
        flush_after_dirty_ms: f.flush_after_dirty_ms,
        dirty_write_ms: f.dirty_write_ms,
        dirty_bytes: f.dirty_bytes,
        kernel_write_cache: f.kernel_write_cache.as_deref(),
        verdict: r.judgement.map(|j| j.verdict.as_str()),
        sentence: r.judgement.map(|j| j.sentence.as_str()),
        next_step: r.judgement.map(|j| j.next_step.as_str()),
        block_bytes: f.block,
        commit: f.commit,
        write_flush: f.write_flush,
        cache_off_commit: f.cache_off_commit,
        cache_off_note: f.cache_off_note.as_deref(),
        restored: &r.restored,
        ended: r.ended.as_deref(),
    };
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flush::timing::{Rotation, judge};

    fn facts() -> TimingFacts {
        let s = |m: f64| {
            Some(Stats {
                count: 200,
                median_ms: m,
                p99_ms: m * 3.0,
                min_ms: m / 2.0,
            })
        };
        TimingFacts {
            block: 4096,
            commit: s(0.084),
            write_flush: s(0.11),
            cache_off_commit: None,
            cache_off_note: Some("drive write cache control not supported on loop".into()),
            flush_after_dirty_ms: Some(0.03),
            dirty_write_ms: Some(40.0),
            dirty_bytes: DIRTY_BYTES,
            rotation: Rotation {
                rpm: Some(7200),
                rotational: Some(false),
                source: "--rpm".into(),
            },
            kernel_write_cache: Some("write back".into()),
            no_drive: None,
        }
    }

    fn report<'a>(f: &'a TimingFacts, j: &'a Judgement) -> TimingReport<'a> {
        TimingReport {
            device: "/dev/loop3",
            name: "loop3",
            model: None,
            serial: None,
            facts: f,
            judgement: Some(j),
            ended: None,
            restored: Vec::new(),
        }
    }

    #[test]
    fn the_text_fits_80_columns_and_says_the_figures() {
        let f = facts();
        let j = judge(&f);
        let text = render_text(&report(&f, &j), 80);
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "too wide: {line:?}");
        }
        for words in [
            "Flush check of /dev/loop3 (loop3)",
            "200 O_DSYNC 4 KiB commits median 0.08 ms, p99 0.25 ms, min 0.04 ms",
            "Commits, cache off        not measured: drive write cache control not\n",
            "0.03 ms (writing the 64 MiB took 40.00 ms)",
            "7,200 rpm (from --rpm)",
            "8.33 ms (one revolution)",
            "Verdict: volatile-cache: commits in 0.08 ms on a 7,200 rpm disk",
            "Next step: ",
        ] {
            assert!(text.contains(words), "{words:?} not in:\n{text}");
        }
    }

    #[test]
    fn the_json_has_the_contracts_fields() {
        let f = facts();
        let j = judge(&f);
        let doc: serde_json::Value =
            serde_json::from_str(&render_json(&report(&f, &j)).unwrap()).unwrap();
        for key in [
            "device",
            "model",
            "serial",
            "commit_ms",
            "write_flush_ms",
            "cache_off_commit_ms",
            "floor_ms",
            "rpm",
            "rpm_source",
            "flush_after_dirty_ms",
            "dirty_bytes",
            "kernel_write_cache",
            "verdict",
            "sentence",
            "next_step",
        ] {
            assert!(doc.get(key).is_some(), "{key} missing: {doc}");
        }
        assert_eq!(doc["verdict"], "volatile-cache");
        assert_eq!(doc["commit_ms"], 0.084);
        assert_eq!(doc["cache_off_commit_ms"], serde_json::Value::Null);
        assert_eq!(doc["rpm"], 7200);
        assert_eq!(doc["dirty_bytes"], DIRTY_BYTES);
        assert_eq!(doc["kernel_write_cache"], "write back");
    }

    #[test]
    fn an_unfinished_run_says_why_and_gives_no_verdict() {
        let f = facts();
        let j = judge(&f);
        let r = TimingReport {
            judgement: None,
            ended: Some("stopped by SIGINT".into()),
            ..report(&f, &j)
        };
        let text = render_text(&r, 80);
        assert!(
            text.contains("Not finished: stopped by SIGINT; no verdict"),
            "{text}"
        );
        assert!(!text.contains("Verdict:"));
    }
}
