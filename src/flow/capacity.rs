//! The capacity probe as a job (`CapacityJob`), for `disktriage capacity` and the screen: the
//! guard, the journal of saved sectors (off the probed disk), `capacity::Probe`, the put-back.
//! Also `restore_journal`, which finishes a put-back a crash left (the TRIM check's journal
//! too: same format), and `record_check`, which adds either one's verdict to the history.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::job::{Every, Job, JobContext, JobEnv, Order};
use super::write_target::{journal_dir, prepare_write, run_id};
use crate::capacity::journal::{self, Header, PutBack};
use crate::capacity::probe::Progress;
use crate::capacity::{NoSaver, Probe, ProbeConfig, ProbeEnd, Restored, Saver};
use crate::history::{CAPACITY_TEST, CheckRecord, History, HistoryEntry};
use crate::model::text::neutralize_controls;
use crate::model::{ChosenDevice, DevNum};
use crate::report::capacity::{CapacityReport, verdict};
use crate::sys::SysRoot;
use crate::sys::capacity::{DeviceSectors, JournalSaver};
use crate::sys::flush::PinnedDevice;
use crate::sys::flush_log::LogDir;

/// What a probe is asked.
#[derive(Debug, Clone)]
pub struct CapacityRequest {
    pub path: PathBuf,
    /// The device's name as the admin typed it.
    pub confirmation: String,
    /// `--destroy-data`: nothing saved, nothing put back.
    pub destroy: bool,
    /// Where the saved sectors go (ignored under `destroy`).
    pub journal: PathBuf,
    /// The device as the admin chose it on a screen.
    pub expect: Option<ChosenDevice>,
}

/// A probe that ran (to its end, stopped or failed mid-way).
#[derive(Debug, Clone)]
pub struct CapacityRun {
    pub device: String,
    pub name: String,
    pub model: Option<String>,
    pub end: ProbeEnd,
    pub restored: Option<Restored>,
    pub elapsed: Duration,
    /// The journal, when the put-back did not finish and it is kept.
    pub journal_kept: Option<String>,
    /// To say beside the report (a journal in RAM).
    pub warnings: Vec<String>,
}

impl CapacityRun {
    pub fn report(&self) -> CapacityReport<'_> {
        CapacityReport {
            device: &self.device,
            name: &self.name,
            model: self.model.as_deref(),
            end: &self.end,
            elapsed: self.elapsed,
            restored: self.restored.as_ref(),
            journal_kept: self.journal_kept.as_deref(),
        }
    }
}

/// Probes the device: every check before the first write (the guard, the journal's place),
/// then the probe and the put-back. `progress` hears every step; `stop` ends it early (what
/// was written is put back).
pub fn probe(
    req: &CapacityRequest,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(Progress),
) -> anyhow::Result<CapacityRun> {
    let target = prepare_write(&req.path, Some(&req.confirmation))?;
    if let Some(expect) = &req.expect
        && let Err(why) = target.device.refuse_unless_chosen(expect)?
    {
        bail!("{}", neutralize_controls(&why));
    }
    let name = target.name.clone();
    let model = SysRoot::host().device_identity(&name).model;
    let shown = req.path.display().to_string();
    let mut warnings = Vec::new();
    let dir = if req.destroy {
        None
    } else {
        Some(journal_dir(&req.journal, &target.device, &mut warnings)?)
    };
    let run = run_id();
    let header = Header {
        device: name.clone(),
        dev: (target.device.dev.major, target.device.dev.minor),
        diskseq: target.chosen.diskseq.unwrap_or(0),
        sector: target.device.logical,
        run,
    };
    let mut journal_saver = match &dir {
        Some(d) => Some(JournalSaver::create(d, &header).with_context(|| {
            format!(
                "cannot create the journal {}",
                neutralize_controls(&req.journal.display().to_string())
            )
        })?),
        None => None,
    };
    let mut no_saver = NoSaver;
    let saver: &mut dyn Saver = match journal_saver.as_mut() {
        Some(j) => j,
        None => &mut no_saver,
    };
    let mut sectors = DeviceSectors::new(target.device).context("no buffer for the probe")?;
    let started = Instant::now();
    let config = ProbeConfig::new(run, !req.destroy);
    let (end, restored) = Probe::new(config, &mut sectors, saver, stop, progress).run();
    let kept = restored.as_ref().is_some_and(|r| r.error.is_some());
    Ok(CapacityRun {
        device: shown,
        name,
        model,
        end,
        restored,
        elapsed: started.elapsed(),
        journal_kept: kept.then(|| req.journal.display().to_string()),
        warnings,
    })
}

