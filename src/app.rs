//! The interactive program's state and its one transition function: `App::update` takes a
//! message (a key, a tick, a command's result, a runner event) and returns the commands the
//! loop should carry out. No drawing and no I/O happen here, so every transition is tested
//! without a terminal.

pub mod picker;
pub mod records;

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::time::Duration;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::bench::catalog::{CATALOG, TestName, Writes};
use crate::bench::engine::EngineChoice;
use crate::bench::outcome::TargetInfo;
use crate::bench::runner::RunEvent;
use crate::bench::safety::{self, WriteRefusal};
use crate::bench::session::RunRequest;
use crate::bench::spec::{self, Job, Plan, TargetFacts};
use crate::bench::stats::IntervalPoint;
use crate::event::{Cmd, Msg, TaskError};
use crate::model::{BlockDevice, CacheStatus, Inventory, SmartHealth, Transport};
use crate::report::export::{self, ExportFormat};
use picker::{Field, Values, fields_for};
pub use records::{PhaseFigures, RunRecord, Stat};

/// Points a live run keeps (10 minutes at 250 ms); the chart shows the last `CHART_WINDOW`.
pub const LIVE_HISTORY: usize = 2400;
/// Seconds of the live charts' sliding window.
pub const CHART_WINDOW: f64 = 60.0;
/// Seconds between inventory refreshes while idle.
const INVENTORY_REFRESH: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Devices,
    Tests,
    Run,
    Results,
    Compare,
}

impl Screen {
    pub const ALL: [Screen; 5] = [
        Screen::Devices,
        Screen::Tests,
        Screen::Run,
        Screen::Results,
        Screen::Compare,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Screen::Devices => "Devices",
            Screen::Tests => "Test",
            Screen::Run => "Run",
            Screen::Results => "Results",
            Screen::Compare => "Compare",
        }
    }
}

/// Where keys go on the test screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerFocus {
    Tests,
    Params,
}

/// A dialog over the screen; it takes the keys while open.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    Help,
    Error(String),
    /// Type the device's name to allow a write test.
    Confirm {
        request: Box<RunRequest>,
        repeats: u32,
        device: String,
        typed: String,
        wrong: bool,
    },
    Scheduler {
        device: String,
        options: Vec<String>,
        selected: usize,
    },
    Export {
        record: usize,
    },
    /// Typing a value for a field of the test form.
    Edit {
        field: Field,
        text: String,
        error: Option<String>,
    },
    QuitConfirm,
    /// `q` with results not exported: quit and discard them?
    QuitDiscard,
    /// The drive's own write cache: state, kernel view, switch.
    DriveCache {
        device: String,
    },
    /// Changes a killed or crashed session left behind: restore them?
    Orphans {
        lines: Vec<String>,
    },
    /// Information to acknowledge (what a restore did).
    Message {
        title: String,
        lines: Vec<String>,
    },
    /// `R` after a switch on a device the last test did not run on: run it there?
    Retest {
        /// The device whose setting changed.
        device: String,
        /// The record whose test would run there.
        record: usize,
    },
    /// A finished run's text report, scrolled.
    Report {
        record: usize,
        scroll: u16,
    },
}

/// A scheduler this session changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerChange {
    pub device: String,
    pub original: String,
    pub current: String,
    /// Kept by the admin: not restored on exit.
    pub keep: bool,
}

/// What the drive itself says, as far as it has been read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DriveState {
    pub cache: Option<Result<CacheStatus, String>>,
    pub health: Option<Result<Box<SmartHealth>, String>>,
    pub reading: bool,
}

impl DriveState {
    /// "on", "off", "n/a" for the drive's cache; `None` when not read yet.
    pub fn cache_word(&self) -> Option<&'static str> {
        match &self.cache {
            Some(Ok(c)) => Some(match c.drive.as_ref().and_then(|d| d.enabled) {
                Some(true) => "on",
                Some(false) => "off",
                None => "n/a",
            }),
            Some(Err(_)) => Some("?"),
            None => None,
        }
    }
}

/// A drive write-cache switch this session made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheSwitch {
    pub device: String,
    pub original: bool,
    pub current: bool,
    pub keep: bool,
}

/// Running figures of a live run. The means are totals over the measured time (bytes and I/Os
/// over seconds), as the report computes them, so a shorter last interval weighs what it
/// lasted; min and max are over whole intervals only (a sliver's rate means little).
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
    fn add(&mut self, p: &IntervalPoint, whole: f64) {
        if p.seconds() <= 0.0 {
            return;
        }
        self.bytes += p.bytes();
        self.ops += p.ops();
        self.seconds += p.seconds();
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
    pub started_at: Duration,
    pub phase_started_at: Duration,
    /// This phase's points, oldest first, at most `LIVE_HISTORY`.
    pub points: VecDeque<IntervalPoint>,
    pub stats: LiveStats,
    pub stopping: bool,
    pub finished: bool,
    pub error: Option<String>,
    /// The drive's cache when the run started ("on", "off", "n/a").
    pub drive_cache: Option<String>,
    /// Temperature readings: (seconds since the run started, degrees C), bounded.
    pub temps: VecDeque<(f64, i64)>,
    /// The engine of the phase being measured, and why (known once the warm-up is over).
    pub engine: Option<EngineChoice>,
}

impl LiveRun {
    pub fn is_active(&self) -> bool {
        !self.finished
    }

    /// Seconds measured so far in this phase.
    pub fn measured(&self) -> f64 {
        self.points.back().map_or(0.0, |p| p.end_s)
    }
}

