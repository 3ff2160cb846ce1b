//! Settings disktriage changes, as plain data: what a setting was before, on which device, and
//! who changed it. The journal (`crate::changes::journal`) stores these as JSON, so every type
//! here round-trips through serde and its keys are part of the journal's format.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::cache::on_off;
use super::device::{BlockDevice, DevNum};

/// A setting and its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "setting", rename_all = "snake_case")]
pub enum Setting {
    /// The active I/O scheduler (`queue/scheduler`).
    Scheduler { name: String },
    /// The drive's own volatile write cache.
    DriveWriteCache { enabled: bool },
}

/// Which setting, without its value: two changes of the same kind on the same device share
/// one original.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingKind {
    Scheduler,
    DriveWriteCache,
}

impl Setting {
    pub fn kind(&self) -> SettingKind {
        match self {
            Setting::Scheduler { .. } => SettingKind::Scheduler,
            Setting::DriveWriteCache { .. } => SettingKind::DriveWriteCache,
        }
    }

    /// The value alone: "mq-deadline", "on".
    pub fn value(&self) -> String {
        match self {
            Setting::Scheduler { name } => name.clone(),
            Setting::DriveWriteCache { enabled } => on_off(*enabled).to_string(),
        }
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind(), self.value())
    }
}

impl fmt::Display for SettingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SettingKind::Scheduler => "scheduler",
            SettingKind::DriveWriteCache => "drive write cache",
        })
    }
}

/// Enough to find the device again and to notice when the name now means another device (an
/// unplug and replug between the change and the restore).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceId {
    /// The kernel name of the whole disk (`sda`).
    pub name: String,
    pub dev: Option<DevNum>,
    pub serial: Option<String>,
}

impl DeviceId {
    pub fn of(device: &BlockDevice) -> Self {
        DeviceId {
            name: device.name.clone(),
            dev: device.dev,
            serial: device.serial.clone(),
        }
    }

    /// Why `current` is not the device this id was taken from, if it is not.
    pub fn mismatch(&self, current: &BlockDevice) -> Option<String> {
        if let (Some(then), Some(now)) = (self.dev, current.dev)
            && then != now
        {
            return Some(format!(
                "{} is now device {now}, was {then} when changed",
                self.name
            ));
        }
        if let (Some(then), Some(now)) = (&self.serial, &current.serial)
            && then != now
        {
            return Some(format!(
                "{} now has serial {now:?}, was {then:?} when changed",
                self.name
            ));
        }
        None
    }
}

/// How long a recorded original is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lifetime {
    /// Put back when the process that made the change ends (the TUI, `run`); if it dies
    /// without doing so, `disktriage restore` does it.
    Session,
    /// A change the admin asked for with a single-shot command (`cache sda off`): it stays,
    /// and `disktriage restore` puts the original back when asked.
    Persisted,
}

/// The process that recorded an entry. The start time (in clock ticks since boot, from
/// `/proc/PID/stat`) tells a live owner from a reused pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pid: u32,
    pub start_time: u64,
}

/// One recorded original value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalEntry {
    pub id: u64,
    pub device: DeviceId,
    /// The value to put back.
    pub original: Setting,
    pub lifetime: Lifetime,
    pub owner: Owner,
    /// Seconds since the Unix epoch when recorded.
    pub recorded_at: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setting_json_shape() {
        let s = Setting::Scheduler {
            name: "mq-deadline".into(),
        };
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"setting":"scheduler","name":"mq-deadline"}"#
        );
        let c = Setting::DriveWriteCache { enabled: true };
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"setting":"drive_write_cache","enabled":true}"#
        );
        assert_eq!(c.to_string(), "drive write cache on");
        assert_eq!(s.to_string(), "scheduler mq-deadline");
    }

    #[test]
    fn device_identity_mismatch() {
        let mut d = BlockDevice::unknown("sda", "/dev/sda".into());
        d.dev = Some(DevNum { major: 8, minor: 0 });
        d.serial = Some("A".into());
        let id = DeviceId::of(&d);
        assert_eq!(id.mismatch(&d), None);
        let mut other = d.clone();
        other.dev = Some(DevNum {
            major: 8,
            minor: 16,
        });
        assert!(id.mismatch(&other).unwrap().contains("8:16"));
        let mut other = d.clone();
        other.serial = Some("B".into());
        assert!(id.mismatch(&other).unwrap().contains("serial"));
        // Unknown fields do not make a mismatch.
        let mut unknown = d.clone();
        unknown.dev = None;
        unknown.serial = None;
        assert_eq!(id.mismatch(&unknown), None);
    }
}
