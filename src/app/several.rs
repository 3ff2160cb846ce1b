//! Several devices at once: the marks on Devices (Space a device, `m` an md array and its
//! members), the chosen test on every marked device at the same time (an array alone first,
//! then its members), each device's live throughput, and the verdict naming the outlier, as
//! `disktriage run TARGET TARGET...` prints it (`report::several`). Each device's runs are a
//! record of Results too.

use std::collections::VecDeque;
use std::time::Duration;

use super::live::LiveStats;
use super::records::RunRecord;
use super::{App, Overlay, Screen};
use crate::bench::analysis::several_disks::{self, Role};
use crate::bench::exec::run_input::RunEvent;
use crate::bench::exec::safety::{self, WriteRefusal};
use crate::bench::exec::session::RunRequest;
use crate::bench::plan::Plan;
use crate::bench::plan::test_name::{TestName, Writes};
use crate::bench::results::outcome::{RunReport, TargetInfo};
use crate::event::{Cmd, SeveralMsg, TaskError};
use crate::report::several::{Mode, SeveralResult, TargetResult};

/// MB/s points each device's line keeps (a minute at 250 ms).
pub const LINE_POINTS: usize = 240;

/// The marks and the runs on several devices of the session.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Several {
    /// Marked devices (kernel names), in marking order.
    pub marks: Vec<String>,
    /// The marks are an md array (first) and its members, from `m`.
    pub members_of: Option<String>,
    /// Every run on several devices, oldest first.
    pub runs: Vec<SeveralRun>,
    /// The Run screen shows the last of `runs` (not the last single run).
    pub showing: bool,
    /// A write test waiting for the typed names.
    pending: Option<SeveralRun>,
}

/// Where a target of a run on several devices is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetState {
    Waiting,
    Running,
    Done,
    Failed,
}

/// One device of a run on several devices.
#[derive(Debug, Clone, PartialEq)]
pub struct SeveralTarget {
    pub device: String,
    pub role: Role,
    pub request: RunRequest,
    /// Its record in Results.
    pub record: usize,
    pub state: TargetState,
    pub label: String,
    pub measuring: bool,
    /// MB/s of its recent whole intervals, oldest first: the device's throughput line.
    pub line: VecDeque<f64>,
    /// Totals of the phase being measured: the live figure is their mean.
    pub stats: LiveStats,
    /// The sample interval of its plan, in seconds.
    pub interval: f64,
    pub reports: Vec<RunReport>,
    pub error: Option<String>,
    /// The plan of its current repeat, once it started: the progress and ETA follow it.
    pub plan: Option<Plan>,
    /// As `LiveRun::probes`.
    pub probes: Vec<bool>,
    /// The phase being run, and when it started.
    pub phase: usize,
    pub phase_started_at: Duration,
    /// When its first repeat started: a count-bounded run's ETA is extrapolated from it.
    pub first_started_at: Option<Duration>,
}

/// How far a device of a run on several devices is, over all its repeats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TargetProgress {
    /// Share done, 0 to 1.
    pub ratio: f64,
    /// Seconds to go, when known (a time-bounded plan, or enough done to extrapolate).
    pub eta_s: Option<f64>,
}

impl SeveralTarget {
    /// The live figure: MB/s over the measured time of the current phase so far.
    pub fn live_mbps(&self) -> Option<f64> {
        (self.stats.seconds > 0.0).then(|| self.stats.mean_rate() / 1e6)
    }

