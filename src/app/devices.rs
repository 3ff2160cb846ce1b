//! The Devices screen's state: the inventory, which devices the list shows, the selected row,
//! and what the drives themselves said (write cache, SMART).

use std::collections::BTreeMap;
use std::time::Duration;

use super::{App, Overlay, Screen};
use crate::event::{Cmd, TaskError};
use crate::model::{
    BlockDevice, CacheStatus, DriveLogs, InUse, Inventory, KernelWriteCache, SelfTestStatus,
    SmartHealth, Transport,
};

/// Seconds between inventory refreshes while idle.
const INVENTORY_REFRESH: Duration = Duration::from_secs(10);

/// What the drive itself says, as far as it has been read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DriveState {
    pub cache: Option<Result<CacheStatus, TaskError>>,
    /// The SMART verdict, judged with the logs once they are read (`judge_logs`).
    pub health: Option<Result<Box<SmartHealth>, TaskError>>,
    pub reading: bool,
    /// The error and self-test logs.
    pub logs: Option<Result<Box<DriveLogs>, TaskError>>,
    /// The latest self-test state, from the logs or a poll.
    pub self_test: Option<Result<SelfTestStatus, TaskError>>,
    /// A self-test this session follows (polled until it ends).
    pub watch: Option<super::health::SelfTestWatch>,
}

impl DriveState {
    /// Judges the health with the logs, when both are read (idempotent).
    pub(super) fn judge(&mut self) {
        if let (Some(Ok(health)), Some(Ok(logs))) = (&mut self.health, &self.logs) {
            crate::smart::verdict::judge_logs(health, logs);
        }
    }

    /// "on", "off", "n/a" for the drive's cache; `None` when not read yet.
    pub fn cache_word(&self) -> Option<&'static str> {
        match &self.cache {
            Some(Ok(c)) => Some(c.drive_word()),
            Some(Err(_)) => Some("?"),
            None => None,
        }
    }
}

/// The device list and the drives' own state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Devices {
    pub inventory: Option<Inventory>,
    pub inventory_error: Option<String>,
    /// When the inventory was last asked for.
    last_refresh: Duration,
    /// Show devices that are not worth testing too (empty loops, zero-size).
    pub show_all: bool,
    /// Selected row of the visible list, following the device at every refresh; means
    /// nothing while `gone` is set.
    pub row: usize,
    /// The selected device's kernel name; ends when the device vanishes (`Vanished`).
    chosen: Option<String>,
    /// The selected device vanished: its name. Nothing is selected until the admin chooses a
    /// row; keys say so instead of acting on a neighbour.
    pub gone: Option<String>,
    /// The drives' own state (cache, SMART) by device name.
    pub drives: BTreeMap<String, DriveState>,
}

impl Devices {
    /// The devices the list shows.
    pub fn visible(&self) -> Vec<&BlockDevice> {
        self.inventory
            .as_ref()
            .map(|i| i.visible(self.show_all).collect())
            .unwrap_or_default()
    }

    /// The selected device: the one the admin chose, never a neighbour that took its row.
    pub fn selected(&self) -> Option<&BlockDevice> {
        if self.gone.is_some() {
            return None;
        }
        let chosen = self.chosen.as_deref()?;
        self.visible().into_iter().find(|d| d.name == chosen)
    }

    /// Selects row `row` of the visible list (the last when past it): the admin's choice.
    pub(in crate::app) fn select_row(&mut self, row: usize) {
        let visible = self.visible();
        let row = row.min(visible.len().saturating_sub(1));
        let chosen = visible.get(row).map(|d| d.name.clone());
        self.row = row;
        self.chosen = chosen;
        self.gone = None;
    }

    /// After the list changed the row follows the chosen device; with none chosen yet, the
    /// first row is.
    pub(in crate::app) fn follow_selection(&mut self) {
        if self.gone.is_some() {
            return;
        }
        let Some(chosen) = self.chosen.clone() else {
            self.select_row(self.row);
            return;
        };
        match self.visible().iter().position(|d| d.name == chosen) {
            Some(i) => self.row = i,
            None => {
                self.chosen = None;
                self.gone = Some(chosen);
            }
        }
    }

    pub fn find(&self, name: &str) -> Option<&BlockDevice> {
        self.inventory.as_ref().and_then(|i| i.find(name))
    }

