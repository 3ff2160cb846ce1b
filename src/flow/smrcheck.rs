//! The write-cliff probe (`disktriage smrcheck`, `SmrcheckJob`): does sustained random writing
//! fall off a cliff, as a drive-managed SMR disk's does once its media cache fills? Behind the
//! write guard, a scratch range is saved to the journal (off the device), then random O_DIRECT
//! blocks are written in it, a flush ending each second so the drive's DRAM cannot hide the
//! medium. Each second is a `smr::Sample`; the run stops once `smr::detect` proves a cliff.
//! The range is put back on every exit; after a crash, `restore --capacity JOURNAL` does it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::job::{Job, JobContext};
use super::write_target::{journal_dir, prepare_write, run_id};
use crate::capacity::journal::{self, Header, Journal, PutBack, Record};
use crate::capacity::{Saver, SectorIo};
use crate::model::text::neutralize_controls;
use crate::report::smrcheck::SmrReport;
use crate::smr::{self, Finding, Medium, Rng, Sample, Scratch, SmrEnd};
use crate::sys::SysRoot;
use crate::sys::capacity::{DeviceSectors, JournalSaver};
use crate::sys::error::describe_io;
use crate::sys::flush::{Durability, FlushDevice};
use crate::sys::rotation::rotation;

/// The journal's records and the save's reads are this size.
const CHUNK: u64 = 1 << 20;
/// One sample per this much time (each ends with a flush).
const INTERVAL: Duration = Duration::from_secs(1);

/// What a probe is asked.
#[derive(Debug, Clone)]
pub struct SmrRequest {
    pub path: PathBuf,
    /// The device's name as the admin typed it.
    pub confirmation: String,
    /// Where the saved range goes, on another disk than the device.
    pub journal: PathBuf,
    /// How long to write at most.
    pub duration: Duration,
}

/// A probe that ran (to its verdict, or ended before it).
#[derive(Debug, Clone)]
pub struct SmrRun {
    pub device: String,
    pub name: String,
    pub model: Option<String>,
    pub sector: u64,
    /// Each write's size.
    pub block: u64,
    pub medium: Medium,
    /// Where what the device is came from.
    pub medium_source: String,
    pub scratch: Option<Scratch>,
    /// The time asked for, in minutes.
    pub minutes: f64,
    pub end: SmrEnd,
    /// One sample per interval of writes.
    pub series: Vec<Sample>,
    pub put_back: Option<PutBack>,
    pub elapsed: Duration,
    /// The journal, when the put-back did not finish and it is kept.
    pub journal_kept: Option<String>,
    pub warnings: Vec<String>,
}

impl SmrRun {
    pub fn report(&self) -> SmrReport<'_> {
        SmrReport {
            device: &self.device,
            name: &self.name,
            model: self.model.as_deref(),
            sector: self.sector,
            block: self.block,
            medium: self.medium,
            medium_source: &self.medium_source,
            scratch: self.scratch,
            minutes: self.minutes,
            end: &self.end,
            series: &self.series,
            put_back: self.put_back.as_ref(),
            elapsed: self.elapsed,
            journal_kept: self.journal_kept.as_deref(),
        }
    }

    /// Bytes written by the random writes.
    pub fn written(&self) -> u64 {
        self.series.iter().map(|s| s.bytes).sum()
    }
}

/// The probe's name as a job.
pub const NAME: &str = "smrcheck";

/// The probe as a job: `check` on the runner's thread, stopped by its flag.
#[derive(Debug, Clone)]
pub struct SmrcheckJob {
    pub request: SmrRequest,
}

/// Where a probe is.
#[derive(Debug, Clone, PartialEq)]
pub enum SmrStep {
    /// Saving the range to the journal: bytes saved of the range's.
    Saving { done: u64, of: u64 },
    /// Writing: the latest interval and the bytes written so far.
    Writing { last: Sample, written: u64 },
    /// Putting the range back.
    PuttingBack,
}

/// What the probe says as it goes and at its end.
#[derive(Debug, Clone)]
pub enum SmrMsg {
    Step(SmrStep),
    Done(Box<SmrRun>),
    Failed(String),
}

