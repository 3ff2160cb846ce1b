//! The power-cut check's LOG: a text file on another device holding what `--record` wrote
//! and every sequence number the device acknowledged as durable. Pure: format and parse.
//!
//! ```text
//! disktriage flushcheck log 1
//! run_id=5f0e2b9c01d4a733
//! record_bytes=4096
//! slots=16384
//! region_offset=0
//! device=sdb
//! size_bytes=500107862016
//! serial=WD-WCC4N0123456
//! logical_block_size=512
//! started_unix=1796000000
//! acknowledged:
//! 0
//! 1
//! ```
//!
//! The acknowledged numbers are appended one line at a time while the power may go at any
//! moment: a last line without its newline is a torn append and is ignored (its write was
//! never acknowledged to the admin's LOG either). A recording that ends by itself (a signal,
//! the device gone) appends an `ended: WHY` line: no power cut came, so the verify proves
//! nothing about one.

use std::collections::BTreeMap;

/// The first line of every LOG.
pub const FORMAT_LINE: &str = "disktriage flushcheck log 1";
/// The line between the header and the acknowledged sequence numbers.
pub const ACK_LINE: &str = "acknowledged:";
/// The start of the last line of a recording that ended without a power cut.
pub const END_PREFIX: &str = "ended: ";

/// What the LOG's header says about the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogHeader {
    pub run_id: u64,
    pub record_bytes: u32,
    pub slots: u64,
    pub region_offset: u64,
    /// The kernel name the device had while recording.
    pub device: String,
    pub size_bytes: u64,
    pub serial: Option<String>,
    pub wwid: Option<String>,
    pub logical_block_size: u32,
    pub started_unix: u64,
}

/// A parsed LOG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Log {
    pub header: LogHeader,
    /// The acknowledged sequence numbers, in the order appended.
    pub acknowledged: Vec<u64>,
    /// Whether a torn last line was ignored.
    pub torn_last_line: bool,
    /// Why the recording ended by itself (no power cut), when it says so.
    pub ended: Option<String>,
}

