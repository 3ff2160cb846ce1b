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

/// A setting without its value: changes of one share an original.
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

/// Enough to find the device again, and to tell another under its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceId {
    /// The kernel name of the whole disk (`sda`).
    pub name: String,
    pub dev: Option<DevNum>,
    pub serial: Option<String>,
    /// What else identifies it; unknown in older journals.
    #[serde(default, skip_serializing_if = "DeviceIdentity::is_unknown")]
    pub identity: DeviceIdentity,
}

/// What tells one device from another that later gets its name (`diskseq` first).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceIdentity {
    /// `/sys/block/X/diskseq` (Linux 5.15 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diskseq: Option<u64>,
    /// Loop devices: the image attached (`loop/backing_file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_file: Option<String>,
    /// Loop devices: the image's inode (a replaced image at the same path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_inode: Option<u64>,
    /// The device's world-wide id (`wwid`, `device/wwid`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wwid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl DeviceIdentity {
    /// Nothing recorded (an older journal, or nothing the kernel could tell).
    pub fn is_unknown(&self) -> bool {
        *self == DeviceIdentity::default()
    }
}

/// "what now, was then" for one attribute known on both sides that differs.
fn differs<T: PartialEq + fmt::Display>(
    out: &mut Vec<String>,
    what: &str,
    then: Option<&T>,
    now: Option<&T>,
) {
    if let (Some(then), Some(now)) = (then, now)
        && then != now
    {
        out.push(format!("{what} {now}, was {then}"));
    }
}

impl DeviceId {
    /// What a `BlockDevice` carries; the caller adds the rest.
    pub fn of(device: &BlockDevice) -> Self {
        DeviceId {
            name: device.name.clone(),
            dev: device.dev,
            serial: device.serial.clone(),
            identity: DeviceIdentity {
                model: device.model.clone(),
                ..DeviceIdentity::default()
            },
        }
    }

    /// Why `current` is not this device; only attributes known on both sides count.
    pub fn mismatch(&self, current: &DeviceId) -> Option<String> {
        let mut diffs = Vec::new();
        let (then, now) = (&self.identity, &current.identity);
        differs(
            &mut diffs,
            "diskseq",
            then.diskseq.as_ref(),
            now.diskseq.as_ref(),
        );
        differs(
            &mut diffs,
            "device",
            self.dev.as_ref(),
            current.dev.as_ref(),
        );
        differs(
            &mut diffs,
            "backing file",
            then.backing_file.as_ref(),
            now.backing_file.as_ref(),
        );
        differs(
            &mut diffs,
            "backing file inode",
            then.backing_inode.as_ref(),
            now.backing_inode.as_ref(),
        );
        let quoted = |s: &Option<String>| s.as_ref().map(|s| format!("{s:?}"));
        differs(
            &mut diffs,
            "serial",
            quoted(&self.serial).as_ref(),
            quoted(&current.serial).as_ref(),
        );
        differs(
            &mut diffs,
            "wwid",
            quoted(&then.wwid).as_ref(),
            quoted(&now.wwid).as_ref(),
        );
        differs(
            &mut diffs,
            "model",
            quoted(&then.model).as_ref(),
            quoted(&now.model).as_ref(),
        );
        (!diffs.is_empty()).then(|| {
            format!(
                "{} is a different device now ({})",
                self.name,
                diffs.join("; ")
            )
        })
    }
}

/// True for a plain kernel block device name (`sda`, `nvme0n1`, `cciss!c0d0`): not empty, at
/// most 64 bytes, no `/`, not `.` or `..`, no control or space. A journal's name is joined to
/// `/sys/block/`, and `../../tmp/x` would lead outside it.
pub fn is_kernel_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name != "."
        && name != ".."
        && !name.contains('/')
        && !name.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// How long a recorded original is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lifetime {
    /// Put back when its process ends (the TUI, `run`), or by `restore`.
    Session,
    /// A single-shot command's change: it stays until `restore`.
    Persisted,
}

/// The process that recorded an entry; its start time tells a reused pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Owner {
    pub pid: u32,
    pub start_time: u64,
}

/// One recorded original value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalEntry {
    pub id: u64,
    pub device: DeviceId,
    /// What `restore` puts back: the value before the FIRST outstanding change.
    pub original: Setting,
    /// The value this change found (`original` in older journals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<Setting>,
    /// The value this change set (read back); `None` in older journals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_to: Option<Setting>,
    pub lifetime: Lifetime,
    pub owner: Owner,
    /// Seconds since the Unix epoch when recorded.
    pub recorded_at: u64,
}

impl JournalEntry {
    /// What this change found: a session ending puts this back.
    pub fn found(&self) -> &Setting {
        self.found.as_ref().unwrap_or(&self.original)
    }
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
        assert_eq!(id.mismatch(&id), None);
        let mut other = d.clone();
        other.dev = Some(DevNum {
            major: 8,
            minor: 16,
        });
        assert_eq!(
            id.mismatch(&DeviceId::of(&other)).unwrap(),
            "sda is a different device now (device 8:16, was 8:0)"
        );
        let mut other = d.clone();
        other.serial = Some("B".into());
        assert!(
            id.mismatch(&DeviceId::of(&other))
                .unwrap()
                .contains(r#"serial "B", was "A""#)
        );
        // Unknown fields do not make a mismatch.
        let mut unknown = d.clone();
        unknown.dev = None;
        unknown.serial = None;
        assert_eq!(id.mismatch(&DeviceId::of(&unknown)), None);
        // A loop device attached to another image: a new diskseq, another file.
        let mut then = DeviceId::of(&d);
        then.identity.diskseq = Some(9);
        then.identity.backing_file = Some("/tmp/a.img".into());
        let mut now = then.clone();
        now.identity.diskseq = Some(12);
        now.identity.backing_file = Some("/tmp/b.img".into());
        assert_eq!(
            then.mismatch(&now).unwrap(),
            "sda is a different device now (diskseq 12, was 9; backing file /tmp/b.img, was \
             /tmp/a.img)"
        );
    }

    #[test]
    fn kernel_names() {
        for ok in [
            "sda",
            "nvme0n1",
            "loop3",
            "cciss!c0d0",
            "dm-0",
            "md127",
            "a..b",
        ] {
            assert!(is_kernel_name(ok), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "../../tmp/x",
            "sda/../../x",
            "/dev/sda",
            "sd a",
            "sda\n",
            "sda\u{1b}[2J",
            &"x".repeat(65),
        ] {
            assert!(!is_kernel_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn old_entries_without_identity_or_found_still_parse() {
        let e: JournalEntry = serde_json::from_str(
            r#"{"id":1,"device":{"name":"sda","dev":null,"serial":null},
                "original":{"setting":"scheduler","name":"bfq"},"lifetime":"session",
                "owner":{"pid":5,"start_time":1},"recorded_at":0}"#,
        )
        .unwrap();
        assert!(e.device.identity.is_unknown());
        assert_eq!(e.found(), &e.original);
        assert_eq!(e.set_to, None);
        // And an unknown identity is not written out.
        assert!(!serde_json::to_string(&e).unwrap().contains("identity"));
    }
}