    /// The device under `name` now, as an action chosen on it is checked against later.
    pub fn chosen(&self, name: &str) -> Option<crate::model::ChosenDevice> {
        self.inventory.as_ref().and_then(|i| i.chosen(name))
    }

    /// The whole device whose queue serves `name` (a partition's disk).
    pub fn queue_of(&self, name: &str) -> Option<&BlockDevice> {
        self.inventory.as_ref().and_then(|i| i.queue_of(name))
    }

    /// A scheduler switch just read back: shown at once, so a retest started before the
    /// refresh does not show the old value.
    pub(super) fn scheduler_read_back(&mut self, name: &str, active: &str) {
        if let Some(set) = self.listed_mut(name).and_then(|d| d.scheduler.as_mut()) {
            set.active = Some(active.to_string());
        }
    }

    /// The kernel's flush policy read back after a write-cache switch (`None`: unknown until
    /// the next refresh, never the old value).
    pub(super) fn flush_policy_read_back(&mut self, name: &str, policy: Option<KernelWriteCache>) {
        if let Some(d) = self.listed_mut(name) {
            d.kernel_write_cache = policy;
        }
    }

    fn listed_mut(&mut self, name: &str) -> Option<&mut BlockDevice> {
        self.inventory
            .as_mut()
            .and_then(|i| i.devices.iter_mut().find(|d| d.name == name))
    }

    /// Is it time for the idle refresh? Marks it asked for when it is.
    pub(super) fn refresh_due(&mut self, now: Duration) -> bool {
        let due = now.saturating_sub(self.last_refresh) >= INVENTORY_REFRESH;
        if due {
            self.last_refresh = now;
        }
        due
    }

    /// Takes a fresh inventory (or why it failed): whether it was the first, and the devices
    /// that vanished. The selection follows its device.
    pub(super) fn refreshed(
        &mut self,
        now: Duration,
        result: Result<Inventory, TaskError>,
    ) -> (bool, Vec<Vanished>) {
        self.last_refresh = now;
        let first = self.inventory.is_none();
        let mut vanished = Vec::new();
        match result {
            Ok(inv) => {
                if let Some(old) = &self.inventory {
                    vanished = Vanished::between(old, &inv);
                }
                self.inventory = Some(inv);
                self.inventory_error = None;
                if let Some(chosen) = &self.chosen
                    && vanished.iter().any(|v| v.name == *chosen)
                {
                    self.gone = self.chosen.take();
                }
                for v in &vanished {
                    // What the drive said belongs to the drive that went.
                    self.drives.remove(&v.name);
                }
                self.follow_selection();
            }
            Err(e) => self.inventory_error = Some(e.to_string()),
        }
        (first, vanished)
    }

    /// Asks for the drive state of every real drive (virtual devices have none). SMART is not
    /// read from USB bridges unasked: some misbehave on pass-through commands.
    pub(super) fn read_all_drives(&mut self) -> Vec<Cmd> {
        let devices: Vec<(String, Transport)> = self
            .visible()
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

    pub(super) fn drive_status(
        &mut self,
        device: String,
        cache: Result<CacheStatus, TaskError>,
        health: Option<Result<Box<SmartHealth>, TaskError>>,
    ) {
        let st = self.drives.entry(device).or_default();
        st.cache = Some(cache);
        if health.is_some() {
            st.health = health;
            st.judge();
        }
        st.reading = false;
    }
}

/// A device of one inventory that the next one does not have: its name is missing, or it
/// names another device now (`BlockDevice::same_device`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vanished {
    pub name: String,
    /// Its partitions' names, which went with it.
    pub partitions: Vec<String>,
}

impl Vanished {
    /// The devices of `old` that `new` does not have.
    pub fn between(old: &Inventory, new: &Inventory) -> Vec<Vanished> {
        old.devices
            .iter()
            .filter(|d| new.find(&d.name).is_none_or(|n| !d.same_device(n)))
            .map(|d| Vanished {
                name: d.name.clone(),
                partitions: d.partitions.iter().map(|p| p.name.clone()).collect(),
            })
            .collect()
    }

    /// Is `device` (a whole device or a partition) this device or on it?
    pub fn covers(&self, device: &str) -> bool {
        self.name == device || self.partitions.iter().any(|p| p == device)
    }
}

