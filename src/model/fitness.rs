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

/// Whether a device's media are zoned or shingled, as far as the inventory can tell cheaply:
/// the kernel's zone model and zones (`queue/zoned`, `nr_zones`, `chunk_sectors`) and, on a
/// SATA disk, the IDENTIFY data libata keeps (`ata_device/.../id`: words 69, 169 and 217;
/// no command is sent), else the kernel's discard and rotational flags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Zoning {
    /// The kernel's zone model; `None` for "none".
    pub kernel: Option<ZoneModel>,
    /// The zones the kernel counts (`queue/nr_zones`).
    pub nr_zones: Option<u64>,
    /// A zone's size in bytes (`queue/chunk_sectors` on a zoned device).
    pub zone_bytes: Option<u64>,
    /// The drive's own zoned capabilities (IDENTIFY word 69): host-aware or drive-managed.
    pub drive: Option<ZoneModel>,
    /// A SATA disk that supports TRIM and rotates: among hard disks only drive-managed SMR
    /// ones TRIM, but a bridge or an emulator may claim both. A hint, not proof.
    pub trim_rotating: bool,
}

/// A zone's size: whole MiB or GiB as zones are sized ("256 MiB"), else as any size is.
fn zone_size(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    match bytes {
        b if b > 0 && b % (MIB << 10) == 0 => format!("{} GiB", b / (MIB << 10)),
        b if b > 0 && b % MIB == 0 => format!("{} MiB", b / MIB),
        b => crate::model::Bytes(b).iec(),
    }
}

impl Zoning {
    /// The label and the words the device list and the details panel show, `None` when
    /// nothing points to zones or shingles: ("zoned", "host-managed, 524 zones of 256 MiB"),
    /// ("SMR", "drive-managed (the drive says so)"), ("SMR suspected", "TRIM on a rotating
    /// disk").
    pub fn words(&self) -> Option<(&'static str, String)> {
        if let Some(model) = self.kernel {
            let zones = match (self.nr_zones, self.zone_bytes) {
                (Some(n), Some(b)) => format!(", {n} zones of {}", zone_size(b)),
                (Some(n), None) => format!(", {n} zones"),
                (None, Some(b)) => format!(", zones of {}", zone_size(b)),
                (None, None) => String::new(),
            };
            return Some(("zoned", format!("{}{zones}", model.as_str())));
        }
        match self.drive {
            Some(ZoneModel::DriveManaged) => {
                return Some(("SMR", "drive-managed (the drive says so)".to_string()));
            }
            Some(other) => {
                return Some((
                    "zoned",
                    format!(
                        "{} (the drive says so; the kernel uses it as an ordinary disk)",
                        other.as_str()
                    ),
                ));
            }
            None => {}
        }
        self.trim_rotating.then(|| {
            (
                "SMR suspected",
                "TRIM on a rotating disk (a hint, not proof)".to_string(),
            )
        })
    }
}

/// The drive's volatile write cache as the drive states it (ATA IDENTIFY word 85 bit 5, the
/// SCSI caching mode page's WCE, NVMe Identify Controller VWC and Get Features 0x06; a saved
/// report's "Write cache is:"). Power-loss protection is not here: no standard field states
/// it, so it is never claimed either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum WriteCache {
    #[serde(rename = "on")]
    On,
    #[serde(rename = "off")]
    Off,
    /// The drive reports no volatile write cache (ATA word 82 bit 5 clear, NVMe VWC bit 0
    /// clear): it acknowledges a write once it is durable.
    #[serde(rename = "none")]
    Absent,
}

impl WriteCache {
    /// From the drive's answer: `Some(enabled)`, or `None` for no volatile cache.
    pub fn from_enabled(enabled: Option<bool>) -> WriteCache {
        match enabled {
            Some(true) => WriteCache::On,
            Some(false) => WriteCache::Off,
            None => WriteCache::Absent,
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
    /// Its volatile write cache, where it states it.
    pub write_cache: Option<WriteCache>,
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

    #[test]
    fn zoning_in_words_kernel_first_then_the_drive_then_the_hint() {
        let managed = Zoning {
            kernel: Some(ZoneModel::HostManaged),
            nr_zones: Some(524),
            zone_bytes: Some(256 << 20),
            trim_rotating: true,
            ..Zoning::default()
        };
        assert_eq!(
            managed.words(),
            Some(("zoned", "host-managed, 524 zones of 256 MiB".to_string()))
        );
        let dm = Zoning {
            drive: Some(ZoneModel::DriveManaged),
            trim_rotating: true,
            ..Zoning::default()
        };
        assert_eq!(
            dm.words(),
            Some(("SMR", "drive-managed (the drive says so)".to_string()))
        );
        let hint = Zoning {
            trim_rotating: true,
            ..Zoning::default()
        };
        assert_eq!(hint.words().map(|w| w.0), Some("SMR suspected"));
        assert_eq!(Zoning::default().words(), None);
        assert_eq!(zone_size(4 << 20), "4 MiB");
        assert_eq!(zone_size(1 << 30), "1 GiB");
        assert_eq!(zone_size(3 << 19), "1.5 MiB");
    }
}
