//! The flush check's timing run, for the CLI (`commands::flushcheck::timing`) and the TUI
//! (`FlushJob`): durable 4 KiB commits with the write cache as found, write + flush, one flush
//! after dirty data, and the commits again with the write cache off where it can be switched.
//! It returns the facts (`flush::timing::TimingFacts`); `flush::timing::judge` judges them.
//!
//! The caller owns the guard and the cache switch (`timing`). Once the run asked for the cache
//! off, it always asks for it back, whatever ends the run.
//!
//! `FlushJob` is the TUI's flush check: `timing::check` with the session's journal.

pub mod target;
pub mod timing;

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use self::timing::{TimingRequest, check};
use crate::flush::timing::{COMMITS, DIRTY_BYTES, Rotation, Stats, TimingFacts};
use crate::history::History;
use crate::model::ChosenDevice;
use crate::report::flushcheck::timing::render_text;
use crate::sys::error::describe_io;
use crate::sys::flush::{Durability, FlushDevice};
use std::path::PathBuf;
use std::sync::Arc;

use super::job::{Every, Job, JobContext, JobEnv, Order};

/// What the run writes through: `sys::flush::FlushDevice`, or a fake in the tests.
pub trait TimedDevice {
    /// Writes `buf` at `offset` made durable as `how` says; how long it took.
    fn write(&self, buf: &[u8], offset: u64, how: Durability) -> io::Result<Duration>;
    /// One cache flush; how long it took.
    fn flush(&self) -> io::Result<Duration>;
    /// Why the device no longer answers as the one opened, if it does not.
    fn gone(&self) -> Option<String>;
}

impl TimedDevice for FlushDevice {
    fn write(&self, buf: &[u8], offset: u64, how: Durability) -> io::Result<Duration> {
        FlushDevice::write(self, buf, offset, how)
    }
    fn flush(&self) -> io::Result<Duration> {
        FlushDevice::flush(self)
    }
    fn gone(&self) -> Option<String> {
        FlushDevice::gone(self)
    }
}

/// The commits rewrite the blocks of this region at the start of the device, in turn.
pub const REGION: u64 = 1 << 20;
/// The dirty data is written in pieces of this size.
const DIRTY_PIECE: u64 = 1 << 20;

/// What a timing run writes where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimingConfig {
    /// The size of one commit: 4 KiB, or the logical block size when larger.
    pub block: u64,
    /// Commits per series.
    pub commits: usize,
    /// The region the commits go to (from offset 0).
    pub region: u64,
    /// The dirty data before the timed flush (64 MiB, less on a smaller device).
    pub dirty_bytes: u64,
}

impl TimingConfig {
    /// The plan for a device of `size` bytes and `logical` block size; why not, when the
    /// device cannot take one commit.
    pub fn for_device(size: u64, logical: u32) -> Result<TimingConfig, String> {
        let logical = u64::from(logical.max(512));
        if !logical.is_power_of_two() || logical > 1 << 20 {
            return Err(format!(
                "the logical block size {logical} is not one disktriage writes"
            ));
        }
        let block = logical.max(4096);
        let usable = size / block * block;
        if usable < block {
            return Err(format!(
                "the device has {size} bytes: too small for one {block}-byte commit"
            ));
        }
        Ok(TimingConfig {
            block,
            commits: COMMITS,
            region: REGION.max(block).min(usable),
            dirty_bytes: DIRTY_BYTES.min(usable) / block * block,
        })
    }
}

/// The parts of a run, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// O_DSYNC commits, the cache as found.
    Commits,
    /// Write + fdatasync.
    WriteFlush,
    /// Plain writes of the dirty data, then the timed flush.
    Dirty,
    /// O_DSYNC commits with the drive's write cache off.
    CacheOffCommits,
}

impl Phase {
    pub fn label(self) -> &'static str {
        match self {
            Phase::Commits => "O_DSYNC commits",
            Phase::WriteFlush => "write + flush",
            Phase::Dirty => "dirty data, then one flush",
            Phase::CacheOffCommits => "O_DSYNC commits, write cache off",
        }
    }
}

/// How far a run is, for a progress line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub phase: Phase,
    pub done: u64,
    pub total: u64,
}