/// The whole state of the interactive program.
#[derive(Debug, Clone, PartialEq)]
pub struct App {
    pub now: Duration,
    pub screen: Screen,
    pub overlay: Option<Overlay>,
    pub inventory: Option<Inventory>,
    pub inventory_error: Option<String>,
    last_inventory: Duration,
    pub show_all: bool,
    /// Selected row of the visible device list.
    pub device_row: usize,
    pub picker_test: usize,
    pub picker_field: usize,
    pub picker_focus: PickerFocus,
    pub values: Values,
    pub run: Option<LiveRun>,
    pub records: Vec<RunRecord>,
    pub record_row: usize,
    /// Records marked for comparison (at most two, in marking order).
    pub marks: Vec<usize>,
    pub scheduler_changes: Vec<SchedulerChange>,
    pub cache_switches: Vec<CacheSwitch>,
    /// The drives' own state (cache, SMART) by device name.
    pub drives: BTreeMap<String, DriveState>,
    /// A short message for the status line and when it was set.
    pub status: Option<(String, Duration)>,
    pub is_root: bool,
    /// Only glyphs the Linux console's fonts have (TERM=linux).
    pub console: bool,
    /// The run screen's right chart shows the drive temperature instead of IOPS.
    pub show_temperature: bool,
    pub quitting: bool,
    /// The device whose scheduler or drive cache was switched last, until a run starts: `R`
    /// retests there.
    pub last_switch: Option<String>,
    /// First row of the Compare table shown (it scrolls when longer than the screen).
    pub compare_scroll: u16,
    /// The record an export was asked for, until the loop says how it went.
    exporting: Option<usize>,
}

impl App {
    pub fn new(is_root: bool, console: bool) -> Self {
        App {
            now: Duration::ZERO,
            screen: Screen::Devices,
            overlay: None,
            inventory: None,
            inventory_error: None,
            last_inventory: Duration::ZERO,
            show_all: false,
            device_row: 0,
            picker_test: 0,
            picker_field: 0,
            picker_focus: PickerFocus::Tests,
            values: Values::new(),
            run: None,
            records: Vec::new(),
            record_row: 0,
            marks: Vec::new(),
            scheduler_changes: Vec::new(),
            cache_switches: Vec::new(),
            drives: BTreeMap::new(),
            status: None,
            is_root,
            console,
            show_temperature: false,
            quitting: false,
            last_switch: None,
            compare_scroll: 0,
            exporting: None,
        }
    }

    /// The devices the list shows.
    pub fn visible_devices(&self) -> Vec<&BlockDevice> {
        self.inventory
            .as_ref()
            .map(|i| i.visible(self.show_all).collect())
            .unwrap_or_default()
    }

    pub fn selected_device(&self) -> Option<&BlockDevice> {
        self.visible_devices().get(self.device_row).copied()
    }

    pub fn picker_test(&self) -> TestName {
        CATALOG[self.picker_test.min(CATALOG.len() - 1)].name
    }

    pub fn running(&self) -> bool {
        self.run.as_ref().is_some_and(LiveRun::is_active)
    }

    /// The device the scheduler key acts on: the run's on run-related screens, else the
    /// selected one.
    fn focus_device(&self) -> Option<String> {
        let from_run = || self.run.as_ref().map(|r| r.device.clone());
        let from_record = || self.records.get(self.record_row).map(|r| r.device.clone());
        match self.screen {
            Screen::Run => from_run().or_else(|| self.selected_device().map(|d| d.name.clone())),
            Screen::Results | Screen::Compare => from_record()
                .or_else(from_run)
                .or_else(|| self.selected_device().map(|d| d.name.clone())),
            _ => self.selected_device().map(|d| d.name.clone()),
        }
    }

    fn info(&mut self, text: impl Into<String>) {
        self.status = Some((text.into(), self.now));
    }

    fn error(&mut self, text: impl Into<String>) {
        self.overlay = Some(Overlay::Error(text.into()));
    }

