//! Which engine runs a phase, and why. With `--engine auto` (the default) the target decides:
//! on devices that cannot take I/O without blocking (zram, brd, loop without direct I/O)
//! io_uring hands every request to a kernel worker thread, and one pread/pwrite thread per
//! outstanding I/O is several times faster, even at QD1; on a real queue, and for large
//! requests (registered buffers are not pinned per I/O), io_uring keeps the depth for less
//! CPU. So the runner probes both at the start of the warm-up and keeps the faster. A counted
//! QD1 run without a warm-up (dd's way) uses pread/pwrite, as dd does. Pure: the runner
//! measures, this module decides; the words are `results::engine_choice`.
//!
//! One probe per target and job shape in a session (the TUI's, or one CLI invocation): an
//! `EngineMemory` keeps its choice for later phases, repeats and retests, so identical runs
//! use one engine. A sweep is one shape (the swept field left out), so its curve is measured
//! with one engine. A phase without a warm-up is never probed (`decide`).
//!
//! What an engine does is in `exec/engines/`, reached through `engines::for_kind`.

use std::time::Duration;

use crate::bench::exec::engines::{SYNC, URING};
use crate::bench::plan::params::EngineKind;
use crate::bench::plan::{Access, Mix};
use crate::bench::plan::{Job, Phase, PhaseTag, Plan};
use crate::bench::results::engine_choice::{EngineChoice, EngineProbe, ProbeFigures, kilo};
use crate::model::{DevNum, FileId, Transport};
use crate::sys::direct::SyncMode;

/// I/O each probe round does before it counts (threads start, rings fill, the kernel's
/// io_uring workers appear).
pub const PROBE_RAMP_MS: u64 = 40;
/// The counted part of each probe round. Each candidate runs two rounds per pass.
pub const PROBE_WINDOW_MS: u64 = 100;
/// IOPS within this fraction of each other are a tie, decided by CPU per I/O.
pub const PROBE_TIE: f64 = 0.03;
/// Passes of the probe at most (each io_uring, sync, sync, io_uring); a second runs only on a
/// tie or when one engine's rounds disagree. No more: a run stopped early must have measured.
pub const PROBE_MAX_PASSES: u32 = 2;
/// A round more than this fraction below its engine's median round was disturbed (writeback,
/// another program's burst) and is set aside; a pass whose rounds differ this much gets
/// another. Idle rounds agree within a few percent; one slow io_uring round once made the
/// sum pick threads at two thirds of io_uring's IOPS (a file on ext4).
pub const PROBE_DISTURBED: f64 = 0.2;

/// Whether two probed rates are within `PROBE_TIE` of each other.
pub fn tied(a: f64, b: f64) -> bool {
    a <= b * (1.0 + PROBE_TIE) && b <= a * (1.0 + PROBE_TIE)
}

/// What one probe round of one engine counted: I/Os, seconds, CPU seconds of the process.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProbeRound {
    pub ops: u64,
    pub seconds: f64,
    pub cpu_seconds: f64,
}