/// The drive's write cache switch, as the caller makes it (journaled, restored on any exit).
pub trait CacheSwitch {
    /// Turns the drive's write cache off; why not when it cannot.
    fn turn_off(&mut self) -> Result<(), String>;
    /// Puts back the state found; why not when it cannot.
    fn put_back(&mut self) -> Result<(), String>;
}

/// Whether the run may switch the cache.
pub enum CacheOff<'a> {
    Switch(&'a mut dyn CacheSwitch),
    /// Why the cache-off commits are not measured (said in the report).
    Not(String),
}

/// How a run ended other than by finishing: with what it measured until then.
#[derive(Debug, Clone, PartialEq)]
pub enum TimingEnd {
    /// The stop flag was set (a signal, the screen).
    Stopped(Box<TimingFacts>),
    /// A write or a flush failed: the operation, the offset and the errno in words.
    Failed {
        error: String,
        facts: Box<TimingFacts>,
    },
}

/// Runs the timing check on `device` (already checked by the write guard). `progress` is
/// called after every write; `stop` is polled between writes.
pub fn run_timing(
    device: &dyn TimedDevice,
    rotation: Rotation,
    kernel_write_cache: Option<String>,
    config: &TimingConfig,
    cache: CacheOff<'_>,
    progress: &mut dyn FnMut(Progress),
    stop: &AtomicBool,
) -> Result<TimingFacts, TimingEnd> {
    let mut facts = TimingFacts {
        block: config.block,
        commit: None,
        write_flush: None,
        cache_off_commit: None,
        cache_off_note: None,
        flush_after_dirty_ms: None,
        dirty_write_ms: None,
        dirty_bytes: config.dirty_bytes,
        rotation,
        kernel_write_cache,
        no_drive: None,
    };
    // Why the cache stays as found is known from the start: said even when the run ends early.
    let mut cache = cache;
    if let CacheOff::Not(why) = &mut cache {
        facts.cache_off_note = Some(std::mem::take(why));
    }
    let mut run = Run {
        device,
        config,
        progress,
        stop,
    };
    match run.commits(Phase::Commits, Durability::Dsync) {
        Ok(s) => facts.commit = s,
        Err(e) => return Err(e.end(facts)),
    }
    match run.commits(Phase::WriteFlush, Durability::WriteThenFlush) {
        Ok(s) => facts.write_flush = s,
        Err(e) => return Err(e.end(facts)),
    }
    match run.dirty() {
        Ok((write_ms, flush_ms)) => {
            facts.dirty_write_ms = Some(write_ms);
            facts.flush_after_dirty_ms = Some(flush_ms);
        }
        Err(e) => return Err(e.end(facts)),
    }
    match cache {
        CacheOff::Not(_) => {}
        CacheOff::Switch(switch) => {
            if let Err(why) = switch.turn_off() {
                facts.cache_off_note =
                    Some(format!("the write cache could not be turned off: {why}"));
                return Ok(facts);
            }
            let measured = run.commits(Phase::CacheOffCommits, Durability::Dsync);
            let put_back = switch.put_back();
            match measured {
                Ok(s) => facts.cache_off_commit = s,
                Err(e) => return Err(e.end(facts)),
            }
            if let Err(why) = put_back {
                return Err(RunError::Failed(format!(
                    "the write cache could not be put back: {why}; run `disktriage restore`"
                ))
                .end(facts));
            }
        }
    }
    Ok(facts)
}

enum RunError {
    Stopped,
    Failed(String),
}

impl RunError {
    fn end(self, facts: TimingFacts) -> TimingEnd {
        match self {
            RunError::Stopped => TimingEnd::Stopped(Box::new(facts)),
            RunError::Failed(error) => TimingEnd::Failed {
                error,
                facts: Box::new(facts),
            },
        }
    }
}

struct Run<'a, 'p> {
    device: &'a dyn TimedDevice,
    config: &'a TimingConfig,
    progress: &'p mut dyn FnMut(Progress),
    stop: &'a AtomicBool,
}