/// A header value on one line: control characters become spaces.
fn clean(value: &str) -> String {
    value
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// The header up to `acknowledged:` (durable before the first record).
pub fn format_header(h: &LogHeader) -> String {
    let mut out = format!("{FORMAT_LINE}\n");
    out += &format!("run_id={:016x}\n", h.run_id);
    out += &format!("record_bytes={}\n", h.record_bytes);
    out += &format!("slots={}\n", h.slots);
    out += &format!("region_offset={}\n", h.region_offset);
    out += &format!("device={}\n", clean(&h.device));
    out += &format!("size_bytes={}\n", h.size_bytes);
    if let Some(s) = h.serial.as_deref().map(clean).filter(|s| !s.is_empty()) {
        out += &format!("serial={s}\n");
    }
    if let Some(w) = h.wwid.as_deref().map(clean).filter(|s| !s.is_empty()) {
        out += &format!("wwid={w}\n");
    }
    out += &format!("logical_block_size={}\n", h.logical_block_size);
    out += &format!("started_unix={}\n", h.started_unix);
    out += ACK_LINE;
    out += "\n";
    out
}

/// One acknowledged sequence number's line.
pub fn format_ack(seq: u64) -> String {
    format!("{seq}\n")
}

/// The last line of a recording that ended by itself, `why` in words.
pub fn format_end(why: &str) -> String {
    format!("{END_PREFIX}{}\n", clean(why))
}

fn number<T: std::str::FromStr>(keys: &BTreeMap<&str, &str>, key: &str) -> Result<T, String> {
    let v = keys
        .get(key)
        .ok_or_else(|| format!("its header has no {key}= line"))?;
    v.parse()
        .map_err(|_| format!("its {key}= line is not a number: {v:?}"))
}

/// Parses a LOG's text, or says why it is refused.
pub fn parse(text: &str) -> Result<Log, String> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end_matches('\n') != FORMAT_LINE {
        return Err(format!(
            "it is not a disktriage flushcheck LOG (its first line is not \"{FORMAT_LINE}\")"
        ));
    }
    let mut keys = BTreeMap::new();
    let mut in_header = true;
    let mut acknowledged = Vec::new();
    let mut torn_last_line = false;
    let mut ended = None;
    for (i, raw) in lines.enumerate() {
        let lineno = i + 2;
        let Some(line) = raw.strip_suffix('\n') else {
            // The power went during this append: never durable, never counted.
            torn_last_line = true;
            break;
        };
        if ended.is_some() {
            return Err(format!(
                "line {lineno} follows the line that ended the recording"
            ));
        }
        if in_header {
            if line == ACK_LINE {
                in_header = false;
                continue;
            }
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| format!("line {lineno} of its header is not key=value"))?;
            keys.insert(k, v);
            continue;
        }
        if let Some(why) = line.strip_prefix(END_PREFIX) {
            ended = Some(why.to_string());
            continue;
        }
        let seq: u64 = line
            .parse()
            .map_err(|_| format!("line {lineno} is not a sequence number: {line:?}"))?;
        // 0, 1, 2...: a huge number would make every earlier one superseded.
        let expected = acknowledged.len() as u64;
        if seq != expected {
            return Err(format!(
                "line {lineno}: sequence number {seq} where {expected} comes next (a recording \
                 acknowledges 0, 1, 2, ... in order: this LOG was edited or mixed with another)"
            ));
        }
        acknowledged.push(seq);
    }
    if in_header {
        return Err(format!(
            "its header is not complete (no \"{ACK_LINE}\" line): the recording never started"
        ));
    }
    let run_id = keys
        .get("run_id")
        .and_then(|v| u64::from_str_radix(v, 16).ok())
        .ok_or("its run_id= line is missing or not a hexadecimal number")?;
    let record_bytes: u32 = number(&keys, "record_bytes")?;
    if record_bytes < super::records::MIN_RECORD || !record_bytes.is_power_of_two() {
        return Err(format!(
            "its record length ({record_bytes} bytes) is absurd"
        ));
    }
    let slots: u64 = number(&keys, "slots")?;
    let size_bytes: u64 = number(&keys, "size_bytes")?;
    let region_offset: u64 = number(&keys, "region_offset")?;
    let end = slots
        .checked_mul(u64::from(record_bytes))
        .and_then(|r| r.checked_add(region_offset));
    if slots == 0 || end.is_none_or(|end| end > size_bytes) {
        return Err(format!(
            "its ring ({slots} slots of {record_bytes} bytes at {region_offset}) does not fit \
             the {size_bytes}-byte device it names"
        ));
    }
    let logical_block_size: u32 = number(&keys, "logical_block_size")?;
    if logical_block_size < 512
        || !logical_block_size.is_power_of_two()
        || !record_bytes.is_multiple_of(logical_block_size)
    {
        return Err(format!(
            "its logical block size ({logical_block_size} bytes) is absurd for {record_bytes}-byte \
             records"
        ));
    }
    let text_of = |k: &str| keys.get(k).map(|v| v.to_string()).filter(|v| !v.is_empty());
    Ok(Log {
        header: LogHeader {
            run_id,
            record_bytes,
            slots,
            region_offset,
            device: text_of("device").ok_or("its header has no device= line")?,
            size_bytes,
            serial: text_of("serial"),
            wwid: text_of("wwid"),
            logical_block_size,
            started_unix: number(&keys, "started_unix")?,
        },
        acknowledged,
        torn_last_line,
        ended,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> LogHeader {
        LogHeader {
            run_id: 0x5f0e_2b9c_01d4_a733,
            record_bytes: 4096,
            slots: 16384,
            region_offset: 0,
            device: "sdb".into(),
            size_bytes: 1 << 30,
            serial: Some("WD-1\n2".into()),
            wwid: None,
            logical_block_size: 512,
            started_unix: 1_796_000_000,
        }
    }

    #[test]
    fn a_log_reads_back_as_written() {
        let text = format_header(&header()) + &format_ack(0) + &format_ack(1) + &format_ack(2);
        let log = parse(&text).expect("parses");
        let mut expected = header();
        expected.serial = Some("WD-1 2".into());
        assert_eq!(log.header, expected);
        assert_eq!(log.acknowledged, vec![0, 1, 2]);
        assert!(!log.torn_last_line);
    }

    #[test]
    fn a_torn_last_line_is_ignored() {
        let text = format_header(&header()) + &format_ack(0) + &format_ack(1) + "2";
        let log = parse(&text).expect("parses");
        assert_eq!(log.acknowledged, vec![0, 1]);
        assert!(log.torn_last_line);
        // Torn in the middle of a number: "1" of "12".
        let text = format_header(&header()) + "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n1";
        assert_eq!(parse(&text).expect("parses").acknowledged.len(), 12);
    }

    #[test]
    fn a_recording_that_ended_by_itself_says_why() {
        let text = format_header(&header()) + &format_ack(0) + &format_end("stopped by\nSIGTERM");
        let log = parse(&text).expect("parses");
        assert_eq!(log.acknowledged, vec![0]);
        assert_eq!(log.ended.as_deref(), Some("stopped by SIGTERM"));
        assert_eq!(
            parse(&(format_header(&header()) + "0\n"))
                .expect("parses")
                .ended,
            None
        );
        // Nothing may follow it.
        let e = parse(&(text + "1\n")).expect_err("refused");
        assert!(e.contains("follows the line that ended"), "{e}");
    }

    #[test]
    fn no_acknowledged_record_is_an_empty_list() {
        let log = parse(&format_header(&header())).expect("parses");
        assert!(log.acknowledged.is_empty());
    }

    #[test]
    fn other_files_are_refused_with_the_reason() {
        let e = parse("hello\n").expect_err("refused");
        assert!(e.contains("not a disktriage flushcheck LOG"), "{e}");
        assert!(parse("").is_err());
        let e = parse("disktriage flushcheck log 1\nrun_id=1\n").expect_err("refused");
        assert!(e.contains("not complete"), "{e}");
        let e = parse(&(format_header(&header()) + "0\nx\n2\n")).expect_err("refused");
        assert!(e.contains("line 13"), "{e}");
        // Out of order, a gap, or the largest number (which made everything look superseded).
        for tail in ["0\n1\n0\n", "0\n2\n", "1\n", "0\n1\n18446744073709551615\n"] {
            let e = parse(&(format_header(&header()) + tail)).expect_err("refused");
            assert!(e.contains("comes next"), "{tail:?}: {e}");
        }
    }

    #[test]
    fn absurd_headers_are_refused() {
        let mut h = header();
        h.slots = u64::MAX;
        assert!(parse(&format_header(&h)).is_err());
        let mut h = header();
        h.record_bytes = 100;
        assert!(parse(&format_header(&h)).is_err());
        let mut h = header();
        h.slots = 0;
        assert!(parse(&format_header(&h)).is_err());
        let text = format_header(&header()).replace("run_id=5f0e2b9c01d4a733", "run_id=zz");
        assert!(parse(&text).is_err());
        for size in [0, 3, 256, 8192] {
            let mut h = header();
            h.logical_block_size = size;
            let e = parse(&format_header(&h)).expect_err("refused");
            assert!(e.contains("logical block size"), "{size}: {e}");
        }
    }
}
