//! Settings this session changed on the devices (the I/O scheduler, the drive's own write
//! cache): one generic record of what each was and is, whether the admin keeps it, and the
//! handlers that open the switch dialogs and take the loop's answers.

use std::ops::Deref;

pub use super::dialogs::Setting;
use super::{App, Overlay, Screen};
use crate::changes::CacheChange;
use crate::event::{Cmd, TaskError};
use crate::persist::Persisted;

/// A setting this session changed on one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change<T> {
    pub device: String,
    /// What it was before the session touched it: put back on exit.
    pub original: T,
    pub current: T,
    /// Kept by the admin: not put back on exit.
    pub keep: bool,
}

/// A scheduler this session changed.
pub type SchedulerChange = Change<String>;
/// A drive write-cache switch this session made.
pub type CacheSwitch = Change<bool>;

/// The changes of one setting, one per device; reads as a slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changes<T>(Vec<Change<T>>);

impl<T> Default for Changes<T> {
    fn default() -> Self {
        Changes(Vec::new())
    }
}

impl<T> Deref for Changes<T> {
    type Target = [Change<T>];
    fn deref(&self) -> &[Change<T>] {
        &self.0
    }
}

impl<T: Clone + PartialEq> Changes<T> {
    /// Records that `device` now has `after`; `before` is what it had, if known. A kept choice
    /// becomes the new original (the journal puts it back on exit); back at the original, it
    /// is no change.
    pub fn switched(&mut self, device: &str, before: Option<T>, after: T) {
        match self.0.iter_mut().find(|c| c.device == device) {
            Some(c) if c.keep => {
                c.original = before.unwrap_or_else(|| c.current.clone());
                c.current = after;
                c.keep = false;
            }
            Some(c) => c.current = after,
            None => {
                if let Some(original) = before
                    && original != after
                {
                    self.0.push(Change {
                        device: device.to_string(),
                        original,
                        current: after,
                        keep: false,
                    });
                }
            }
        }
        self.0.retain(|c| c.keep || c.original != c.current);
    }

    /// Keeps a device's change after exit; the kept value, or `None` when nothing changed.
    pub fn keep(&mut self, device: &str) -> Option<T> {
        let c = self.0.iter_mut().find(|c| c.device == device)?;
        c.keep = true;
        Some(c.current.clone())
    }

    /// What exit puts the device back to, unless kept.
    pub fn restores_to(&self, device: &str) -> Option<&T> {
        self.0
            .iter()
            .find(|c| c.device == device && !c.keep)
            .map(|c| &c.original)
    }
}

/// Everything the session switched, and where it switched last.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionChanges {
    pub scheduler: Changes<String>,
    pub cache: Changes<bool>,
    /// The device whose scheduler or drive cache was switched last, until a run starts: `R`
    /// retests there.
    pub last_switch: Option<String>,
    /// The device switched last vanished: `R` refuses, naming it, until the next switch or
    /// run (rather than retest another device).
    pub last_switch_gone: Option<String>,
}

fn on_off(b: Option<bool>) -> &'static str {
    b.map_or("unknown", crate::model::cache::on_off)
}

impl App {
    /// The device the switch keys act on: the run's on run screens, else the selected one; or
    /// why there is none. A vanished device is refused, never replaced by another.
    fn focus_device(&self) -> Result<String, String> {
        let record_device = |r: &super::RunRecord| {
            if r.device_gone {
                Err(format!(
                    "{} is gone (the run was on it): nothing was switched",
                    r.device
                ))
            } else {
                Ok(r.device.clone())
            }
        };
        let selected = || {
            self.selected_device()
                .map(|d| d.name.clone())
                .ok_or_else(|| self.no_selection())
        };
        let from_run = || {
            let run = self.run.as_ref()?;
            Some(match self.results.records.get(run.record) {
                Some(r) => record_device(r),
                None => Ok(run.device.clone()),
            })
        };
        let from_record = || self.results.selected().map(record_device);
        match self.screen {
            Screen::Run => from_run().unwrap_or_else(selected),
            Screen::Results | Screen::Compare => {
                from_record().or_else(from_run).unwrap_or_else(selected)
            }
            _ => selected(),
        }
    }

