//! A sweep started from the Test screen (`S`/`W`): the chosen test on the selected device under
//! each I/O scheduler, or with the drive's write cache on and off, repeats interleaved
//! (`bench::analysis::setting_sweep` has the order, the figures and the winner).
//!
//! The sweep is the CLI's job (`flow::sweep_job`: the claim, the switches, putting back),
//! started by `Cmd::StartJob` and stopped by its name. The app shows what it says: the
//! machine (`flow::setting_sweep`), each run live and filed in Results (one record per value),
//! and at the end the result view (`Overlay::Sweep`; `v` on Results opens it again).

use super::Overlay;
use super::records::RunRecord;
use super::{App, Screen};
use crate::bench::analysis::setting_sweep::{DEFAULT_REPEATS, SweepKind};
use crate::bench::exec::session::RunRequest;
use crate::bench::plan::test_name::Writes;
use crate::bench::results::outcome::RunReport;
use crate::event::Cmd;
use crate::flow::job::{JobMsg, JobOrder};
pub use crate::flow::setting_sweep::SweepStage;
use crate::flow::setting_sweep::{self, SettingSweep};
use crate::flow::sweep_job::{self, SweepMsg, SweepOrder};

/// A sweep in progress, or the last one: the job's state machine (`flow::setting_sweep`, read
/// through `Deref`), the test, and where its runs are filed.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRun {
    pub sweep: SettingSweep,
    /// The test as it runs under every value (with its confirmation, once given).
    pub request: RunRequest,
    /// Each value's record in Results, from its first run on.
    pub records: Vec<Option<usize>>,
}

impl std::ops::Deref for SweepRun {
    type Target = SettingSweep;

    fn deref(&self) -> &SettingSweep {
        &self.sweep
    }
}

impl std::ops::DerefMut for SweepRun {
    fn deref_mut(&mut self) -> &mut SettingSweep {
        &mut self.sweep
    }
}

impl App {
    /// A sweep is switching, running or putting back.
    pub fn sweeping(&self) -> bool {
        self.sweep.as_ref().is_some_and(|s| s.active())
    }

    /// The values a sweep of `device` goes through, the one at start first; or why it cannot
    /// be swept, in the CLI's words.
    fn sweep_values(&self, kind: SweepKind, device: &str) -> Result<Vec<String>, String> {
        match kind {
            SweepKind::Scheduler => {
                let set = self
                    .devices
                    .find(device)
                    .and_then(|d| d.scheduler.clone())
                    .unwrap_or_default();
                setting_sweep::scheduler_values(device, &set, &[]).map(|(values, _)| values)
            }
            SweepKind::WriteCache => match self
                .devices
                .drives
                .get(device)
                .and_then(|d| d.cache.as_ref())
            {
                Some(status) => setting_sweep::cache_values(
                    device,
                    status.as_ref().map_err(ToString::to_string),
                ),
                // Loop, zram, md and dm have no drive behind them: never read.
                None => Err(setting_sweep::cache_refusal(
                    device,
                    &match self.devices.find(device).map(|d| d.transport) {
                        Some(t) if t.is_virtual() => format!("not supported on {t}"),
                        _ => "its state is not read yet; w shows it, then try again".to_string(),
                    },
                )),
            },
        }
    }

    /// `S` / `W` on the Test screen: sweep the chosen test on the selected device.
    pub(super) fn start_sweep(&mut self, kind: SweepKind) -> Vec<Cmd> {
        if self.running() {
            self.error("a test is running (x stops it)");
            return Vec::new();
        }
        let Some(dev) = self.selected_device().cloned() else {
            self.error(self.no_selection());
            return Vec::new();
        };
        if let Err(e) = self.sweep_values(kind, &dev.name) {
            self.error(e);
            return Vec::new();
        }
        let test = self.picker_test();
        let request = RunRequest {
            target: dev.path.clone(),
            test,
            params: self.values.params(test),
            confirmation: None,
            temperature: self.values.temperature(),
            // Every switch and run is checked against it (see `App::stamp`).
            device: Some(dev.chosen()),
        };
        // Repeats from the Test screen; a single one cannot tell a winner from the noise.
        let repeats = match self.values.repeats {
            0 | 1 => DEFAULT_REPEATS,
            n => n,
        };
        if test.writes_with(&request.params) == Writes::Always {
            return self.confirm_then(request, repeats, Some(kind), dev.name);
        }
        self.begin_sweep(kind, request, repeats)
    }