impl ProbeRound {
    fn iops(&self) -> f64 {
        if self.seconds > 0.0 {
            self.ops as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// The rate below which a round is disturbed: `PROBE_DISTURBED` below the median of `rounds`.
/// Only slow rounds: something else on the machine slows a round down, nothing speeds one up.
fn disturbed_below(rounds: &[ProbeRound]) -> f64 {
    let mut rates: Vec<f64> = rounds.iter().map(ProbeRound::iops).collect();
    rates.sort_by(f64::total_cmp);
    let n = rates.len();
    if n == 0 {
        return 0.0;
    }
    (rates[(n - 1) / 2] + rates[n / 2]) / 2.0 * (1.0 - PROBE_DISTURBED)
}

/// Whether one engine's rounds disagree by more than `PROBE_DISTURBED`.
fn unsteady(rounds: &[ProbeRound]) -> bool {
    let rates = rounds.iter().map(ProbeRound::iops);
    let fastest = rates.clone().fold(0.0, f64::max);
    let slowest = rates.fold(f64::INFINITY, f64::min);
    slowest < fastest * (1.0 - PROBE_DISTURBED)
}

/// One candidate's totals over its undisturbed rounds, and how many were set aside.
pub fn probe_figures(rounds: &[ProbeRound]) -> Option<(ProbeFigures, u32)> {
    let floor = disturbed_below(rounds);
    let kept: Vec<&ProbeRound> = rounds
        .iter()
        .filter(|r| r.ops > 0 && r.seconds > 0.0 && r.iops() >= floor)
        .collect();
    let ops: u64 = kept.iter().map(|r| r.ops).sum();
    let seconds: f64 = kept.iter().map(|r| r.seconds).sum();
    let cpu: f64 = kept.iter().map(|r| r.cpu_seconds).sum();
    (ops > 0 && seconds > 0.0).then(|| {
        (
            ProbeFigures {
                iops: ops as f64 / seconds,
                cpu_us_per_io: cpu / ops as f64 * 1e6,
            },
            (rounds.len() - kept.len()) as u32,
        )
    })
}

/// Whether the probe runs another pass: the last pass's rounds of one engine disagree, or
/// the candidates are tied. `per_pass` rounds per candidate; `None` for a failed candidate.
pub fn another_pass(
    uring: Option<&[ProbeRound]>,
    sync: Option<&[ProbeRound]>,
    per_pass: usize,
    passes: u32,
) -> bool {
    let (Some(u), Some(s)) = (uring, sync) else {
        return false;
    };
    if passes >= PROBE_MAX_PASSES {
        return false;
    }
    let last_unsteady =
        |rounds: &[ProbeRound]| unsteady(&rounds[rounds.len().saturating_sub(per_pass)..]);
    match (probe_figures(u), probe_figures(s)) {
        (Some((uf, _)), Some((sf, _))) => {
            tied(uf.iops, sf.iops) || last_unsteady(u) || last_unsteady(s)
        }
        _ => false,
    }
}

/// The choice that needs no measurement, or `None` when auto must probe. `uring` says
/// whether io_uring is usable here, and if not why.
pub fn static_choice(
    asked: EngineKind,
    job: &Job,
    uring: &Result<(), String>,
) -> Option<EngineChoice> {
    let fixed = |used, reason: String| {
        Some(EngineChoice {
            asked,
            used,
            reason,
            probe: None,
            reused: false,
        })
    };
    let dd_style = job.qd <= 1 && job.warmup.is_zero() && job.ops_per_worker.is_some();
    match (asked, uring) {
        (URING, Err(e)) => fixed(
            SYNC,
            format!("io_uring was asked for but is not available ({e})"),
        ),
        (EngineKind::AUTO, _) if dd_style => fixed(
            SYNC,
            "auto: QD1, counted, no warm-up: one pread/pwrite at a time per worker and nothing \
             else, as dd measures"
                .into(),
        ),
        (EngineKind::AUTO, Err(e)) => fixed(SYNC, format!("auto: io_uring is not available ({e})")),
        (EngineKind::AUTO, Ok(())) => None,
        // Any engine named on the command line runs as asked (io_uring only when it may).
        (asked, _) => fixed(asked, format!("asked for (--engine {})", asked.row().arg)),
    }
}

/// Picks the higher IOPS; on a tie (`PROBE_TIE`) the lower CPU per I/O.
pub fn choose(probe: EngineProbe) -> EngineChoice {
    let ms = (probe.window_s * 1e3).round();
    let (used, reason) = match (probe.uring, probe.sync) {
        (Some(u), Some(s)) => {
            let faster = if tied(s.iops, u.iops) {
                None
            } else if s.iops > u.iops {
                Some(SYNC)
            } else {
                Some(URING)
            };
            let used = faster.unwrap_or(if s.cpu_us_per_io < u.cpu_us_per_io {
                SYNC
            } else {
                URING
            });
            let (win, lose, win_name, lose_name) = match used {
                SYNC => (s, u, "sync (pread/pwrite threads)", "io_uring"),
                _ => (u, s, "io_uring", "sync threads"),
            };
            let why = if faster.is_some() {
                ""
            } else {
                " (a tie: less CPU per I/O decides)"
            };
            let why = match probe.set_aside {
                0 => why.to_string(),
                1 => format!("{why}; 1 disturbed round set aside"),
                n => format!("{why}; {n} disturbed rounds set aside"),
            };
            (
                used,
                format!(
                    "auto: {win_name} {} IOPS at {:.2} us CPU/IO vs {lose_name} {} IOPS at {:.2} \
                     us CPU/IO in {ms:.0} ms of probing each{why}",
                    kilo(win.iops),
                    win.cpu_us_per_io,
                    kilo(lose.iops),
                    lose.cpu_us_per_io
                ),
            )
        }
        (Some(u), None) => (
            URING,
            format!(
                "auto: io_uring ({} IOPS in {ms:.0} ms of probing); the sync threads failed in the probe",
                kilo(u.iops)
            ),
        ),
        (None, Some(s)) => (
            SYNC,
            format!(
                "auto: sync threads ({} IOPS in {ms:.0} ms of probing); io_uring failed in the probe",
                kilo(s.iops)
            ),
        ),
        (None, None) => (
            SYNC,
            "auto: neither engine could start in the probe; sync threads report why".into(),
        ),
    };
    EngineChoice {
        asked: EngineKind::AUTO,
        used,
        reason,
        probe: Some(probe),
        reused: false,
    }
}

/// The target, for the memory of probes. The size tells a loop device re-attached over
/// another image (same number) from the one probed before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetId {
    Block { dev: DevNum, size: u64 },
    File { id: FileId, size: u64 },
}

/// The I/O a probe decides for. A sweep's varied fields are `None`: it is probed once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeShape {
    pub bs: Option<u64>,
    pub qd: Option<u32>,
    pub workers: u32,
    pub access: Option<Access>,
    pub mix: Option<Mix>,
    pub sync: SyncMode,
    pub rewrite: bool,
    pub direct: bool,
}

impl ProbeShape {
    /// A size sweep leaves out size, access and direction; a queue-depth sweep its depth.
    pub fn of(tag: &PhaseTag, job: &Job, direct: bool) -> ProbeShape {
        let mut shape = ProbeShape {
            bs: Some(job.bs),
            qd: Some(job.qd),
            workers: job.workers,
            access: Some(job.access),
            mix: Some(job.mix),
            sync: job.sync,
            rewrite: job.rewrite,
            direct,
        };
        match tag {
            PhaseTag::Sweep { .. } => {
                shape.bs = None;
                shape.access = None;
                shape.mix = None;
            }
            PhaseTag::QdSweep { .. } => shape.qd = None,
            PhaseTag::Single | PhaseTag::Cdm { .. } | PhaseTag::Metadata { .. } => {}
        }
        shape
    }
}

/// Where a probe's choice holds: this target, this shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeKey {
    pub target: TargetId,
    pub shape: ProbeShape,
}

