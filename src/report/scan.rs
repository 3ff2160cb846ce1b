//! What `disktriage scan` prints: the text summary (buckets, the map, the unreadable, slow and
//! TIME areas in bytes and LBAs, the verdict) and the JSON document.

use serde::Serialize;

use crate::model::text::neutralize_controls;
use crate::model::{Bytes, DiskIdentity};
use crate::report::table::wrap;
use crate::scan::Span;
use crate::scan::engine::{End, Scan};
use crate::scan::repair::Repair;
use crate::scan::verdict::verdict;

/// What is known of the device scanned.
#[derive(Debug, Clone, Serialize)]
pub struct ScanTarget {
    /// The path as given.
    pub path: String,
    /// The kernel name.
    pub name: Option<String>,
    /// "major:minor".
    pub dev: String,
    pub size: u64,
    pub logical_block_size: u32,
    pub physical_block_size: u32,
    /// The disk's identity (world-wide id, serial, loop image, else the name).
    pub identity: DiskIdentity,
    pub model: Option<String>,
    /// A partition's first byte on the disk (the report's LBAs count from its start).
    pub partition_start: Option<u64>,
}

/// A finished (or stopped) scan with what the report says around it.
pub struct ScanRun<'a> {
    pub target: &'a ScanTarget,
    pub scan: &'a Scan,
    pub seconds: f64,
    /// Whether a read is abandoned at --timeout (SG_IO); plain reads are waited for.
    pub timeout_enforced: bool,
    /// When a read is abandoned: --timeout, or later (`sys::scan::SG_MIN_TIMEOUT`).
    pub abandon_after: Option<std::time::Duration>,
    /// How it is enforced, or why it is not (the transport, the refusal).
    pub timeout_reason: String,
    pub mapfile: Option<String>,
    pub badblocks: Option<String>,
    /// `--repair`: what the rewrite of the unreadable sectors came to.
    pub repair: Option<&'a RepairRun>,
}

/// The drive's sector counts from SMART (ATA attributes 5 and 197), each `None` when SMART does
/// not give it; `note` says why none could be read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SectorCounts {
    /// Reallocated_Sector_Ct (5), raw.
    pub reallocated: Option<u64>,
    /// Current_Pending_Sector (197), raw.
    pub pending: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `scan --repair`: the repair and the drive's counts around it.
#[derive(Debug, Clone)]
pub struct RepairRun {
    pub repair: Repair,
    pub sector: u64,
    pub before: SectorCounts,
    pub after: SectorCounts,
}

#[derive(Serialize)]
struct JsonRepair<'a> {
    sectors_attempted: u64,
    repaired: u64,
    still_unreadable: u64,
    /// The sectors not repaired, merged (bytes).
    still_unreadable_ranges: Vec<JsonRange>,
    /// Sectors that read just before their write, so were not written (rewritten since).
    readable_again: u64,
    readable_again_ranges: Vec<JsonRange>,
    /// Why the repair stopped before the end, when it did.
    stopped: Option<String>,
    smart_before: &'a SectorCounts,
    smart_after: &'a SectorCounts,
}

fn json_repair(r: &RepairRun) -> JsonRepair<'_> {
    JsonRepair {
        sectors_attempted: r.repair.attempted(),
        repaired: r.repair.repaired(),
        still_unreadable: r.repair.still_unreadable(),
        still_unreadable_ranges: json_ranges(r.repair.unrepaired_ranges(r.sector)),
        readable_again: r.repair.readable_again(),
        readable_again_ranges: json_ranges(r.repair.readable_again_ranges(r.sector)),
        stopped: r.repair.stopped.as_deref().map(neutralize_controls),
        smart_before: &r.before,
        smart_after: &r.after,
    }
}

fn json_ranges(spans: Vec<Span>) -> Vec<JsonRange> {
    spans
        .into_iter()
        .map(|s| JsonRange {
            offset: s.offset,
            length: s.length,
        })
        .collect()
}

fn count_words(n: Option<u64>) -> String {
    n.map_or_else(|| "not available".to_string(), |n| n.to_string())
}

