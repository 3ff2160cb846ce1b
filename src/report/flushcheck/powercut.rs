//! What `disktriage flushcheck DEV --verify LOG` prints: the counts, the lost sequence numbers
//! (a long list shortened) and the sentence, as 80-column text and as the contract's JSON.

use serde::Serialize;

use crate::flush::verify::Verdict;

/// At most this many lost numbers are listed in the text (the JSON lists them all).
const LISTED: usize = 40;

/// One verify's result.
#[derive(Debug, Clone)]
pub struct VerifyReport {
    /// The kernel name now.
    pub device: String,
    /// The LOG as given.
    pub log: String,
    pub run_id: u64,
    pub verdict: Verdict,
    /// Why the recording ended by itself (no power cut), when its LOG says so.
    pub ended: Option<String>,
}

/// The JSON form, in the contract's fixed field names.
#[derive(Debug, Serialize)]
pub struct VerifyJson<'a> {
    pub device: &'a str,
    pub log: &'a str,
    pub run_id: String,
    pub acknowledged: u64,
    pub verified: u64,
    pub superseded: u64,
    pub lost: &'a [u64],
    pub torn: &'a [u64],
    pub other_run: u64,
    pub overwritten_later: &'a [u64],
    pub ended: Option<&'a str>,
    pub unreadable_slots: Vec<u64>,
    pub verdict: &'static str,
    pub sentence: String,
}

impl VerifyReport {
    /// "nothing-lost", "cannot-tell" (a later recording overwrote the ring) or "lost".
    pub fn verdict_word(&self) -> &'static str {
        if self.verdict.cannot_tell() {
            "cannot-tell"
        } else if self.verdict.nothing_lost() {
            "nothing-lost"
        } else {
            "lost"
        }
    }

    /// The sentence the admin acts on.
    pub fn sentence(&self) -> String {
        let v = &self.verdict;
        if v.acknowledged == 0 {
            return "the device acknowledged no record before the recording ended: there is \
                    nothing to verify (record again, and cut the power while it records)"
                .to_string();
        }
        if v.cannot_tell() {
            return format!(
                "{} acknowledged record{} were overwritten by a later --record on this device, \
                 not lost by it: this LOG can no longer be verified (verify each LOG after its \
                 own power cut, before recording again)",
                v.overwritten_later.len(),
                if v.overwritten_later.len() == 1 {
                    ""
                } else {
                    "s"
                }
            );
        }
        if v.nothing_lost()
            && let Some(why) = &self.ended
        {
            return format!(
                "every record the device acknowledged came back ({} verified, {} superseded \
                 by later writes), but the recording ended by itself ({why}) with no power cut: \
                 this says nothing about the write cache through one (record again and cut \
                 the power while it records)",
                v.verified, v.superseded
            );
        }
        if v.nothing_lost() {
            return format!(
                "every record the device acknowledged came back ({} verified, {} superseded \
                 by later writes): it kept what it acknowledged through this power cut (one \
                 cut proves no more than that: repeat it a few times)",
                v.verified, v.superseded
            );
        }
        let torn = if v.torn.is_empty() {
            String::new()
        } else {
            format!(" ({} torn)", v.torn.len())
        };
        format!(
            "the device lost {} record{} it had acknowledged as durable{torn}: its write cache \
             acknowledges flushes it does not keep (or its power-loss protection failed); do \
             not trust it under a database with the write cache on",
            v.lost.len(),
            if v.lost.len() == 1 { "" } else { "s" }
        )
    }

    pub fn json(&self) -> VerifyJson<'_> {
        VerifyJson {
            device: &self.device,
            log: &self.log,
            run_id: format!("{:016x}", self.run_id),
            acknowledged: self.verdict.acknowledged,
            verified: self.verdict.verified,
            superseded: self.verdict.superseded,
            lost: &self.verdict.lost,
            torn: &self.verdict.torn,
            other_run: self.verdict.other_run,
            overwritten_later: &self.verdict.overwritten_later,
            ended: self.ended.as_deref(),
            unreadable_slots: self.verdict.unreadable.iter().map(|(s, _)| *s).collect(),
            verdict: self.verdict_word(),
            sentence: self.sentence(),
        }
    }

    /// The text report, wrapped at `width` columns.
    pub fn text(&self, width: usize) -> String {
        let v = &self.verdict;
        let mut out = format!(
            "flushcheck verify of {} (LOG {}, run {:016x})\n",
            self.device, self.log, self.run_id
        );
        out += &format!(
            "  acknowledged {}, verified {}, superseded {}, lost {}, torn {}\n",
            v.acknowledged,
            v.verified,
            v.superseded,
            v.lost.len(),
            v.torn.len()
        );
        if !v.lost.is_empty() {
            out += &wrap(&format!("lost: {}", list(&v.lost)), width, "  ");
        }
        if !v.torn.is_empty() {
            out += &wrap(&format!("torn: {}", list(&v.torn)), width, "  ");
        }
        if v.other_run > 0 {
            out += &wrap(
                &format!(
                    "{} slot(s) held a record of another recording where this one's was \
                     expected",
                    v.other_run
                ),
                width,
                "  ",
            );
        }
        if !v.overwritten_later.is_empty() {
            out += &wrap(
                &format!(
                    "overwritten by a later recording: {}",
                    list(&v.overwritten_later)
                ),
                width,
                "  ",
            );
        }
        for (slot, why) in v.unreadable.iter().take(5) {
            out += &wrap(
                &format!("slot {slot} could not be read: {why}"),
                width,
                "  ",
            );
        }
        out += &wrap(
            &format!("{}: {}", self.verdict_word(), self.sentence()),
            width,
            "",
        );
        out
    }
}