    pub(super) fn open_scheduler(&mut self) -> Vec<Cmd> {
        let name = match self.focus_device() {
            Ok(name) => name,
            Err(why) => {
                self.error(why);
                return Vec::new();
            }
        };
        let dev = self.devices.find(&name);
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
        self.overlay = Some(Overlay::Scheduler(super::dialogs::scheduler::Scheduler {
            device: name,
            options: set.available,
            selected,
        }));
        Vec::new()
    }

    pub(super) fn open_drive_cache(&mut self) -> Vec<Cmd> {
        let name = match self.focus_device() {
            Ok(name) => name,
            Err(why) => {
                self.error(why);
                return Vec::new();
            }
        };
        if self.running() {
            self.error("switch the write cache between runs, not during one (x stops the run)");
            return Vec::new();
        }
        self.overlay = Some(Overlay::DriveCache(
            super::dialogs::drive_cache::DriveCache {
                device: name.clone(),
            },
        ));
        if self.devices.drives.contains_key(&name) {
            return Vec::new();
        }
        self.devices.drives.entry(name.clone()).or_default().reading = true;
        vec![Cmd::ReadDriveStatus {
            device: name,
            health: false,
        }]
    }

    /// `K` in a switch dialog: the change stays after exit.
    pub(super) fn keep(&mut self, setting: Setting, device: String) -> Vec<Cmd> {
        let kept = match setting {
            Setting::Scheduler => self
                .changes
                .scheduler
                .keep(&device)
                .map(|s| format!("scheduler {s}")),
            Setting::DriveCache => self
                .changes
                .cache
                .keep(&device)
                .map(|on| format!("the drive write cache {}", on_off(Some(on)))),
        };
        let Some(what) = kept else {
            self.info(format!("{device}: nothing changed to keep"));
            return Vec::new();
        };
        self.info(format!("{device}: keeping {what} after exit"));
        vec![match setting {
            Setting::Scheduler => Cmd::KeepScheduler { device },
            Setting::DriveCache => Cmd::KeepDriveCache { device },
        }]
    }