impl Job for SmrcheckJob {
    type Msg = SmrMsg;
    type Output = anyhow::Result<SmrRun>;

    fn name(&self) -> &'static str {
        NAME
    }

    /// Putting back 256 MiB on a disk that fell off its cliff takes minutes: a quit waits.
    fn stop_wait(&self) -> Duration {
        Duration::from_secs(600)
    }

    fn cannot_start(&self, error: &std::io::Error) -> SmrMsg {
        SmrMsg::Failed(format!("cannot start the write-cliff probe: {error}"))
    }

    fn run(self, ctx: &JobContext<'_, SmrMsg>) -> anyhow::Result<SmrRun> {
        let run = check(&self.request, &|| ctx.stopped(), &mut |step| {
            ctx.send(SmrMsg::Step(step));
        });
        ctx.send(match &run {
            Ok(r) => SmrMsg::Done(Box::new(r.clone())),
            Err(e) => SmrMsg::Failed(format!("{e:#}")),
        });
        run
    }
}

/// What the device is, from its rotation (VPD B1h, ATA word 217, `queue/rotational`).
fn medium(name: &str) -> (Medium, String) {
    let r = rotation(name);
    let m = match (r.rpm, r.rotational) {
        (Some(0), _) => Medium::SolidState,
        (Some(_), _) | (None, Some(true)) => Medium::Rotating,
        (None, Some(false)) => Medium::SolidState,
        (None, None) => Medium::Unknown,
    };
    (m, r.source)
}

/// Probes the device: the guard, the range, the journal, the writes, the put-back. `stop`
/// ends it early (what was written is put back); `step` hears where it is.
pub fn check(
    req: &SmrRequest,
    stop: &dyn Fn() -> bool,
    step: &mut dyn FnMut(SmrStep),
) -> anyhow::Result<SmrRun> {
    let started = Instant::now();
    let target = prepare_write(&req.path, Some(&req.confirmation))?;
    let name = target.name.clone();
    let sector = u64::from(target.device.logical.max(1));
    let block = smr::write_block(sector, u64::from(target.device.physical));
    let (medium, medium_source) = medium(&name);
    let mut run = SmrRun {
        device: req.path.display().to_string(),
        model: SysRoot::host().device_identity(&name).model,
        name,
        sector,
        block,
        medium,
        medium_source,
        scratch: None,
        minutes: req.duration.as_secs_f64() / 60.0,
        end: SmrEnd::Stopped,
        series: Vec::new(),
        put_back: None,
        elapsed: Duration::ZERO,
        journal_kept: None,
        warnings: Vec::new(),
    };
    let scratch = match smr::scratch_range(target.device.size, block) {
        Ok(s) => s,
        Err(why) => {
            run.end = SmrEnd::NoRange(why);
            run.elapsed = started.elapsed();
            return Ok(run);
        }
    };
    run.scratch = Some(scratch);
    let dir = journal_dir(&req.journal, &target.device, &mut run.warnings)?;
    let header = Header {
        device: run.name.clone(),
        dev: (target.device.dev.major, target.device.dev.minor),
        diskseq: target.chosen.diskseq.unwrap_or(0),
        sector: target.device.logical,
        run: run_id(),
    };
    let mut saver = JournalSaver::create(&dir, &header).with_context(|| {
        format!(
            "cannot create the journal {}",
            neutralize_controls(&req.journal.display().to_string())
        )
    })?;
    let mut dev = DeviceSectors::new(target.device).context("no buffer for the probe")?;
    let mut saved = Vec::new();
    let mut probe = Probe {
        dev: &mut dev,
        scratch,
        block,
        stop,
        step,
        series: &mut run.series,
    };
    run.end = match probe.save(&mut saver, &mut saved) {
        Ok(()) => probe.write(header.run, req.duration),
        Err(end) => end,
    };
    if saved.is_empty() {
        if let Err(e) = saver.done() {
            run.warnings
                .push(format!("the empty journal cannot be removed: {e}"));
        }
    } else {
        step(SmrStep::PuttingBack);
        let j = Journal {
            header,
            records: saved,
            torn_bytes: 0,
        };
        let back = journal::put_back(&j, &mut dev);
        if back.error.is_none() && back.not_back.is_empty() {
            if let Err(e) = saver.done() {
                run.warnings.push(format!(
                    "every byte is back, but the journal cannot be removed: {e}"
                ));
            }
        } else {
            run.journal_kept = Some(req.journal.display().to_string());
        }
        run.put_back = Some(back);
    }
    run.elapsed = started.elapsed();
    Ok(run)
}