    /// How far the device is through its `repeats` runs at `now`: a time-bounded plan by its
    /// phases' times and probes (only the first repeat probes: the choice is remembered), a
    /// count-bounded one by the I/Os done. None before its first run started.
    pub fn progress(&self, repeats: u32, now: Duration) -> Option<TargetProgress> {
        let plan = self.plan.as_ref()?;
        let phases = plan.phases.len().max(1);
        let repeats = f64::from(repeats.max(1));
        // Repeats that ended (a report each); the one running counts by its phases.
        let ended = self.reports.len() as f64;
        let running = self.state == TargetState::Running;
        let in_phase = now.saturating_sub(self.phase_started_at).as_secs_f64();
        let expected: Option<Vec<f64>> = plan
            .phases
            .iter()
            .enumerate()
            .map(|(i, ph)| {
                let probes = self.probes.get(i).copied().unwrap_or(false);
                crate::bench::exec::probe::expected_phase(&ph.job, probes).map(|d| d.as_secs_f64())
            })
            .collect();
        if let (Some(this_repeat), Some(later)) = (expected, plan.expected_duration()) {
            let later = later.as_secs_f64();
            let first: f64 = this_repeat.iter().sum();
            let done_now = if running {
                let before: f64 = this_repeat.iter().take(self.phase).sum();
                let current = this_repeat.get(self.phase).copied().unwrap_or(0.0);
                before + in_phase.min(current)
            } else {
                0.0
            };
            // The repeat running (or next) and those after it.
            let still = (repeats - ended).max(0.0);
            let total = ended * later
                + if still > 0.0 { first } else { 0.0 }
                + (still - 1.0).max(0.0) * later;
            let done = ended * later + done_now;
            if total <= 0.0 {
                return None;
            }
            return Some(TargetProgress {
                ratio: (done / total).clamp(0.0, 1.0),
                eta_s: Some((total - done).max(0.0)),
            });
        }
        // Count-bounded: the share of the current phase's I/Os done.
        let share = self
            .plan
            .as_ref()
            .and_then(|p| p.phases.get(self.phase))
            .and_then(|ph| ph.job.ops_per_worker.map(|n| n * u64::from(ph.job.workers)))
            .filter(|&want| want > 0 && running)
            .map_or(0.0, |want| (self.stats.ops as f64 / want as f64).min(1.0));
        let in_repeat = if running {
            (self.phase as f64 + share) / phases as f64
        } else {
            0.0
        };
        let ratio = ((ended + in_repeat) / repeats).clamp(0.0, 1.0);
        let elapsed = now
            .saturating_sub(self.first_started_at.unwrap_or(now))
            .as_secs_f64();
        // Under 2% done says nothing.
        let eta_s = (ratio >= 0.02 && elapsed > 0.0).then(|| elapsed * (1.0 - ratio) / ratio);
        Some(TargetProgress { ratio, eta_s })
    }
}

/// The same test on several devices.
#[derive(Debug, Clone, PartialEq)]
pub struct SeveralRun {
    pub test: TestName,
    pub repeats: u32,
    pub repeat: u32,
    pub targets: Vec<SeveralTarget>,
    /// Targets that run together, in turn: all of them, or an array then its members.
    pub groups: Vec<Vec<usize>>,
    pub group: usize,
    pub started_at: Duration,
    pub stopping: bool,
    pub finished: bool,
}

impl SeveralRun {
    pub fn is_active(&self) -> bool {
        !self.finished
    }

    /// What the run came to, as the CLI reports it.
    pub fn result(&self) -> SeveralResult {
        SeveralResult {
            test: self.test,
            mode: Mode::Parallel,
            repeats: self.repeats,
            targets: self
                .targets
                .iter()
                .map(|t| TargetResult {
                    target: t.request.target.display().to_string(),
                    role: t.role,
                    reports: t.reports.clone(),
                    error: t.error.clone(),
                })
                .collect(),
            stopped: self.stopping,
        }
    }

    /// The targets of the current group still to run.
    fn batch(&self) -> Vec<(usize, RunRequest)> {
        self.groups
            .get(self.group)
            .into_iter()
            .flatten()
            .filter(|&&i| self.targets[i].error.is_none())
            .map(|&i| (i, self.targets[i].request.clone()))
            .collect()
    }

    /// Targets of the current group that have not ended.
    fn running(&self) -> usize {
        self.groups
            .get(self.group)
            .into_iter()
            .flatten()
            .filter(|&&i| {
                matches!(
                    self.targets[i].state,
                    TargetState::Running | TargetState::Waiting
                )
            })
            .count()
    }
}

impl App {
    /// The run on several devices the Run screen shows, if it shows one.
    pub fn several_run(&self) -> Option<&SeveralRun> {
        self.several.runs.last().filter(|_| self.several.showing)
    }

    /// The first marked device, which the test's form is checked against.
    pub(super) fn several_first(&self) -> Option<&crate::model::BlockDevice> {
        match self.several.marks.as_slice() {
            [first, _, ..] => self.devices.find(first),
            _ => None,
        }
    }

    /// A run on several devices is going.
    pub fn several_running(&self) -> bool {
        self.several.runs.last().is_some_and(SeveralRun::is_active)
    }

