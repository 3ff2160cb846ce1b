//! What the triage gathered about one disk, as plain data. A field that could not be read is
//! `None` with the reason in `DiskFacts::problems`, so a rule tells "zero" from "not known"
//! and the verdict `unknown` can say why.

use serde::Serialize;

/// The start of the problem of a disk no worker reached within the bound.
pub const NOT_REACHED: &str = "not reached within the";

use crate::model::{DriveFitness, DriveLogs, SmartHealth, Transport, ZoneModel};
use crate::scan::Span;
use crate::scan::buckets::BucketCounts;
use crate::smart::meaning::{self, Meaning};

/// A disk's verdict: its worst finding. `Ord` is severity (`Unknown` sorts worst, since a disk
/// that could not be read at all needs the admin's eyes first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TriageVerdict {
    Healthy,
    Suspect,
    Failing,
    Unknown,
}

impl TriageVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            TriageVerdict::Healthy => "healthy",
            TriageVerdict::Suspect => "suspect",
            TriageVerdict::Failing => "failing",
            TriageVerdict::Unknown => "unknown",
        }
    }

    /// The exit status of a triage whose worst verdict this is: 0 healthy; 1 and 2 stay for
    /// errors and usage, so suspect 3, failing 4, unknown 5.
    pub fn exit_status(self) -> u8 {
        match self {
            TriageVerdict::Healthy => 0,
            TriageVerdict::Suspect => crate::model::exit::SUSPECT,
            TriageVerdict::Failing => crate::model::exit::FAILING,
            TriageVerdict::Unknown => crate::model::exit::UNKNOWN,
        }
    }
}

/// Who the disk is: what the JSON's `identity` holds and the history keys the next triage by.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct DiskIdentityFacts {
    /// Kernel name: "sdb", "nvme0n1", "loop3".
    pub device: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub wwn: Option<String>,
    pub firmware: Option<String>,
    pub capacity_bytes: u64,
    pub logical_block_size: u32,
    pub transport: Option<Transport>,
    /// The rotation rate in rpm where the drive reports one (`Some(0)`: not rotating).
    pub rotation_rpm: Option<u32>,
    /// A saved smartctl report, not a disk of this host: `device` is the file's name.
    pub from_saved_report: bool,
}

/// The link a disk hangs on: what it negotiated against the best both ends support.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct LinkState {
    /// "sata", "pcie" or "usb".
    pub kind: String,
    /// As the kernel words it: "1.5 Gbps", "8.0 GT/s PCIe", "480".
    pub current: String,
    /// The same in Gbit/s (SATA, USB) or GT/s (PCIe), for comparing.
    pub current_rate: Option<f64>,
    /// The best both disk and port support, as words and rate (`None`: no rule judges the link).
    pub best: Option<String>,
    pub best_rate: Option<f64>,
    /// PCIe lanes now and at most.
    pub width: Option<u32>,
    pub max_width: Option<u32>,
}

/// Where on the disk a sequential read was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SeqPosition {
    Start,
    Middle,
    End,
}

/// One sequential read: where, how much, how fast (MB/s = 10^6 bytes per second).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeqRead {
    pub position: SeqPosition,
    pub offset: u64,
    pub bytes: u64,
    pub mb_per_s: f64,
}

/// A sampled read is slow from here: the upper limit of the scan's `<150` bucket, past which
/// MHDD and Victoria count a block as delayed (a healthy disk's random read is some 20 ms).
pub const SLOW_MS: f64 = 150.0;

/// The sampled surface read: reads spread over the LBA range, in the scan's buckets.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SurfaceSample {
    pub reads: u64,
    pub read_bytes: u32,
    pub buckets: BucketCounts,
    /// Failed samples with their first unreadable sector; a few hundred kept at most.
    pub unreadable: Vec<Unreadable>,
    /// Samples slow twice (re-read after the others, as the scan does), or once when no time
    /// was left to re-read: (byte offset, the slower ms).
    pub slow: Vec<(u64, f64)>,
    /// Samples slow once and fast when re-read (a host hiccup, not a weak area): not judged.
    pub slow_once: u64,
}

/// A sample whose read failed, split to find its first unreadable sector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unreadable {
    pub sample: Span,
    /// Its first unreadable sector, or the part of the sample holding it when the split
    /// stopped at its bound.
    pub at: Span,
    /// The errno of the sector's own read, else of the sample's.
    pub errno: i32,
}