/// The save and the writes of one probe.
struct Probe<'a> {
    dev: &'a mut DeviceSectors,
    scratch: Scratch,
    block: u64,
    stop: &'a dyn Fn() -> bool,
    step: &'a mut dyn FnMut(SmrStep),
    series: &'a mut Vec<Sample>,
}

impl Probe<'_> {
    /// The whole range, durable in the journal before the first write: writes land anywhere.
    fn save(&mut self, saver: &mut dyn Saver, saved: &mut Vec<Record>) -> Result<(), SmrEnd> {
        let s = self.scratch;
        let sector = self.dev.sector_size();
        for at in (0..s.len).step_by(CHUNK as usize) {
            if (self.stop)() {
                return Err(SmrEnd::Stopped);
            }
            let n = CHUNK.min(s.len - at) as usize;
            let lba = (s.offset + at) / sector;
            let mut old = vec![0u8; n];
            self.dev
                .read(lba, &mut old)
                .map_err(|e| failed(&format!("cannot read LBA {lba}"), &e))?;
            saver
                .save(lba, &old)
                .map_err(|e| failed("cannot save the range to the journal", &e))?;
            saved.push(Record { lba, data: old });
            (self.step)(SmrStep::Saving {
                done: at + n as u64,
                of: s.len,
            });
        }
        Ok(())
    }

    /// Random blocks of the range for up to `duration`; ends early once a cliff is proven.
    fn write(&mut self, seed: u64, duration: Duration) -> SmrEnd {
        let mut buf = match FlushDevice::buffer(self.block as usize) {
            Ok(b) => b,
            Err(e) => return failed("no buffer for the writes", &e),
        };
        let mut rng = Rng::new(seed);
        let blocks = self.scratch.len / self.block;
        let began = Instant::now();
        let mut written = 0u64;
        while began.elapsed() < duration {
            let opened = Instant::now();
            let (mut writes, mut sum, mut max) = (0u64, Duration::ZERO, Duration::ZERO);
            while opened.elapsed() < INTERVAL && began.elapsed() < duration {
                if (self.stop)() {
                    return SmrEnd::Stopped;
                }
                rng.fill(buf.as_mut_slice());
                let at = self.scratch.offset + rng.below(blocks) * self.block;
                let took = match self
                    .dev
                    .device()
                    .write(buf.as_slice(), at, Durability::Plain)
                {
                    Ok(t) => t,
                    Err(e) => {
                        return failed(
                            &format!(
                                "cannot write at byte {at} (LBA {})",
                                at / self.dev.sector_size()
                            ),
                            &e,
                        );
                    }
                };
                writes += 1;
                sum += took;
                max = max.max(took);
            }
            let flush = match self.dev.device().flush() {
                Ok(t) => t,
                Err(e) => return failed("the device refused a flush", &e),
            };
            let bytes = writes * self.block;
            written += bytes;
            let sample = Sample {
                at_s: began.elapsed().as_secs_f64(),
                seconds: opened.elapsed().as_secs_f64(),
                writes,
                bytes,
                mean_ms: if writes > 0 {
                    sum.as_secs_f64() * 1e3 / writes as f64
                } else {
                    0.0
                },
                max_ms: max.as_secs_f64() * 1e3,
                flush_ms: flush.as_secs_f64() * 1e3,
            };
            self.series.push(sample);
            (self.step)(SmrStep::Writing {
                last: sample,
                written,
            });
            if let cliff @ Finding::Cliff { .. } = smr::detect(self.series) {
                return SmrEnd::Judged(cliff);
            }
        }
        SmrEnd::Judged(smr::detect(self.series))
    }
}

fn failed(what: &str, e: &std::io::Error) -> SmrEnd {
    SmrEnd::Failed(format!("{what}: {}", describe_io(e)))
}