    /// Space on Devices: marks the selected device, or unmarks it.
    pub(super) fn toggle_device_mark(&mut self) {
        let Some(name) = self.selected_device().map(|d| d.name.clone()) else {
            return;
        };
        self.several.members_of = None;
        let marks = &mut self.several.marks;
        match marks.iter().position(|m| *m == name) {
            Some(i) => {
                marks.remove(i);
            }
            None => marks.push(name),
        }
        let n = self.several.marks.len();
        let text = match n {
            0 => "no device marked".to_string(),
            1 => format!(
                "{} marked: mark another to test several at once",
                self.several.marks[0]
            ),
            _ => format!(
                "{n} marked ({}): the test you run (2, r) runs on all of them at once",
                self.several.marks.join(", ")
            ),
        };
        self.info(text);
    }

    /// `m` on Devices: marks the selected md array and its members, to test the array alone,
    /// then the members.
    pub(super) fn mark_members(&mut self) {
        let Some(name) = self.selected_device().map(|d| d.name.clone()) else {
            return;
        };
        let members = self
            .devices
            .inventory
            .as_ref()
            .map(|inv| several_disks::md_members(inv, &name))
            .unwrap_or_default();
        if members.is_empty() {
            self.error(format!(
                "{name} is not an assembled md array: m marks an array and each of its \
                 members (Space marks devices one by one)"
            ));
            return;
        }
        self.several.marks = std::iter::once(name.clone()).chain(members).collect();
        self.several.members_of = Some(name.clone());
        self.info(format!(
            "{name} and its members marked: the test you run (2, r) runs on the array, then \
             on each member (read tests only)"
        ));
    }

    /// Runs the picker's test on every marked device; `request` is the selected device's.
    pub(super) fn launch_several(&mut self, request: RunRequest, repeats: u32) -> Vec<Cmd> {
        let marks = self.several.marks.clone();
        let members = self.several.members_of.is_some();
        let writes = request.test.writes_with(&request.params) == Writes::Always;
        if writes && members {
            self.error(format!(
                "{} writes: the members of an active array are held by it and cannot be \
                 written. Test the array and its members with a read test, or unmark them \
                 (Space) and write to the array alone",
                request.test
            ));
            return Vec::new();
        }
        let mut targets = Vec::new();
        for (i, name) in marks.iter().enumerate() {
            let Some(dev) = self.devices.find(name) else {
                self.error(format!(
                    "{name} is no longer in the device list: mark again"
                ));
                return Vec::new();
            };
            if dev.size_bytes.is_none_or(|b| b.0 == 0) {
                self.error(format!(
                    "{name} has no size: nothing to test (Space unmarks it)"
                ));
                return Vec::new();
            }
            let role = match (members, i) {
                (false, _) => Role::Target,
                (true, 0) => Role::Array,
                (true, _) => Role::Member,
            };
            let mut req = request.clone();
            req.target = dev.path.clone();
            req.confirmation = None;
            targets.push(SeveralTarget {
                device: name.clone(),
                role,
                request: req,
                record: 0,
                state: TargetState::Waiting,
                label: request.test.id().to_string(),
                measuring: false,
                line: VecDeque::new(),
                stats: LiveStats::default(),
                interval: 0.25,
                reports: Vec::new(),
                error: None,
                plan: None,
                probes: Vec::new(),
                phase: 0,
                phase_started_at: self.now,
                first_started_at: None,
            });
        }
        let groups = if members {
            vec![vec![0], (1..targets.len()).collect()]
        } else {
            vec![(0..targets.len()).collect()]
        };
        let run = SeveralRun {
            test: request.test,
            repeats,
            repeat: 1,
            targets,
            groups,
            group: 0,
            started_at: self.now,
            stopping: false,
            finished: false,
        };
        if writes {
            // Every device must be free before the names are asked for.
            if let Some(inv) = &self.devices.inventory {
                for name in &marks {
                    match safety::check_device_write(inv, name, None) {
                        Err(WriteRefusal::NotConfirmed { .. }) | Ok(()) => {}
                        Err(refusal) => {
                            self.error(refusal.to_string());
                            return Vec::new();
                        }
                    }
                }
            }
            self.several.pending = Some(run);
            self.overlay = Some(Overlay::ConfirmSeveral(
                super::dialogs::confirm_several::ConfirmSeveral {
                    test: request.test,
                    devices: marks,
                    typed: String::new(),
                    wrong: false,
                },
            ));
            return Vec::new();
        }
        self.start_several(run)
    }

