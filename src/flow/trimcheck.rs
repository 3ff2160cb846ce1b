//! The TRIM check (`disktriage trimcheck`, `TrimcheckJob`): does a discard do what the device
//! claims? Behind the write guard, a scratch range on whole discard granules is saved to the
//! journal (off the device), written with a pattern, flushed and read back, then discarded
//! (BLKDISCARD) and read back with O_DIRECT; `trim` judges what came back against the claim.
//! The range is put back on every exit; after a crash, `restore --capacity JOURNAL` does it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::capacity::record_check;
use super::job::{Job, JobContext, JobEnv, Order};
use super::write_target::{journal_dir, prepare_write, run_id};
use crate::capacity::journal::{self, Header, Journal, PutBack, Record};
use crate::capacity::{Saver, SectorIo};
use crate::history::{CheckRecord, History, TRIM_TEST};
use crate::model::ChosenDevice;
use crate::model::text::neutralize_controls;
use crate::report::trimcheck::{TrimReport, verdict_sentence, verdict_word};
use crate::sys::SysRoot;
use crate::sys::capacity::{DeviceSectors, JournalSaver};
use crate::sys::discard;
use crate::sys::error::describe_io;
use crate::trim::{
    self, Claim, DiscardLimits, SCRATCH_BYTES, Scratch, TrimEnd, classify, fill_pattern, judge,
};

/// The largest read or write the check asks for (the journal's records are this size too).
const CHUNK: u64 = 1 << 20;

/// What a check is asked.
#[derive(Debug, Clone)]
pub struct TrimRequest {
    pub path: PathBuf,
    /// The device's name as the admin typed it.
    pub confirmation: String,
    /// Where the saved bytes go, on another disk than the device.
    pub journal: PathBuf,
    /// The device as the admin chose it on a screen: refused when the name holds another.
    pub expect: Option<ChosenDevice>,
}

/// A check that ran (to its verdict, or ended before it).
#[derive(Debug, Clone)]
pub struct TrimRun {
    pub device: String,
    pub name: String,
    pub model: Option<String>,
    pub sector: u64,
    pub limits: DiscardLimits,
    pub claim: Claim,
    pub scratch: Option<Scratch>,
    pub end: TrimEnd,
    /// How long the discard took, when it was sent and succeeded.
    pub discard_time: Option<Duration>,
    /// The put-back of the saved bytes, when any were saved.
    pub put_back: Option<PutBack>,
    pub elapsed: Duration,
    /// The journal, when the put-back did not finish and it is kept.
    pub journal_kept: Option<String>,
    /// To say beside the report (a journal in RAM, a claim that could not be asked).
    pub warnings: Vec<String>,
}

impl TrimRun {
    pub fn report(&self) -> TrimReport<'_> {
        TrimReport {
            device: &self.device,
            name: &self.name,
            model: self.model.as_deref(),
            sector: self.sector,
            limits: &self.limits,
            claim: &self.claim,
            scratch: self.scratch,
            end: &self.end,
            discard_time: self.discard_time,
            put_back: self.put_back.as_ref(),
            elapsed: self.elapsed,
            journal_kept: self.journal_kept.as_deref(),
        }
    }
}

/// The TRIM check's name as a job.
pub const NAME: &str = "trimcheck";

/// The step under way, in the order they come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimStep {
    /// Saved and overwritten so far, of the range's bytes.
    SaveAndWrite {
        done: u64,
        of: u64,
    },
    /// The pattern read back before the discard.
    ReadPattern,
    Discard,
    /// The range read back after the discard.
    ReadBack,
    /// The saved bytes written back and read back.
    PutBack,
}

impl TrimStep {
    /// The step in the CLI's progress line and on the screen: "saving and writing the
    /// pattern, 1.0 of 4.0 MiB".
    pub fn words(self) -> String {
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        match self {
            TrimStep::SaveAndWrite { done, of } => format!(
                "saving and writing the pattern, {:.1} of {:.1} MiB",
                mib(done),
                mib(of)
            ),
            TrimStep::ReadPattern => "reading the pattern back".into(),
            TrimStep::Discard => "discarding the range".into(),
            TrimStep::ReadBack => "reading the range back after the discard".into(),
            TrimStep::PutBack => "putting back what was saved".into(),
        }
    }
}