    /// The one transition function.
    pub fn update(&mut self, msg: Msg) -> Vec<Cmd> {
        match msg {
            Msg::Key(k) => self.key(k),
            Msg::Resize => Vec::new(),
            Msg::Tick(now) => {
                self.now = now;
                if let Some((_, at)) = &self.status
                    && now.saturating_sub(*at) > Duration::from_secs(8)
                {
                    self.status = None;
                }
                if !self.running() && now.saturating_sub(self.last_inventory) >= INVENTORY_REFRESH {
                    self.last_inventory = now;
                    return vec![Cmd::RefreshInventory];
                }
                Vec::new()
            }
            Msg::Inventory(result) => {
                self.last_inventory = self.now;
                let first = self.inventory.is_none();
                match result {
                    Ok(inv) => {
                        self.inventory = Some(inv);
                        self.inventory_error = None;
                        let n = self.visible_devices().len();
                        self.device_row = self.device_row.min(n.saturating_sub(1));
                    }
                    Err(e) => self.inventory_error = Some(e.to_string()),
                }
                if first && self.is_root {
                    return self.read_all_drives();
                }
                Vec::new()
            }
            Msg::DriveStatus {
                device,
                cache,
                health,
            } => {
                let st = self.drives.entry(device).or_default();
                st.cache = Some(cache.map_err(|e| e.to_string()));
                if let Some(health) = health {
                    st.health = Some(health.map_err(|e| e.to_string()));
                }
                st.reading = false;
                Vec::new()
            }
            Msg::DriveCacheSet { device, result } => self.drive_cache_set(device, result),
            Msg::Orphans(lines) => {
                if !lines.is_empty() {
                    self.overlay = Some(Overlay::Orphans { lines });
                }
                Vec::new()
            }
            Msg::Restored(lines) => {
                self.overlay = Some(Overlay::Message {
                    title: "Restored".into(),
                    lines,
                });
                let mut cmds = vec![Cmd::RefreshInventory];
                cmds.extend(self.read_all_drives());
                cmds
            }
            Msg::Temperature {
                device,
                at,
                celsius,
            } => {
                if let Some(run) = &mut self.run
                    && run.device == device
                {
                    if run.temps.len() == LIVE_HISTORY {
                        run.temps.pop_front();
                    }
                    run.temps.push_back((at, celsius));
                }
                Vec::new()
            }
            Msg::SchedulerSet { device, result } => self.scheduler_set(device, result),
            Msg::RunStarted {
                target,
                plan,
                notes,
            } => {
                if let Some(run) = &mut self.run {
                    if let Some(rec) = self.records.get_mut(run.record) {
                        rec.scheduler = target.scheduler.clone();
                        rec.kernel_cache = target.kernel_write_cache;
                        rec.params = match plan.phases.as_slice() {
                            [one] => one.job.describe(),
                            many => format!("{} phases", many.len()),
                        };
                    }
                    run.target = Some(*target);
                    run.plan = Some(*plan);
                    if !notes.is_empty() {
                        self.status = Some((notes.join("; "), self.now));
                    }
                }
                Vec::new()
            }
            Msg::RunRefused(e) => {
                if let Some(run) = &mut self.run {
                    run.finished = true;
                    run.error = Some(e.clone());
                    if let Some(rec) = self.records.get_mut(run.record) {
                        rec.error = Some(e.clone());
                    }
                }
                self.error(e);
                Vec::new()
            }
            Msg::Run(ev) => {
                self.run_event(*ev);
                Vec::new()
            }
            Msg::RunFinished(result) => self.run_finished(*result),
            Msg::Exported(result) => {
                let record = self.exporting.take();
                match result {
                    Ok(path) => {
                        if let Some(rec) = record.and_then(|i| self.records.get_mut(i)) {
                            rec.exported = true;
                        }
                        self.info(format!("exported to {}", path.display()));
                    }
                    Err(e) => self.error(format!("export failed: {e}")),
                }
                Vec::new()
            }
        }
    }

    /// Asks for the drive state of every real drive (virtual devices have none). SMART is not
    /// read from USB bridges unasked: some misbehave on pass-through commands.
    fn read_all_drives(&mut self) -> Vec<Cmd> {
        let devices: Vec<(String, Transport)> = self
            .visible_devices()
            .iter()
            .filter(|d| !d.transport.is_virtual())
            .map(|d| (d.name.clone(), d.transport))
            .collect();
        devices
            .into_iter()
            .map(|(device, transport)| {
                self.drives.entry(device.clone()).or_default().reading = true;
                Cmd::ReadDriveStatus {
                    device,
                    health: transport != Transport::Usb,
                }
            })
            .collect()
    }

    fn drive_cache_set(
        &mut self,
        device: String,
        result: Result<Box<crate::changes::CacheChange>, TaskError>,
    ) -> Vec<Cmd> {
        match result {
            Ok(change) => {
                let after = change.after.enabled;
                let before = change.before.enabled;
                if let (Some(was), Some(now)) = (before, after) {
                    match self.cache_switches.iter_mut().find(|c| c.device == device) {
                        // A kept choice is the new original: the journal puts it back.
                        Some(c) if c.keep => {
                            c.original = was;
                            c.current = now;
                            c.keep = false;
                        }
                        Some(c) => c.current = now,
                        None if was != now => self.cache_switches.push(CacheSwitch {
                            device: device.clone(),
                            original: was,
                            current: now,
                            keep: false,
                        }),
                        None => {}
                    }
                }
                self.cache_switches
                    .retain(|c| c.keep || c.original != c.current);
                let word = |b: Option<bool>| match b {
                    Some(true) => "on",
                    Some(false) => "off",
                    None => "unknown",
                };
                let back = self
                    .cache_switches
                    .iter()
                    .find(|c| c.device == device && !c.keep)
                    .map(|c| format!(" (back to {} on exit)", word(Some(c.original))))
                    .unwrap_or_default();
                self.last_switch = Some(device.clone());
                let kernel = change.kernel_after.map_or("?", |k| k.as_str());
                if change.took_effect() {
                    self.info(format!(
                        "{device}: the drive reports its write cache {}{back}; kernel flush \
                         policy {kernel}; R retests",
                        word(after)
                    ));
                } else {
                    self.error(format!(
                        "{device}: asked for write cache {}, the drive reports {}",
                        word(Some(change.requested)),
                        word(after)
                    ));
                }
                vec![
                    Cmd::RefreshInventory,
                    Cmd::ReadDriveStatus {
                        device,
                        health: false,
                    },
                ]
            }
            Err(e) => {
                self.error(format!("cannot switch the write cache of {device}: {e}"));
                Vec::new()
            }
        }
    }

