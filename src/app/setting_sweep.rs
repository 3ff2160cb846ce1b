//! A sweep started from the Test screen (`S`/`W`): the chosen test on the selected device under
//! each I/O scheduler it offers, or with the drive's write cache on and off, repeats
//! interleaved (`bench::analysis::setting_sweep` has the order, the figures and the winner,
//! the same as `disktriage run --sweep-sched` prints).
//!
//! The steps, refusals and sentences are the state machine `flow::setting_sweep`, the same one
//! `disktriage run --sweep-*` drives. The app drives it one message at a time, through the
//! loop's ordinary commands (the UI thread never waits for a switch or a run): first claim
//! the device's settings (`Cmd::ClaimSweep`, the same claim `disktriage run --sweep-*` takes:
//! a sweep elsewhere refuses this one, and this one refuses the others until it ends), switch the
//! setting (`Cmd::SetScheduler` / `Cmd::SetDriveCache`: journaled, put back on exit like any
//! switch), run (`Cmd::StartRun`, shown live on the Run screen and filed in Results, one
//! record per value), next. At the end, or after `x` or a failure, the value found at start is
//! set back, then the result view opens (`Overlay::Sweep`, `v` on Results opens it again).
//! Quitting during a sweep puts the setting back as quitting after any switch does.

use super::Overlay;
use super::records::RunRecord;
use super::{App, Screen};
use crate::bench::analysis::setting_sweep::{DEFAULT_REPEATS, SweepKind};
use crate::bench::exec::session::RunRequest;
use crate::bench::plan::test_name::Writes;
use crate::bench::results::outcome::RunReport;
use crate::changes::CacheChange;
use crate::event::{Cmd, TaskError};
pub use crate::flow::setting_sweep::SweepStage;
use crate::flow::setting_sweep::{self, Next, RunEnd, SettingSweep};