    /// "R retests, " when R has a session test to run again; a key that would only say
    /// "nothing to rerun" is not offered.
    fn retest_hint(&self) -> &'static str {
        if self.results.latest().is_some() {
            "R retests, "
        } else {
            ""
        }
    }

    pub(super) fn scheduler_set(
        &mut self,
        device: String,
        result: Result<String, TaskError>,
    ) -> Vec<Cmd> {
        let active = match result {
            Ok(active) => active,
            Err(e) => {
                self.error(format!("cannot switch the scheduler of {device}: {e}"));
                return Vec::new();
            }
        };
        let before = self
            .devices
            .find(&device)
            .and_then(|d| d.scheduler.as_ref()?.active.clone());
        self.changes
            .scheduler
            .switched(&device, before, active.clone());
        self.devices.scheduler_read_back(&device, &active);
        self.changes.last_switch = Some(device.clone());
        let restore = self
            .changes
            .scheduler
            .restores_to(&device)
            .map(|o| format!(" (back to {o} on exit)"))
            .unwrap_or_default();
        let retest = self.retest_hint();
        self.info(format!(
            "{device}: scheduler now {active}{restore}; {retest}P permanent"
        ));
        vec![Cmd::RefreshInventory]
    }

    /// `P`: plan the udev rule that sets the focused device's scheduler at every boot; the
    /// dialog shows it before anything is written.
    pub(super) fn open_persist(&mut self) -> Vec<Cmd> {
        let focused = match self.changes.last_switch.clone() {
            Some(device) => Ok(device),
            None => self.focus_device(),
        };
        let device = match focused {
            Ok(device) => device,
            Err(why) => {
                self.error(why);
                return Vec::new();
            }
        };
        let switched = self
            .changes
            .scheduler
            .iter()
            .find(|c| c.device == device)
            .map(|c| c.current.clone());
        let active = switched.or_else(|| {
            self.devices
                .find(&device)
                .and_then(|d| d.scheduler.as_ref()?.active.clone())
        });
        let Some(scheduler) = active else {
            self.error(format!(
                "{device} has no I/O scheduler to make permanent (s switches one)"
            ));
            return Vec::new();
        };
        vec![Cmd::PlanPersist {
            device,
            scheduler,
            class: false,
            chosen: None,
        }]
    }

    /// `P` on a scheduler sweep's result: the rule for its winner, as `P` after a switch. A
    /// cache sweep or one without a winner says why not.
    pub(super) fn persist_sweep_winner(&mut self) -> Vec<Cmd> {
        let Some(sw) = &self.sweep else {
            return Vec::new();
        };
        let result = sw.result();
        if result.kind != crate::bench::analysis::setting_sweep::SweepKind::Scheduler {
            self.error("only a scheduler can be made permanent by a udev rule");
            return Vec::new();
        }
        let winner = result
            .tests
            .first()
            .and_then(|t| t.verdict.winner())
            .map(str::to_string);
        let Some(scheduler) = winner else {
            self.error(format!(
                "no scheduler of {} was better beyond the noise: nothing to make permanent",
                result.device
            ));
            return Vec::new();
        };
        vec![Cmd::PlanPersist {
            device: result.device,
            scheduler,
            class: false,
            chosen: None,
        }]
    }

    /// The planned rule (or why there is none) comes back: the dialog shows it.
    pub(super) fn persist_planned(
        &mut self,
        device: String,
        scheduler: String,
        class: bool,
        result: Result<Box<Persisted>, TaskError>,
    ) {
        self.overlay = Some(Overlay::Persist(super::dialogs::persist::Persist {
            device,
            scheduler,
            class,
            plan: result.map_err(|e| e.to_string()),
        }));
    }

    pub(super) fn persisted(&mut self, result: Result<std::path::PathBuf, TaskError>) {
        match result {
            Ok(path) => {
                self.overlay = Some(Overlay::Message(super::dialogs::message::Message {
                    title: "udev rule written".into(),
                    lines: vec![
                        crate::model::text::neutralize_controls(&path.display().to_string()),
                        "It applies whenever the disk appears (at boot, on hotplug); the \
                         running scheduler is unchanged."
                            .into(),
                    ],
                }));
            }
            Err(e) => self.error(format!("the udev rule was not written: {e}")),
        }
    }

    pub(super) fn drive_cache_set(
        &mut self,
        device: String,
        result: Result<Box<CacheChange>, TaskError>,
    ) -> Vec<Cmd> {
        let change = match result {
            Ok(change) => change,
            Err(e) => {
                self.error(format!("cannot switch the write cache of {device}: {e}"));
                return Vec::new();
            }
        };
        let after = change.after.enabled;
        if let (Some(was), Some(now)) = (change.before.enabled, after) {
            self.changes.cache.switched(&device, Some(was), now);
        }
        let back = self
            .changes
            .cache
            .restores_to(&device)
            .map(|&o| format!(" (back to {} on exit)", on_off(Some(o))))
            .unwrap_or_default();
        self.changes.last_switch = Some(device.clone());
        // The kernel's flush policy follows the drive's answer; unknown (None) until re-read.
        self.devices
            .flush_policy_read_back(&device, change.kernel_after);
        let kernel = change.kernel_after.map_or("?", |k| k.as_str());
        if change.took_effect() {
            let retest = self.retest_hint().trim_end_matches(", ");
            let retest = if retest.is_empty() {
                String::new()
            } else {
                format!("; {retest}")
            };
            self.info(format!(
                "{device}: the drive reports its write cache {}{back}; kernel flush \
                 policy {kernel}{retest}",
                on_off(after)
            ));
        } else {
            self.error(format!(
                "{device}: asked for write cache {}, the drive reports {}",
                on_off(Some(change.requested)),
                on_off(after)
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_back_is_no_change_and_a_kept_choice_is_the_new_original() {
        let mut c = Changes::default();
        c.switched("sda", Some("none".to_string()), "bfq".to_string());
        assert_eq!(c.restores_to("sda").map(String::as_str), Some("none"));
        c.switched("sda", Some("bfq".to_string()), "none".to_string());
        assert!(c.is_empty(), "{c:?}");
        c.switched("sda", Some("none".to_string()), "bfq".to_string());
        assert_eq!(c.keep("sda").as_deref(), Some("bfq"));
        assert_eq!(c.restores_to("sda"), None);
        c.switched("sda", Some("bfq".to_string()), "kyber".to_string());
        assert_eq!(c.restores_to("sda").map(String::as_str), Some("bfq"));
        assert_eq!(c.keep("sdb"), None);
    }
}