/// Where a file target can go on `d`: the first file system mounted from it or from one of
/// its partitions, as (the mounted device, the mount point, its type).
pub fn mounted_file_system(d: &BlockDevice) -> Option<(String, String, String)> {
    d.in_use.iter().find_map(|u| match u {
        InUse::Mounted {
            device,
            mount_point,
            fstype,
        } => Some((device.clone(), mount_point.clone(), fstype.clone())),
        _ => None,
    })
}

impl App {
    /// A fresh inventory (or why it failed). Whatever was meant for a vanished device is
    /// withdrawn, never handed to the device that now has its row or name, and the status
    /// line says so.
    pub(super) fn inventory_arrived(&mut self, result: Result<Inventory, TaskError>) -> Vec<Cmd> {
        let gone_before = self.devices.gone.clone();
        let (first, vanished) = self.devices.refreshed(self.now, result);
        let selection_went = self.devices.gone.is_some() && self.devices.gone != gone_before;
        self.forget_vanished(&vanished, selection_went);
        if first && self.is_root {
            return self.devices.read_all_drives();
        }
        Vec::new()
    }

    /// Withdraws what referred to the devices that went: marks, an open dialog, a file test
    /// on one, the retest target, reruns of their records, their health view.
    fn forget_vanished(&mut self, vanished: &[Vanished], selection_went: bool) {
        let covering = |device: &str| vanished.iter().find(|v| v.covers(device));
        let mut said: Vec<&str> = Vec::new();
        let mut what: Vec<&str> = Vec::new();
        if selection_went && let Some(name) = &self.devices.gone {
            said.extend(
                vanished
                    .iter()
                    .find(|v| v.name == *name)
                    .map(|v| v.name.as_str()),
            );
            what.push("nothing is selected (Up/Down chooses)");
        }
        let file_went = self.file_target.as_ref().is_some_and(|ft| {
            covering(&ft.device).is_some() || (selection_went && self.selected_device().is_none())
        });
        if file_went {
            self.file_target = None;
            what.push("its file test is off");
        }
        let marks = self.several.marks.clone();
        self.several.marks.retain(|m| covering(m).is_none());
        if self.several.marks.len() < marks.len() {
            said.extend(
                marks
                    .iter()
                    .filter_map(|m| covering(m))
                    .map(|v| v.name.as_str()),
            );
            if self.several.members_of.take().is_some() {
                // What is left of an array's marks is no longer an array and its members.
                self.several.marks.clear();
                what.push("the array's marks are removed");
            } else {
                what.push("its mark is removed");
            }
        }
        let dialog_went = self
            .overlay
            .as_ref()
            .and_then(|o| o.devices().into_iter().find_map(covering));
        if let Some(v) = dialog_went {
            self.overlay = Some(Overlay::Error(format!(
                "{} is gone (detached, unplugged or replaced by another device under its \
                 name): the dialog for it was closed and nothing was done to it",
                v.name
            )));
            said.push(&v.name);
        }
        if let Some(v) = self.changes.last_switch.as_deref().and_then(covering) {
            self.changes.last_switch = None;
            self.changes.last_switch_gone = Some(v.name.clone());
            said.push(&v.name);
        }
        for rec in &mut self.results.records {
            if rec.past.is_none() && covering(&rec.device).is_some() {
                rec.device_gone = true;
            }
        }
        if let Some(v) = self.health.device.as_deref().and_then(covering) {
            self.health.device = None;
            if self.screen == Screen::Health {
                self.screen = Screen::Devices;
            }
            said.push(&v.name);
        }
        // A device nothing referred to just leaves the list; the status line is kept.
        let mut names: Vec<&str> = Vec::new();
        for name in said {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        if names.is_empty() {
            return;
        }
        let verb = if names.len() == 1 { "is" } else { "are" };
        let mut text = format!("{} {verb} gone", names.join(", "));
        if !what.is_empty() {
            text = format!("{text}: {}", what.join(", "));
        }
        self.info(text);
    }

    /// Why a key that acts on the selected device did nothing.
    pub(super) fn no_selection(&self) -> String {
        match &self.devices.gone {
            Some(name) => format!(
                "{name} is gone: nothing was done. Choose a device on the Devices screen (1)"
            ),
            None => "no device selected: choose one on the Devices screen (1)".to_string(),
        }
    }
}