    /// Starts a sweep whose request is confirmed.
    pub(super) fn begin_sweep(
        &mut self,
        kind: SweepKind,
        request: RunRequest,
        repeats: u32,
    ) -> Vec<Cmd> {
        let device = self
            .devices
            .inventory
            .as_ref()
            .and_then(|inv| inv.devices.iter().find(|d| d.path == request.target))
            .map(|d| d.name.clone())
            .unwrap_or_default();
        let settings = match self.sweep_values(kind, &device) {
            Ok(s) => s,
            Err(e) => {
                self.error(e);
                return Vec::new();
            }
        };
        self.changes.last_switch = None;
        self.changes.last_switch_gone = None;
        self.clear_status();
        let records = vec![None; settings.len()];
        let order = SweepOrder {
            kind,
            device: device.clone(),
            settings: settings.clone(),
            request: request.clone(),
            repeats,
        };
        // Shown as waiting for its claim until the job says where it is.
        let sweep = SettingSweep::new(kind, device, settings, vec![request.test], repeats);
        self.sweep = Some(SweepRun {
            sweep,
            request,
            records,
        });
        vec![Cmd::StartJob(JobOrder::new(order))]
    }

    /// What the sweep job says (`ScreenDef::job` of the Run screen).
    pub(super) fn sweep_msg(&mut self, msg: JobMsg) -> Vec<Cmd> {
        let Ok(msg) = msg.take::<SweepMsg>() else {
            return Vec::new();
        };
        match msg {
            SweepMsg::State(state) => return self.sweep_state(*state),
            SweepMsg::Step { .. } => self.sweep_run_step(),
            SweepMsg::Started {
                plan,
                target,
                notes,
            } => self.run_started(*target, *plan, notes),
            SweepMsg::LaidOut(bytes) => {
                if let Some(run) = self.run.as_mut().filter(|r| r.starting) {
                    run.laid_out = bytes;
                }
            }
            SweepMsg::Event(ev) => {
                if let Some(run) = &mut self.run {
                    run.event(ev, self.now);
                }
            }
            SweepMsg::Finished(report) => return self.sweep_run_finished(*report),
            SweepMsg::RunFailed(e) => self.sweep_run_failed(e),
            // Nothing ran or was switched: the refusal alone.
            SweepMsg::Refused(e) => {
                if let Some(sw) = &mut self.sweep {
                    sw.sweep.claimed(Err(e));
                    if let Some(e) = sw.error.clone() {
                        self.error(e);
                    }
                }
            }
        }
        Vec::new()
    }

    /// The job's machine after a move. A switch is read back into the device list; at the
    /// end the result view opens.
    fn sweep_state(&mut self, state: SettingSweep) -> Vec<Cmd> {
        let Some(sw) = &mut self.sweep else {
            return Vec::new();
        };
        let was = std::mem::replace(&mut sw.sweep, state);
        // A stop asked here and not seen by the job yet is still asked.
        sw.sweep.stopping |= was.stopping && sw.active();
        let mut cmds = Vec::new();
        if sw.current != was.current {
            let (device, value) = (sw.device.clone(), sw.settings[sw.current].clone());
            let back = sw.current == 0;
            match sw.kind {
                SweepKind::Scheduler => {
                    self.devices.scheduler_read_back(&device, &value);
                    self.info(if back {
                        format!("{device}: scheduler back to {value}, as found")
                    } else {
                        format!("{device}: scheduler {value} for the sweep")
                    });
                }
                SweepKind::WriteCache => cmds.push(Cmd::ReadDriveStatus {
                    device,
                    health: false,
                }),
            }
        }
        let Some(sw) = &self.sweep else { return cmds };
        // A run's end moves the sweep on a step: its error, if any, is the run's.
        if sw.at != was.at
            && let Some(run) = self.run.as_mut().filter(|r| r.finished)
        {
            run.error = sw.error.clone();
        }
        if was.active() && !sw.active() {
            cmds.extend(self.sweep_done());
        }
        cmds
    }