/// The TRIM check as a job: `check` on the runner's thread, stopped by its flag; a verdict
/// goes into `history`.
#[derive(Debug, Clone)]
pub struct TrimcheckJob {
    pub request: TrimRequest,
    /// Where a verdict is recorded (none: not recorded).
    pub history: Option<History>,
    /// A directory to make first (the history's, where the default journal goes).
    pub state_dir: Option<PathBuf>,
}

/// What the check says: each step as it starts (it takes about a second on a working
/// device), and its end.
#[derive(Debug, Clone)]
pub enum TrimMsg {
    Step(TrimStep),
    Done(Box<TrimRun>),
    Failed(String),
}

impl Job for TrimcheckJob {
    type Msg = TrimMsg;
    type Output = anyhow::Result<TrimRun>;

    fn name(&self) -> &'static str {
        NAME
    }

    /// Putting back 4 MiB on a slow stick takes seconds: a quit waits for it.
    fn stop_wait(&self) -> Duration {
        Duration::from_secs(60)
    }

    fn cannot_start(&self, error: &std::io::Error) -> TrimMsg {
        TrimMsg::Failed(format!("cannot start the TRIM check: {error}"))
    }

    fn run(self, ctx: &JobContext<'_, TrimMsg>) -> anyhow::Result<TrimRun> {
        if let Some(dir) = &self.state_dir
            && let Err(e) = History::new(dir).prepare_dir()
        {
            let why = format!("the journal's directory: {e:#}; nothing was written");
            ctx.send(TrimMsg::Failed(why.clone()));
            bail!(why);
        }
        let mut step = |s: TrimStep| {
            ctx.send(TrimMsg::Step(s));
        };
        let mut run = check(&self.request, &|| ctx.stopped(), &mut step);
        if let (Some(history), Ok(r)) = (&self.history, &mut run)
            && let Some(record) = record_of(r)
        {
            let (name, model) = (r.name.clone(), r.model.clone());
            let notes = record_check(history, TRIM_TEST, &name, model, r.elapsed, record);
            r.warnings.extend(notes);
        }
        ctx.send(match &run {
            Ok(r) => TrimMsg::Done(Box::new(r.clone())),
            Err(e) => TrimMsg::Failed(format!("{e:#}")),
        });
        run
    }
}

/// What the history keeps of a check: its verdict, when it has one (not stopped, failed or
/// untested).
pub fn record_of(run: &TrimRun) -> Option<CheckRecord> {
    match run.end {
        TrimEnd::NoDiscard | TrimEnd::Refused(_) | TrimEnd::Judged { .. } => Some(CheckRecord {
            verdict: verdict_word(&run.end).into(),
            sentence: verdict_sentence(&run.end),
        }),
        TrimEnd::NoRange(_) | TrimEnd::Stopped | TrimEnd::Failed(_) => None,
    }
}

/// A TRIM check as the Devices screen asks for it once the name was typed.
#[derive(Debug, Clone, PartialEq)]
pub struct TrimOrder {
    pub device: String,
    pub path: PathBuf,
    /// The name the admin typed.
    pub confirmation: String,
    /// Where the saved bytes go: on another disk than the one checked.
    pub journal: PathBuf,
    /// The device as the admin chose it (none: stamped by the app).
    pub chosen: Option<ChosenDevice>,
}

impl Order for TrimOrder {
    type Job = TrimcheckJob;

    fn job(self, env: &JobEnv) -> TrimcheckJob {
        // The history's directory is made first when the journal goes there (its default).
        let state_dir = env
            .history
            .as_ref()
            .map(|h| h.dir().to_path_buf())
            .filter(|d| self.journal.parent() == Some(d.as_path()));
        TrimcheckJob {
            request: TrimRequest {
                path: self.path,
                confirmation: self.confirmation,
                journal: self.journal,
                expect: self.chosen,
            },
            history: env.history.clone(),
            state_dir,
        }
    }

