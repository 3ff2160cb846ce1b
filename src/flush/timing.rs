//! The timing check's facts and its judgement: what durable 4 KiB commits and one flush after
//! dirty data cost, against the physical floor. Pure: the measuring is `flow::flushcheck`, the
//! device I/O `sys::flush`, the rotation rate `sys::rotation`.
//!
//! The rules (`judge`), kept simple because each must be explainable to an admin:
//!
//! - **The floor.** A rotating disk without a non-volatile cache cannot make a write durable
//!   faster than one revolution on average: floor = 60,000 / rpm ms (7,200 rpm: 8.33 ms). It
//!   is known only when the rotation rate is (the drive's own, the disks under a stacked
//!   device, or `--rpm`). A disk that does not rotate, or whose rate nobody knows, has none.
//! - **With a floor**, the commit is the median O_DSYNC 4 KiB write with the cache as found:
//!   - below half the floor: `VolatileCache` (a cache acknowledged it; safe only when that
//!     cache has a battery or capacitor). When the cache-off commits were measured and are
//!     also below half the floor, the sentence says so (a battery-backed controller, or a
//!     drive that ignores the switch).
//!   - at least 0.9 of the floor: `WaitsForMedium`.
//!   - in between: `Unknown` (faster than the platter allows for a head that must wait, too
//!     slow for a cache: timing cannot tell).
//! - **Without a floor**, the flush after dirty data decides: it "clearly costs time" from
//!   `FLUSH_COSTS_MS` and `FLUSH_COSTS_FRACTION` of the dirty data's write time (a cache's
//!   flush after 64 MiB costs tens of ms; a tmpfs loop device's took 8 ms after a 240 ms
//!   write): then `WaitsForMedium`. Otherwise `Unknown`: a non-volatile cache, write-through
//!   and a drive that ignores flushes look alike; only the power-cut check tells them apart.
//! - **Kernel write-through.** When the kernel treats the device as write-through
//!   (`queue/write_cache`), it sends no flushes at all: the flush figures say nothing, and the
//!   verdict is `Unknown` unless the floor rule already decided.
//!
//! Nothing here claims more than timing shows: a slow commit proves the drive waits, a fast
//! one proves a cache answered, never whether that cache survives a power cut.

use serde::Serialize;

/// Commits timed with the cache as found (and again with it off).
pub const COMMITS: usize = 200;
/// The dirty data written before the timed flush.
pub const DIRTY_BYTES: u64 = 64 << 20;
/// A flush "clearly costs time" from this many ms ...
pub const FLUSH_COSTS_MS: f64 = 1.0;
/// ... and this fraction of the time the dirty data took to write.
pub const FLUSH_COSTS_FRACTION: f64 = 0.05;
/// Below this fraction of one revolution, a commit came from a cache.
pub const VOLATILE_BELOW: f64 = 0.5;
/// From this fraction of one revolution, a commit waited for the medium.
pub const WAITS_FROM: f64 = 0.9;

/// The latencies of a series of writes, in ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    pub count: usize,
    pub median_ms: f64,
    pub p99_ms: f64,
    pub min_ms: f64,
}

impl Stats {
    /// The statistics of `ms`, NaN left out; `None` when empty.
    pub fn of(ms: &[f64]) -> Option<Stats> {
        let mut v: Vec<f64> = ms.iter().copied().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        // Nearest rank: the smallest value with 99 % of samples at or below.
        let rank = (n * 99).div_ceil(100).clamp(1, n);
        Some(Stats {
            count: n,
            median_ms: median,
            p99_ms: v[rank - 1],
            min_ms: v[0],
        })
    }
}

/// Whether the device rotates and how fast, and who said so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rotation {
    /// `Some(0)`: does not rotate; `Some(rpm)`; `None`: not known.
    pub rpm: Option<u32>,
    /// The kernel's `queue/rotational` flag of the device itself.
    pub rotational: Option<bool>,
    /// Where the rate came from, in words ("VPD page B1h of sda", "--rpm", ...).
    pub source: String,
}

