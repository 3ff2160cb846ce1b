//! The run on the Run screen: starting one (through the write confirmation), rerunning and
//! retesting, the runner's events as they come, repeats, and the figures the live charts read.

use std::collections::VecDeque;
use std::path::Path;
use std::time::Duration;

use super::{App, Overlay, Screen};
use crate::bench::analysis::curve::PhaseSample;
use crate::bench::analysis::setting_sweep::SweepKind;
use crate::bench::exec::run_input::RunEvent;
use crate::bench::exec::safety::{self, WriteRefusal};
use crate::bench::exec::session::RunRequest;
use crate::bench::plan::test_name::{TestName, Writes};
use crate::bench::plan::{Job, Plan};
use crate::bench::results::engine_choice::EngineChoice;
use crate::bench::results::outcome::RunReport;
use crate::bench::results::outcome::TargetInfo;
use crate::bench::results::stats::IntervalPoint;
use crate::event::{Cmd, TaskError};

use super::devices::DriveState;
use super::records::RunRecord;

/// Points a live run keeps (10 minutes at 250 ms); the chart shows the last `CHART_WINDOW`.
pub const LIVE_HISTORY: usize = 2400;
/// Seconds of the live charts' sliding window.
pub const CHART_WINDOW: f64 = 60.0;

/// Running figures of a live run. The means are totals over the measured time, as in the
/// report, so a short last interval weighs what it lasted; min and max take whole intervals
/// only (a sliver's rate means little).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LiveStats {
    /// Whole intervals in min/max.
    pub count: u64,
    pub bytes: u64,
    pub ops: u64,
    pub seconds: f64,
    pub min_rate: f64,
    pub max_rate: f64,
    pub min_p99_ns: u64,
    pub max_p99_ns: u64,
}

impl LiveStats {
    /// Adds an interval to the totals, and to min/max when it lasted at least `whole` seconds.
    pub(super) fn add(&mut self, p: &IntervalPoint, whole: f64) {
        if p.seconds() <= 0.0 {
            return;
        }
        self.bytes += p.bytes();
        self.ops += p.ops();
        self.seconds += p.rate_seconds();
        if p.seconds() < whole {
            return;
        }
        let rate = p.rate();
        if self.count == 0 {
            self.min_rate = rate;
            self.max_rate = rate;
        } else {
            self.min_rate = self.min_rate.min(rate);
            self.max_rate = self.max_rate.max(rate);
        }
        if let Some(l) = p.latency() {
            if self.min_p99_ns == 0 || l.p99_ns < self.min_p99_ns {
                self.min_p99_ns = l.p99_ns;
            }
            self.max_p99_ns = self.max_p99_ns.max(l.p99_ns);
        }
        self.count += 1;
    }