/// The text section of a repair.
fn repair_text(out: &mut String, r: &RepairRun) {
    let rep = &r.repair;
    out.push_str("Repair (zeros written over the unreadable sectors, then read again):\n");
    if rep.attempted() == 0 && rep.stopped.is_none() {
        out.push_str("  no unreadable sector: nothing written\n");
    } else {
        out.push_str(&format!(
            "  {} sectors attempted: {} repaired, {} still unreadable\n",
            rep.attempted(),
            rep.repaired(),
            rep.still_unreadable()
        ));
    }
    if rep.readable_again() > 0 {
        out.push_str(&format!(
            "  {} readable again, not written: rewritten since the scan (by a file system or \
             the drive), so zeros would destroy their data\n",
            rep.readable_again()
        ));
    }
    if let Some(why) = &rep.stopped {
        out.push_str(&format!(
            "  stopped before the end, nothing more written: {}\n",
            neutralize_controls(why)
        ));
    }
    let ranges = rep.unrepaired_ranges(r.sector);
    list_lines(out, "  Still unreadable:", ranges.iter(), |s| {
        format!("{} +{}  {}", s.offset, s.length, lba_range(*s, r.sector))
    });
    let ranges = rep.readable_again_ranges(r.sector);
    list_lines(out, "  Readable again, not written:", ranges.iter(), |s| {
        format!("{} +{}  {}", s.offset, s.length, lba_range(*s, r.sector))
    });
    for (label, before, after) in [
        (
            "Reallocated sectors (SMART 5)",
            r.before.reallocated,
            r.after.reallocated,
        ),
        (
            "Pending sectors (SMART 197)",
            r.before.pending,
            r.after.pending,
        ),
    ] {
        let text = match (before, after) {
            (None, None) => "not available".to_string(),
            (b, a) => format!("{} before, {} after", count_words(b), count_words(a)),
        };
        out.push_str(&format!("  {label}: {text}\n"));
    }
    if let Some(note) = r.before.note.as_ref().or(r.after.note.as_ref()) {
        out.push_str(&format!("  (SMART: {})\n", neutralize_controls(note)));
    }
}

/// The sentence about timeouts every output carries.
pub fn timeout_note(run: &ScanRun) -> String {
    let t = run.scan.config.timeout.as_millis();
    let reason = neutralize_controls(&run.timeout_reason);
    if let Some(after) = run.abandon_after.filter(|_| run.timeout_enforced) {
        let after = after.as_millis();
        let between = if after > t {
            format!("; one that takes {t} ms or more but answers before is counted TIME")
        } else {
            String::new()
        };
        format!(
            "a read is abandoned after {after} ms ({reason}) and counted TIME, not read: a \
             mapfile keeps it as not tried for the next run{between}"
        )
    } else {
        format!(
            "a per-command timeout is not available ({reason}): a slow block is waited for, \
             then counted TIME at {t} ms or more"
        )
    }
}

fn end_words(end: Option<&End>) -> (&'static str, Option<String>) {
    match end {
        Some(End::Finished) | None => ("finished", None),
        Some(End::Stopped) => ("stopped", None),
        Some(End::Gone(why)) => ("gone", Some(neutralize_controls(why))),
    }
}

/// An errno's symbolic name ("EIO").
pub fn errno_name(errno: i32) -> String {
    format!("{:?}", nix::errno::Errno::from_raw(errno))
}

/// "LBA 8192-8207" for a byte range, in `sector`-byte units.
pub fn lba_range(span: Span, sector: u64) -> String {
    let sector = sector.max(1);
    let first = span.offset / sector;
    let last = (span.end().max(1) - 1) / sector;
    if first == last {
        format!("LBA {first}")
    } else {
        format!("LBA {first}-{last}")
    }
}

#[derive(Serialize)]
struct JsonBucket {
    label: &'static str,
    upto_ms: Option<u64>,
    blocks: u64,
}

#[derive(Serialize)]
struct JsonError {
    offset: u64,
    length: u64,
    errno: i32,
    errno_name: String,
    lba: u64,
    sectors: u64,
}

#[derive(Serialize)]
struct JsonSlow {
    offset: u64,
    length: u64,
    ms: u64,
    reread_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reread_errno: Option<i32>,
}

#[derive(Serialize)]
struct JsonRange {
    offset: u64,
    length: u64,
}

#[derive(Serialize)]
struct JsonScan<'a> {
    target: &'a ScanTarget,
    offset: u64,
    size: u64,
    block: u64,
    slow_ms: u128,
    timeout_ms: u128,
    timeout_enforced: bool,
    /// When a read is abandoned (SG_IO), in ms.
    abandon_after_ms: Option<u128>,
    timeout_reason: String,
    timeout_note: String,
    /// Bytes this run had to read (all of the range, or what the mapfile left).
    bytes_planned: u64,
    bytes_read: u64,
    bytes_unreadable: u64,
    /// Bytes of blocks abandoned at the per-command timeout (not read).
    bytes_abandoned: u64,
    seconds: f64,
    end: &'static str,
    end_reason: Option<String>,
    buckets: Vec<JsonBucket>,
    errors: Vec<JsonError>,
    slow: Vec<JsonSlow>,
    timeouts: Vec<JsonRange>,
    failed_then_read: u64,
    verdict: String,
    mapfile: Option<String>,
    badblocks: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repair: Option<JsonRepair<'a>>,
}