impl Run<'_, '_> {
    fn stopped(&self) -> Result<(), RunError> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(RunError::Stopped);
        }
        Ok(())
    }

    /// The error of `what` at `offset`, with what the device says of itself now.
    fn failed(&self, what: &str, offset: Option<u64>, e: &io::Error) -> RunError {
        let at = offset
            .map(|o| format!(" at offset {o}"))
            .unwrap_or_default();
        let mut text = format!("{what}{at} failed: {}", describe_io(e));
        if let Some(gone) = self.device.gone() {
            text.push_str(&format!(" ({gone})"));
        }
        RunError::Failed(text)
    }

    /// `commits` durable writes of one block each, in turn over the region.
    fn commits(&mut self, phase: Phase, how: Durability) -> Result<Option<Stats>, RunError> {
        let block = self.config.block;
        let slots = (self.config.region / block).max(1);
        let mut buf = FlushDevice::buffer(block as usize)
            .map_err(|e| self.failed("allocating the write buffer", None, &e))?;
        let total = self.config.commits as u64;
        let mut ms = Vec::with_capacity(self.config.commits);
        for i in 0..total {
            self.stopped()?;
            stamp(buf.as_mut_slice(), phase, i);
            let offset = (i % slots) * block;
            let took = self
                .device
                .write(buf.as_slice(), offset, how)
                .map_err(|e| {
                    let what = match how {
                        Durability::Dsync => format!("the O_DSYNC write of {block} bytes"),
                        Durability::WriteThenFlush => {
                            format!("the write of {block} bytes + fdatasync")
                        }
                        Durability::Plain => format!("the write of {block} bytes"),
                    };
                    self.failed(&what, Some(offset), &e)
                })?;
            ms.push(took.as_secs_f64() * 1000.0);
            (self.progress)(Progress {
                phase,
                done: i + 1,
                total,
            });
        }
        Ok(Stats::of(&ms))
    }

    /// A flush (so the dirty data starts from a clean cache), the dirty data in plain writes,
    /// then one timed flush: (ms writing, ms flushing).
    fn dirty(&mut self) -> Result<(f64, f64), RunError> {
        self.stopped()?;
        self.device
            .flush()
            .map_err(|e| self.failed("the flush before the dirty data", None, &e))?;
        let total = self.config.dirty_bytes;
        let piece = DIRTY_PIECE.min(total).max(self.config.block);
        let mut buf = FlushDevice::buffer(piece as usize)
            .map_err(|e| self.failed("allocating the write buffer", None, &e))?;
        let mut written = 0u64;
        let mut write_ms = 0.0;
        let mut n = 0u64;
        while written < total {
            self.stopped()?;
            let len = piece.min(total - written) as usize;
            stamp(&mut buf.as_mut_slice()[..len], Phase::Dirty, n);
            let took = self
                .device
                .write(&buf.as_slice()[..len], written, Durability::Plain)
                .map_err(|e| {
                    self.failed(&format!("the write of {len} bytes"), Some(written), &e)
                })?;
            write_ms += took.as_secs_f64() * 1000.0;
            written += len as u64;
            n += 1;
            (self.progress)(Progress {
                phase: Phase::Dirty,
                done: written,
                total,
            });
        }
        self.stopped()?;
        let flush = self
            .device
            .flush()
            .map_err(|e| self.failed("the flush after the dirty data", None, &e))?;
        Ok((write_ms, flush.as_secs_f64() * 1000.0))
    }
}

/// Fills `buf` with a pattern that changes with every write (no drive can skip a write of
/// what is already there, or compress zeros away).
fn stamp(buf: &mut [u8], phase: Phase, i: u64) {
    let mut x = (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (phase as u64) << 56;
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let bytes = x.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}

/// What the flush check says: the step under way, then how it ended.
#[derive(Debug, Clone, PartialEq)]
pub enum FlushMsg {
    /// The step under way ("commits with the write cache as found") and how far the whole
    /// check is, 0.0 ..= 1.0.
    Progress { step: String, fraction: f64 },
    /// The check ended with a verdict.
    Finished(Box<FlushDone>),
    /// It was refused before anything was written, or failed (the sentence says which, and
    /// what was put back).
    Failed(String),
}

/// A finished flush check as the screen shows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FlushDone {
    /// "waits-for-medium", "volatile-cache" or "unknown" (the JSON's word).
    pub verdict: String,
    /// The verdict in a sentence, and what to do.
    pub sentence: String,
    pub next_step: String,
    /// The report's lines, as `disktriage flushcheck` prints them at this width.
    pub lines: Vec<String>,
}

/// The flush check job's name (`Cmd::StopJob` stops it by it).
pub const NAME: &str = "flushcheck";