/// A sweep in progress, or the last one, finished: the state machine both faces drive
/// (`flow::setting_sweep`, read through `Deref`), the test as it runs under every value, and
/// where its runs are filed.
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
    /// be swept (the same words as `disktriage run --sweep-*`).
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
                // Loop, zram, md and dm have no drive behind them: never read, as in the
                // device list ("not supported on loop", as `disktriage cache` says).
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
            // The device as chosen when the sweep starts: every switch and every run of the
            // sweep is refused on another device that takes its name meanwhile.
            device: Some(dev.chosen()),
        };
        // Repeats from the Test screen; a single one cannot tell a winner from the noise.
        let repeats = match self.values.repeats {
            0 | 1 => DEFAULT_REPEATS,
            n => n,
        };
        if test.writes_with(&request.params) == Writes::Always {
            // Through the confirmation (and the in-use check) every write test takes.
            return self.confirm_then(request, repeats, Some(kind), dev.name);
        }
        self.begin_sweep(kind, request, repeats)
    }

    /// Starts a sweep whose request is confirmed: its first run, under the value at start.
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
        let sweep = SettingSweep::new(kind, device.clone(), settings, vec![request.test], repeats);
        let what = sweep.claim_label();
        self.sweep = Some(SweepRun {
            sweep,
            request,
            records,
        });
        vec![Cmd::ClaimSweep { device, what }]
    }

    /// The loop's answer to the claim: the first run, under the value at start; or, when
    /// another disktriage holds the device, the refusal and nothing run or switched.
    pub(super) fn sweep_claimed(
        &mut self,
        device: String,
        result: Result<(), TaskError>,
    ) -> Vec<Cmd> {
        let Some(sw) = &mut self.sweep else {
            return Vec::new();
        };
        if sw.device != device {
            return Vec::new();
        }
        let next = sw.sweep.claimed(result.map_err(|e| e.to_string()));
        self.sweep_act(next)
    }

    /// Does what the sweep's state machine says next, through the loop's commands.
    fn sweep_act(&mut self, next: Next) -> Vec<Cmd> {
        let Some(sw) = &self.sweep else {
            return Vec::new();
        };
        match next {
            Next::Switch(i) => vec![set_cmd(sw, i)],
            Next::PutBack => vec![set_cmd(sw, 0)],
            Next::Run(_) => self.sweep_run_step(),
            Next::Done => self.sweep_done(),
            // Nothing ran or was switched: the refusal alone.
            Next::Refused => {
                if let Some(e) = sw.error.clone() {
                    self.error(e);
                }
                Vec::new()
            }
            Next::Wait => Vec::new(),
        }
    }

    /// Starts the run of the current step, filed under its value's record.
    fn sweep_run_step(&mut self) -> Vec<Cmd> {
        let cache_now = self
            .sweep
            .as_ref()
            .and_then(|sw| self.drive_cache_word(&sw.device));
        let Some(sw) = &mut self.sweep else {
            return Vec::new();
        };
        let Some(step) = sw.steps.get(sw.at).copied() else {
            return Vec::new();
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
        vec![Cmd::StartRun(Box::new(sw.request.clone()))]
    }

    /// A run of the sweep ended: file it, then switch to the next value, run again, or end.
    pub(super) fn sweep_run_finished(&mut self, result: Result<RunReport, TaskError>) -> Vec<Cmd> {
        let Some(sw) = &mut self.sweep else {
            return Vec::new();
        };
        let step = sw.steps.get(sw.at).copied();
        let record = step.and_then(|s| sw.records[s.setting]);
        let end = match &result {
            Ok(report) => RunEnd::of_report(sw.request.test, report),
            Err(e) => RunEnd::failed(e.to_string()),
        };
        // Each finished run of a sweep goes to the history, as the CLI's sweep does.
        let mut history = None;
        if let Ok(report) = result {
            let stopped = report.outcome.stopped;
            let error = report.error();
            if let Some((index, rec)) =
                record.and_then(|r| Some((r, self.results.records.get_mut(r)?)))
            {
                if !stopped {
                    history = Some(Cmd::RecordHistory {
                        record: index,
                        runs: vec![report.clone()],
                        drive_cache: rec.drive_cache.clone(),
                    });
                }
                rec.runs.push(report);
                rec.exported = false;
                if let Some(e) = error {
                    rec.error = Some(e);
                }
            }
        }
        let next = sw.sweep.ran(end);
        if let Some(run) = &mut self.run {
            run.finished = true;
            run.error = sw.error.clone();
        }
        let mut cmds: Vec<Cmd> = history.into_iter().collect();
        cmds.extend(self.sweep_act(next));
        cmds
    }

    /// A run of the sweep was refused before it started (the device became busy, its
    /// parameters do not fit): the sweep ends there and the value at start comes back.
    pub(super) fn sweep_run_refused(&mut self, e: String) -> Vec<Cmd> {
        let Some(sw) = &mut self.sweep else {
            return Vec::new();
        };
        if let Some(rec) = sw
            .steps
            .get(sw.at)
            .and_then(|s| sw.records[s.setting])
            .and_then(|r| self.results.records.get_mut(r))
        {
            rec.error = Some(e.clone());
        }
        if let Some(run) = &mut self.run {
            run.starting = false;
            run.finished = true;
            run.error = Some(e.clone());
        }
        let next = sw.sweep.refused(e);
        self.sweep_act(next)
    }

    /// The sweep is over (its state machine says `Done`): the result view opens.
    fn sweep_done(&mut self) -> Vec<Cmd> {
        let Some(sw) = &mut self.sweep else {
            return Vec::new();
        };
        let last = sw.records.iter().flatten().max().copied();
        if let Some(r) = last {
            self.results.row = r;
        }
        self.overlay = Some(Overlay::Sweep(super::dialogs::sweep::Sweep { scroll: 0 }));
        let mut cmds = vec![Cmd::RefreshInventory];
        // The setting is back: others may sweep or switch the device again. When it could
        // not be put back, the claim stays until the session puts it back on exit.
        if sw.restore_error.is_none() {
            cmds.push(Cmd::ReleaseSweep {
                device: sw.device.clone(),
            });
        }
        cmds
    }

    /// The loop's answer to a sweep's switch: the value the device reports now (`Ok`) or why
    /// the switch failed.
    fn sweep_switched(&mut self, reported: Result<String, String>) -> Vec<Cmd> {
        let Some(sw) = &mut self.sweep else {
            return Vec::new();
        };
        let next = sw.sweep.reported(reported);
        self.sweep_act(next)
    }

    /// `Msg::SchedulerSet` while a sweep waits for it: the usual bookkeeping, then the sweep.
    pub(super) fn sweep_scheduler_set(
        &mut self,
        device: String,
        result: Result<String, TaskError>,
    ) -> Vec<Cmd> {
        let reported = match result {
            Ok(active) => {
                self.scheduler_set(device.clone(), Ok(active.clone()));
                let restoring = self.sweep.as_ref().is_some_and(|s| s.restoring());
                self.info(if restoring {
                    format!("{device}: scheduler back to {active}, as found")
                } else {
                    format!("{device}: scheduler {active} for the sweep")
                });
                Ok(active)
            }
            Err(e) => Err(format!("cannot switch the scheduler of {device}: {e}")),
        };
        self.sweep_switched(reported)
    }

    /// `Msg::DriveCacheSet` while a sweep waits for it.
    pub(super) fn sweep_cache_set(
        &mut self,
        device: String,
        result: Result<Box<CacheChange>, TaskError>,
    ) -> Vec<Cmd> {
        let reported = match result {
            Ok(change) => {
                let now = crate::model::cache::cache_word(change.after.enabled).to_string();
                // The usual bookkeeping, without its error box: the sweep says what failed.
                if let (Some(was), Some(after)) = (change.before.enabled, change.after.enabled) {
                    self.changes.cache.switched(&device, Some(was), after);
                }
                self.changes.last_switch = Some(device.clone());
                Ok(now)
            }
            Err(e) => Err(format!("cannot switch the write cache of {device}: {e}")),
        };
        let mut cmds = self.sweep_switched(reported);
        cmds.push(Cmd::ReadDriveStatus {
            device,
            health: false,
        });
        cmds
    }

    /// Is this switch's answer one a sweep waits for?
    pub(super) fn sweep_waits_for_switch(&self, device: &str) -> bool {
        self.sweep
            .as_ref()
            .is_some_and(|s| s.waits_for_switch(device))
    }

    /// `x` during a sweep: the run in progress stops, and the sweep ends after it.
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
            return vec![Cmd::StopRun];
        }
        Vec::new()
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

/// The command that sets value `i` of the sweep.
fn set_cmd(sw: &SweepRun, i: usize) -> Cmd {
    let value = &sw.settings[i];
    match sw.kind {
        SweepKind::Scheduler => Cmd::SetScheduler {
            device: sw.device.clone(),
            name: value.clone(),
            chosen: sw.request.device.clone(),
        },
        SweepKind::WriteCache => Cmd::SetDriveCache {
            device: sw.device.clone(),
            enabled: value == crate::model::cache::on_off(true),
            chosen: sw.request.device.clone(),
        },
    }
}