    /// The names typed for a write test on several devices: each device gets its own.
    pub(super) fn confirm_several(&mut self, typed: &str) -> Vec<Cmd> {
        let Some(mut run) = self.several.pending.take() else {
            return Vec::new();
        };
        let names: Vec<Option<String>> =
            run.targets.iter().map(|t| Some(t.device.clone())).collect();
        match several_disks::split_confirmation(&names, Some(typed)) {
            Ok(each) => {
                for (t, c) in run.targets.iter_mut().zip(each) {
                    t.request.confirmation = c;
                }
                self.start_several(run)
            }
            Err(e) => {
                self.error(e.to_string());
                Vec::new()
            }
        }
    }

    /// Records the targets in Results and starts the first group.
    fn start_several(&mut self, mut run: SeveralRun) -> Vec<Cmd> {
        self.clear_status();
        self.changes.last_switch = None;
        self.changes.last_switch_gone = None;
        for t in &mut run.targets {
            t.record = self.results.records.len();
            let mut rec = RunRecord::new(
                self.results.next_id(false),
                t.device.clone(),
                t.request.clone(),
                run.repeats,
            );
            rec.drive_cache = self.drive_cache_word(&t.device);
            self.results.records.push(rec);
        }
        let batch = run.batch();
        self.several.runs.push(run);
        self.several.showing = true;
        self.screen = Screen::Run;
        vec![Cmd::StartSeveral(batch)]
    }

    /// `r` on the Run screen after a run on several devices: the same again.
    pub(super) fn rerun_several(&mut self) -> Vec<Cmd> {
        if self.running() {
            self.error("a test is running (x stops it)");
            return Vec::new();
        }
        let Some(last) = self.several.runs.last() else {
            return Vec::new();
        };
        let gone = last.targets.iter().find(|t| {
            self.results
                .records
                .get(t.record)
                .is_some_and(|r| r.device_gone)
        });
        if let Some(t) = gone {
            let name = t.device.clone();
            self.error(format!(
                "{name} is gone: a rerun would land on another device. Mark the devices \
                 again (Space on Devices)"
            ));
            return Vec::new();
        }
        let mut run = last.clone();
        let writes = run.test.writes_with(&run.targets[0].request.params) == Writes::Always;
        run.repeat = 1;
        run.group = 0;
        run.started_at = self.now;
        run.stopping = false;
        run.finished = false;
        for t in &mut run.targets {
            t.state = TargetState::Waiting;
            t.line.clear();
            t.stats = LiveStats::default();
            t.reports.clear();
            t.error = None;
            t.measuring = false;
            t.plan = None;
            t.probes.clear();
            t.phase = 0;
            t.first_started_at = None;
            // A write test needs a fresh confirmation every time.
            t.request.confirmation = None;
        }
        if writes {
            let devices = run.targets.iter().map(|t| t.device.clone()).collect();
            self.overlay = Some(Overlay::ConfirmSeveral(
                super::dialogs::confirm_several::ConfirmSeveral {
                    test: run.test,
                    devices,
                    typed: String::new(),
                    wrong: false,
                },
            ));
            self.several.pending = Some(run);
            return Vec::new();
        }
        self.start_several(run)
    }

    /// News of one target: it started, could not, measured an interval, finished.
    pub(super) fn several_msg(&mut self, msg: SeveralMsg) -> Vec<Cmd> {
        let now = self.now;
        let Some(run) = self.several.runs.last_mut().filter(|r| r.is_active()) else {
            return Vec::new();
        };
        match msg {
            SeveralMsg::Started {
                index,
                target,
                plan,
            } => {
                let Some(t) = run.targets.get_mut(index) else {
                    return Vec::new();
                };
                t.state = TargetState::Running;
                started(t, &target, &plan, &mut self.results.records);
                t.plan = Some(*plan);
                t.probes.clear();
                t.phase = 0;
                t.phase_started_at = now;
                t.first_started_at.get_or_insert(now);
                Vec::new()
            }
            SeveralMsg::Refused { index, error } => {
                if let Some(t) = run.targets.get_mut(index) {
                    t.state = TargetState::Failed;
                    t.error = Some(error.clone());
                    if let Some(rec) = self.results.records.get_mut(t.record) {
                        rec.error = Some(error);
                    }
                }
                self.several_next(now)
            }
            SeveralMsg::Event { index, ev } => {
                if let Some(t) = run.targets.get_mut(index) {
                    event(t, *ev, now);
                }
                Vec::new()
            }
            SeveralMsg::Finished { index, result } => {
                if let Some(t) = run.targets.get_mut(index) {
                    finished(t, *result, &mut self.results.records);
                }
                self.several_next(now)
            }
        }
    }