/// The JSON document.
pub fn render_json(run: &ScanRun) -> anyhow::Result<String> {
    let scan = run.scan;
    let sector = scan.config.sector.max(1);
    let (end, end_reason) = end_words(scan.end.as_ref());
    let doc = JsonScan {
        target: run.target,
        offset: scan.config.domain.offset,
        size: scan.config.domain.length,
        block: scan.config.block,
        slow_ms: scan.config.slow.as_millis(),
        timeout_ms: scan.config.timeout.as_millis(),
        timeout_enforced: run.timeout_enforced,
        abandon_after_ms: run.abandon_after.map(|d| d.as_millis()),
        timeout_reason: neutralize_controls(&run.timeout_reason),
        timeout_note: timeout_note(run),
        bytes_planned: scan.planned,
        bytes_read: scan.bytes_read,
        bytes_unreadable: scan.bytes_bad,
        bytes_abandoned: scan.bytes_abandoned,
        seconds: run.seconds,
        end,
        end_reason,
        buckets: scan
            .buckets
            .iter()
            .map(|(b, blocks)| JsonBucket {
                label: b.label(),
                upto_ms: b.upto_ms(),
                blocks,
            })
            .collect(),
        errors: scan
            .errors
            .iter()
            .map(|(s, e)| JsonError {
                offset: s.offset,
                length: s.length,
                errno: e.0,
                errno_name: errno_name(e.0),
                lba: s.offset / sector,
                sectors: s.length.div_ceil(sector),
            })
            .collect(),
        slow: scan
            .slow
            .iter()
            .map(|(s, t)| JsonSlow {
                offset: s.offset,
                length: s.length,
                ms: t.ms,
                reread_ms: t.reread_ms,
                reread_errno: t.reread_errno,
            })
            .collect(),
        timeouts: scan
            .timeouts
            .iter()
            .map(|(s, _)| JsonRange {
                offset: s.offset,
                length: s.length,
            })
            .collect(),
        failed_then_read: scan.failed_then_read,
        verdict: verdict(scan),
        mapfile: run.mapfile.clone(),
        badblocks: run.badblocks.clone(),
        repair: run.repair.map(json_repair),
    };
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

/// Areas listed in the text; the rest are counted (all of them are in --json).
const TEXT_LIST_LIMIT: usize = 20;

fn list_lines<T>(
    out: &mut String,
    title: &str,
    items: impl ExactSizeIterator<Item = T>,
    line: impl Fn(T) -> String,
) {
    let total = items.len();
    if total == 0 {
        return;
    }
    out.push_str(&format!("{title}\n"));
    for item in items.take(TEXT_LIST_LIMIT) {
        out.push_str(&format!("  {}\n", line(item)));
    }
    if total > TEXT_LIST_LIMIT {
        out.push_str(&format!(
            "  ... and {} more (all of them in --json)\n",
            total - TEXT_LIST_LIMIT
        ));
    }
}

/// The text summary, `width` columns wide (the map line fits in it).
pub fn render_text(run: &ScanRun, width: usize) -> String {
    let scan = run.scan;
    let t = run.target;
    let sector = scan.config.sector.max(1);
    let domain = scan.config.domain;
    let mut out = String::new();
    out.push_str(&format!(
        "Scan of {} ({}, {}, {}, {}-byte sectors, {})\n",
        neutralize_controls(&t.path),
        neutralize_controls(t.name.as_deref().unwrap_or("?")),
        t.dev,
        Bytes(t.size),
        t.logical_block_size,
        neutralize_controls(&t.identity.to_string()),
    ));
    out.push_str(&format!(
        "  Range     bytes {}-{} ({}), {}, {} blocks\n",
        domain.offset,
        domain.end().saturating_sub(1),
        lba_range(domain, sector),
        Bytes(domain.length),
        Bytes(scan.config.block),
    ));
    let rate = if run.seconds > 0.0 {
        format!(
            "{:.0} MB/s",
            (scan.bytes_read + scan.bytes_bad) as f64 / run.seconds / 1e6
        )
    } else {
        "-".into()
    };
    out.push_str(&format!(
        "  Read      {} of {} to read in {:.1} s ({rate}), {} unreadable\n",
        Bytes(scan.bytes_read),
        Bytes(scan.planned),
        run.seconds,
        Bytes(scan.bytes_bad),
    ));
    // One column per bucket, 8 wide: a count of 1 MiB blocks of a 8 TiB disk fits.
    let (mut labels, mut counts) = (String::new(), String::new());
    for (b, n) in scan.buckets.iter() {
        labels.push_str(&format!("{:>8}", b.label()));
        counts.push_str(&format!("{n:>8}"));
    }
    out.push_str(&format!("  Blocks ms{labels}\n"));
    out.push_str(&format!("         {counts}\n"));
    let map_width = width.saturating_sub(14).clamp(10, 120);
    out.push_str(&format!("  Map       [{}]\n", scan.map.line(map_width)));
    out.push_str(&format!(
        "            {}\n",
        crate::scan::buckets::Bucket::ALL
            .iter()
            .map(|b| format!("{} {}", b.glyph(), b.label()))
            .collect::<Vec<_>>()
            .join("  ")
    ));
    out.push_str(&wrap(
        "  Timeout   ",
        &format!("{}.", timeout_note(run)),
        width,
    ));
    if let Some(start) = t.partition_start {
        out.push_str(&wrap(
            "  LBAs      ",
            &format!(
                "count from the partition's start, which is the disk's LBA {} (add it for \
                 smartctl or hdparm).",
                start / sector
            ),
            width,
        ));
    }
    list_lines(
        &mut out,
        "Unreadable (offset, length in bytes; sectors; errno):",
        scan.errors.iter(),
        |(s, e)| {
            format!(
                "{} +{}  {}  {}",
                s.offset,
                s.length,
                lba_range(*s, sector),
                errno_name(e.0)
            )
        },
    );
    list_lines(
        &mut out,
        &format!(
            "Slow, {} ms or more (offset, length in bytes; sectors; first and second read):",
            scan.config.slow.as_millis()
        ),
        scan.slow.iter(),
        |(s, tm)| {
            let again = match (tm.reread_ms, tm.reread_errno) {
                (Some(ms), _) => format!("{ms} ms"),
                (None, Some(e)) => format!("failed ({})", errno_name(e)),
                (None, None) => "not read again".into(),
            };
            format!(
                "{} +{}  {}  {} ms, then {again}",
                s.offset,
                s.length,
                lba_range(*s, sector),
                tm.ms
            )
        },
    );
    list_lines(
        &mut out,
        "TIME (offset, length in bytes; sectors):",
        scan.timeouts.iter(),
        |(s, _)| format!("{} +{}  {}", s.offset, s.length, lba_range(*s, sector)),
    );
    if let Some(m) = &run.mapfile {
        out.push_str(&format!(
            "Mapfile: {} (GNU ddrescue format)\n",
            neutralize_controls(m)
        ));
    }
    if let Some(b) = &run.badblocks {
        out.push_str(&format!("Bad blocks: {}\n", neutralize_controls(b)));
    }
    if let Some(r) = run.repair {
        repair_text(&mut out, r);
    }
    out.push_str(&format!("Verdict: {}.\n", verdict(scan)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::engine::tests::{FakeDisk, config, run_to_end};
    use crate::scan::mapfile::Mapfile;
    use std::time::Duration;

    fn target(size: u64) -> ScanTarget {
        ScanTarget {
            path: "/dev/sdx\u{1b}[2J".into(),
            name: Some("sdx".into()),
            dev: "8:16".into(),
            size,
            logical_block_size: 512,
            physical_block_size: 4096,
            identity: DiskIdentity::Serial("S3Z\nX".into()),
            model: None,
            partition_start: Some(2048 * 512),
        }
    }

    /// The scan of a fake disk with 16 bad sectors at LBA 8192 (ENODATA, as scsi_debug's
    /// medium errors come), one at LBA 20000 (EIO) and one slow block.
    fn scan() -> Scan {
        let size = 16 << 20;
        let mut disk = FakeDisk::new(size, 512);
        for lba in 8192..8208 {
            disk.bad.insert(lba, libc::ENODATA);
        }
        disk.bad.insert(20000, libc::EIO);
        disk.latency
            .push((Span::new(12 << 20, 1 << 20), Duration::from_millis(320)));
        let mut scan = Scan::new(config(Span::new(0, size)), Mapfile::new(size));
        run_to_end(&mut scan, &mut disk);
        scan
    }

    #[test]
    fn a_repair_is_a_section_of_the_text_and_an_object_of_the_json() {
        use crate::scan::repair::{Repair, SectorResult};
        let scan = scan();
        let t = target(16 << 20);
        let repair = RepairRun {
            repair: Repair {
                sectors: vec![
                    (8192 * 512, SectorResult::Repaired),
                    (8193 * 512, SectorResult::StillUnreadable(libc::ENODATA)),
                    (8194 * 512, SectorResult::WriteFailed(libc::EIO)),
                ],
                stopped: None,
            },
            sector: 512,
            before: SectorCounts {
                reallocated: Some(0),
                pending: Some(3),
                note: None,
            },
            after: SectorCounts {
                reallocated: Some(1),
                pending: None,
                note: None,
            },
        };
        let run = ScanRun {
            target: &t,
            scan: &scan,
            seconds: 0.5,
            timeout_enforced: false,
            abandon_after: None,
            timeout_reason: "loop".into(),
            mapfile: None,
            badblocks: None,
            repair: Some(&repair),
        };
        let doc: serde_json::Value =
            serde_json::from_str(&render_json(&run).expect("json")).expect("parses");
        let r = &doc["repair"];
        assert_eq!(r["sectors_attempted"], 3);
        assert_eq!(r["repaired"], 1);
        assert_eq!(r["still_unreadable"], 2);
        assert_eq!(r["still_unreadable_ranges"][0]["offset"], 8193 * 512);
        assert_eq!(r["still_unreadable_ranges"][0]["length"], 1024);
        assert_eq!(r["smart_before"]["pending"], 3);
        assert!(r["smart_after"]["pending"].is_null());
        assert_eq!(r["smart_after"]["reallocated"], 1);
        let text = render_text(&run, 80);
        assert!(
            text.contains("3 sectors attempted: 1 repaired, 2 still unreadable"),
            "{text}"
        );
        assert!(
            text.contains("8193 LBA") || text.contains("LBA 8193-8194"),
            "{text}"
        );
        assert!(
            text.contains("Reallocated sectors (SMART 5): 0 before, 1 after"),
            "{text}"
        );
        assert!(
            text.contains("Pending sectors (SMART 197): 3 before, not available after"),
            "{text}"
        );
        // Without --repair: no repair in either.
        let plain = ScanRun {
            repair: None,
            ..run
        };
        assert!(
            render_json(&plain)
                .expect("json")
                .find("\"repair\"")
                .is_none()
        );
        assert!(!render_text(&plain, 80).contains("Repair"));
    }

    #[test]
    fn json_lists_the_sectors_slow_blocks_and_buckets() {
        let scan = scan();
        let t = target(16 << 20);
        let run = ScanRun {
            target: &t,
            scan: &scan,
            seconds: 0.5,
            timeout_enforced: false,
            abandon_after: None,
            timeout_reason: "sdx refused READ through SG_IO (ILLEGAL REQUEST)".into(),
            mapfile: None,
            badblocks: None,
            repair: None,
        };
        let doc: serde_json::Value =
            serde_json::from_str(&render_json(&run).expect("json")).expect("parses");
        assert_eq!(doc["bytes_read"], (16 << 20) - 17 * 512);
        assert_eq!(doc["bytes_unreadable"], 17 * 512);
        let errors = doc["errors"].as_array().expect("errors");
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0]["offset"], 8192 * 512);
        assert_eq!(errors[0]["length"], 16 * 512);
        assert_eq!(errors[0]["errno"], libc::ENODATA);
        assert_eq!(errors[0]["errno_name"], "ENODATA");
        assert_eq!(errors[1]["lba"], 20000);
        assert_eq!(errors[1]["errno_name"], "EIO");
        let slow = doc["slow"].as_array().expect("slow");
        assert_eq!(slow.len(), 1);
        assert_eq!(slow[0]["offset"], 12 << 20);
        assert_eq!(slow[0]["ms"], 320);
        assert_eq!(slow[0]["reread_ms"], 320);
        let buckets = doc["buckets"].as_array().expect("buckets");
        let labels: Vec<&str> = buckets.iter().filter_map(|b| b["label"].as_str()).collect();
        assert_eq!(
            labels,
            ["<5", "<20", "<50", "<150", "<500", ">=500", "ERR", "TIME"]
        );
        assert_eq!(buckets[0]["upto_ms"], 5);
        assert_eq!(buckets[5]["upto_ms"], serde_json::Value::Null);
        assert_eq!(buckets[6]["blocks"], 2);
        assert_eq!(buckets[4]["blocks"], 1);
        assert_eq!(doc["target"]["identity"]["by"], "serial");
        assert_eq!(
            doc["verdict"],
            "17 unreadable sectors in 2 areas, the first at LBA 8192-8207"
        );
    }

    #[test]
    fn an_enforced_timeout_says_how_and_counts_what_was_abandoned() {
        let mut disk = FakeDisk::new(8 << 20, 512);
        disk.abandon.push(Span::new(2 << 20, 1 << 20));
        let mut scan = Scan::new(config(Span::new(0, 8 << 20)), Mapfile::new(8 << 20));
        run_to_end(&mut scan, &mut disk);
        let t = target(8 << 20);
        let run = ScanRun {
            target: &t,
            scan: &scan,
            seconds: 0.5,
            timeout_enforced: true,
            abandon_after: Some(Duration::from_secs(3)),
            timeout_reason: "SG_IO READ on the SCSI disk sdx, each command with a 3000 ms \
                             timeout"
                .into(),
            mapfile: None,
            badblocks: None,
            repair: None,
        };
        let doc: serde_json::Value =
            serde_json::from_str(&render_json(&run).expect("json")).expect("parses");
        assert_eq!(doc["timeout_enforced"], true);
        assert_eq!(doc["bytes_abandoned"], 1 << 20);
        assert_eq!(doc["bytes_read"], 7 << 20);
        assert_eq!(doc["timeouts"][0]["offset"], 2 << 20);
        assert_eq!(doc["timeouts"][0]["length"], 1 << 20);
        let flat = render_text(&run, 80)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            flat.contains(
                "Timeout a read is abandoned after 3000 ms (SG_IO READ on the SCSI disk sdx, \
                 each command with a 3000 ms timeout) and counted TIME, not read"
            ),
            "{flat}"
        );
        // Abandoned later than --timeout (SG_IO's floor), TIME still from --timeout.
        let later = ScanRun {
            abandon_after: Some(Duration::from_secs(7)),
            ..run
        };
        let flat = render_text(&later, 80)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            flat.contains("a read is abandoned after 7000 ms")
                && flat
                    .contains("one that takes 3000 ms or more but answers before is counted TIME"),
            "{flat}"
        );
        let doc: serde_json::Value =
            serde_json::from_str(&render_json(&later).expect("json")).expect("parses");
        assert_eq!(doc["abandon_after_ms"], 7000);
    }

    #[test]
    fn text_names_the_areas_in_bytes_and_lbas() {
        let scan = scan();
        let t = target(16 << 20);
        let run = ScanRun {
            target: &t,
            scan: &scan,
            seconds: 0.5,
            timeout_enforced: false,
            abandon_after: None,
            timeout_reason: "sdx refused READ through SG_IO (ILLEGAL REQUEST)".into(),
            mapfile: Some("/tmp/sdx.map".into()),
            badblocks: None,
            repair: None,
        };
        let text = render_text(&run, 80);
        assert!(
            !text.contains('\u{1b}'),
            "control characters neutralised: {text}"
        );
        assert!(
            text.contains("4194304 +8192  LBA 8192-8207  ENODATA"),
            "{text}"
        );
        assert!(text.contains("10240000 +512  LBA 20000  EIO"), "{text}");
        assert!(
            text.contains("12582912 +1048576  LBA 24576-26623  320 ms, then 320 ms"),
            "{text}"
        );
        assert!(text.contains("     ERR    TIME\n"), "{text}");
        assert!(text.contains("       2       0\n"), "{text}");
        assert!(text.contains("disk's LBA 2048"), "{text}");
        assert!(text.contains("Mapfile: /tmp/sdx.map"), "{text}");
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(
                "a per-command timeout is not available (sdx refused READ through SG_IO \
                 (ILLEGAL REQUEST)): a slow block is waited for"
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                "Verdict: 17 unreadable sectors in 2 areas, the first at LBA 8192-8207.\n"
            ),
            "{text}"
        );
        // The map marks the bad blocks' cells.
        let map_line = text.lines().find(|l| l.contains("Map ")).expect("map line");
        assert!(
            map_line.contains('X') && map_line.contains('+'),
            "{map_line}"
        );
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "too wide: {line}");
        }
    }
}