    /// Bytes per second over the measured time so far.
    pub fn mean_rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 / self.seconds
        } else {
            0.0
        }
    }

    pub fn mean_iops(&self) -> f64 {
        if self.seconds > 0.0 {
            self.ops as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// The size of the new test file a file test writes in full first.
pub(super) fn creates_test_file(
    file_target: Option<&crate::event::FileTarget>,
    request: &RunRequest,
) -> Option<u64> {
    file_target
        .is_some_and(|ft| request.target == ft.file)
        .then(|| crate::bench::exec::test_file::test_file_size(&request.params))
}

/// The run on the Run screen (live, or the last one, finished).
#[derive(Debug, Clone, PartialEq)]
pub struct LiveRun {
    pub record: usize,
    pub repeat: u32,
    pub repeats: u32,
    pub device: String,
    pub test: TestName,
    pub target: Option<TargetInfo>,
    pub plan: Option<Plan>,
    pub phase: usize,
    pub phases: usize,
    pub label: String,
    pub job: Option<Job>,
    pub measuring: bool,
    /// The engine probe runs (early in the warm-up of a phase whose engine is not known).
    pub probing: bool,
    /// Which phases probe the engines, counted in the ETA; empty until the runner says.
    pub probes: Vec<bool>,
    pub started_at: Duration,
    pub phase_started_at: Duration,
    /// When an I/O last completed (or measuring began): a hung disk sends no rate, so the
    /// screen says how long it has waited.
    pub last_io_at: Duration,
    /// This phase's points, oldest first, at most `LIVE_HISTORY`.
    pub points: VecDeque<IntervalPoint>,
    pub stats: LiveStats,
    pub stopping: bool,
    /// Asked for, not started: the safety checks, the open (up to 2 s for a busy device) and
    /// a file test's layout.
    pub starting: bool,
    /// What the run opens (the device, the test file, or the metadata test's directory).
    pub path: String,
    /// The size of the new test file the run writes first (`creates_test_file`).
    pub new_file: Option<u64>,
    /// Bytes of that file written so far.
    pub laid_out: u64,
    pub finished: bool,
    pub error: Option<String>,
    /// The drive's cache when the run started ("on", "off", "n/a").
    pub drive_cache: Option<String>,
    /// Temperature readings: (seconds since the run started, degrees C), bounded.
    pub temps: VecDeque<(f64, i64)>,
    /// The engine of the phase being measured, and why (known once the warm-up is over).
    pub engine: Option<EngineChoice>,
    /// This repeat's phases that finished with a rate, for the live sweep charts and grid.
    pub done: Vec<PhaseSample>,
}

impl LiveRun {
    pub(super) fn new(
        record: usize,
        device: String,
        request: &RunRequest,
        repeats: u32,
        now: Duration,
    ) -> Self {
        LiveRun {
            record,
            repeat: 1,
            repeats,
            device,
            test: request.test,
            target: None,
            plan: None,
            phase: 0,
            phases: 0,
            label: request.test.id().to_string(),
            job: None,
            measuring: false,
            probing: false,
            probes: Vec::new(),
            started_at: now,
            phase_started_at: now,
            last_io_at: now,
            points: VecDeque::new(),
            stats: LiveStats::default(),
            stopping: false,
            starting: true,
            path: request.target.display().to_string(),
            new_file: None,
            laid_out: 0,
            finished: false,
            error: None,
            drive_cache: None,
            temps: VecDeque::new(),
            engine: None,
            done: Vec::new(),
        }
    }

    pub fn is_active(&self) -> bool {
        !self.finished
    }

    /// Seconds measured so far in this phase.
    pub fn measured(&self) -> f64 {
        self.points.back().map_or(0.0, |p| p.end_s)
    }

    /// A runner event: a phase starts, measuring starts, an interval's figures.
    pub(super) fn event(&mut self, ev: RunEvent, now: Duration) {
        match ev {
            RunEvent::Probes { phases } => self.probes = phases,
            RunEvent::PhaseStarted {
                index,
                count,
                label,
                job,
                probing,
            } => {
                if index == 0 {
                    self.done.clear();
                }
                self.phase = index;
                self.phases = count;
                self.label = label;
                self.job = Some(*job);
                self.measuring = false;
                self.probing = probing;
                self.engine = None;
                self.phase_started_at = now;
                self.last_io_at = now;
                self.points.clear();
                self.stats = LiveStats::default();
            }
            RunEvent::Probed { .. } => self.probing = false,
            RunEvent::Measuring { engine, .. } => {
                self.probing = false;
                self.measuring = true;
                self.last_io_at = now;
                self.engine = Some(*engine);
            }
            RunEvent::Point { point, .. } => {
                // A stopped or count-bounded phase may end in a sliver: in the means, not
                // charted nor in min/max (see `LiveStats`).
                let nominal = self
                    .plan
                    .as_ref()
                    .map_or(0.25, |p| p.interval.as_secs_f64());
                if point.ops() > 0 {
                    self.last_io_at = now;
                }
                self.stats.add(&point, nominal / 2.0);
                if point.seconds() < nominal / 2.0 {
                    return;
                }
                if self.points.len() == LIVE_HISTORY {
                    self.points.pop_front();
                }
                self.points.push_back(point);
            }
            RunEvent::PhaseFinished { result, .. } => {
                // Grids show a phase with few I/Os (marked); curves leave it out.
                if let Some(sample) = PhaseSample::of(&result) {
                    self.done.push(sample);
                }
            }
        }
    }

    /// A temperature reading of the run's device.
    pub(super) fn temperature(&mut self, at: f64, celsius: i64) {
        if self.temps.len() == LIVE_HISTORY {
            self.temps.pop_front();
        }
        self.temps.push_back((at, celsius));
    }
}

impl App {
    /// A run is in progress, or a sweep is between its runs.
    pub fn running(&self) -> bool {
        self.run.as_ref().is_some_and(LiveRun::is_active)
            || self.several_running()
            || self.sweeping()
    }

    pub(super) fn run_started(&mut self, target: TargetInfo, plan: Plan, notes: Vec<String>) {
        let Some(run) = &mut self.run else { return };
        run.starting = false;
        if let Some(rec) = self.results.records.get_mut(run.record) {
            rec.scheduler = target.scheduler.clone();
            rec.kernel_cache = target.kernel_write_cache;
            rec.params = crate::history::params_text(&plan);
        }
        run.target = Some(target);
        run.plan = Some(plan);
        if !notes.is_empty() {
            self.info(notes.join("; "));
        }
    }

    /// The run did not start: refused, or stopped (x) while starting, which is no failure.
    /// Results keeps why the record has no figures.
    pub(super) fn run_refused(&mut self, e: String) {
        let mut stopped = false;
        if let Some(run) = &mut self.run {
            run.starting = false;
            run.finished = true;
            stopped = run.stopping;
            run.error = (!stopped).then(|| e.clone());
            if let Some(rec) = self.results.records.get_mut(run.record) {
                rec.error = Some(e.clone());
            }
        }
        if stopped {
            self.info(format!("stopped before it started: {e}"));
        } else {
            self.error(e);
        }
    }

    pub(super) fn run_finished(&mut self, result: Result<RunReport, TaskError>) -> Vec<Cmd> {
        let Some(run) = &mut self.run else {
            return Vec::new();
        };
        let mut cmds = vec![Cmd::RefreshInventory];
        match result {
            Ok(report) => {
                let error = report.error();
                let stopped = report.outcome.stopped;
                let record = run.record;
                if let Some(rec) = self.results.records.get_mut(record) {
                    rec.runs.push(report);
                    rec.exported = false;
                    if let Some(e) = &error {
                        rec.error = Some(e.clone());
                    }
                    let more = rec.runs.len() < rec.repeats_wanted as usize;
                    if more && error.is_none() && !stopped && !run.stopping {
                        run.repeat = rec.runs.len() as u32 + 1;
                        run.starting = true;
                        run.points.clear();
                        run.stats = LiveStats::default();
                        cmds.push(Cmd::StartRun(Box::new(rec.request.clone())));
                        return cmds;
                    }
                    // The test is over, however it ended: into the history.
                    cmds.push(Cmd::RecordHistory {
                        record,
                        runs: rec.runs.clone(),
                        drive_cache: rec.drive_cache.clone(),
                    });
                }
                run.finished = true;
                run.error = error.clone();
                self.results.row = record;
                // The words fit 80 columns with the largest record numbers.
                let next = if stopped || run.stopping {
                    "stopped; what completed is kept, R reruns"
                } else {
                    "finished; s switches the scheduler, R reruns"
                };
                // `c` compares the last two finished runs: offered once there are two.
                let finished = self
                    .results
                    .records
                    .iter()
                    .filter(|r| !r.runs.is_empty())
                    .count();
                let compare = if finished >= 2 { ", c compares" } else { "" };
                match error {
                    Some(e) => self.error(format!("the run failed: {e}")),
                    None => {
                        let number = self.results.records.get(record).map(RunRecord::number);
                        self.info(format!(
                            "run #{} {next}{compare}",
                            number.unwrap_or_default()
                        ));
                    }
                }
            }
            Err(e) => {
                run.finished = true;
                run.error = Some(e.to_string());
                self.error(e.to_string());
            }
        }
        cmds
    }

    /// Reruns a record's request. `None` is the retest: the latest test on the device whose
    /// setting was switched last (or asks if it has none).
    pub(super) fn rerun(&mut self, record: Option<usize>) -> Vec<Cmd> {
        let records = &self.results.records;
        let Some(latest) = self.results.latest() else {
            self.error("nothing to rerun yet: pick a test on the Test screen (2)");
            return Vec::new();
        };
        if self.running() {
            self.error("a test is running (x stops it)");
            return Vec::new();
        }
        if record.is_none()
            && self.changes.last_switch.is_none()
            && let Some(name) = &self.changes.last_switch_gone
        {
            self.error(format!(
                "{name} is gone (its setting was switched last): R has nowhere to retest. \
                 Choose a device (1) and a test (2)"
            ));
            return Vec::new();
        }
        let i = match (record, self.changes.last_switch.clone()) {
            (Some(i), _) if records.get(i).is_some_and(|r| r.past.is_some()) => {
                self.error(
                    "a past run from the history cannot be rerun as it was: pick its test on \
                     the Test screen (2)",
                );
                return Vec::new();
            }
            (Some(i), _) => i,
            (None, Some(dev)) if records[latest].device != dev => {
                match records
                    .iter()
                    .rposition(|r| r.device == dev && r.past.is_none())
                {
                    Some(i) => i,
                    None => {
                        self.overlay = Some(Overlay::Retest(super::dialogs::retest::Retest {
                            device: dev,
                            record: latest,
                        }));
                        return Vec::new();
                    }
                }
            }
            (None, _) => latest,
        };
        if records[i].device_gone {
            let name = records[i].device.clone();
            self.error(format!(
                "{name} is gone (run #{} was on it): a rerun would land on another device. \
                 Choose a device (1) and a test (2)",
                i + 1
            ));
            return Vec::new();
        }
        let mut request = records[i].request.clone();
        let repeats = records[i].repeats_wanted;
        // A write test needs a fresh confirmation every time.
        request.confirmation = None;
        self.launch(request, repeats)
    }

    /// Runs a record's test on another device (the retest where the switch was).
    pub(super) fn retest_on(&mut self, device: &str, record: usize) -> Vec<Cmd> {
        let Some(rec) = self.results.records.get(record) else {
            return Vec::new();
        };
        let mut request = rec.request.clone();
        let repeats = rec.repeats_wanted;
        request.target = self
            .devices
            .find(device)
            .map_or_else(|| Path::new("/dev").join(device), |d| d.path.clone());
        request.confirmation = None;
        self.launch(request, repeats)
    }

    /// Why a write test on `device` will be refused, with the way out if any (a file on its
    /// file system). The Test screen and `r` use the same words.
    pub fn write_refusal(&self, device: &str) -> Option<String> {
        let inv = self.devices.inventory.as_ref()?;
        let refusal = match safety::check_device_write(inv, device, None) {
            Err(WriteRefusal::NotConfirmed { .. }) | Ok(()) => return None,
            Err(refusal) => refusal,
        };
        let way_out = inv
            .devices
            .iter()
            .find(|d| d.name == device || d.partitions.iter().any(|p| p.name == device))
            .and_then(super::devices::mounted_file_system)
            .map_or(String::new(), |(_, mount, _)| {
                format!("; f on Devices (1) tests a file on {mount} instead")
            });
        Some(format!("{refusal}{way_out}"))
    }

    /// A write test (or a sweep of one) asks for the device's name first; a device in use is
    /// refused with the reason.
    pub(super) fn confirm_then(
        &mut self,
        request: RunRequest,
        repeats: u32,
        sweep: Option<SweepKind>,
        device: String,
    ) -> Vec<Cmd> {
        if let Some(why) = self.write_refusal(&device) {
            self.error(why);
            return Vec::new();
        }
        self.overlay = Some(Overlay::Confirm(super::dialogs::confirm::Confirm {
            request: Box::new(request),
            repeats,
            sweep,
            device,
            typed: String::new(),
            wrong: false,
        }));
        Vec::new()
    }

    /// Starts a run, through the confirmation dialog when it writes.
    pub(super) fn launch(&mut self, request: RunRequest, repeats: u32) -> Vec<Cmd> {
        // The kernel name, which the run checks the opened device against (not the node's
        // file name: cciss!c0d0).
        let device = self
            .devices
            .inventory
            .as_ref()
            .and_then(|inv| inv.devices.iter().find(|d| d.path == request.target))
            .map(|d| d.name.clone())
            .or_else(|| {
                // A file target: the device its file system is on.
                self.file_target
                    .as_ref()
                    .filter(|ft| request.target == ft.file || request.target == ft.mount)
                    .map(|ft| ft.device.clone())
            })
            .or_else(|| {
                request
                    .target
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .unwrap_or_default();
        // The request's own parameters decide (a rerun keeps the ones it ran with).
        let writes = request.test.writes_with(&request.params) == Writes::Always;
        // A file run writes only a file it creates, and the target module refuses an existing
        // one as on the command line: only a device asks for its name here.
        let on_device = self.devices.inventory.as_ref().is_none_or(|inv| {
            inv.devices.iter().any(|d| {
                d.path == request.target || d.partitions.iter().any(|p| p.path == request.target)
            })
        });
        if writes && request.confirmation.is_none() && on_device {
            return self.confirm_then(request, repeats, None, device);
        }
        self.changes.last_switch = None;
        self.changes.last_switch_gone = None;
        self.several.showing = false;
        self.clear_status();
        let record = self.results.records.len();
        let drive_cache = self.drive_cache_word(&device);
        let mut rec = RunRecord::new(
            self.results.next_id(false),
            device.clone(),
            request.clone(),
            repeats,
        );
        rec.drive_cache = drive_cache.clone();
        self.results.records.push(rec);
        let mut run = LiveRun::new(record, device, &request, repeats, self.now);
        run.drive_cache = drive_cache;
        run.new_file = creates_test_file(self.file_target.as_ref(), &request);
        self.run = Some(run);
        self.screen = Screen::Run;
        vec![Cmd::StartRun(Box::new(request))]
    }
}

impl App {
    /// The drive cache of `device` as a record keeps it (`model::cache::recorded_drive_cache`):
    /// the CLI's word for a virtual device, None while a drive's state is not read yet.
    pub(super) fn drive_cache_word(&self, device: &str) -> Option<String> {
        // A partition's cache is its disk's.
        let disk = self
            .devices
            .queue_of(device)
            .or_else(|| self.devices.find(device));
        if disk.is_some_and(|d| d.transport.is_virtual()) {
            return Some(crate::model::cache::NO_DRIVE_CACHE.to_string());
        }
        let name = disk.map_or(device, |d| d.name.as_str());
        let word = self
            .devices
            .drives
            .get(name)
            .and_then(DriveState::cache_word);
        crate::model::cache::recorded_drive_cache(word)
    }
}