    /// When the group's targets are all done: the next group, the next repeat, or the end.
    fn several_next(&mut self, _now: Duration) -> Vec<Cmd> {
        let Some(run) = self.several.runs.last_mut() else {
            return Vec::new();
        };
        if run.running() > 0 {
            return Vec::new();
        }
        loop {
            run.group += 1;
            if run.group >= run.groups.len() {
                if run.repeat >= run.repeats || run.stopping {
                    break;
                }
                run.repeat += 1;
                run.group = 0;
            }
            if run.stopping {
                break;
            }
            let batch = run.batch();
            if batch.is_empty() {
                continue;
            }
            for (i, _) in &batch {
                let t = &mut run.targets[*i];
                t.state = TargetState::Waiting;
                t.stats = LiveStats::default();
            }
            return vec![Cmd::StartSeveral(batch)];
        }
        run.finished = true;
        let verdict = run.result().verdict().sentence();
        let failed = run.result().failed();
        if let Some(first) = run.targets.first() {
            self.results.row = first.record;
        }
        // Each device's runs go to the history under its own disk; the several-devices
        // result is not kept.
        let mut cmds: Vec<Cmd> = run
            .targets
            .iter()
            .filter_map(|t| Some((t.record, self.results.records.get(t.record)?)))
            .filter(|(_, rec)| !rec.runs.is_empty())
            .map(|(record, rec)| Cmd::RecordHistory {
                record,
                runs: rec.runs.clone(),
                drive_cache: rec.drive_cache.clone(),
            })
            .collect();
        if failed.is_empty() {
            self.info(verdict);
        } else {
            self.error(format!("failed on {}; {verdict}", failed.join(", ")));
        }
        cmds.push(Cmd::RefreshInventory);
        cmds
    }
}

/// A target's run passed its checks: its record learns the scheduler and parameters.
fn started(t: &mut SeveralTarget, target: &TargetInfo, plan: &Plan, records: &mut [RunRecord]) {
    t.interval = plan.interval.as_secs_f64();
    if let Some(rec) = records.get_mut(t.record) {
        rec.scheduler = target.scheduler.clone();
        rec.kernel_cache = target.kernel_write_cache;
        rec.params = match plan.phases.as_slice() {
            [one] => one.job.describe(),
            many => format!("{} phases", many.len()),
        };
    }
}

/// A runner event of one target: the line and the live figure follow its intervals.
fn event(t: &mut SeveralTarget, ev: RunEvent, now: Duration) {
    match ev {
        RunEvent::Probes { phases } => t.probes = phases,
        RunEvent::PhaseStarted { index, label, .. } => {
            t.label = label;
            t.measuring = false;
            t.stats = LiveStats::default();
            t.phase = index;
            t.phase_started_at = now;
        }
        RunEvent::Measuring { .. } => t.measuring = true,
        RunEvent::Point { point, .. } => {
            // A last-interval sliver is not drawn (see `live::LiveStats`).
            let whole = t.interval / 2.0;
            t.stats.add(&point, whole);
            if point.seconds() < whole {
                return;
            }
            if t.line.len() == LINE_POINTS {
                t.line.pop_front();
            }
            t.line.push_back(point.rate() / 1e6);
        }
        RunEvent::PhaseFinished { .. } | RunEvent::Probed { .. } => {}
    }
}

/// A target's run ended: its report joins its record, or its error is named.
fn finished(
    t: &mut SeveralTarget,
    result: Result<RunReport, TaskError>,
    records: &mut [RunRecord],
) {
    match result {
        Ok(report) => {
            let error = report.error().filter(|_| !report.outcome.stopped);
            if let Some(rec) = records.get_mut(t.record) {
                rec.runs.push(report.clone());
                rec.exported = false;
                if let Some(e) = &error {
                    rec.error = Some(e.clone());
                }
            }
            t.reports.push(report);
            t.state = if error.is_some() {
                TargetState::Failed
            } else {
                TargetState::Done
            };
            t.error = error;
        }
        Err(e) => {
            t.state = TargetState::Failed;
            t.error = Some(e.to_string());
            if let Some(rec) = records.get_mut(t.record) {
                rec.error = Some(e.to_string());
            }
        }
    }
}