impl Unreadable {
    /// The first LBA of `at` and how many sectors it spans, in sectors of `block` bytes.
    pub fn lbas(&self, block: u64) -> (u64, u64) {
        let block = block.max(1);
        (
            self.at.offset / block,
            self.at.length.div_ceil(block).max(1),
        )
    }
}

impl SurfaceSample {
    /// Where the samples failed, at most `named` places: "at LBA 1000, 2000 and 2 more",
    /// "somewhere in LBA 2000-2127". A place found twice (overlapping samples) is named once.
    pub fn unreadable_words(&self, block: u64, named: usize) -> String {
        let mut places: Vec<(u64, u64)> = Vec::new();
        for u in &self.unreadable {
            let place = u.lbas(block);
            if !places.contains(&place) {
                places.push(place);
            }
        }
        let mut out = String::new();
        let mut exact_before = false;
        for (i, (lba, sectors)) in places.iter().take(named).enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            if *sectors == 1 {
                // A run of exact LBAs shares one "at LBA".
                if !exact_before {
                    out.push_str("at LBA ");
                }
                out.push_str(&lba.to_string());
                exact_before = true;
            } else {
                out.push_str(&format!("somewhere in LBA {lba}-{}", lba + sectors - 1));
                exact_before = false;
            }
        }
        let more = places.len().saturating_sub(named);
        if more > 0 {
            out.push_str(&format!(" and {more} more"));
        }
        out
    }
}

/// What was measured on the disk.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Measurements {
    pub surface: Option<SurfaceSample>,
    pub seq: Vec<SeqRead>,
    /// QD1 random read latency, p50 and p99 in ms.
    pub random_read_p50_ms: Option<f64>,
    pub random_read_p99_ms: Option<f64>,
    /// Lowest and highest drive temperature seen during the triage.
    pub temperature_min_c: Option<i64>,
    pub temperature_max_c: Option<i64>,
    /// The interface CRC count re-read after the reads (ATA drives that count them).
    pub crc_errors_after: Option<u64>,
}

/// The disk's newest flush check (`disktriage flushcheck`; it writes, so the triage does not
/// run it). A lying or volatile cache under a database is a finding.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FlushFact {
    /// `true`: the power-cut check's verify; `false`: the timing check.
    pub verify: bool,
    /// The check's verdict word: "waits-for-medium", "volatile-cache", "unknown" (timing);
    /// "nothing-lost", "lost" (verify).
    pub verdict: String,
    /// The sentence the check printed.
    pub sentence: String,
    /// When it ran, "2026-11-23 14:05 UTC".
    pub when: String,
    /// Verify: acknowledged records lost.
    pub lost: u64,
}

/// The disk's newest write-cliff probe (`disktriage smrcheck`; it writes for minutes, so the
/// triage does not run it).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SmrFact {
    /// "no-cliff" or "cliff".
    pub verdict: String,
    /// What the device was: "rotating", "solid-state" or "unknown".
    pub medium: String,
    /// When it ran, "2026-11-23 14:05 UTC".
    pub when: String,
}

/// The disk's newest capacity probe or TRIM check (they write, so the triage does not run
/// them). A fake capacity or a broken discard claim is a finding.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CheckFact {
    /// Capacity: "real", "fake". TRIM: "works", "kept", "broken", "refused", "no-discard".
    pub verdict: String,
    /// The sentence the check printed.
    pub sentence: String,
    /// When it ran, "2026-11-23 14:05 UTC".
    pub when: String,
}

/// A disk's fitness for an array: what the drive states (`DriveFitness`) and, on a disk of
/// this host, what the kernel says of it and whether an md array holds it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FitnessFacts {
    pub drive: DriveFitness,
    /// The kernel's zone model (`queue/zoned`: host-aware, host-managed; `None` for "none"
    /// or not read) and its zones (`queue/nr_zones`).
    pub kernel_zoned: Option<ZoneModel>,
    pub nr_zones: Option<u64>,
    /// The kernel's command timeout in seconds (`device/timeout`, SCSI and ATA disks).
    pub timeout_s: Option<u32>,
    /// The md arrays the disk (or one of its partitions) is a member of (`holders/`); empty
    /// when none, or for a saved report, whose host is not known.
    pub arrays: Vec<String>,
}

/// The values the previous triage of a disk kept (`history::TriageRecord::values`, named as
/// in `super::counters`) and when it and this one ran.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PreviousTriage {
    pub since_unix: u64,
    pub now_unix: u64,
    pub values: std::collections::BTreeMap<String, f64>,
}