impl Rotation {
    /// One revolution in ms, where it rotates at a known rate.
    pub fn floor_ms(&self) -> Option<f64> {
        match self.rpm {
            Some(rpm) if rpm > 0 => Some(60_000.0 / f64::from(rpm)),
            _ => None,
        }
    }
}

/// What the timing check measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimingFacts {
    /// The size of each commit (4 KiB, or the logical block size when larger).
    pub block: u64,
    /// O_DSYNC commits with the write cache as found.
    pub commit: Option<Stats>,
    /// Plain write + fdatasync.
    pub write_flush: Option<Stats>,
    /// O_DSYNC commits with the drive's write cache switched off.
    pub cache_off_commit: Option<Stats>,
    /// Why the cache-off commits were not measured.
    pub cache_off_note: Option<String>,
    /// The flush after `dirty_bytes` of plain writes.
    pub flush_after_dirty_ms: Option<f64>,
    /// How long the dirty data took to write.
    pub dirty_write_ms: Option<f64>,
    pub dirty_bytes: u64,
    pub rotation: Rotation,
    /// `queue/write_cache`: "write back" or "write through".
    pub kernel_write_cache: Option<String>,
    /// A device without a drive (loop, zram): where its flushes go, what to judge.
    pub no_drive: Option<(String, String)>,
}

/// What timing can say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    WaitsForMedium,
    VolatileCache,
    Unknown,
}

impl Verdict {
    /// The word of the JSON and the history.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::WaitsForMedium => "waits-for-medium",
            Verdict::VolatileCache => "volatile-cache",
            Verdict::Unknown => "unknown",
        }
    }
}

/// The verdict with the figures it rests on and the words for the admin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgement {
    pub verdict: Verdict,
    pub floor_ms: Option<f64>,
    pub commit_ms: Option<f64>,
    pub sentence: String,
    pub next_step: String,
}

/// What to run next when timing cannot tell.
const POWER_CUT: &str = "run the power-cut check: disktriage flushcheck DEV --record LOG \
                         --destroy-data NAME (LOG on another disk), cut the power, then \
                         --verify LOG";