/// The numbers, the first `LISTED` of them, then how many more.
fn list(seqs: &[u64]) -> String {
    let shown: Vec<String> = seqs.iter().take(LISTED).map(u64::to_string).collect();
    let mut s = shown.join(" ");
    if seqs.len() > LISTED {
        s += &format!(
            " ... and {} more ({} in all)",
            seqs.len() - LISTED,
            seqs.len()
        );
    }
    s
}

/// Wraps `text` at word boundaries to `width` columns, each line starting with `indent`
/// (continuation lines two more spaces).
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let width = width.max(40);
    let mut out = String::new();
    let mut line = indent.to_string();
    let mut first = true;
    for word in text.split_whitespace() {
        let start = if first {
            indent.len()
        } else {
            indent.len() + 2
        };
        if line.len() > start && line.len() + 1 + word.len() > width {
            out += line.trim_end();
            out += "\n";
            line = format!("{indent}  ");
            first = false;
        }
        if line.len() > indent.len() + if first { 0 } else { 2 } {
            line.push(' ');
        }
        line += word;
    }
    out += line.trim_end();
    out += "\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(lost: Vec<u64>, torn: Vec<u64>) -> VerifyReport {
        VerifyReport {
            device: "loop3".into(),
            log: "/root/flush.log".into(),
            run_id: 0xabc,
            verdict: Verdict {
                acknowledged: 1000,
                verified: 1000 - lost.len() as u64 - 10,
                superseded: 10,
                lost,
                torn,
                ..Verdict::default()
            },
            ended: None,
        }
    }

    #[test]
    fn a_recording_with_no_power_cut_and_an_overwritten_ring_say_so() {
        let mut r = report(vec![], vec![]);
        r.ended = Some("stopped by SIGTERM".into());
        // Wrapped at 80 columns: the words are compared with the line breaks as spaces.
        let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        let t = flat(&r.text(80));
        assert!(t.contains("ended by itself (stopped by SIGTERM)"), "{t}");
        assert!(!t.contains("through this power cut"), "{t}");
        let mut r = report(vec![], vec![]);
        r.verdict.overwritten_later = vec![7, 8];
        let t = r.text(80);
        assert!(
            flat(&t).contains("overwritten by a later recording: 7 8"),
            "{t}"
        );
        assert!(
            flat(&t).contains("cannot-tell: 2 acknowledged records were overwritten"),
            "{t}"
        );
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        let j = serde_json::to_value(r.json()).expect("json");
        assert_eq!(j["verdict"], "cannot-tell");
        assert_eq!(j["overwritten_later"], serde_json::json!([7, 8]));
    }

    #[test]
    fn nothing_lost_says_so() {
        let r = report(vec![], vec![]);
        let t = r.text(80);
        assert!(
            t.contains("acknowledged 1000, verified 990, superseded 10, lost 0"),
            "{t}"
        );
        assert!(t.contains("nothing-lost: every record the device acknowledged came back"));
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        let j = serde_json::to_value(r.json()).expect("json");
        assert_eq!(j["verdict"], "nothing-lost");
        assert_eq!(j["lost"], serde_json::json!([]));
    }

    #[test]
    fn lost_records_are_named_and_a_long_list_shortened() {
        let lost: Vec<u64> = (500..600).collect();
        let r = report(lost.clone(), vec![599]);
        let t = r.text(80);
        assert!(t.contains("lost: 500 501 502"), "{t}");
        assert!(t.contains("and 60 more (100 in all)"), "{t}");
        assert!(t.contains("torn: 599"), "{t}");
        assert!(
            t.contains("lost: the device lost 100 records it had acknowledged"),
            "{t}"
        );
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        let j = serde_json::to_value(r.json()).expect("json");
        assert_eq!(j["verdict"], "lost");
        assert_eq!(j["lost"].as_array().map(Vec::len), Some(100));
        assert_eq!(j["torn"], serde_json::json!([599]));
        for key in [
            "device",
            "acknowledged",
            "verified",
            "superseded",
            "sentence",
        ] {
            assert!(j.get(key).is_some(), "{key}");
        }
    }
}