/// Everything gathered about one disk. `flush`, `smr`, `capacity`, `trim` and `previous` come
/// from the history, filled in by `flow::triage`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiskFacts {
    pub identity: DiskIdentityFacts,
    pub smart: Option<SmartHealth>,
    pub logs: Option<DriveLogs>,
    pub link: Option<LinkState>,
    pub measurements: Measurements,
    /// The drive's own warning temperature in °C (NVMe WCTEMP), which `temperature-high`
    /// judges against; `None` when it states none (no threshold is guessed).
    pub temperature_warning_c: Option<i64>,
    pub flush: Option<FlushFact>,
    pub smr: Option<SmrFact>,
    pub capacity: Option<CheckFact>,
    pub trim: Option<CheckFact>,
    /// What the growth rules compare with.
    pub previous: Option<PreviousTriage>,
    /// Its fitness for an array (SCT ERC against the kernel's timeout, zones, FARM).
    pub fitness: FitnessFacts,
    /// What could not be read or measured, each a sentence ("SMART: the drive refuses the
    /// command", "surface: stopped at the 60 s bound after 1,200 of 4,000 reads").
    pub problems: Vec<String>,
    /// Seconds the gathering of this disk took.
    pub seconds: f64,
    /// The saved smartctl report read (`triage --report`): its path as given or found in a
    /// named directory, `-` for standard input; `None` for a disk of this host.
    pub saved_report: Option<String>,
}

impl DiskFacts {
    /// The SMART data, when they could be read (not `Verdict::Unavailable`).
    pub fn readable_smart(&self) -> Option<&SmartHealth> {
        self.smart
            .as_ref()
            .filter(|h| h.verdict != crate::model::Verdict::Unavailable)
    }

    /// The NVMe health log of the readable SMART data.
    pub fn nvme_health(&self) -> Option<&crate::model::NvmeHealth> {
        self.readable_smart()?.nvme.as_ref()
    }

    /// The ATA attribute with `meaning` on this drive, read in its layout
    /// (`crate::smart::meaning`), with the attribute it came from.
    pub fn ata_reading(
        &self,
        meaning: Meaning,
    ) -> Option<(&crate::model::AtaAttribute, meaning::Reading)> {
        let ata = self.readable_smart()?.ata.as_ref()?;
        ata.attributes.iter().find_map(|a| {
            let r = meaning::read(a, &ata.drive);
            (r.meaning == meaning).then_some((a, r))
        })
    }

    /// The plausible count of the ATA attribute with `meaning`: `None` when the drive has
    /// none, does not report it, or reports one that cannot be true.
    pub fn ata_count(&self, meaning: Meaning) -> Option<u64> {
        match self.ata_reading(meaning)?.1.count {
            meaning::Count::Value(n) => Some(n),
            _ => None,
        }
    }

    /// The mean of the sequential reads in MB/s, if any was measured.
    pub fn seq_mean(&self) -> Option<f64> {
        // Called for every sibling of every disk: no allocation.
        let (sum, count) = self
            .measurements
            .seq
            .iter()
            .map(|s| s.mb_per_s)
            .filter(|v| v.is_finite() && *v >= 0.0)
            .fold((0.0, 0usize), |(sum, n), v| (sum + v, n + 1));
        (count > 0).then(|| sum / count as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(sample_lba: u64, lba: u64, sectors: u64) -> Unreadable {
        Unreadable {
            sample: Span::new(sample_lba * 512, 65536),
            at: Span::new(lba * 512, sectors * 512),
            errno: 5,
        }
    }

    #[test]
    fn the_words_say_a_sector_or_a_range_and_name_a_place_once() {
        let s = SurfaceSample {
            unreadable: vec![
                failed(950, 1000, 1),
                failed(990, 1000, 1),
                failed(2000, 2000, 1),
                failed(3000, 3000, 128),
                failed(4000, 4010, 1),
                failed(5000, 5000, 1),
                failed(6000, 6064, 64),
            ],
            ..SurfaceSample::default()
        };
        assert_eq!(
            s.unreadable_words(512, 4),
            "at LBA 1000, 2000, somewhere in LBA 3000-3127, at LBA 4010 and 2 more"
        );
        assert_eq!(
            s.unreadable_words(512, 10),
            "at LBA 1000, 2000, somewhere in LBA 3000-3127, at LBA 4010, 5000, \
             somewhere in LBA 6064-6127"
        );
        // In 4 KiB sectors the same bytes are other LBAs.
        assert_eq!(failed(0, 8000, 8).lbas(4096), (1000, 1));
    }
}