/// Judges the facts by the rules of the module's documentation.
pub fn judge(f: &TimingFacts) -> Judgement {
    let floor = f.rotation.floor_ms();
    let commit = f.commit.map(|s| s.median_ms);
    let write_through = f.kernel_write_cache.as_deref() == Some("write through");
    let mut j = Judgement {
        verdict: Verdict::Unknown,
        floor_ms: floor,
        commit_ms: commit,
        sentence: String::new(),
        next_step: String::new(),
    };
    if let Some((sentence, next)) = &f.no_drive {
        j.sentence = sentence.clone();
        j.next_step = next.clone();
        return j;
    }
    let Some(c) = commit else {
        j.sentence = "no commit was measured: timing cannot tell".into();
        j.next_step = POWER_CUT.into();
        return j;
    };
    let kernel_note = if write_through {
        "; the kernel treats the device as write-through (queue/write_cache) and sends it no \
         flushes"
    } else {
        ""
    };
    if let (Some(fl), Some(rpm)) = (floor, f.rotation.rpm) {
        let disk = format!("on a {} rpm disk", thousands(rpm));
        if c < fl * VOLATILE_BELOW {
            j.verdict = Verdict::VolatileCache;
            j.sentence = format!(
                "commits in {} {disk}: a volatile cache acknowledges them; safe only with a \
                 battery- or capacitor-backed cache (check the controller), otherwise turn the \
                 write cache off for databases",
                ms(c)
            );
            match f.cache_off_commit.map(|s| s.median_ms) {
                Some(off) if off < fl * VOLATILE_BELOW => j.sentence.push_str(&format!(
                    "; even with the drive's write cache off they are acknowledged in {} (a \
                     battery-backed controller, or a drive that ignores the switch)",
                    ms(off)
                )),
                Some(off) if off >= fl * WAITS_FROM => j.sentence.push_str(&format!(
                    "; with the drive's write cache off they wait for the medium ({})",
                    ms(off)
                )),
                _ => {}
            }
            j.sentence.push_str(kernel_note);
            j.next_step = "check whether the controller's cache has a battery or capacitor; if \
                           not, turn the write cache off under a database (disktriage cache DEV \
                           off), or prove it with the power-cut check"
                .into();
        } else if c >= fl * WAITS_FROM {
            j.verdict = Verdict::WaitsForMedium;
            j.sentence = format!(
                "commits wait for the medium ({} {disk}, one revolution is {}): nothing to \
                 fear{kernel_note}",
                ms(c),
                ms(fl)
            );
            j.next_step = "nothing to do".into();
        } else {
            j.sentence = format!(
                "commits take {} {disk}: less than one revolution ({}) but more than half of \
                 one, so timing cannot tell a cache from the medium{kernel_note}",
                ms(c),
                ms(fl)
            );
            j.next_step = POWER_CUT.into();
        }
        return j;
    }
    let why_no_floor = match f.rotation.rpm {
        Some(0) => "the device does not rotate",
        _ => "its rotation rate is not known",
    };
    if write_through {
        j.sentence = format!(
            "the kernel treats the device as write-through (queue/write_cache) and sends it no \
             flushes, and {why_no_floor}: timing cannot tell whether commits are durable"
        );
        j.next_step = POWER_CUT.into();
        return j;
    }
    let Some(flush) = f.flush_after_dirty_ms else {
        j.sentence = format!("{why_no_floor} and no flush was timed: timing cannot tell");
        j.next_step = POWER_CUT.into();
        return j;
    };
    let dirty = dirty_words(f.dirty_bytes);
    if flush_costs(flush, f.dirty_write_ms) {
        j.verdict = Verdict::WaitsForMedium;
        j.sentence = format!(
            "the flush after {dirty} of dirty data took {}: the drive writes its cache out when \
             told ({why_no_floor}, so commits are judged by the flush alone)",
            ms(flush)
        );
        j.next_step = "nothing to do; if the disk rotates, --rpm N judges the commits \
                       against one revolution, and the power-cut check proves it outright"
            .into();
    } else {
        j.sentence = format!(
            "the flush after {dirty} of dirty data costs nothing ({}): the cache is \
             non-volatile, the device writes through, or it ignores flushes; timing cannot tell \
             them apart ({why_no_floor})",
            ms(flush)
        );
        j.next_step = POWER_CUT.into();
    }
    j
}

/// Whether a flush "clearly costs time" (the module's rule).
pub fn flush_costs(flush_ms: f64, dirty_write_ms: Option<f64>) -> bool {
    flush_ms >= FLUSH_COSTS_MS
        && dirty_write_ms.is_none_or(|w| flush_ms >= w * FLUSH_COSTS_FRACTION)
}

/// "64 MiB", or the exact bytes when it is not whole MiB.
pub fn dirty_words(bytes: u64) -> String {
    if bytes > 0 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes > 0 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

/// Milliseconds as an admin reads them: "0.08 ms", "8.33 ms", "250 ms".
pub fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0} ms")
    } else if x >= 0.01 || x == 0.0 {
        format!("{x:.2} ms")
    } else {
        format!("{x:.3} ms")
    }
}