    fn scheduler_set(&mut self, device: String, result: Result<String, TaskError>) -> Vec<Cmd> {
        match result {
            Ok(active) => {
                let before = self
                    .inventory
                    .as_ref()
                    .and_then(|i| i.find(&device))
                    .and_then(|d| d.scheduler.as_ref()?.active.clone());
                match self
                    .scheduler_changes
                    .iter_mut()
                    .find(|c| c.device == device)
                {
                    // A kept choice is the new original: the journal puts it back on exit.
                    Some(c) if c.keep => {
                        c.original = before.unwrap_or_else(|| c.current.clone());
                        c.current = active.clone();
                        c.keep = false;
                    }
                    Some(c) => c.current = active.clone(),
                    None => {
                        if let Some(original) = before
                            && original != active
                        {
                            self.scheduler_changes.push(SchedulerChange {
                                device: device.clone(),
                                original,
                                current: active.clone(),
                                keep: false,
                            });
                        }
                    }
                }
                self.scheduler_changes
                    .retain(|c| c.keep || c.original != c.current);
                self.last_switch = Some(device.clone());
                let restore = self
                    .scheduler_changes
                    .iter()
                    .find(|c| c.device == device && !c.keep)
                    .map(|c| format!(" (back to {} on exit)", c.original))
                    .unwrap_or_default();
                self.info(format!(
                    "{device}: scheduler is now {active}{restore}; R retests"
                ));
                vec![Cmd::RefreshInventory]
            }
            Err(e) => {
                self.error(format!("cannot switch the scheduler of {device}: {e}"));
                Vec::new()
            }
        }
    }

    fn run_event(&mut self, ev: RunEvent) {
        let now = self.now;
        let Some(run) = &mut self.run else { return };
        match ev {
            RunEvent::PhaseStarted {
                index,
                count,
                label,
                job,
            } => {
                run.phase = index;
                run.phases = count;
                run.label = label;
                run.job = Some(*job);
                run.measuring = false;
                run.engine = None;
                run.phase_started_at = now;
                run.points.clear();
                run.stats = LiveStats::default();
            }
            RunEvent::Measuring { engine, .. } => {
                run.measuring = true;
                run.engine = Some(*engine);
            }
            RunEvent::Point { point, .. } => {
                // The last interval of a stopped or count-bounded phase can be a sliver of
                // time whose rate means nothing: it counts in the means (as in the report's
                // totals) but is not charted nor taken for min/max.
                let nominal = run.plan.as_ref().map_or(0.25, |p| p.interval.as_secs_f64());
                run.stats.add(&point, nominal / 2.0);
                if point.seconds() < nominal / 2.0 {
                    return;
                }
                if run.points.len() == LIVE_HISTORY {
                    run.points.pop_front();
                }
                run.points.push_back(point);
            }
            RunEvent::PhaseFinished { .. } => {}
        }
    }