/// A flush check as the screen asks for it: the timing (a write test: `confirmation` is the
/// name the admin typed) on `device` (its path under /dev).
#[derive(Debug, Clone, PartialEq)]
pub struct FlushOrder {
    pub device: String,
    pub path: PathBuf,
    pub confirmation: String,
    /// The device as the admin chose it (none: stamped by the app).
    pub chosen: Option<ChosenDevice>,
}

impl Order for FlushOrder {
    type Job = FlushCheckJob;

    /// The job, with the session's journal for its cache switch, run by the stand-in
    /// `FlushChecker` a test gave, else the real check.
    fn job(self, env: &JobEnv) -> FlushCheckJob {
        let job = FlushJob {
            device: self.device,
            path: self.path,
            confirmation: self.confirmation,
            chosen: self.chosen,
            journal_dir: env.journal_dir.clone(),
            history: env.history.clone(),
            // The screen keeps a column of margin on each side.
            width: crate::report::output::DEFAULT_WIDTH - 2,
            interval: env.interval,
        };
        job.with(env.stand_in::<FlushChecker>().unwrap_or_else(real_checker))
    }

    fn stamp(&mut self, chosen: &dyn Fn(&str) -> Option<ChosenDevice>) {
        if self.chosen.is_none() {
            self.chosen = chosen(&self.device);
        }
    }
}

/// What one flush check needs.
pub struct FlushJob {
    pub device: String,
    pub path: PathBuf,
    /// The name the admin typed.
    pub confirmation: String,
    /// The device as the admin chose it: refused when the name holds another device now.
    pub chosen: Option<ChosenDevice>,
    /// The session's journal, where the check's write-cache switch is journaled (none: the
    /// session has no journal, and the cache stays as found).
    pub journal_dir: Option<PathBuf>,
    pub history: Option<History>,
    /// The width the report's lines are laid out for.
    pub width: usize,
    /// How often the step under way is told (the screen: every 250 ms).
    pub interval: std::time::Duration,
}

/// Runs the check, telling `progress` each step and how far it is; ends when the flag is set.
/// A stand-in in tests.
pub type FlushChecker = Arc<
    dyn Fn(&FlushJob, &dyn Fn(String, f64), &AtomicBool) -> Result<FlushDone, String> + Send + Sync,
>;

/// The program's checker: `disktriage flushcheck`'s `timing::check`, laid out for the screen.
pub fn real_checker() -> FlushChecker {
    Arc::new(|job, progress, stop| {
        let Some(journal_dir) = job.journal_dir.as_deref() else {
            return Err(
                "the session has no change journal, so the write cache could not be put back \
                 after the check: nothing was written"
                    .into(),
            );
        };
        let history_dir = job.history.as_ref().map(|h| h.dir().to_path_buf());
        // One message per interval (and at each phase's end), never one per write.
        let mut every = Every::new(job.interval);
        let mut phase: Option<Phase> = None;
        let mut relay = |p: Progress| {
            let force = phase.is_some_and(|was| was != p.phase) || p.done >= p.total;
            if !every.due(force) {
                return;
            }
            phase = Some(p.phase);
            let (base, share) = phase_share(p.phase);
            let within = p.done as f64 / p.total.max(1) as f64;
            progress(
                format!("{} {}/{}", p.phase.label(), p.done, p.total),
                base + share * within,
            );
        };
        let run = check(
            &TimingRequest {
                path: &job.path,
                confirmation: Some(&job.confirmation),
                rpm: None,
                journal_dir,
                history_dir: history_dir.as_deref(),
                expect: job.chosen.as_ref(),
            },
            false,
            &mut relay,
            stop,
        )
        .map_err(|e| format!("{e:#}"))?;
        if let Some(e) = &run.restore_error {
            return Err(format!(
                "the write cache of {} could not be put back: {e}; `disktriage restore` puts \
                 it back",
                run.disk_name
            ));
        }
        // The figures; the verdict and the next step are the screen's own first lines.
        let lines: Vec<String> = render_text(&run.report(), job.width)
            .lines()
            .take_while(|l| !l.trim_start().starts_with("Verdict:"))
            .map(str::to_string)
            .collect();
        match (&run.judgement, &run.ended) {
            (Some(j), _) => Ok(FlushDone {
                verdict: j.verdict.as_str().to_string(),
                sentence: j.sentence.clone(),
                next_step: j.next_step.clone(),
                lines,
            }),
            (None, ended) => Err(format!(
                "the flush check of {} ended before its verdict: {}; the write cache is as \
                 found",
                run.name,
                ended.as_deref().unwrap_or("stopped")
            )),
        }
    })
}