    fn stamp(&mut self, chosen: &dyn Fn(&str) -> Option<ChosenDevice>) {
        if self.chosen.is_none() {
            self.chosen = chosen(&self.device);
        }
    }
}

/// Checks the device: the guard, the limits and the claim; then, where discards reach the
/// device and a range fits, the exercise and the put-back. `stop` ends it early (put back).
pub fn check(
    req: &TrimRequest,
    stop: &dyn Fn() -> bool,
    step: &mut dyn FnMut(TrimStep),
) -> anyhow::Result<TrimRun> {
    let started = Instant::now();
    let target = prepare_write(&req.path, Some(&req.confirmation))?;
    if let Some(expect) = &req.expect
        && let Err(why) = target.device.refuse_unless_chosen(expect)?
    {
        bail!("{}", neutralize_controls(&why));
    }
    let name = target.name.clone();
    let limits = discard::limits(target.device.dev)
        .with_context(|| format!("cannot read {name}'s discard limits from sysfs"))?;
    let mut warnings = Vec::new();
    let claim = discard::claim(&target.device, &mut warnings);
    let sector = u64::from(target.device.logical.max(1));
    let mut run = TrimRun {
        device: req.path.display().to_string(),
        model: SysRoot::host().device_identity(&name).model,
        name,
        sector,
        limits,
        claim,
        scratch: None,
        end: TrimEnd::NoDiscard,
        discard_time: None,
        put_back: None,
        elapsed: Duration::ZERO,
        journal_kept: None,
        warnings,
    };
    if limits.max_bytes == 0 {
        run.elapsed = started.elapsed();
        return Ok(run);
    }
    let scratch = match trim::scratch_range(
        target.device.size,
        sector,
        limits.granularity,
        limits.alignment,
        SCRATCH_BYTES,
    ) {
        Ok(s) => s,
        Err(why) => {
            run.end = TrimEnd::NoRange(why);
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
    let mut dev = DeviceSectors::new(target.device).context("no buffer for the check")?;
    let mut saved = Vec::new();
    let mut exercise = Exercise {
        dev: &mut dev,
        saver: &mut saver,
        saved: &mut saved,
        scratch,
        run: header.run,
        stop,
        step,
    };
    let (end, discard_time) = exercise.run(&run.claim);
    run.end = end;
    run.discard_time = discard_time;
    if saved.is_empty() {
        if let Err(e) = saver.done() {
            run.warnings
                .push(format!("the empty journal cannot be removed: {e}"));
        }
    } else {
        let j = Journal {
            header,
            records: saved,
            torn_bytes: 0,
        };
        step(TrimStep::PutBack);
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

/// The writes, the discard and the reads of one check; every range it overwrites is in
/// `saved` (and durable in the journal) before the write.
struct Exercise<'a> {
    dev: &'a mut DeviceSectors,
    saver: &'a mut dyn Saver,
    saved: &'a mut Vec<Record>,
    scratch: Scratch,
    run: u64,
    stop: &'a dyn Fn() -> bool,
    step: &'a mut dyn FnMut(TrimStep),
}

impl Exercise<'_> {
    fn run(&mut self, claim: &Claim) -> (TrimEnd, Option<Duration>) {
        match self.steps(claim) {
            Ok(done) => done,
            Err(end) => (end, None),
        }
    }

    fn steps(&mut self, claim: &Claim) -> Result<(TrimEnd, Option<Duration>), TrimEnd> {
        let s = self.scratch;
        let mut pattern = vec![0u8; s.len as usize];
        fill_pattern(&mut pattern, self.run, s.offset);
        let sector = self.dev.sector_size();
        for at in (0..s.len).step_by(CHUNK as usize) {
            if (self.stop)() {
                return Err(TrimEnd::Stopped);
            }
            (self.step)(TrimStep::SaveAndWrite {
                done: at,
                of: s.len,
            });
            let n = CHUNK.min(s.len - at) as usize;
            let lba = (s.offset + at) / sector;
            let mut old = vec![0u8; n];
            self.dev
                .read(lba, &mut old)
                .map_err(|e| failed(&format!("cannot read LBA {lba}"), &e))?;
            self.saver
                .save(lba, &old)
                .map_err(|e| failed("cannot save the range to the journal", &e))?;
            self.saved.push(Record { lba, data: old });
            let from = at as usize;
            self.dev
                .write(lba, &pattern[from..from + n])
                .map_err(|e| failed(&format!("cannot write LBA {lba}"), &e))?;
        }
        self.dev
            .flush()
            .map_err(|e| failed("the device refused the flush after the pattern", &e))?;
        // The read back after the discard means something only if the pattern was there.
        (self.step)(TrimStep::ReadPattern);
        let before = self.read_range()?;
        if before != pattern {
            return Err(TrimEnd::Failed(
                "the pattern written did not read back before the discard: the device does not \
                 store what it is given, so its discards cannot be judged (try disktriage \
                 capacity)"
                    .into(),
            ));
        }
        if (self.stop)() {
            return Err(TrimEnd::Stopped);
        }
        (self.step)(TrimStep::Discard);
        let took = match discard::discard(self.dev.device(), s.offset, s.len) {
            Ok(t) => t,
            Err(e) => return Ok((TrimEnd::Refused(describe_io(&e)), None)),
        };
        (self.step)(TrimStep::ReadBack);
        let after = self.read_range()?;
        let seen = classify(&after, &pattern);
        let (verdict, sentence) = judge(claim, seen);
        Ok((
            TrimEnd::Judged {
                seen,
                verdict,
                sentence,
            },
            Some(took),
        ))
    }

    fn read_range(&mut self) -> Result<Vec<u8>, TrimEnd> {
        let s = self.scratch;
        let sector = self.dev.sector_size();
        let mut out = vec![0u8; s.len as usize];
        for (i, chunk) in out.chunks_mut(CHUNK as usize).enumerate() {
            let lba = (s.offset + i as u64 * CHUNK) / sector;
            self.dev
                .read(lba, chunk)
                .map_err(|e| failed(&format!("cannot read LBA {lba} back"), &e))?;
        }
        Ok(out)
    }
}

fn failed(what: &str, e: &std::io::Error) -> TrimEnd {
    TrimEnd::Failed(format!("{what}: {}", describe_io(e)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trim::{Readback, Verdict};

    fn run(end: TrimEnd) -> TrimRun {
        TrimRun {
            device: "/dev/sdb".into(),
            name: "sdb".into(),
            model: None,
            sector: 512,
            limits: DiscardLimits::default(),
            claim: Claim::none("no drive to ask"),
            scratch: None,
            end,
            discard_time: None,
            put_back: None,
            elapsed: Duration::ZERO,
            journal_kept: None,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn only_a_verdict_is_recorded_never_a_stopped_failed_or_untested_check() {
        let judged = TrimEnd::Judged {
            seen: Readback::Unchanged,
            verdict: Verdict::Broken,
            sentence: "claims zeros (NVMe DLFEAT 1), returns old data".into(),
        };
        let kept = |end| record_of(&run(end)).map(|r| (r.verdict, r.sentence));
        assert_eq!(
            kept(judged),
            Some((
                "broken".into(),
                "claims zeros (NVMe DLFEAT 1), returns old data".into()
            ))
        );
        assert_eq!(kept(TrimEnd::NoDiscard).unwrap().0, "no-discard");
        assert_eq!(kept(TrimEnd::Refused("EIO".into())).unwrap().0, "refused");
        for end in [
            TrimEnd::Stopped,
            TrimEnd::Failed("cannot read LBA 8".into()),
            TrimEnd::NoRange("too small".into()),
        ] {
            assert_eq!(kept(end.clone()), None, "{end:?}");
        }
    }
}