    fn run_finished(
        &mut self,
        result: Result<crate::bench::outcome::RunReport, TaskError>,
    ) -> Vec<Cmd> {
        let Some(run) = &mut self.run else {
            return Vec::new();
        };
        let mut cmds = vec![Cmd::RefreshInventory];
        match result {
            Ok(report) => {
                let error = report.error();
                let stopped = report.outcome.stopped;
                let record = run.record;
                if let Some(rec) = self.records.get_mut(record) {
                    rec.runs.push(report);
                    rec.exported = false;
                    if let Some(e) = &error {
                        rec.error = Some(e.clone());
                    }
                    let more = rec.runs.len() < rec.repeats_wanted as usize;
                    if more && error.is_none() && !stopped && !run.stopping {
                        run.repeat = rec.runs.len() as u32 + 1;
                        run.points.clear();
                        run.stats = LiveStats::default();
                        cmds.push(Cmd::StartRun(Box::new(rec.request.clone())));
                        return cmds;
                    }
                }
                run.finished = true;
                run.error = error.clone();
                self.record_row = record;
                match error {
                    Some(e) => self.error(format!("the run failed: {e}")),
                    None => self.info(format!(
                        "run #{} finished; s switches the scheduler, R reruns, c compares",
                        record + 1
                    )),
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

    fn key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(k.code, KeyCode::Char('c')) {
            self.quitting = true;
            return vec![Cmd::Quit];
        }
        if let Some(overlay) = self.overlay.take() {
            return self.overlay_key(overlay, k);
        }
        match k.code {
            KeyCode::Char('?') | KeyCode::F(1) => {
                self.overlay = Some(Overlay::Help);
                return Vec::new();
            }
            KeyCode::Char('q') => {
                if self.running() {
                    self.overlay = Some(Overlay::QuitConfirm);
                    return Vec::new();
                }
                if self.unsaved().next().is_some() {
                    self.overlay = Some(Overlay::QuitDiscard);
                    return Vec::new();
                }
                self.quitting = true;
                return vec![Cmd::Quit];
            }
            KeyCode::Char(c @ '1'..='5') => {
                self.screen = Screen::ALL[(c as usize) - ('1' as usize)];
                return Vec::new();
            }
            KeyCode::Tab => {
                let i = Screen::ALL
                    .iter()
                    .position(|s| *s == self.screen)
                    .unwrap_or(0);
                self.screen = Screen::ALL[(i + 1) % Screen::ALL.len()];
                return Vec::new();
            }
            KeyCode::BackTab => {
                let i = Screen::ALL
                    .iter()
                    .position(|s| *s == self.screen)
                    .unwrap_or(0);
                self.screen = Screen::ALL[(i + Screen::ALL.len() - 1) % Screen::ALL.len()];
                return Vec::new();
            }
            KeyCode::Char('s') if self.screen != Screen::Tests => return self.open_scheduler(),
            KeyCode::Char('w') if self.screen != Screen::Tests => return self.open_drive_cache(),
            KeyCode::Char('h') if self.screen == Screen::Devices => {
                if let Some(d) = self.selected_device().map(|d| d.name.clone()) {
                    self.drives.entry(d.clone()).or_default().reading = true;
                    self.info(format!(
                        "{d}: reading the drive's cache state and SMART health"
                    ));
                    return vec![Cmd::ReadDriveStatus {
                        device: d,
                        health: true,
                    }];
                }
            }
            KeyCode::Char('R') => return self.rerun(None),
            _ => {}
        }
        match self.screen {
            Screen::Devices => self.devices_key(k),
            Screen::Tests => self.tests_key(k),
            Screen::Run => self.run_key(k),
            Screen::Results => self.results_key(k),
            Screen::Compare => self.compare_key(k),
        }
    }

    fn devices_key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        let n = self.visible_devices().len();
        match k.code {
            KeyCode::Up | KeyCode::Char('k') => self.device_row = self.device_row.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                self.device_row = (self.device_row + 1).min(n.saturating_sub(1));
            }
            KeyCode::Home => self.device_row = 0,
            KeyCode::End => self.device_row = n.saturating_sub(1),
            KeyCode::Enter | KeyCode::Char('t') if n > 0 => self.screen = Screen::Tests,
            KeyCode::Char('r') => {
                self.info("device list refreshed");
                return vec![Cmd::RefreshInventory];
            }
            KeyCode::Char('a') => {
                self.show_all = !self.show_all;
                let n = self.visible_devices().len();
                self.device_row = self.device_row.min(n.saturating_sub(1));
            }
            _ => {}
        }
        Vec::new()
    }

    fn tests_key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        let test = self.picker_test();
        let fields = fields_for(test);
        match (self.picker_focus, k.code) {
            (_, KeyCode::Char('r')) | (_, KeyCode::F(5)) => return self.start_from_picker(),
            (PickerFocus::Tests, KeyCode::Up | KeyCode::Char('k')) => {
                self.picker_test = self.picker_test.saturating_sub(1);
                self.picker_field = 0;
            }
            (PickerFocus::Tests, KeyCode::Down | KeyCode::Char('j')) => {
                self.picker_test = (self.picker_test + 1).min(CATALOG.len() - 1);
                self.picker_field = 0;
            }
            (PickerFocus::Tests, KeyCode::Enter | KeyCode::Right) => {
                self.picker_focus = PickerFocus::Params;
            }
            (PickerFocus::Params, KeyCode::Esc) => self.picker_focus = PickerFocus::Tests,
            (PickerFocus::Params, KeyCode::Up | KeyCode::Char('k')) => {
                if self.picker_field == 0 {
                    self.picker_focus = PickerFocus::Tests;
                } else {
                    self.picker_field -= 1;
                }
            }
            (PickerFocus::Params, KeyCode::Down | KeyCode::Char('j')) => {
                self.picker_field = (self.picker_field + 1).min(fields.len().saturating_sub(1));
            }
            (PickerFocus::Params, KeyCode::Left | KeyCode::Char('h')) => {
                if let Some(&f) = fields.get(self.picker_field) {
                    self.step_valid(f, -1);
                }
            }
            (PickerFocus::Params, KeyCode::Right | KeyCode::Char('l')) => {
                if let Some(&f) = fields.get(self.picker_field) {
                    self.step_valid(f, 1);
                }
            }
            (PickerFocus::Params, KeyCode::Char('d')) => {
                if let Some(&f) = fields.get(self.picker_field) {
                    self.values.reset(f);
                }
            }
            (PickerFocus::Params, KeyCode::Enter) => {
                if let Some(&f) = fields.get(self.picker_field) {
                    if f.typeable() {
                        self.overlay = Some(Overlay::Edit {
                            field: f,
                            text: String::new(),
                            error: None,
                        });
                    } else {
                        self.values.step(f, 1);
                    }
                }
            }
            _ => {}
        }
        Vec::new()
    }

