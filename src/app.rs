//! The interactive program's state and its one transition function: `App::update` takes a
//! message and returns the commands the loop should carry out. No drawing and no I/O happen
//! here, so every transition is tested without a terminal.
//!
//! This file routes; each feature keeps its state and handlers in its own module: `devices`
//! (inventory, drive state), `form` and `picker` (the Test screen), `live` (a run),
//! `records` (results, marks, export, compare), `changes` (scheduler and drive-cache switches),
//! `setting_sweep` (a test under every setting), `health` (logs, self-tests), `dialogs` (one
//! file each), and `keys` (the one table of key bindings).

pub mod changes;
pub mod devices;
pub mod dialogs;
mod form;
pub mod health;
pub mod keys;
pub mod live;
pub mod params;
pub mod picker;
pub mod records;
pub mod screens;
pub mod setting_sweep;
pub mod several;

// The crate's surface (integration tests check it): `disktriage::app::Item`.
pub use keys::{BINDINGS, Binding, Scope, all as all_bindings};
pub use picker::{Field, fields_for, index_of};

use std::time::Duration;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::bench::catalog::CATALOG;
use crate::bench::plan::test_name::TestName;
use crate::event::{Cmd, FileTarget, JobMsg, Msg, TaskError};
use crate::model::BlockDevice;
pub use changes::{CacheSwitch, Change, Changes, SchedulerChange, SessionChanges};
pub use devices::{Devices, DriveState};
use dialogs::Intent;
pub use dialogs::drive_cache::DriveCache as DriveCacheDialog;
pub use dialogs::{Overlay, Place};
use keys::Action;
pub use live::{CHART_WINDOW, LIVE_HISTORY, LiveRun, LiveStats};
use picker::Values;
pub use records::{PhaseFigures, Results, RunRecord, Stat};
pub use screens::flush::Phase as FlushPhase;
pub use screens::scan::Phase as ScanPhase;
pub use screens::triage::Phase as TriagePhase;
pub use screens::{Screen, ScreenDef, ScreenStates};
pub use setting_sweep::{SweepRun, SweepStage};

/// Where keys go on the test screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerFocus {
    Tests,
    Params,
}

/// Moves a row index one step in `dir`, within `0..=last`.
fn step(row: usize, dir: i32, last: usize) -> usize {
    if dir < 0 {
        row.saturating_sub(1)
    } else {
        (row + 1).min(last)
    }
}

/// Moves a scroll offset `by` rows in `dir`.
fn scroll(at: u16, dir: i32, by: u16) -> u16 {
    if dir < 0 {
        at.saturating_sub(by)
    } else {
        at.saturating_add(by)
    }
}

/// The whole state of the interactive program.
#[derive(Debug, Clone, PartialEq)]
pub struct App {
    pub now: Duration,
    pub screen: Screen,
    pub overlay: Option<Overlay>,
    /// The device list and the drives' own state.
    pub devices: Devices,
    pub picker_test: usize,
    pub picker_field: usize,
    pub picker_focus: PickerFocus,
    pub values: Values,
    /// The run on the Run screen (live, or the last one, finished).
    pub run: Option<LiveRun>,
    /// Every run of the session, and what Results and Compare selected.
    pub results: Results,
    /// Settings the session switched (scheduler, drive cache).
    pub changes: SessionChanges,
    /// The sweep in progress, or the last one.
    pub sweep: Option<SweepRun>,
    /// The health view's drive and scroll.
    pub health: health::HealthView,
    /// A short message for the status line and when it was set.
    pub status: Option<(String, Duration)>,
    /// The screen shown when the update that set the status ended; elsewhere, or once a run
    /// starts, the status is gone.
    status_on: Option<Screen>,
    pub is_root: bool,
    /// Why nothing may be switched: the devices come from a captured tree (`--root TREE`).
    pub captured_root: Option<String>,
    /// Only glyphs the Linux console's fonts have (TERM=linux).
    pub console: bool,
    /// The run screen's right chart shows the drive temperature instead of IOPS.
    pub show_temperature: bool,
    pub quitting: bool,
    /// The session ends by Ctrl-C: the exit status is 130, as a shell reports an interrupt.
    pub interrupted: bool,
    /// Where `e` writes its files (`report::export::export_dir`); the dialog names it.
    pub export_dir: std::path::PathBuf,
    /// Chosen with `f` on Devices: the Test screen's runs go there until another device is
    /// chosen.
    pub file_target: Option<FileTarget>,
    /// Marked devices and the runs on several devices at once.
    pub several: several::Several,
    /// The state of the component screens (`screens`).
    pub screens: ScreenStates,
}