/// 7200 as "7,200".
pub fn thousands(n: impl Into<u64>) -> String {
    let s = n.into().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(median: f64) -> Option<Stats> {
        Some(Stats {
            count: COMMITS,
            median_ms: median,
            p99_ms: median * 2.0,
            min_ms: median / 2.0,
        })
    }

    fn facts(commit: f64, rpm: Option<u32>) -> TimingFacts {
        TimingFacts {
            block: 4096,
            commit: stats(commit),
            write_flush: stats(commit),
            cache_off_commit: None,
            cache_off_note: None,
            flush_after_dirty_ms: Some(0.02),
            dirty_write_ms: Some(300.0),
            dirty_bytes: DIRTY_BYTES,
            rotation: Rotation {
                rpm,
                rotational: rpm.map(|r| r > 0),
                source: "test".into(),
            },
            kernel_write_cache: Some("write back".into()),
            no_drive: None,
        }
    }

    #[test]
    fn a_device_with_no_drive_judges_nothing_and_says_where_flushes_go() {
        let mut f = facts(0.05, None);
        f.no_drive = Some((
            "loop2 is a loop device over /srv/a.img on ext4 on vda1 of vda: it has no drive".into(),
            "judge vda instead".into(),
        ));
        let j = judge(&f);
        assert_eq!(j.verdict, Verdict::Unknown);
        assert!(
            j.sentence.contains("on ext4 on vda1 of vda"),
            "{}",
            j.sentence
        );
        assert_eq!(j.next_step, "judge vda instead");
        assert!(!j.next_step.contains("power-cut"), "{}", j.next_step);
    }

    #[test]
    fn the_seeds_laptop_disk_waits_for_the_medium() {
        let j = judge(&facts(11.18, Some(5400)));
        assert_eq!(j.verdict, Verdict::WaitsForMedium);
        assert_eq!(j.floor_ms.map(|f| (f * 100.0).round()), Some(1111.0));
        assert!(
            j.sentence.starts_with(
                "commits wait for the medium (11.18 ms on a 5,400 rpm disk, one revolution is \
                 11.11 ms): nothing to fear"
            ),
            "{}",
            j.sentence
        );
    }

    #[test]
    fn the_seeds_raid_controller_is_a_volatile_cache() {
        let j = judge(&facts(0.084, Some(7200)));
        assert_eq!(j.verdict, Verdict::VolatileCache);
        assert_eq!(
            j.sentence,
            "commits in 0.08 ms on a 7,200 rpm disk: a volatile cache acknowledges them; safe \
             only with a battery- or capacitor-backed cache (check the controller), otherwise \
             turn the write cache off for databases"
        );
        assert!(j.next_step.contains("battery or capacitor"));
    }

    #[test]
    fn fast_even_with_the_cache_off_is_said() {
        let mut f = facts(0.084, Some(7200));
        f.cache_off_commit = stats(0.09);
        let j = judge(&f);
        assert_eq!(j.verdict, Verdict::VolatileCache);
        assert!(
            j.sentence.contains(
                "even with the drive's write cache off they are acknowledged in 0.09 ms (a \
                 battery-backed controller, or a drive that ignores the switch)"
            ),
            "{}",
            j.sentence
        );
        f.cache_off_commit = stats(8.4);
        let j = judge(&f);
        assert!(
            j.sentence
                .contains("with the drive's write cache off they wait for the medium (8.40 ms)"),
            "{}",
            j.sentence
        );
    }

    #[test]
    fn the_limits_of_the_floor_rule() {
        // 7,200 rpm: floor 8.33 ms, half 4.17, 0.9 of it 7.5 (7.500000000000001 in f64).
        assert_eq!(
            judge(&facts(4.16, Some(7200))).verdict,
            Verdict::VolatileCache
        );
        let between = judge(&facts(5.0, Some(7200)));
        assert_eq!(between.verdict, Verdict::Unknown);
        assert!(
            between
                .sentence
                .contains("less than one revolution (8.33 ms) but more than half"),
            "{}",
            between.sentence
        );
        assert!(between.next_step.contains("--record"));
        assert_eq!(
            judge(&facts(7.51, Some(7200))).verdict,
            Verdict::WaitsForMedium
        );
    }

    #[test]
    fn without_a_floor_a_flush_that_costs_time_waits() {
        let mut f = facts(0.05, Some(0));
        f.flush_after_dirty_ms = Some(40.0);
        f.dirty_write_ms = Some(120.0);
        let j = judge(&f);
        assert_eq!(j.verdict, Verdict::WaitsForMedium);
        assert_eq!(j.floor_ms, None);
        assert!(
            j.sentence.starts_with(
                "the flush after 64 MiB of dirty data took 40.00 ms: the drive writes its cache \
                 out when told (the device does not rotate"
            ),
            "{}",
            j.sentence
        );
    }

    #[test]
    fn without_a_floor_a_free_flush_is_unknown() {
        for rpm in [Some(0), None] {
            let j = judge(&facts(0.05, rpm));
            assert_eq!(j.verdict, Verdict::Unknown);
            assert!(
                j.sentence.contains("costs nothing (0.02 ms)")
                    && j.sentence.contains("timing cannot tell them apart"),
                "{}",
                j.sentence
            );
            assert!(j.next_step.contains("power-cut check"));
        }
        assert!(
            judge(&facts(0.05, None))
                .sentence
                .contains("rotation rate is not known")
        );
    }

    #[test]
    fn a_flush_costs_time_only_past_both_limits() {
        assert!(!flush_costs(0.9, Some(10.0)));
        assert!(flush_costs(1.0, Some(10.0)));
        // 1 ms after a 1 s write is noise (5 % of it is 50 ms).
        assert!(!flush_costs(1.0, Some(1000.0)));
        assert!(!flush_costs(49.0, Some(1000.0)));
        assert!(flush_costs(50.0, Some(1000.0)));
        assert!(flush_costs(1.0, None));
    }

    #[test]
    fn write_through_sends_no_flushes() {
        let mut f = facts(0.05, Some(0));
        f.kernel_write_cache = Some("write through".into());
        f.flush_after_dirty_ms = Some(50.0);
        let j = judge(&f);
        assert_eq!(j.verdict, Verdict::Unknown);
        assert!(j.sentence.contains("sends it no flushes"), "{}", j.sentence);
        // The floor rule still decides where there is a floor.
        let mut f = facts(0.05, Some(7200));
        f.kernel_write_cache = Some("write through".into());
        let j = judge(&f);
        assert_eq!(j.verdict, Verdict::VolatileCache);
        assert!(j.sentence.contains("sends it no flushes"), "{}", j.sentence);
    }

    #[test]
    fn nothing_measured_is_unknown() {
        let mut f = facts(1.0, Some(7200));
        f.commit = None;
        assert_eq!(judge(&f).verdict, Verdict::Unknown);
    }

    #[test]
    fn stats_median_p99_min() {
        let v: Vec<f64> = (1..=200).map(f64::from).collect();
        let s = Stats::of(&v).unwrap();
        assert_eq!(
            (s.count, s.median_ms, s.p99_ms, s.min_ms),
            (200, 100.5, 198.0, 1.0)
        );
        assert_eq!(Stats::of(&[3.0]).unwrap().p99_ms, 3.0);
        assert_eq!(Stats::of(&[]), None);
        assert_eq!(Stats::of(&[f64::NAN]), None);
    }

    #[test]
    fn figures_as_an_admin_reads_them() {
        assert_eq!(ms(0.084), "0.08 ms");
        assert_eq!(ms(8.3333), "8.33 ms");
        assert_eq!(ms(0.0042), "0.004 ms");
        assert_eq!(ms(1234.4), "1234 ms");
        assert_eq!(thousands(7200u32), "7,200");
        assert_eq!(thousands(15000u32), "15,000");
        assert_eq!(thousands(999u32), "999");
        assert_eq!(dirty_words(DIRTY_BYTES), "64 MiB");
        assert_eq!(dirty_words(12 << 10), "12 KiB");
    }
}