    /// The run of the current step begins: filed under its value's record, shown live.
    fn sweep_run_step(&mut self) {
        let cache_now = self
            .sweep
            .as_ref()
            .and_then(|sw| self.drive_cache_word(&sw.device));
        let Some(sw) = &mut self.sweep else {
            return;
        };
        let Some(step) = sw.steps.get(sw.at).copied() else {
            return;
        };
        let value = sw.settings[step.setting].clone();
        let drive_cache = match sw.kind {
            SweepKind::WriteCache => crate::model::cache::recorded_drive_cache(Some(&value)),
            SweepKind::Scheduler => cache_now,
        };
        let record = match sw.records[step.setting] {
            Some(r) => r,
            None => {
                let r = self.results.records.len();
                let mut rec = RunRecord::new(
                    self.results.next_id(false),
                    sw.device.clone(),
                    sw.request.clone(),
                    sw.repeats,
                );
                rec.drive_cache = drive_cache.clone();
                self.results.records.push(rec);
                sw.records[step.setting] = Some(r);
                r
            }
        };
        let mut run =
            super::LiveRun::new(record, sw.device.clone(), &sw.request, sw.repeats, self.now);
        run.repeat = step.repeat + 1;
        run.drive_cache = drive_cache;
        run.new_file = super::live::creates_test_file(self.file_target.as_ref(), &sw.request);
        self.run = Some(run);
        self.screen = Screen::Run;
    }

    /// The record of the step in progress, if filed.
    fn sweep_record(&self) -> Option<usize> {
        let sw = self.sweep.as_ref()?;
        sw.records[sw.steps.get(sw.at)?.setting]
    }

    /// A run of the sweep ended with its report: filed, and sent to the history (as the
    /// CLI's sweep does) unless stopped.
    fn sweep_run_finished(&mut self, report: RunReport) -> Vec<Cmd> {
        let mut history = Vec::new();
        if let Some((index, rec)) = self
            .sweep_record()
            .and_then(|r| Some((r, self.results.records.get_mut(r)?)))
        {
            if !report.outcome.stopped {
                history.push(Cmd::RecordHistory {
                    record: index,
                    runs: vec![report.clone()],
                    drive_cache: rec.drive_cache.clone(),
                });
            }
            if let Some(e) = report.error() {
                rec.error = Some(e);
            }
            rec.runs.push(report);
            rec.exported = false;
        }
        if let Some(run) = &mut self.run {
            run.finished = true;
        }
        history
    }

    /// A run of the sweep was refused or gave no report: the sweep ends and the value at
    /// start comes back.
    fn sweep_run_failed(&mut self, e: String) {
        if let Some(rec) = self
            .sweep_record()
            .and_then(|r| self.results.records.get_mut(r))
        {
            rec.error = Some(e.clone());
        }
        if let Some(run) = &mut self.run {
            run.starting = false;
            run.finished = true;
            run.error = Some(e);
        }
    }

    /// The sweep is over: the result view opens.
    fn sweep_done(&mut self) -> Vec<Cmd> {
        let Some(sw) = &mut self.sweep else {
            return Vec::new();
        };
        let last = sw.records.iter().flatten().max().copied();
        if let Some(r) = last {
            self.results.row = r;
        }
        self.overlay = Some(Overlay::Sweep(super::dialogs::sweep::Sweep { scroll: 0 }));
        vec![Cmd::RefreshInventory]
    }

    /// `x` during a sweep: the run stops, then the job puts the value at start back.
    pub(super) fn stop_sweep(&mut self) -> Vec<Cmd> {
        let Some(sw) = &mut self.sweep else {
            return Vec::new();
        };
        sw.stop();
        self.info("stopping the sweep: the value at start is put back");
        if let Some(run) = &mut self.run
            && run.is_active()
        {
            run.stopping = true;
        }
        vec![Cmd::StopJob(sweep_job::NAME)]
    }

    /// `v` on Results: the last sweep's result.
    pub(super) fn show_sweep(&mut self) {
        if self.sweep.is_some() {
            self.overlay = Some(Overlay::Sweep(super::dialogs::sweep::Sweep { scroll: 0 }));
        } else {
            self.error("no sweep yet: S (schedulers) or W (write cache) on the Test screen");
        }
    }
}