    /// Would the test form's values make a valid plan on the selected device? If not, why
    /// (the reason the run would be refused with).
    fn check_values(&self) -> Result<(), String> {
        let Some(d) = self.selected_device() else {
            return Ok(());
        };
        let Some(size) = d.size_bytes.map(|b| b.0).filter(|&b| b > 0) else {
            return Ok(());
        };
        let test = self.picker_test();
        let facts = TargetFacts {
            size,
            logical_block_size: d.logical_block_size.unwrap_or(512),
            max_request: None,
            is_file: false,
        };
        spec::build_plan(test, &self.values.params(test), &facts, true)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Steps a field to its next choice the selected device can take (a region larger than
    /// the device is skipped, say).
    fn step_valid(&mut self, field: Field, dir: i32) {
        let start = self.values.clone();
        for _ in 0..32 {
            self.values.step(field, dir);
            if self.values == start || self.check_values().is_ok() {
                return;
            }
        }
        self.values = start;
    }

    fn run_key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        match k.code {
            KeyCode::Char('x') | KeyCode::Esc if self.running() => {
                if let Some(run) = &mut self.run {
                    run.stopping = true;
                }
                self.info("stopping: the figures will cover what completed");
                vec![Cmd::StopRun]
            }
            KeyCode::Char('r') => self.rerun(None),
            KeyCode::Char('c') => self.compare_latest(),
            KeyCode::Char('t') => {
                self.show_temperature = !self.show_temperature;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn results_key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        let n = self.records.len();
        match k.code {
            KeyCode::Up | KeyCode::Char('k') => self.record_row = self.record_row.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                self.record_row = (self.record_row + 1).min(n.saturating_sub(1));
            }
            KeyCode::Char(' ') if n > 0 => {
                let r = self.record_row;
                if let Some(pos) = self.marks.iter().position(|&m| m == r) {
                    self.marks.remove(pos);
                } else {
                    if self.marks.len() == 2 {
                        self.marks.remove(0);
                    }
                    self.marks.push(r);
                }
            }
            KeyCode::Char('c') => return self.compare_latest(),
            KeyCode::Char('e') if n > 0 => {
                if self.records[self.record_row].runs.is_empty() {
                    self.error("this run has no results to export");
                } else {
                    self.overlay = Some(Overlay::Export {
                        record: self.record_row,
                    });
                }
            }
            KeyCode::Char('r') if n > 0 => return self.rerun(Some(self.record_row)),
            KeyCode::Enter if n > 0 && !self.records[self.record_row].runs.is_empty() => {
                self.overlay = Some(Overlay::Report {
                    record: self.record_row,
                    scroll: 0,
                });
            }
            _ => {}
        }
        Vec::new()
    }

    fn compare_key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        let s = self.compare_scroll;
        match k.code {
            KeyCode::Up | KeyCode::Char('k') => self.compare_scroll = s.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.compare_scroll = s.saturating_add(1),
            KeyCode::PageUp => self.compare_scroll = s.saturating_sub(10),
            KeyCode::PageDown | KeyCode::Char(' ') => self.compare_scroll = s.saturating_add(10),
            KeyCode::Home => self.compare_scroll = 0,
            KeyCode::Esc => self.screen = Screen::Results,
            KeyCode::Char('r') => return self.rerun(None),
            _ => {}
        }
        Vec::new()
    }

    /// Records with results that were not exported (lost on quitting).
    pub fn unsaved(&self) -> impl Iterator<Item = usize> + '_ {
        self.records
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.runs.is_empty() && !r.exported)
            .map(|(i, _)| i)
    }

    /// The two records the Compare screen shows: the marked ones, else the last two.
    pub fn comparison(&self) -> Option<(usize, usize)> {
        let done: Vec<usize> = (0..self.records.len())
            .filter(|&i| !self.records[i].runs.is_empty())
            .collect();
        match self.marks.as_slice() {
            // A is the first marked, as Results shows it.
            [a, b] => Some((*a, *b)),
            _ if done.len() >= 2 => Some((done[done.len() - 2], done[done.len() - 1])),
            _ => None,
        }
    }

    fn compare_latest(&mut self) -> Vec<Cmd> {
        if self.comparison().is_some() {
            self.compare_scroll = 0;
            self.screen = Screen::Compare;
        } else {
            self.error("comparing needs two finished runs: run a test, switch, rerun (R)");
        }
        Vec::new()
    }

    fn open_scheduler(&mut self) -> Vec<Cmd> {
        let Some(name) = self.focus_device() else {
            self.error("no device selected");
            return Vec::new();
        };
        let dev = self.inventory.as_ref().and_then(|i| i.find(&name));
        let Some(set) = dev.and_then(|d| d.scheduler.clone()) else {
            self.error(format!("{name}: the kernel does not report its scheduler"));
            return Vec::new();
        };
        if set.available.len() <= 1 {
            self.error(format!(
                "{name} has no scheduler to choose (bio-based devices such as zram, md and dm \
                 have none)"
            ));
            return Vec::new();
        }
        if self.running() {
            self.error("switch the scheduler between runs, not during one (x stops the run)");
            return Vec::new();
        }
        let selected = set
            .active
            .as_ref()
            .and_then(|a| set.available.iter().position(|s| s == a))
            .unwrap_or(0);
        self.overlay = Some(Overlay::Scheduler {
            device: name,
            options: set.available,
            selected,
        });
        Vec::new()
    }

    fn open_drive_cache(&mut self) -> Vec<Cmd> {
        let Some(name) = self.focus_device() else {
            self.error("no device selected");
            return Vec::new();
        };
        if self.running() {
            self.error("switch the write cache between runs, not during one (x stops the run)");
            return Vec::new();
        }
        if !self.drives.contains_key(&name) {
            self.drives.entry(name.clone()).or_default().reading = true;
            self.overlay = Some(Overlay::DriveCache {
                device: name.clone(),
            });
            return vec![Cmd::ReadDriveStatus {
                device: name,
                health: false,
            }];
        }
        self.overlay = Some(Overlay::DriveCache { device: name });
        Vec::new()
    }

    /// Reruns a record's request. `None` is the retest: the latest test, on the device whose
    /// setting was switched last (its latest test there, or asking when it has none).
    fn rerun(&mut self, record: Option<usize>) -> Vec<Cmd> {
        let Some(latest) = self.records.len().checked_sub(1) else {
            self.error("nothing to rerun yet: pick a test on the Test screen (2)");
            return Vec::new();
        };
        if self.running() {
            self.error("a test is running (x stops it)");
            return Vec::new();
        }
        let i = match (record, self.last_switch.clone()) {
            (Some(i), _) => i,
            (None, Some(dev)) if self.records[latest].device != dev => {
                match self.records.iter().rposition(|r| r.device == dev) {
                    Some(i) => i,
                    None => {
                        self.overlay = Some(Overlay::Retest {
                            device: dev,
                            record: latest,
                        });
                        return Vec::new();
                    }
                }
            }
            (None, _) => latest,
        };
        let mut request = self.records[i].request.clone();
        let repeats = self.records[i].repeats_wanted;
        // A write test needs a fresh confirmation every time.
        request.confirmation = None;
        self.launch(request, repeats)
    }

    fn start_from_picker(&mut self) -> Vec<Cmd> {
        if self.running() {
            self.error("a test is running (x stops it)");
            return Vec::new();
        }
        let Some(dev) = self.selected_device() else {
            self.error("no device to test: select one on the Devices screen (1)");
            return Vec::new();
        };
        if dev.size_bytes.is_none_or(|b| b.0 == 0) {
            self.error(format!("{} has no size: nothing to test", dev.name));
            return Vec::new();
        }
        let test = self.picker_test();
        let request = RunRequest {
            target: dev.path.clone(),
            test,
            params: self.values.params(test),
            confirmation: None,
            temperature: self.values.temperature(),
        };
        self.launch(request, self.values.repeats.max(1))
    }

    /// Starts a run, through the confirmation dialog when it writes.
    fn launch(&mut self, request: RunRequest, repeats: u32) -> Vec<Cmd> {
        // The kernel name, which is what the run checks the opened device against (it differs
        // from the node's file name for names like cciss!c0d0).
        let device = self
            .inventory
            .as_ref()
            .and_then(|inv| inv.devices.iter().find(|d| d.path == request.target))
            .map(|d| d.name.clone())
            .or_else(|| {
                request
                    .target
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .unwrap_or_default();
        // The request's own parameters decide (a rerun keeps the ones it ran with).
        let writes = request.test.writes_with(&request.params) == Writes::Always;
        if writes && request.confirmation.is_none() {
            if let Some(inv) = &self.inventory {
                match safety::check_device_write(inv, &device, None) {
                    Err(WriteRefusal::NotConfirmed { .. }) | Ok(()) => {}
                    Err(refusal) => {
                        self.error(refusal.to_string());
                        return Vec::new();
                    }
                }
            }
            self.overlay = Some(Overlay::Confirm {
                request: Box::new(request),
                repeats,
                device,
                typed: String::new(),
                wrong: false,
            });
            return Vec::new();
        }
        self.last_switch = None;
        let record = self.records.len();
        let drive_cache = self
            .drives
            .get(&device)
            .and_then(DriveState::cache_word)
            .map(str::to_string);
        self.records.push(RunRecord::new(
            record,
            device.clone(),
            request.clone(),
            repeats,
        ));
        self.run = Some(LiveRun {
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
            started_at: self.now,
            phase_started_at: self.now,
            points: VecDeque::new(),
            stats: LiveStats::default(),
            stopping: false,
            finished: false,
            error: None,
            drive_cache,
            temps: VecDeque::new(),
            engine: None,
        });
        if let Some(rec) = self.records.get_mut(record) {
            rec.drive_cache = self.run.as_ref().and_then(|r| r.drive_cache.clone());
        }
        self.screen = Screen::Run;
        vec![Cmd::StartRun(Box::new(request))]
    }

    fn overlay_key(&mut self, overlay: Overlay, k: KeyEvent) -> Vec<Cmd> {
        match overlay {
            Overlay::Help | Overlay::Error(_) | Overlay::Message { .. } => Vec::new(),
            Overlay::Retest { device, record } => match k.code {
                KeyCode::Char('y') | KeyCode::Enter => {
                    let Some(rec) = self.records.get(record) else {
                        return Vec::new();
                    };
                    let mut request = rec.request.clone();
                    let repeats = rec.repeats_wanted;
                    request.target = self
                        .inventory
                        .as_ref()
                        .and_then(|i| i.find(&device))
                        .map_or_else(|| Path::new("/dev").join(&device), |d| d.path.clone());
                    request.confirmation = None;
                    self.launch(request, repeats)
                }
                KeyCode::Char('n') => {
                    // Rerun where it ran: the switch is not what this retest is about.
                    self.last_switch = None;
                    self.rerun(Some(record))
                }
                KeyCode::Esc | KeyCode::Char('q') => Vec::new(),
                _ => {
                    self.overlay = Some(Overlay::Retest { device, record });
                    Vec::new()
                }
            },
            Overlay::Orphans { lines } => match k.code {
                KeyCode::Char('y') => vec![Cmd::RestoreOrphans],
                KeyCode::Char('n') | KeyCode::Esc => {
                    self.info("left as they are: `disktriage restore` puts them back later");
                    Vec::new()
                }
                _ => {
                    self.overlay = Some(Overlay::Orphans { lines });
                    Vec::new()
                }
            },
            Overlay::DriveCache { device } => match k.code {
                KeyCode::Char('o') | KeyCode::Char('0') => vec![Cmd::SetDriveCache {
                    device,
                    enabled: false,
                }],
                KeyCode::Char('n') | KeyCode::Char('1') => vec![Cmd::SetDriveCache {
                    device,
                    enabled: true,
                }],
                KeyCode::Char('K') => {
                    let kept = self
                        .cache_switches
                        .iter_mut()
                        .find(|c| c.device == device)
                        .map(|c| {
                            c.keep = true;
                            c.current
                        });
                    match kept {
                        Some(on) => {
                            self.info(format!(
                                "{device}: keeping the drive write cache {} after exit",
                                if on { "on" } else { "off" }
                            ));
                            vec![Cmd::KeepDriveCache { device }]
                        }
                        None => {
                            self.info(format!("{device}: nothing changed to keep"));
                            Vec::new()
                        }
                    }
                }
                KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') => Vec::new(),
                _ => {
                    self.overlay = Some(Overlay::DriveCache { device });
                    Vec::new()
                }
            },
            Overlay::QuitDiscard => match k.code {
                KeyCode::Char('y') | KeyCode::Char('q') => {
                    self.quitting = true;
                    vec![Cmd::Quit]
                }
                KeyCode::Char('e') => {
                    let first = self.unsaved().next();
                    if let Some(i) = first {
                        self.screen = Screen::Results;
                        self.record_row = i;
                        self.overlay = Some(Overlay::Export { record: i });
                    }
                    Vec::new()
                }
                _ => Vec::new(),
            },
            Overlay::QuitConfirm => match k.code {
                KeyCode::Char('y') | KeyCode::Char('q') => {
                    self.quitting = true;
                    vec![Cmd::Quit]
                }
                _ => Vec::new(),
            },
            Overlay::Report { record, scroll } => {
                let scroll = match k.code {
                    KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
                    KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
                    KeyCode::PageUp => scroll.saturating_sub(10),
                    KeyCode::PageDown | KeyCode::Char(' ') => scroll.saturating_add(10),
                    _ => return Vec::new(),
                };
                self.overlay = Some(Overlay::Report { record, scroll });
                Vec::new()
            }
            Overlay::Confirm {
                request,
                repeats,
                device,
                mut typed,
                ..
            } => {
                let mut wrong = false;
                match k.code {
                    KeyCode::Esc => {
                        self.info("write test cancelled: nothing was written");
                        return Vec::new();
                    }
                    KeyCode::Enter if safety::confirms(&typed, &device) => {
                        let mut request = *request;
                        request.confirmation = Some(typed);
                        return self.launch(request, repeats);
                    }
                    KeyCode::Enter => wrong = true,
                    KeyCode::Backspace => {
                        typed.pop();
                    }
                    KeyCode::Char(c) if typed.len() < 64 && !c.is_control() => typed.push(c),
                    _ => {}
                }
                self.overlay = Some(Overlay::Confirm {
                    request,
                    repeats,
                    device,
                    typed,
                    wrong,
                });
                Vec::new()
            }
            Overlay::Scheduler {
                device,
                options,
                selected,
            } => match k.code {
                KeyCode::Up | KeyCode::Char('k') => {
                    self.overlay = Some(Overlay::Scheduler {
                        device,
                        selected: selected.saturating_sub(1),
                        options,
                    });
                    Vec::new()
                }
                KeyCode::Down | KeyCode::Char('j') => {
                    let selected = (selected + 1).min(options.len().saturating_sub(1));
                    self.overlay = Some(Overlay::Scheduler {
                        device,
                        options,
                        selected,
                    });
                    Vec::new()
                }
                KeyCode::Enter => match options.get(selected) {
                    Some(name) => vec![Cmd::SetScheduler {
                        device,
                        name: name.clone(),
                    }],
                    None => Vec::new(),
                },
                KeyCode::Char('K') => {
                    let kept = self
                        .scheduler_changes
                        .iter_mut()
                        .find(|c| c.device == device)
                        .map(|c| {
                            c.keep = true;
                            c.current.clone()
                        });
                    match kept {
                        Some(current) => {
                            self.info(format!("{device}: keeping scheduler {current} after exit"));
                            vec![Cmd::KeepScheduler { device }]
                        }
                        None => {
                            self.info(format!("{device}: nothing changed to keep"));
                            Vec::new()
                        }
                    }
                }
                _ => Vec::new(),
            },
            Overlay::Export { record } => {
                let format = match k.code {
                    KeyCode::Char('j') => ExportFormat::Json,
                    KeyCode::Char('c') => ExportFormat::Csv,
                    KeyCode::Char('f') => ExportFormat::Fio,
                    _ => return Vec::new(),
                };
                let Some(rec) = self.records.get(record) else {
                    return Vec::new();
                };
                self.exporting = Some(record);
                vec![Cmd::Export {
                    reports: rec.runs.clone(),
                    format,
                    stem: export::file_stem(&rec.device, rec.test.id(), rec.id + 1),
                }]
            }
            Overlay::Edit {
                field,
                mut text,
                error,
            } => match k.code {
                KeyCode::Esc => Vec::new(),
                KeyCode::Enter => {
                    // Checked now against the selected device, not when the run starts.
                    let before = self.values.clone();
                    let checked = self
                        .values
                        .set_typed(field, &text)
                        .and_then(|()| self.check_values());
                    if let Err(e) = checked {
                        self.values = before;
                        self.overlay = Some(Overlay::Edit {
                            field,
                            text,
                            error: Some(e),
                        });
                    }
                    Vec::new()
                }
                KeyCode::Backspace => {
                    text.pop();
                    self.overlay = Some(Overlay::Edit {
                        field,
                        text,
                        error: None,
                    });
                    Vec::new()
                }
                KeyCode::Char(c) if text.len() < 32 && c.is_ascii_graphic() => {
                    text.push(c);
                    self.overlay = Some(Overlay::Edit {
                        field,
                        text,
                        error: None,
                    });
                    Vec::new()
                }
                _ => {
                    self.overlay = Some(Overlay::Edit { field, text, error });
                    Vec::new()
                }
            },
        }
    }
}