impl App {
    pub fn new(is_root: bool, console: bool) -> Self {
        App {
            now: Duration::ZERO,
            screen: Screen::Devices,
            overlay: None,
            devices: Devices::default(),
            picker_test: 0,
            picker_field: 0,
            picker_focus: PickerFocus::Tests,
            values: Values::new(),
            run: None,
            results: Results::default(),
            changes: SessionChanges::default(),
            sweep: None,
            health: health::HealthView::default(),
            status: None,
            status_on: None,
            is_root,
            captured_root: None,
            console,
            show_temperature: false,
            quitting: false,
            interrupted: false,
            export_dir: crate::report::export::export_dir(std::path::Path::new(
                crate::history::DEFAULT_HISTORY_DIR,
            )),
            file_target: None,
            several: several::Several::default(),
            screens: ScreenStates::default(),
        }
    }

    /// The devices the list shows.
    pub fn visible_devices(&self) -> Vec<&BlockDevice> {
        self.devices.visible()
    }

    pub fn selected_device(&self) -> Option<&BlockDevice> {
        self.devices.selected()
    }

    pub fn picker_test(&self) -> TestName {
        CATALOG[self.picker_test.min(CATALOG.len() - 1)].name
    }

    /// Records with results that were not exported (lost on quitting).
    pub fn unsaved(&self) -> impl Iterator<Item = usize> + '_ {
        self.results.unsaved()
    }

    /// The two records the Compare screen shows: the marked ones, else the last two.
    pub fn comparison(&self) -> Option<(usize, usize)> {
        self.results.comparison()
    }

    /// Why `o`/`n` cannot switch `device`'s drive cache, as the drive was read.
    fn drive_cache_switch_unavailable(&self, device: &str) -> Option<String> {
        match self.devices.drives.get(device)?.cache.as_ref()? {
            Ok(c) => c.switch_unavailable(),
            Err(_) => None,
        }
    }

    fn info(&mut self, text: impl Into<String>) {
        self.status = Some((text.into(), self.now));
        // Its screen is settled when the update ends (`settle_status`).
        self.status_on = None;
    }

    /// Would the key bound to `action` do something now, not just say why not? The status
    /// line lists only these.
    pub fn key_works_now(&self, action: Action) -> bool {
        let def = self.screen.def();
        if def.keys.iter().any(|b| b.action == action) {
            return (def.works_now)(self, action);
        }
        self.works_anywhere(action)
    }

    /// Whether a key that works on several screens does something now (a screen's own
    /// `works_now` may fall back to it).
    pub(super) fn works_anywhere(&self, action: Action) -> bool {
        let any_run = self.results.latest().is_some();
        match action {
            Action::Stop => self.running(),
            Action::Rerun => !self.running() && any_run,
            Action::Compare => self.results.comparison().is_some(),
            Action::Before => self.results.before(self.results.row).is_some(),
            Action::Report | Action::Export => !self.results.records.is_empty(),
            _ => true,
        }
    }

    /// A run starts: what the status line said before is about another moment.
    fn clear_status(&mut self) {
        self.status = None;
        self.status_on = None;
    }

    /// A new message belongs to the screen now shown; another screen's message is gone for
    /// good.
    fn settle_status(&mut self) {
        if self.status.is_none() {
            self.status_on = None;
            return;
        }
        match self.status_on {
            None => self.status_on = Some(self.screen),
            Some(on) if on != self.screen => self.clear_status(),
            Some(_) => {}
        }
    }

    /// Something about the history worth a line (a job's too).
    pub(in crate::app) fn history_note(&mut self, text: String) {
        self.info(format!("history: {text}"));
    }

    fn error(&mut self, text: impl Into<String>) {
        self.overlay = Some(Overlay::Error(text.into()));
    }

    /// `cmd` with the identity of the device it acts on, as the admin chose it from the
    /// inventory on the screen. The executor refuses the action if the name now holds another
    /// device. Commands already stamped, or on no device, are left as they are.
    pub fn stamp(&self, cmd: Cmd) -> Cmd {
        let inv = self.devices.inventory.as_ref();
        let chosen_of = |name: &str| self.devices.chosen(name);
        let by_path = |target: &std::path::Path| {
            let inv = inv?;
            let name = inv.devices.iter().find_map(|d| {
                if d.path == target {
                    return Some(d.name.clone());
                }
                d.partitions
                    .iter()
                    .find(|p| p.path == target)
                    .map(|p| p.name.clone())
            })?;
            inv.chosen(&name)
        };
        let stamp_run = |mut request: crate::bench::exec::session::RunRequest| {
            if request.device.is_none() {
                request.device = by_path(&request.target);
            }
            request
        };
        match cmd {
            Cmd::SetScheduler {
                device,
                name,
                chosen: None,
            } => Cmd::SetScheduler {
                chosen: chosen_of(&device),
                device,
                name,
            },
            Cmd::SetDriveCache {
                device,
                enabled,
                chosen: None,
            } => Cmd::SetDriveCache {
                chosen: chosen_of(&device),
                device,
                enabled,
            },
            Cmd::StartSelfTest {
                device,
                kind,
                chosen: None,
            } => Cmd::StartSelfTest {
                chosen: chosen_of(&device),
                device,
                kind,
            },
            Cmd::PlanPersist {
                device,
                scheduler,
                class,
                chosen: None,
            } => Cmd::PlanPersist {
                chosen: chosen_of(&device),
                device,
                scheduler,
                class,
            },
            Cmd::StartJob(mut order) => {
                order.stamp(&chosen_of);
                Cmd::StartJob(order)
            }
            Cmd::StartRun(request) => Cmd::StartRun(Box::new(stamp_run(*request))),
            Cmd::StartSeveral(targets) => Cmd::StartSeveral(
                targets
                    .into_iter()
                    .map(|(i, request)| (i, stamp_run(request)))
                    .collect(),
            ),
            other => other,
        }
    }

    /// The one transition function.
    pub fn update(&mut self, msg: Msg) -> Vec<Cmd> {
        let was_on = self.screen;
        let mut cmds = self.transition(msg);
        // However the app left a screen, that screen ends what it must (a scan stops).
        if self.screen != was_on {
            let mut left = (was_on.def().leave)(self);
            left.append(&mut cmds);
            cmds = left;
        }
        self.settle_status();
        cmds
    }

    fn transition(&mut self, msg: Msg) -> Vec<Cmd> {
        match msg {
            Msg::Key(k) => self.key(k),
            Msg::Resize => Vec::new(),
            Msg::Tick(now) => self.tick(now),
            Msg::Inventory(result) => self.inventory_arrived(result),
            Msg::DriveStatus {
                device,
                cache,
                health,
            } => {
                self.devices.drive_status(device, cache, health);
                Vec::new()
            }
            Msg::DriveLogs { device, result } => self.drive_logs(device, result),
            Msg::SelfTestStarted {
                device,
                kind,
                result,
            } => self.self_test_started(device, kind, result),
            Msg::SelfTestStatus { device, result } => self.self_test_status(device, result),
            Msg::DriveCacheSet { device, result } => self.drive_cache_set(device, result),
            Msg::SchedulerSet { device, result } => self.scheduler_set(device, result),
            Msg::Orphans(lines) => self.show_orphans(lines),
            Msg::Restored(lines) => self.restored(lines),
            Msg::FileTarget(result) => self.file_target_checked(result),
            Msg::Temperature {
                device,
                at,
                celsius,
            } => {
                if let Some(run) = &mut self.run
                    && run.device == device
                {
                    run.temperature(at, celsius);
                }
                Vec::new()
            }
            Msg::RunStarted {
                target,
                plan,
                notes,
            } => {
                self.run_started(*target, *plan, notes);
                Vec::new()
            }
            Msg::RunRefused(e) => {
                self.run_refused(e);
                Vec::new()
            }
            Msg::ThreadPanicked(what) => self.thread_panicked(what),
            Msg::LaidOut(bytes) => {
                if let Some(run) = self.run.as_mut().filter(|r| r.starting) {
                    run.laid_out = bytes;
                }
                Vec::new()
            }
            Msg::Run(ev) => {
                if let Some(run) = &mut self.run {
                    run.event(*ev, self.now);
                }
                Vec::new()
            }
            Msg::RunFinished(result) => self.run_finished(*result),
            Msg::Several(m) => self.several_msg(m),
            Msg::Job(m) => self.job_msg(m),
            Msg::RecordDisk { record, disk } => {
                self.results.identified(record, disk);
                Vec::new()
            }
            Msg::PastRuns(entries) => self.past_runs(entries),
            Msg::HistoryNote(text) => {
                self.history_note(text);
                Vec::new()
            }
            Msg::HistoryRecorded { record, runs } => {
                self.results.recorded_in_history(record, runs);
                Vec::new()
            }
            Msg::PersistPlanned {
                device,
                scheduler,
                class,
                result,
            } => {
                self.persist_planned(device, scheduler, class, result);
                Vec::new()
            }
            Msg::Persisted(result) => {
                self.persisted(result);
                Vec::new()
            }
            Msg::Exported(result) => self.export_done(result),
        }
    }

    /// The clock: a status line older than 8 s goes, self-tests are polled, and the inventory
    /// is read again when due, never during a run.
    fn tick(&mut self, now: Duration) -> Vec<Cmd> {
        self.now = now;
        if let Some((_, at)) = &self.status
            && now.saturating_sub(*at) > Duration::from_secs(8)
        {
            self.status = None;
        }
        let mut cmds = self.poll_self_tests();
        if !self.running() && self.devices.refresh_due(now) {
            cmds.push(Cmd::RefreshInventory);
        }
        cmds
    }

    /// The changes a killed or crashed session left, in a dialog when there are any.
    fn show_orphans(&mut self, lines: Vec<String>) -> Vec<Cmd> {
        if !lines.is_empty() {
            self.overlay = Some(Overlay::Orphans(dialogs::orphans::Orphans { lines }));
        }
        Vec::new()
    }

    /// The orphans are put back: say how, and read the devices and drives again.
    fn restored(&mut self, lines: Vec<String>) -> Vec<Cmd> {
        self.overlay = Some(Overlay::Message(dialogs::message::Message {
            title: "Restored".into(),
            lines,
        }));
        let mut cmds = vec![Cmd::RefreshInventory];
        cmds.extend(self.devices.read_all_drives());
        cmds
    }

    /// The file system for a file target: its dialog, or why there is no file test.
    fn file_target_checked(&mut self, result: Result<Box<FileTarget>, TaskError>) -> Vec<Cmd> {
        match result {
            Ok(ft) => self.overlay = Some(Overlay::FileTarget(ft)),
            Err(e) => self.error(format!("no file test: {e}")),
        }
        Vec::new()
    }

    /// Another thread panicked: a bug, said in an error dialog; the session goes on.
    fn thread_panicked(&mut self, what: String) -> Vec<Cmd> {
        self.error(format!(
            "internal error (a bug in disktriage): {what}. The session goes on, and \
             what it changed is still put back when you quit; the message is printed \
             again then."
        ));
        Vec::new()
    }

    /// The job's screen takes its messages (`ScreenDef::job`).
    fn job_msg(&mut self, m: JobMsg) -> Vec<Cmd> {
        let hook = Screen::REGISTERED
            .iter()
            .find_map(|s| s.def().job.filter(|h| h.name == m.job()));
        match hook {
            Some(hook) => (hook.on_msg)(self, m),
            None => Vec::new(),
        }
    }

    fn key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(k.code, KeyCode::Char('c')) {
            self.quitting = true;
            self.interrupted = true;
            return vec![Cmd::Quit];
        }
        if let Some(overlay) = self.overlay.take() {
            let (next, intent) = overlay.key(k);
            self.overlay = next;
            return intent.map_or_else(Vec::new, |i| self.follow(i));
        }
        match keys::binding_for(self.screen, self.picker_focus, k.code) {
            Some(b) => self.act(b.action, k.code),
            None => Vec::new(),
        }
    }

    /// Carries out a key of `keys::BINDINGS`: keys of every screen here, the rest in their
    /// screen's module.
    fn act(&mut self, action: Action, code: KeyCode) -> Vec<Cmd> {
        let dir = keys::direction(code);
        // Under a captured tree, keys that switch, write a boot rule, or start a self-test or
        // the flush check say why and do nothing.
        if let Some(why) = &self.captured_root
            && matches!(
                action,
                Action::Scheduler
                    | Action::DriveCache
                    | Action::Persist
                    | Action::Sweep
                    | Action::SelfTestShort
                    | Action::SelfTestLong
                    | Action::SelfTestAbort
                    | Action::FlushCheck
            )
        {
            self.error(why.clone());
            return Vec::new();
        }
        match action {
            Action::Help => self.overlay = Some(Overlay::Help(dialogs::help::Help { scroll: 0 })),
            Action::Quit => {
                if self.running() {
                    self.overlay = Some(Overlay::QuitConfirm);
                } else if self.unsaved().next().is_some() {
                    self.overlay = Some(Overlay::QuitDiscard);
                } else {
                    self.quitting = true;
                    return vec![Cmd::Quit];
                }
            }
            Action::GoTo => {
                if let KeyCode::Char(c @ '1'..='5') = code {
                    return self.go_to(Screen::ALL[(c as usize) - ('1' as usize)]);
                }
            }
            Action::NextScreen => {
                let n = Screen::ALL.len();
                let i = Screen::ALL
                    .iter()
                    .position(|s| *s == self.screen)
                    .unwrap_or(0);
                let step = if dir < 0 { n - 1 } else { 1 };
                return self.go_to(Screen::ALL[(i + step) % n]);
            }
            Action::Scheduler => return self.open_scheduler(),
            Action::DriveCache => return self.open_drive_cache(),
            Action::Persist => return self.open_persist(),
            Action::Retest => return self.rerun(None),
            Action::Rerun if self.screen == Screen::Run && self.several_run().is_some() => {
                return self.rerun_several();
            }
            Action::Rerun if self.screen == Screen::Results => {
                if self.results.records.is_empty() {
                    return Vec::new();
                }
                return self.rerun(Some(self.results.row));
            }
            Action::Rerun => return self.rerun(None),
            Action::Compare => return self.compare_latest(),
            Action::Before => return self.compare_before(),
            Action::Sweep if self.screen == Screen::Tests => {
                let kind = match code {
                    KeyCode::Char('W') => {
                        crate::bench::analysis::setting_sweep::SweepKind::WriteCache
                    }
                    _ => crate::bench::analysis::setting_sweep::SweepKind::Scheduler,
                };
                return self.start_sweep(kind);
            }
            Action::SweepResult => self.show_sweep(),
            _ => return (self.screen.def().act)(self, action, code),
        }
        Vec::new()
    }

    /// Goes to `screen` from a number key or Tab (`update` runs `ScreenDef::leave`).
    fn go_to(&mut self, screen: Screen) -> Vec<Cmd> {
        self.screen = screen;
        Vec::new()
    }

    /// Carries out what a dialog's key asked for.
    fn follow(&mut self, intent: Intent) -> Vec<Cmd> {
        match intent {
            Intent::Cmd(cmd) => {
                if let Cmd::SetDriveCache { device, .. } = &cmd
                    && let Some(why) = self.drive_cache_switch_unavailable(device)
                {
                    self.error(why);
                    return Vec::new();
                }
                vec![cmd]
            }
            Intent::Info(text) => {
                self.info(text);
                Vec::new()
            }
            Intent::Launch {
                request,
                repeats,
                sweep: Some(kind),
            } => self.begin_sweep(kind, *request, repeats),
            Intent::Launch {
                request,
                repeats,
                sweep: None,
            } => self.launch(*request, repeats),
            Intent::LaunchSeveral(typed) => self.confirm_several(&typed),
            Intent::LaunchFlush {
                device,
                path,
                confirmation,
            } => self.start_flushcheck(device, path, confirmation),
            Intent::StartJob { start, order } => (start.0)(self, order),
            Intent::PersistSweepWinner => self.persist_sweep_winner(),
            Intent::RetestOn { device, record } => self.retest_on(&device, record),
            Intent::RerunWhereItRan(record) => {
                // The switch is not what this retest is about.
                self.changes.last_switch = None;
                self.rerun(Some(record))
            }
            Intent::Keep(setting, device) => self.keep(setting, device),
            Intent::Export { record, format } => self
                .results
                .export(record, format, &self.export_dir)
                .into_iter()
                .collect(),
            Intent::ExportFirst => {
                let first = self.unsaved().next();
                if let Some(i) = first {
                    self.screen = Screen::Results;
                    self.results.row = i;
                    self.overlay = Some(Overlay::Export(dialogs::export::Export { record: i }));
                }
                Vec::new()
            }
            Intent::SetValue { field, text } => {
                self.set_typed(field, text);
                Vec::new()
            }
            Intent::UseFileTarget(ft) => {
                self.info(format!(
                    "tests now run on a new file on {}",
                    ft.mount.display()
                ));
                self.file_target = Some(*ft);
                self.screen = Screen::Tests;
                self.picker_focus = PickerFocus::Tests;
                Vec::new()
            }
            Intent::Quit => {
                self.quitting = true;
                vec![Cmd::Quit]
            }
        }
    }
}