/// Where each phase starts in the whole check's progress, and its share (the commits and
/// the flushes are quick; the dirty data and the cache-off commits take longer).
fn phase_share(phase: Phase) -> (f64, f64) {
    match phase {
        Phase::Commits => (0.0, 0.2),
        Phase::WriteFlush => (0.2, 0.2),
        Phase::Dirty => (0.4, 0.3),
        Phase::CacheOffCommits => (0.7, 0.3),
    }
}

impl FlushJob {
    /// The job, run by `checker` (`real_checker` in the program).
    pub fn with(self, checker: FlushChecker) -> FlushCheckJob {
        FlushCheckJob { job: self, checker }
    }
}

/// A flush check and what runs it: the job the runner starts.
pub struct FlushCheckJob {
    pub job: FlushJob,
    pub checker: FlushChecker,
}

impl Job for FlushCheckJob {
    type Msg = FlushMsg;
    type Output = ();

    fn name(&self) -> &'static str {
        NAME
    }

    fn cannot_start(&self, error: &std::io::Error) -> FlushMsg {
        FlushMsg::Failed(format!("cannot start the flush check: {error}"))
    }

    /// The whole check, on the calling thread.
    fn run(self, ctx: &JobContext<'_, FlushMsg>) {
        let progress = |step: String, fraction: f64| {
            ctx.send(FlushMsg::Progress { step, fraction });
        };
        let msg = match (self.checker)(&self.job, &progress, ctx.stop_flag()) {
            Ok(done) => FlushMsg::Finished(Box::new(done)),
            Err(why) => FlushMsg::Failed(why),
        };
        ctx.send(msg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::cell::{Cell, RefCell};
    use std::sync::atomic::AtomicBool;

    /// A device whose writes take `ms` each, that fails the `fail_at`th write with EIO and
    /// sets `stop` at the `stop_at`th.
    struct Fake<'a> {
        ms: f64,
        writes: Cell<u64>,
        fail_at: Option<u64>,
        stop_at: Option<u64>,
        stop: &'a AtomicBool,
    }

    impl TimedDevice for Fake<'_> {
        fn write(&self, buf: &[u8], offset: u64, how: Durability) -> io::Result<Duration> {
            let n = self.writes.get() + 1;
            self.writes.set(n);
            if Some(n) == self.stop_at {
                self.stop.store(true, Ordering::Relaxed);
            }
            if Some(n) == self.fail_at {
                return Err(io::Error::from_raw_os_error(libc::EIO));
            }
            assert_eq!(offset % 4096, 0);
            assert!(!buf.is_empty());
            let _ = how;
            Ok(Duration::from_secs_f64(self.ms / 1000.0))
        }
        fn flush(&self) -> io::Result<Duration> {
            Ok(Duration::from_micros(20))
        }
        fn gone(&self) -> Option<String> {
            None
        }
    }

    struct Switch<'a> {
        log: &'a RefCell<Vec<String>>,
    }

    impl CacheSwitch for Switch<'_> {
        fn turn_off(&mut self) -> Result<(), String> {
            self.log.borrow_mut().push("off".into());
            Ok(())
        }
        fn put_back(&mut self) -> Result<(), String> {
            self.log.borrow_mut().push("back".into());
            Ok(())
        }
    }

    fn rotation() -> Rotation {
        Rotation {
            rpm: Some(7200),
            rotational: Some(true),
            source: "test".into(),
        }
    }

    /// Runs on a fake of 1 GiB; the end, the log of cache switches.
    fn run(
        fail_at: Option<u64>,
        stop_at: Option<u64>,
    ) -> (Result<TimingFacts, TimingEnd>, Vec<String>) {
        let stop = AtomicBool::new(false);
        let log = RefCell::new(Vec::new());
        let dev = Fake {
            ms: 0.08,
            writes: Cell::new(0),
            fail_at,
            stop_at,
            stop: &stop,
        };
        let config = TimingConfig::for_device(1 << 30, 512).unwrap();
        let mut switch = Switch { log: &log };
        let end = run_timing(
            &dev,
            rotation(),
            Some("write back".into()),
            &config,
            CacheOff::Switch(&mut switch),
            &mut |_| {},
            &stop,
        );
        (end, log.into_inner())
    }

    // 200 commits, 200 write + flush, 64 dirty pieces of 1 MiB: the cache-off commits are
    // writes 465 to 664.
    const CACHE_OFF_FIRST: u64 = 465;

    #[test]
    fn a_whole_run_measures_every_phase_and_puts_the_cache_back() {
        let (end, log) = run(None, None);
        let f = end.unwrap();
        assert_eq!(f.commit.unwrap().count, COMMITS);
        assert_eq!(f.write_flush.unwrap().count, COMMITS);
        assert_eq!(f.cache_off_commit.unwrap().count, COMMITS);
        assert!((f.commit.unwrap().median_ms - 0.08).abs() < 1e-9);
        assert!((f.dirty_write_ms.unwrap() - 64.0 * 0.08).abs() < 1e-6);
        assert_eq!(f.dirty_bytes, DIRTY_BYTES);
        assert_eq!(log, ["off", "back"]);
        assert_eq!(
            crate::flush::timing::judge(&f).verdict,
            crate::flush::timing::Verdict::VolatileCache
        );
    }

    #[test]
    fn a_stop_or_an_error_with_the_cache_off_still_puts_it_back() {
        let (end, log) = run(None, Some(CACHE_OFF_FIRST + 10));
        let Err(TimingEnd::Stopped(f)) = end else {
            panic!("not stopped: {end:?}")
        };
        assert_eq!(f.cache_off_commit, None);
        assert_eq!(f.commit.unwrap().count, COMMITS);
        assert_eq!(log, ["off", "back"]);

        let (end, log) = run(Some(CACHE_OFF_FIRST + 2), None);
        let Err(TimingEnd::Failed { error, .. }) = end else {
            panic!("not failed: {end:?}")
        };
        assert_eq!(
            error,
            "the O_DSYNC write of 4096 bytes at offset 8192 failed: I/O error (EIO)"
        );
        assert_eq!(log, ["off", "back"]);
    }

    #[test]
    fn an_early_end_never_switches_the_cache() {
        let (end, log) = run(Some(3), None);
        let Err(TimingEnd::Failed { error, facts }) = end else {
            panic!("not failed: {end:?}")
        };
        assert!(error.contains("at offset 8192"), "{error}");
        assert_eq!(facts.commit, None);
        assert!(log.is_empty());
        let (end, log) = run(None, Some(250));
        assert!(matches!(end, Err(TimingEnd::Stopped(_))));
        assert!(log.is_empty());
        // A dirty write that fails names its size and offset.
        let (end, _) = run(Some(403), None);
        let Err(TimingEnd::Failed { error, .. }) = end else {
            panic!("not failed: {end:?}")
        };
        assert_eq!(
            error,
            "the write of 1048576 bytes at offset 2097152 failed: I/O error (EIO)"
        );
    }

    #[test]
    fn the_plan_fits_the_device() {
        let c = TimingConfig::for_device(1 << 30, 512).unwrap();
        assert_eq!(
            (c.block, c.region, c.dirty_bytes, c.commits),
            (4096, REGION, DIRTY_BYTES, COMMITS)
        );
        let c = TimingConfig::for_device(16 << 20, 4096).unwrap();
        assert_eq!(c.dirty_bytes, 16 << 20);
        let small = TimingConfig::for_device(8192 + 100, 512).unwrap();
        assert_eq!((small.region, small.dirty_bytes), (8192, 8192));
        let big_sectors = TimingConfig::for_device(1 << 30, 8192).unwrap();
        assert_eq!(big_sectors.block, 8192);
        assert!(TimingConfig::for_device(4095, 512).is_err());
        assert!(TimingConfig::for_device(0, 512).is_err());
        assert!(TimingConfig::for_device(1 << 30, 3000).is_err());
    }

    #[test]
    fn every_write_carries_other_bytes() {
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        stamp(&mut a, Phase::Commits, 0);
        stamp(&mut b, Phase::Commits, 1);
        assert_ne!(a, b);
        assert!(a.iter().any(|&x| x != 0));
        let mut c = vec![0u8; 4096];
        stamp(&mut c, Phase::CacheOffCommits, 0);
        assert_ne!(a, c);
    }
}