/// Probes kept at most; the oldest goes first (a TUI left open for days on many devices).
pub const MEMORY_CAPACITY: usize = 256;

/// The choices of the probes made in this session, by target and shape.
#[derive(Debug, Default)]
pub struct EngineMemory {
    entries: Vec<(ProbeKey, EngineChoice)>,
}

impl EngineMemory {
    pub const fn new() -> EngineMemory {
        EngineMemory {
            entries: Vec::new(),
        }
    }

    /// The choice an earlier probe made for `key`, marked as reused.
    pub fn recall(&self, key: &ProbeKey) -> Option<EngineChoice> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, c)| EngineChoice {
                reused: true,
                ..c.clone()
            })
    }

    /// Keeps a probe's choice for `key`, only if it measured an engine.
    pub fn remember(&mut self, key: ProbeKey, choice: &EngineChoice) {
        let measured = choice
            .probe
            .is_some_and(|p| p.uring.is_some() || p.sync.is_some());
        if !measured || choice.reused {
            return;
        }
        self.entries.retain(|(k, _)| *k != key);
        if self.entries.len() >= MEMORY_CAPACITY {
            self.entries.remove(0);
        }
        self.entries.push((key, choice.clone()));
    }

    /// The latest choice for `target`: what is known when a phase of another shape may not probe.
    pub fn latest_for(&self, target: TargetId) -> Option<&EngineChoice> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k.target == target)
            .map(|(_, c)| c)
    }
}

/// How the engine of a phase is found.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Without measuring: asked for, dd's way, io_uring missing, an earlier probe's choice,
    /// or no warm-up to probe in.
    Known(EngineChoice),
    /// Auto with a warm-up and nothing known: probe.
    Probe,
}

/// Decides a phase's engine without running anything, in this order: what was asked and what
/// the kernel allows (`static_choice`), an earlier probe (`known`), with no warm-up a guess
/// from `transport` (None for a file), else a probe.
pub fn decide(
    asked: EngineKind,
    job: &Job,
    uring: &Result<(), String>,
    known: Option<EngineChoice>,
    transport: Option<Transport>,
) -> Decision {
    if let Some(c) = static_choice(asked, job, uring) {
        return Decision::Known(c);
    }
    if let Some(c) = known {
        return Decision::Known(c);
    }
    if job.warmup.is_zero() {
        return Decision::Known(unprobed_choice(job, transport));
    }
    Decision::Probe
}

/// Auto's choice with no warm-up and no earlier probe: a rule of thumb by device kind and QD.
fn unprobed_choice(job: &Job, transport: Option<Transport>) -> EngineChoice {
    let (used, why) = match transport {
        Some(Transport::Zram | Transport::Ram) => (
            SYNC,
            "a RAM-backed device takes no I/O without blocking: io_uring would hand every \
             request to a kernel worker, pread/pwrite threads are faster",
        ),
        Some(Transport::Loop) => (
            SYNC,
            "a loop device blocks on its backing file unless it uses direct I/O: io_uring \
             would hand every request to a kernel worker, pread/pwrite threads are faster",
        ),
        _ if job.qd <= 1 => (
            SYNC,
            "QD1: one pread/pwrite at a time, as dd and fio's psync",
        ),
        _ => (
            URING,
            "io_uring keeps the queue full from one thread on a device with a queue",
        ),
    };
    EngineChoice {
        asked: EngineKind::AUTO,
        used,
        reason: format!("auto, no warm-up so no probe: {why}"),
        probe: None,
        reused: false,
    }
}

