//! Whether a disk is fit for the place it is meant for, as the drive itself states it: its
//! error recovery time (SCT Error Recovery Control), whether it is zoned or shingled (ATA's
//! zoned capabilities, TRIM on a rotating disk, Seagate's FARM recording type) and the power-on
//! hours of Seagate's FARM log beside SMART's. Plain data; `crate::smart` reads it from
//! smartctl's output, `crate::sys` from the drive, and the triage's rules judge it.

use serde::Serialize;

/// SCT Error Recovery Control: how long the drive retries a sector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum Erc {
    /// The drive has no SCT Error Recovery Control.
    NotSupported,
    /// Timers in 100 ms units; 0 is disabled (retries as long as it likes).
    Timers { read: u16, write: u16 },
}

impl Erc {
    /// The longer timer in seconds; `None` when no time is promised.
    pub fn longest_seconds(self) -> Option<f64> {
        match self {
            Erc::Timers { read, write } if read > 0 && write > 0 => {
                Some(f64::from(read.max(write)) / 10.0)
            }
            _ => None,
        }
    }

    /// In words: "read 7.0 s, write 7.0 s", "disabled", "not supported".
    pub fn words(self) -> String {
        let timer = |t: u16| {
            if t == 0 {
                "disabled".to_string()
            } else {
                format!("{:.1} s", f64::from(t) / 10.0)
            }
        };
        match self {
            Erc::NotSupported => "not supported".to_string(),
            Erc::Timers { read: 0, write: 0 } => "disabled".to_string(),
            Erc::Timers { read, write } => format!("read {}, write {}", timer(read), timer(write)),
        }
    }
}

/// A zoned model, as the kernel (`queue/zoned`) or the drive states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZoneModel {
    /// Host-aware zones (ZAC/ZBC): shingled underneath.
    HostAware,
    /// Zones the host must write in order (ZAC/ZBC host-managed).
    HostManaged,
    /// Drive-managed SMR: shingled media hidden behind ordinary writes.
    DriveManaged,
}

impl ZoneModel {
    pub fn as_str(self) -> &'static str {
        match self {
            ZoneModel::HostAware => "host-aware",
            ZoneModel::HostManaged => "host-managed",
            ZoneModel::DriveManaged => "drive-managed",
        }
    }

    /// The kernel's word in `queue/zoned` ("none" is not zoned).
    pub fn from_kernel(word: &str) -> Option<ZoneModel> {
        match word.trim() {
            "host-aware" => Some(ZoneModel::HostAware),
            "host-managed" => Some(ZoneModel::HostManaged),
            _ => None,
        }
    }
}

/// A drive's fitness as stated; `None` where not read or said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DriveFitness {
    pub erc: Option<Erc>,
    /// The drive's zoned capabilities, or FARM's recording type "SMR".
    pub zoned: Option<ZoneModel>,
    /// Whether the drive supports TRIM (DATA SET MANAGEMENT), where it was said.
    pub trim: Option<bool>,
    /// Seagate FARM log page 1's power-on hours (`smartctl -l farm`).
    pub farm_power_on_hours: Option<u64>,
    /// Seagate FARM's recording type: "SMR" or "CMR".
    pub farm_recording: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erc_in_words_and_its_longest_timer() {
        let seven = Erc::Timers {
            read: 70,
            write: 70,
        };
        assert_eq!(seven.words(), "read 7.0 s, write 7.0 s");
        assert_eq!(seven.longest_seconds(), Some(7.0));
        let off = Erc::Timers { read: 0, write: 0 };
        assert_eq!(off.words(), "disabled");
        assert_eq!(off.longest_seconds(), None);
        let half = Erc::Timers { read: 85, write: 0 };
        assert_eq!(half.words(), "read 8.5 s, write disabled");
        assert_eq!(half.longest_seconds(), None);
        assert_eq!(Erc::NotSupported.words(), "not supported");
        assert_eq!(
            ZoneModel::from_kernel("host-managed\n"),
            Some(ZoneModel::HostManaged)
        );
        assert_eq!(ZoneModel::from_kernel("none"), None);
    }
}