/// The default journal of a check (`capacity`, `trimcheck`) on a device:
/// `CHECK-NAME.journal` in the state directory.
pub fn default_journal(state_dir: &Path, check: &str, name: &str) -> PathBuf {
    state_dir.join(format!("{check}-{name}.journal"))
}

/// A journal's put-back, done.
#[derive(Debug, Clone)]
pub struct JournalRestore {
    pub header: Header,
    pub put_back: PutBack,
    pub torn_bytes: usize,
    /// The journal was removed (every sector is back).
    pub removed: bool,
}

/// Writes back what a journal saved, to the device it names (refused when that name holds a
/// device of another number or diskseq now), and removes the journal when every sector reads
/// back as saved or as a sector it shares its place with.
pub fn restore_journal(path: &Path) -> anyhow::Result<JournalRestore> {
    let shown = neutralize_controls(&path.display().to_string());
    let dir = LogDir::open(path, false).with_context(|| format!("journal {shown}"))?;
    let bytes = dir
        .read_bytes()
        .with_context(|| format!("cannot read the journal {shown}"))?;
    let j = journal::parse(&bytes).map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    // Its number and diskseq: another disk under the same name has another diskseq.
    let chosen = ChosenDevice {
        name: j.header.device.clone(),
        dev: Some(DevNum {
            major: j.header.dev.0,
            minor: j.header.dev.1,
        }),
        diskseq: (j.header.diskseq != 0).then_some(j.header.diskseq),
        ..ChosenDevice::default()
    };
    let dev_path = Path::new("/dev").join(&j.header.device);
    let device = PinnedDevice::pin(&dev_path)
        .and_then(|p| p.open(true))
        .with_context(|| format!("cannot open /dev/{} for writing", j.header.device))?;
    if let Err(why) = device.refuse_unless_chosen(&chosen)? {
        bail!("{}: not written", neutralize_controls(&why));
    }
    let mut sectors = DeviceSectors::new(device).context("no buffer for the put-back")?;
    let put_back = journal::put_back(&j, &mut sectors);
    let removed = put_back.error.is_none() && put_back.not_back.is_empty();
    if removed {
        dir.remove()
            .with_context(|| format!("every sector is back, but {shown} cannot be removed"))?;
    }
    Ok(JournalRestore {
        header: j.header,
        put_back,
        torn_bytes: j.torn_bytes,
        removed,
    })
}

/// The news of a probe for the screen.
#[derive(Debug, Clone)]
pub enum CapacityMsg {
    Progress {
        progress: Progress,
        elapsed: Duration,
    },
    Done(Box<CapacityRun>),
    Failed(String),
}

/// The capacity probe job's name (`Cmd::StopJob` stops it by it).
pub const NAME: &str = "capacity";

/// A probe as the Devices screen asks for it once the name was typed.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityOrder {
    pub device: String,
    pub path: PathBuf,
    /// The name the admin typed.
    pub confirmation: String,
    /// Where the saved sectors go: on another disk than the one probed.
    pub journal: PathBuf,
    /// The device as the admin chose it (none: stamped by the app).
    pub chosen: Option<ChosenDevice>,
}

impl Order for CapacityOrder {
    type Job = CapacityJob;

    fn job(self, env: &JobEnv) -> CapacityJob {
        // The history's directory is made first when the journal goes there (its default).
        let state_dir = env
            .history
            .as_ref()
            .map(|h| h.dir().to_path_buf())
            .filter(|d| self.journal.parent() == Some(d.as_path()));
        CapacityJob {
            request: CapacityRequest {
                path: self.path,
                confirmation: self.confirmation,
                destroy: false,
                journal: self.journal,
                expect: self.chosen,
            },
            state_dir,
            history: env.history.clone(),
        }
    }

