//! The Devices screen's state: the inventory, which devices the list shows, the selected row,
//! and what the drives themselves said (write cache, SMART).

use std::collections::BTreeMap;
use std::time::Duration;

use super::keys::Action;
use super::{App, Screen, step};
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
    /// Selected row of the visible list.
    pub row: usize,
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

    pub fn selected(&self) -> Option<&BlockDevice> {
        self.visible().get(self.row).copied()
    }

    pub fn find(&self, name: &str) -> Option<&BlockDevice> {
        self.inventory.as_ref().and_then(|i| i.find(name))
    }

    /// The whole device whose queue serves `name` (a partition's disk).
    pub fn queue_of(&self, name: &str) -> Option<&BlockDevice> {
        self.inventory.as_ref().and_then(|i| i.queue_of(name))
    }

    /// A scheduler switch just read back from the device: the list shows it at once instead
    /// of after the refresh it asked for, so a retest started in between does not show the
    /// old value.
    pub(super) fn scheduler_read_back(&mut self, name: &str, active: &str) {
        if let Some(set) = self.listed_mut(name).and_then(|d| d.scheduler.as_mut()) {
            set.active = Some(active.to_string());
        }
    }

    /// The kernel's flush policy after a write-cache switch, as read back (`None`: unknown
    /// until the list is read again, never the old value).
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

    /// Takes a fresh inventory (or why it failed); true when it was the first.
    pub(super) fn refreshed(
        &mut self,
        now: Duration,
        result: Result<Inventory, TaskError>,
    ) -> bool {
        self.last_refresh = now;
        let first = self.inventory.is_none();
        match result {
            Ok(inv) => {
                self.inventory = Some(inv);
                self.inventory_error = None;
                self.clamp_row();
            }
            Err(e) => self.inventory_error = Some(e.to_string()),
        }
        first
    }

    fn clamp_row(&mut self) {
        let n = self.visible().len();
        self.row = self.row.min(n.saturating_sub(1));
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
    /// The Devices screen's keys (see `keys::BINDINGS`).
    pub(super) fn devices_act(&mut self, action: Action, dir: i32) -> Vec<Cmd> {
        let n = self.devices.visible().len();
        let last = n.saturating_sub(1);
        match action {
            Action::Move => {
                self.devices.row = step(self.devices.row, dir, last);
                self.file_target = None;
            }
            Action::Ends => {
                self.devices.row = if dir < 0 { 0 } else { last };
                self.file_target = None;
            }
            Action::TestDevice if n > 0 => {
                // The device itself, not a file on it.
                self.file_target = None;
                self.screen = Screen::Tests;
            }
            Action::TestFile => {
                let Some(d) = self.devices.selected() else {
                    return Vec::new();
                };
                match mounted_file_system(d) {
                    Some((device, mount, _)) => {
                        return vec![Cmd::ProbeFileTarget {
                            device,
                            mount: mount.into(),
                        }];
                    }
                    None => {
                        let name = d.name.clone();
                        self.error(format!(
                            "{name} has no mounted file system: a file test needs one (mount \
                             it, or test the device itself with Enter)"
                        ));
                    }
                }
            }
            Action::Refresh => {
                self.info("device list refreshed");
                return vec![Cmd::RefreshInventory];
            }
            Action::Mark if n > 0 => self.toggle_device_mark(),
            Action::Members if n > 0 => self.mark_members(),
            Action::ShowAll => {
                self.devices.show_all = !self.devices.show_all;
                self.devices.clamp_row();
            }
            Action::ReadSmart => {
                if let Some(d) = self.devices.selected().map(|d| d.name.clone()) {
                    return self.open_health(d);
                }
            }
            _ => {}
        }
        Vec::new()
    }
}