/// The job a shared shape's probe runs (a sweep): the deepest queue, then the smallest
/// request, the first of equals. There the engine's cost per I/O weighs most.
pub fn probe_job<'a>(phases: &'a [Phase], direct: bool, shape: &ProbeShape) -> Option<&'a Job> {
    phases
        .iter()
        .filter(|p| ProbeShape::of(&p.tag, &p.job, direct) == *shape)
        .map(|p| &p.job)
        .reduce(|best, j| {
            if (j.qd, std::cmp::Reverse(j.bs)) > (best.qd, std::cmp::Reverse(best.bs)) {
                j
            } else {
                best
            }
        })
}

/// Seconds a probe is expected to take: one pass, ramps and thread start-up included. A phase
/// that probes takes the longer of its warm-up and this before it measures.
pub const PROBE_EXPECTED: Duration =
    Duration::from_millis(4 * (PROBE_RAMP_MS + PROBE_WINDOW_MS) + 40);

/// Which phases of `plan` will probe (`decides_probe`: `decide` gives `Probe`); a shape is
/// probed by its first phase only.
pub fn probing_phases(plan: &Plan, mut decides_probe: impl FnMut(&Phase) -> bool) -> Vec<bool> {
    let mut probed: Vec<ProbeShape> = Vec::new();
    plan.phases
        .iter()
        .map(|p| {
            let shape = ProbeShape::of(&p.tag, &p.job, plan.direct);
            if probed.contains(&shape) || !decides_probe(p) {
                return false;
            }
            probed.push(shape);
            true
        })
        .collect()
}

/// A phase's expected length: its time plus the longer of its warm-up and the probe. `None`
/// when it is not time-bounded.
pub fn expected_phase(job: &Job, probes: bool) -> Option<Duration> {
    let before = if probes {
        job.warmup.max(PROBE_EXPECTED)
    } else {
        job.warmup
    };
    job.time.map(|t| t + before)
}

/// `Plan::expected_duration` with the probes counted (`probing` from `probing_phases`).
pub fn expected_duration(plan: &Plan, probing: &[bool]) -> Option<Duration> {
    plan.phases
        .iter()
        .enumerate()
        .map(|(i, p)| expected_phase(&p.job, probing.get(i).copied().unwrap_or(false)))
        .sum()
}