    fn stamp(&mut self, chosen: &dyn Fn(&str) -> Option<ChosenDevice>) {
        if self.chosen.is_none() {
            self.chosen = chosen(&self.device);
        }
    }
}

/// The capacity probe, as the runner starts it.
pub struct CapacityJob {
    pub request: CapacityRequest,
    /// A directory to make before the probe (the history's, where the default journal goes).
    pub state_dir: Option<PathBuf>,
    /// Where a verdict is recorded (none: not recorded).
    pub history: Option<History>,
}

impl Job for CapacityJob {
    type Msg = CapacityMsg;
    type Output = anyhow::Result<CapacityRun>;

    fn name(&self) -> &'static str {
        NAME
    }

    /// The put-back of 64 MiB takes seconds on a slow stick: a quit waits for it.
    fn stop_wait(&self) -> Duration {
        Duration::from_secs(120)
    }

    fn cannot_start(&self, error: &std::io::Error) -> CapacityMsg {
        CapacityMsg::Failed(format!("cannot start the capacity probe: {error}"))
    }

    /// The probe, or why it did not run: typed, for the CLI's words and exit status.
    fn run(self, ctx: &JobContext<'_, CapacityMsg>) -> anyhow::Result<CapacityRun> {
        if let Some(dir) = &self.state_dir
            && let Err(e) = History::new(dir).prepare_dir()
        {
            let why = format!("the journal's directory: {e:#}; nothing was written");
            ctx.send(CapacityMsg::Failed(why.clone()));
            bail!(why);
        }
        let started = Instant::now();
        let mut every = Every::new(ctx.interval);
        let mut progress = |p: Progress| {
            if every.due(false) {
                ctx.send(CapacityMsg::Progress {
                    progress: p,
                    elapsed: started.elapsed(),
                });
            }
        };
        let stop = || ctx.stopped();
        let mut end = probe(&self.request, &stop, &mut progress);
        if let (Some(history), Ok(run)) = (&self.history, &mut end)
            && let ProbeEnd::Done(c) = &run.end
        {
            let record = CheckRecord {
                verdict: if c.is_real() { "real" } else { "fake" }.into(),
                sentence: verdict(c),
            };
            let (name, model) = (run.name.clone(), run.model.clone());
            let notes = record_check(history, CAPACITY_TEST, &name, model, run.elapsed, record);
            run.warnings.extend(notes);
        }
        ctx.send(match &end {
            Ok(run) => CapacityMsg::Done(Box::new(run.clone())),
            Err(e) => CapacityMsg::Failed(format!("{e:#}")),
        });
        end
    }
}

/// Adds a capacity probe's or TRIM check's verdict (`test`) on `name` to `history`; returns
/// the lines worth saying (the history's warnings, or why it was not added).
pub fn record_check(
    history: &History,
    test: &str,
    name: &str,
    model: Option<String>,
    elapsed: Duration,
    record: CheckRecord,
) -> Vec<String> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let entry = HistoryEntry::of_check(
        SysRoot::host().disk_identity(name),
        name,
        model,
        test,
        now.saturating_sub(elapsed).as_secs(),
        elapsed.as_secs_f64(),
        record,
    );
    // Recorded after the put-back: a signal since then does not cut the record short.
    match history.record(entry, &|| false) {
        Ok((_, warnings)) => warnings
            .into_iter()
            .map(|w| format!("history: {w}"))
            .collect(),
        Err(not_added) => vec![not_added],
    }
}

/// The progress line's words: "stamping 12.0 of 64.0 MiB".
pub fn progress_words(p: &Progress) -> String {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    match *p {
        Progress::Stamping { done, of } => {
            format!("saving and stamping {:.1} of {:.1} MiB", mib(done), mib(of))
        }
        Progress::Checking { done, of } => {
            format!("reading back {:.1} of {:.1} MiB", mib(done), mib(of))
        }
        Progress::Stepping { done, of } => format!("reading one sector a step, {done} of {of}"),
        Progress::Narrowing { steps, lo, hi } => {
            format!("narrowing, step {steps}: the end is in LBA {lo}-{hi}")
        }
        Progress::PuttingBack { done, of } => format!("putting back {done} of {of} sectors"),
    }
}
