//! What a disk is across reboots, renames and sessions: its world-wide id or its serial
//! number when it has one, else the best that can be said (a loop device's image, a file's
//! path, the kernel name). The udev rule that makes a scheduler permanent and the run history
//! both key on it, through the one reader `SysRoot::disk_identity`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A disk's identity. Only `Wwid` and `Serial` survive a reboot and a rename.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "by", content = "value", rename_all = "kebab-case")]
pub enum DiskIdentity {
    /// The WWID sysfs gives (`naa.`, `eui.`, `t10.`, `nvme.`, `uuid.`).
    Wwid(String),
    /// The serial number, where sysfs has it as text (NVMe, virtio, MMC).
    Serial(String),
    /// A loop device: the image attached to it.
    LoopImage(String),
    /// A file target: its path.
    File(String),
    /// Nothing stable: the kernel name at the time.
    Name(String),
}

impl DiskIdentity {
    /// Is it the same disk after a reboot or a rename (a WWN or a serial)?
    pub fn is_stable(&self) -> bool {
        matches!(self, DiskIdentity::Wwid(_) | DiskIdentity::Serial(_))
    }

    /// The attribute a udev rule matches (`ATTRS{wwid}`, `ATTRS{serial}`).
    pub fn udev_attribute(&self) -> Option<&'static str> {
        match self {
            DiskIdentity::Wwid(_) => Some("wwid"),
            DiskIdentity::Serial(_) => Some("serial"),
            _ => None,
        }
    }

    pub fn value(&self) -> &str {
        match self {
            DiskIdentity::Wwid(v)
            | DiskIdentity::Serial(v)
            | DiskIdentity::LoopImage(v)
            | DiskIdentity::File(v)
            | DiskIdentity::Name(v) => v,
        }
    }

    /// "wwid", "serial", "loop image", "file", "name".
    pub fn kind(&self) -> &'static str {
        match self {
            DiskIdentity::Wwid(_) => "wwid",
            DiskIdentity::Serial(_) => "serial",
            DiskIdentity::LoopImage(_) => "loop image",
            DiskIdentity::File(_) => "file",
            DiskIdentity::Name(_) => "name",
        }
    }
}

impl fmt::Display for DiskIdentity {
    /// `wwid "naa.5000c500a1b2c3d4"`: quoted, as serials hold spaces.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} \"{}\"",
            self.kind(),
            super::text::neutralize_controls(self.value())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_ones_are_wwid_and_serial() {
        assert!(DiskIdentity::Wwid("naa.1".into()).is_stable());
        assert!(DiskIdentity::Serial("S1".into()).is_stable());
        assert!(!DiskIdentity::LoopImage("/a.img".into()).is_stable());
        assert!(!DiskIdentity::Name("sda".into()).is_stable());
        assert_eq!(
            DiskIdentity::Serial("S1".into()).udev_attribute(),
            Some("serial")
        );
        assert_eq!(DiskIdentity::File("/x".into()).udev_attribute(), None);
    }

    #[test]
    fn json_and_words() {
        let id = DiskIdentity::Wwid("naa.5000c500a1b2c3d4".into());
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, r#"{"by":"wwid","value":"naa.5000c500a1b2c3d4"}"#);
        assert_eq!(serde_json::from_str::<DiskIdentity>(&json).unwrap(), id);
        assert_eq!(
            DiskIdentity::LoopImage("/tmp/a\nb".into()).to_string(),
            "loop image \"/tmp/a?b\""
        );
    }
}