/// The few words an 80-column screen has room for about `choice`: "probe 812k vs uring 498k"
/// (IOPS), "auto: QD1", "as asked".
pub fn short_reason(choice: &EngineChoice) -> String {
    match (&choice.probe, choice.asked) {
        (Some(p), _) => {
            let (mine, other, other_name) = match choice.used {
                URING => (p.uring, p.sync, "sync"),
                _ => (p.sync, p.uring, "uring"),
            };
            match (mine, other) {
                (Some(m), Some(o)) => {
                    format!("probe {} vs {other_name} {}", kilo(m.iops), kilo(o.iops))
                }
                _ => format!("probe: {other_name} failed"),
            }
        }
        (None, EngineKind::AUTO) if choice.reason.contains("QD1") => "auto: QD1".into(),
        (None, EngineKind::AUTO) => "auto: no io_uring".into(),
        (None, _) if choice.asked == choice.used => "as asked".into(),
        (None, _) => "no io_uring".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(uring: Option<(f64, f64)>, sync: Option<(f64, f64)>) -> EngineProbe {
        let f = |(iops, cpu_us_per_io)| ProbeFigures {
            iops,
            cpu_us_per_io,
        };
        EngineProbe {
            window_s: 0.2,
            total_s: 0.6,
            set_aside: 0,
            uring: uring.map(f),
            sync: sync.map(f),
        }
    }

    fn job(qd: u32, warmup_ms: u64, count: Option<u64>) -> Job {
        Job {
            bs: 4096,
            qd,
            workers: 1,
            access: crate::bench::plan::Access::Random,
            mix: Mix::Read,
            region_start: 0,
            region_len: 1 << 30,
            split_region: false,
            time: count.is_none().then(|| std::time::Duration::from_secs(10)),
            warmup: std::time::Duration::from_millis(warmup_ms),
            ops_per_worker: count,
            sync: crate::sys::direct::SyncMode::None,
            seed: 1,
            rewrite: false,
        }
    }

    #[test]
    fn auto_probes_unless_dd_style_and_explicit_engines_are_kept() {
        let ok = Ok(());
        // dd's way: counted, QD1, no warm-up: pread, nothing extra.
        let c = static_choice(EngineKind::AUTO, &job(1, 0, Some(1000)), &ok).unwrap();
        assert_eq!(c.used, SYNC);
        assert!(c.reason.contains("as dd measures"), "{}", c.reason);
        assert_eq!(short_reason(&c), "auto: QD1");
        // Timed, or with a warm-up, or deeper: the probe decides.
        assert!(static_choice(EngineKind::AUTO, &job(1, 1000, None), &ok).is_none());
        assert!(static_choice(EngineKind::AUTO, &job(1, 500, Some(1000)), &ok).is_none());
        assert!(static_choice(EngineKind::AUTO, &job(4, 0, Some(1000)), &ok).is_none());
        let u = static_choice(URING, &job(1, 0, None), &ok).unwrap();
        assert_eq!((u.used, short_reason(&u).as_str()), (URING, "as asked"));
        let s = static_choice(SYNC, &job(32, 1000, None), &ok).unwrap();
        assert_eq!(s.used, SYNC);
        let off = Err("Operation not permitted".to_string());
        let fallback = static_choice(URING, &job(32, 1000, None), &off).unwrap();
        assert_eq!(fallback.used, SYNC);
        assert!(
            fallback
                .reason
                .contains("not available (Operation not permitted)")
        );
        assert_eq!(
            static_choice(EngineKind::AUTO, &job(32, 1000, None), &off)
                .unwrap()
                .used,
            SYNC
        );
    }

    #[test]
    fn the_faster_engine_wins_and_says_by_how_much() {
        // zram at QD32: io_uring punts every read to a kernel worker.
        let c = choose(probe(Some((498_000.0, 3.9)), Some((812_000.0, 2.1))));
        assert_eq!(c.used, SYNC);
        assert_eq!(
            c.reason,
            "auto: sync (pread/pwrite threads) 812k IOPS at 2.10 us CPU/IO vs io_uring 498k IOPS \
             at 3.90 us CPU/IO in 200 ms of probing each"
        );
        assert_eq!(short_reason(&c), "probe 812k vs uring 498k");
        let c = choose(probe(Some((90_000.0, 5.0)), Some((60_000.0, 9.0))));
        assert_eq!(c.used, URING);
        assert_eq!(short_reason(&c), "probe 90.0k vs sync 60.0k");
    }

    #[test]
    fn a_tie_is_within_the_band_either_way() {
        assert!(tied(100.0, 102.9));
        assert!(tied(102.9, 100.0));
        assert!(!tied(100.0, 103.5));
        assert!(!tied(103.5, 100.0));
    }

    #[test]
    fn a_tie_goes_to_the_cheaper_engine() {
        // 2 % apart: a tie; sync costs less CPU here.
        let c = choose(probe(Some((100_000.0, 6.0)), Some((102_000.0, 4.0))));
        assert_eq!(c.used, SYNC);
        assert!(
            c.reason.ends_with("(a tie: less CPU per I/O decides)"),
            "{}",
            c.reason
        );
        let c = choose(probe(Some((102_000.0, 4.0)), Some((100_000.0, 6.0))));
        assert_eq!(c.used, URING);
        // 10 % faster wins even at twice the CPU.
        let c = choose(probe(Some((100_000.0, 4.0)), Some((110_000.0, 8.0))));
        assert_eq!(c.used, SYNC);
    }

    /// A round of `kiops` thousand IOPS over 100 ms at 2 us of CPU per I/O.
    fn round(kiops: u64) -> ProbeRound {
        ProbeRound {
            ops: kiops * 100,
            seconds: 0.1,
            cpu_seconds: kiops as f64 * 100.0 * 2e-6,
        }
    }

    #[test]
    fn a_disturbed_round_is_set_aside_and_steady_rounds_are_summed() {
        // ext4 file at QD32: one io_uring round met writeback. Summed, io_uring would have
        // had (190k + 320k) / 2 = 255k.
        let (f, aside) = probe_figures(&[round(190), round(320)]).unwrap();
        assert_eq!((f.iops.round(), aside), (320_000.0, 1));
        assert!((f.cpu_us_per_io - 2.0).abs() < 1e-9);
        // Rounds within the band are all kept: the figure is their total.
        let (f, aside) = probe_figures(&[round(300), round(280), round(320)]).unwrap();
        assert_eq!((f.iops.round(), aside), (300_000.0, 0));
        // More than 20 % below the median is disturbed (of two rounds, their mean); within
        // it is not.
        assert_eq!(probe_figures(&[round(66), round(100)]).unwrap().1, 1);
        assert_eq!(probe_figures(&[round(67), round(100)]).unwrap().1, 0);
        let four = [round(250), round(320), round(318), round(321)];
        assert_eq!(probe_figures(&four).unwrap().1, 1);
        // A fast round is not a disturbance: the slower ones stay.
        let fast = [round(620), round(490), round(490), round(480)];
        assert_eq!(probe_figures(&fast).unwrap().1, 0);
        assert_eq!(probe_figures(&[]), None);
        assert_eq!(probe_figures(&[ProbeRound::default()]), None);
    }

    #[test]
    fn another_pass_after_a_disturbed_round_or_a_first_tie() {
        let steady = [round(320), round(318)];
        let threads = [round(200), round(195)];
        // Clear and steady: one pass.
        assert!(!another_pass(Some(&steady), Some(&threads), 2, 1));
        // A pass whose io_uring rounds disagree by more than 20 %: once more, and no more
        // than `PROBE_MAX_PASSES`.
        let disturbed = [round(190), round(320)];
        assert!(another_pass(Some(&disturbed), Some(&threads), 2, 1));
        assert!(!another_pass(
            Some(&disturbed),
            Some(&threads),
            2,
            PROBE_MAX_PASSES
        ));
        // Only the pass just run counts: an earlier disturbed round is set aside by then.
        let settled = [round(190), round(320), round(318), round(321)];
        assert!(!another_pass(Some(&settled), Some(&threads), 2, 1));
        // A slow thread round too.
        assert!(another_pass(
            Some(&steady),
            Some(&[round(100), round(200)]),
            2,
            1
        ));
        // A tie: a second pass, not a third.
        let level = [round(319), round(321)];
        assert!(another_pass(Some(&steady), Some(&level), 2, 1));
        assert!(!another_pass(Some(&steady), Some(&level), 2, 2));
        // A failed candidate: nothing to compare.
        assert!(!another_pass(None, Some(&disturbed), 2, 1));
        assert!(!another_pass(Some(&disturbed), None, 2, 1));
    }

    #[test]
    fn the_reason_says_when_rounds_were_set_aside() {
        let mut p = probe(Some((320_000.0, 2.0)), Some((200_000.0, 4.5)));
        p.set_aside = 1;
        let c = choose(p);
        assert_eq!(c.used, URING);
        assert!(
            c.reason
                .ends_with("ms of probing each; 1 disturbed round set aside"),
            "{}",
            c.reason
        );
        p.set_aside = 2;
        assert!(choose(p).reason.ends_with("2 disturbed rounds set aside"));
    }

    #[test]
    fn a_failed_candidate_leaves_the_other() {
        let c = choose(probe(None, Some((5_000.0, 20.0))));
        assert_eq!(c.used, SYNC);
        assert!(c.reason.contains("io_uring failed in the probe"));
        assert_eq!(short_reason(&c), "probe: uring failed");
        let c = choose(probe(Some((5_000.0, 20.0)), None));
        assert_eq!(c.used, URING);
        assert_eq!(choose(probe(None, None)).used, SYNC);
    }

    fn phase(tag: PhaseTag, bs: u64, qd: u32, access: Access) -> Phase {
        let mut j = job(qd, 500, None);
        j.bs = bs;
        j.access = access;
        Phase {
            label: format!("{bs} QD{qd}"),
            tag,
            job: j,
        }
    }

    fn size_sweep_phases() -> Vec<Phase> {
        let mut phases = Vec::new();
        for bs in [4096, 8192, 65536] {
            for access in [Access::Forward, Access::Backward, Access::Random] {
                let tag = PhaseTag::Sweep {
                    access,
                    write: false,
                };
                phases.push(phase(tag, bs, 1, access));
            }
        }
        phases
    }

    fn plan_of(phases: Vec<Phase>) -> Plan {
        Plan {
            test: crate::bench::plan::test_name::TestName::SizeSweep,
            phases,
            direct: true,
            huge_pages: false,
            engine: EngineKind::AUTO,
            data: crate::bench::plan::DataKind::Zeros,
            interval: Duration::from_millis(250),
            notes: Vec::new(),
        }
    }

    const LOOP0: TargetId = TargetId::Block {
        dev: DevNum { major: 7, minor: 0 },
        size: 1 << 30,
    };

    #[test]
    fn a_sweep_is_one_shape_and_other_jobs_are_not() {
        let phases = size_sweep_phases();
        let first = ProbeShape::of(&phases[0].tag, &phases[0].job, true);
        assert!(
            phases
                .iter()
                .all(|p| ProbeShape::of(&p.tag, &p.job, true) == first)
        );
        // Buffered I/O is another shape.
        assert_ne!(ProbeShape::of(&phases[0].tag, &phases[0].job, false), first);
        // Single jobs differ by any of size, depth, order, direction.
        let single = |bs, qd, access| {
            let p = phase(PhaseTag::Single, bs, qd, access);
            ProbeShape::of(&p.tag, &p.job, true)
        };
        assert_eq!(
            single(4096, 32, Access::Random),
            single(4096, 32, Access::Random)
        );
        assert_ne!(
            single(4096, 32, Access::Random),
            single(8192, 32, Access::Random)
        );
        assert_ne!(
            single(4096, 32, Access::Random),
            single(4096, 16, Access::Random)
        );
        assert_ne!(
            single(4096, 32, Access::Random),
            single(4096, 32, Access::Forward)
        );
        // A queue-depth sweep leaves out its depth only.
        let qd = |q, bs| {
            let p = phase(
                PhaseTag::QdSweep { small: true, qd: q },
                bs,
                q,
                Access::Random,
            );
            ProbeShape::of(&p.tag, &p.job, true)
        };
        assert_eq!(qd(1, 4096), qd(32, 4096));
        assert_ne!(qd(1, 4096), qd(1, 1 << 20));
    }

    #[test]
    fn a_sweep_is_probed_where_the_engine_weighs_most() {
        // A size sweep: the smallest request, the first of equals (wherever it comes).
        let mut phases = size_sweep_phases();
        phases.reverse();
        let shape = ProbeShape::of(&phases[0].tag, &phases[0].job, true);
        let chosen = probe_job(&phases, true, &shape).unwrap();
        assert_eq!((chosen.bs, chosen.access), (4096, Access::Random));
        // A queue-depth sweep: the deepest queue.
        let qds: Vec<Phase> = [1, 32, 4]
            .into_iter()
            .map(|q| {
                phase(
                    PhaseTag::QdSweep { small: true, qd: q },
                    4096,
                    q,
                    Access::Random,
                )
            })
            .collect();
        let qd_shape = ProbeShape::of(&qds[0].tag, &qds[0].job, true);
        assert_eq!(probe_job(&qds, true, &qd_shape).map(|j| j.qd), Some(32));
        let other = ProbeShape {
            workers: 9,
            ..shape
        };
        assert_eq!(probe_job(&phases, true, &other), None);
    }

    #[test]
    fn the_memory_gives_back_a_probed_choice_marked_reused() {
        let probed = choose(probe(Some((90_000.0, 5.0)), Some((60_000.0, 9.0))));
        let p = phase(PhaseTag::Single, 4096, 32, Access::Random);
        let key = ProbeKey {
            target: LOOP0,
            shape: ProbeShape::of(&p.tag, &p.job, true),
        };
        let mut m = EngineMemory::new();
        assert_eq!(m.recall(&key), None);
        m.remember(key, &probed);
        let again = m.recall(&key).unwrap();
        assert!(again.reused);
        assert_eq!((again.used, &again.reason), (probed.used, &probed.reason));
        assert_eq!(again.probe, probed.probe);
        // Another device with the same number (detached, attached over another image): the
        // size tells them apart.
        let other = ProbeKey {
            target: TargetId::Block {
                dev: DevNum { major: 7, minor: 0 },
                size: 2 << 30,
            },
            ..key
        };
        assert_eq!(m.recall(&other), None);
        assert_eq!(m.latest_for(LOOP0).map(|c| c.used), Some(probed.used));
        // A newer probe of the same key replaces the older.
        let newer = choose(probe(Some((60_000.0, 5.0)), Some((90_000.0, 9.0))));
        m.remember(key, &newer);
        assert_eq!(m.recall(&key).unwrap().used, SYNC);
        // A reused choice is not stored again, nor one that measured nothing.
        let mut m = EngineMemory::new();
        m.remember(key, &again);
        m.remember(key, &choose(probe(None, None)));
        let stopped = EngineChoice {
            probe: None,
            ..probed.clone()
        };
        m.remember(key, &stopped);
        assert_eq!(m.recall(&key), None);
        // Bounded: the oldest goes first.
        let mut m = EngineMemory::new();
        for size in 0..=MEMORY_CAPACITY as u64 {
            let k = ProbeKey {
                target: TargetId::Block {
                    dev: DevNum { major: 7, minor: 0 },
                    size,
                },
                ..key
            };
            m.remember(k, &probed);
        }
        assert_eq!(m.entries.len(), MEMORY_CAPACITY);
        assert_eq!(
            m.entries[0].0.target,
            TargetId::Block {
                dev: DevNum { major: 7, minor: 0 },
                size: 1
            }
        );
    }

    #[test]
    fn decide_reuses_a_probe_and_without_a_warm_up_never_probes() {
        let ok = Ok(());
        let probed = choose(probe(Some((90_000.0, 5.0)), Some((60_000.0, 9.0))));
        let reused = EngineChoice {
            reused: true,
            ..probed
        };
        // With a warm-up and nothing known: probe.
        assert_eq!(
            decide(EngineKind::AUTO, &job(32, 500, None), &ok, None, None),
            Decision::Probe
        );
        // Known from an earlier probe: that choice, with or without a warm-up.
        for warmup in [0, 500] {
            assert_eq!(
                decide(
                    EngineKind::AUTO,
                    &job(32, warmup, None),
                    &ok,
                    Some(reused.clone()),
                    None
                ),
                Decision::Known(reused.clone())
            );
        }
        // What the admin asked for wins over any earlier probe.
        let Decision::Known(c) = decide(SYNC, &job(32, 500, None), &ok, Some(reused.clone()), None)
        else {
            panic!("sync asked")
        };
        assert_eq!((c.used, c.reused), (SYNC, false));
        // No warm-up, nothing known: from the device's kind and the queue depth.
        let unprobed =
            |qd, transport| match decide(EngineKind::AUTO, &job(qd, 0, None), &ok, None, transport)
            {
                Decision::Known(c) => {
                    assert!(c.probe.is_none());
                    assert!(
                        c.reason.starts_with("auto, no warm-up so no probe: "),
                        "{}",
                        c.reason
                    );
                    c.used
                }
                Decision::Probe => panic!("no warm-up, no probe"),
            };
        assert_eq!(unprobed(32, Some(Transport::Zram)), SYNC);
        assert_eq!(unprobed(32, Some(Transport::Ram)), SYNC);
        assert_eq!(unprobed(32, Some(Transport::Loop)), SYNC);
        assert_eq!(unprobed(32, Some(Transport::Nvme)), URING);
        assert_eq!(unprobed(32, None), URING);
        assert_eq!(unprobed(1, Some(Transport::Nvme)), SYNC);
        // Without io_uring: sync, whatever was probed before.
        let off = Err("Operation not permitted".to_string());
        let Decision::Known(c) = decide(
            EngineKind::AUTO,
            &job(32, 0, None),
            &off,
            Some(reused),
            None,
        ) else {
            panic!("no io_uring")
        };
        assert_eq!(c.used, SYNC);
    }

    #[test]
    fn a_shape_probes_once_per_run_and_its_probe_counts_in_the_eta() {
        // A size sweep of 9 phases of 0.3 s after 0.1 s: one probe, in the first phase.
        let mut plan = plan_of(size_sweep_phases());
        for p in &mut plan.phases {
            p.job.time = Some(Duration::from_millis(300));
            p.job.warmup = Duration::from_millis(100);
        }
        let probing = probing_phases(&plan, |_| true);
        assert_eq!(probing.iter().filter(|p| **p).count(), 1);
        assert!(probing[0]);
        let plain = plan.expected_duration().unwrap();
        assert_eq!(plain, Duration::from_millis(9 * 400));
        assert_eq!(
            expected_duration(&plan, &probing).unwrap(),
            plain - Duration::from_millis(100) + PROBE_EXPECTED
        );
        // Nothing to probe (known, or no warm-up): the plain figure.
        let none = probing_phases(&plan, |_| false);
        assert!(none.iter().all(|p| !p));
        assert_eq!(expected_duration(&plan, &none), Some(plain));
        // A warm-up longer than the probe contains it.
        let mut long = plan.phases[0].job.clone();
        long.warmup = Duration::from_secs(2);
        assert_eq!(
            expected_phase(&long, true),
            Some(Duration::from_millis(2300))
        );
        // Two single jobs of different shapes probe each.
        let two = plan_of(vec![
            phase(PhaseTag::Single, 4096, 32, Access::Random),
            phase(PhaseTag::Single, 1 << 20, 8, Access::Forward),
            phase(PhaseTag::Single, 4096, 32, Access::Random),
        ]);
        assert_eq!(probing_phases(&two, |_| true), vec![true, true, false]);
    }

    #[test]
    fn a_reused_choice_reads_as_the_probe_that_made_it() {
        let probed = choose(probe(Some((498_000.0, 3.9)), Some((812_000.0, 2.1))));
        let reused = EngineChoice {
            reused: true,
            ..probed.clone()
        };
        assert_eq!(short_reason(&reused), short_reason(&probed));
        let json = serde_json::to_value(&reused).unwrap();
        assert_eq!(json["reused"], true);
        // Left out when false: a probe's own choice reads as before.
        assert!(
            serde_json::to_value(&probed)
                .unwrap()
                .get("reused")
                .is_none()
        );
    }
}
