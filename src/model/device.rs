//! The block-device inventory as plain data: what `/sys/block` says about each device, plus the
//! in-use verdict that decides whether a destructive test may touch it.
//!
//! Every field the kernel may fail to report is an `Option`: `None` means "unknown" and is shown
//! as `?`, never guessed. Nothing here does I/O; `crate::sys::sysfs` fills these structs.
//! The device's own facts that other model files build on live here, so they point down to
//! it: the kernel's flush policy of its queue (`KernelWriteCache`, compared by `cache`) and
//! the swap areas of the inventory (`SwapEntry`, read by `usage`'s in-use verdict).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize, Serializer};

use super::units::Bytes;

/// A device number, `major:minor`; in JSON `{"major": 7, "minor": 0}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DevNum {
    pub major: u32,
    pub minor: u32,
}

impl FromStr for DevNum {
    type Err = ParseValueError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (major, minor) = s
            .trim()
            .split_once(':')
            .ok_or_else(|| ParseValueError::new("major:minor", s))?;
        Ok(DevNum {
            major: major
                .parse()
                .map_err(|_| ParseValueError::new("major:minor", s))?,
            minor: minor
                .parse()
                .map_err(|_| ParseValueError::new("major:minor", s))?,
        })
    }
}

impl fmt::Display for DevNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

/// A sysfs or procfs value that did not have the expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {expected}, found {found:?}")]
pub struct ParseValueError {
    pub expected: &'static str,
    pub found: String,
}

impl ParseValueError {
    pub fn new(expected: &'static str, found: &str) -> Self {
        // Keep error messages short even when a file holds garbage.
        let found: String = found.chars().take(64).collect();
        ParseValueError { expected, found }
    }
}

/// The kernel's flush policy for the device (`queue/write_cache`): whether the block layer
/// sends FLUSH/FUA, not the drive's own cache setting (see `cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelWriteCache {
    WriteBack,
    WriteThrough,
}

impl KernelWriteCache {
    pub const ALL: [KernelWriteCache; 2] =
        [KernelWriteCache::WriteBack, KernelWriteCache::WriteThrough];

    /// The words of `queue/write_cache` (and virtio's `cache_type`).
    pub fn as_str(self) -> &'static str {
        match self {
            KernelWriteCache::WriteBack => "write back",
            KernelWriteCache::WriteThrough => "write through",
        }
    }

    /// The short word for narrow table columns: "back" or "thru".
    pub fn short(self) -> &'static str {
        match self {
            KernelWriteCache::WriteBack => "back",
            KernelWriteCache::WriteThrough => "thru",
        }
    }

    /// `short`, or `?` when sysfs gave none.
    pub fn short_or_unknown(policy: Option<KernelWriteCache>) -> &'static str {
        policy.map_or("?", KernelWriteCache::short)
    }

    /// The policy for a drive cache on (write back) or off.
    pub fn from_enabled(enabled: bool) -> Self {
        if enabled {
            KernelWriteCache::WriteBack
        } else {
            KernelWriteCache::WriteThrough
        }
    }
}

impl fmt::Display for KernelWriteCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for KernelWriteCache {
    type Err = ParseValueError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == s.trim())
            .ok_or_else(|| ParseValueError::new("a sysfs write cache mode", s))
    }
}

impl Serialize for KernelWriteCache {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// How the device is attached: which drive commands reach it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Nvme,
    /// SATA or PATA through libata (the SCSI layer reports vendor "ATA").
    Sata,
    Scsi,
    Usb,
    Virtio,
    Mmc,
    Loop,
    Zram,
    Md,
    Dm,
    Nbd,
    Ram,
    Unknown,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Nvme => "nvme",
            Transport::Sata => "sata",
            Transport::Scsi => "scsi",
            Transport::Usb => "usb",
            Transport::Virtio => "virtio",
            Transport::Mmc => "mmc",
            Transport::Loop => "loop",
            Transport::Zram => "zram",
            Transport::Md => "md",
            Transport::Dm => "dm",
            Transport::Nbd => "nbd",
            Transport::Ram => "ram",
            Transport::Unknown => "unknown",
        }
    }

    /// Made by the kernel from other storage (files, RAM, disks).
    pub fn is_virtual(self) -> bool {
        matches!(
            self,
            Transport::Loop
                | Transport::Zram
                | Transport::Md
                | Transport::Dm
                | Transport::Nbd
                | Transport::Ram
        )
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The schedulers a queue offers and the active one (none on zram).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SchedulerSet {
    pub active: Option<String>,
    pub available: Vec<String>,
}

impl SchedulerSet {
    /// True when the kernel offers no scheduler choice for this queue.
    pub fn is_empty(&self) -> bool {
        self.available.is_empty()
    }

    pub fn offers(&self, name: &str) -> bool {
        self.available.iter().any(|s| s == name)
    }
}

impl FromStr for SchedulerSet {
    type Err = ParseValueError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut set = SchedulerSet::default();
        for word in s.split_whitespace() {
            let (name, active) = match word.strip_prefix('[') {
                Some(rest) => (
                    rest.strip_suffix(']')
                        .ok_or_else(|| ParseValueError::new("scheduler list", s))?,
                    true,
                ),
                None => (word, false),
            };
            let valid = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !valid {
                return Err(ParseValueError::new("scheduler list", s));
            }
            if active {
                if set.active.is_some() {
                    return Err(ParseValueError::new("one active scheduler", s));
                }
                set.active = Some(name.to_string());
            }
            set.available.push(name.to_string());
        }
        Ok(set)
    }
}

/// What kind of stacked device holds a disk (`holders/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HolderKind {
    Md,
    Lvm,
    DmCrypt,
    Multipath,
    Dm,
    Other,
}

impl HolderKind {
    pub fn label(self) -> &'static str {
        match self {
            HolderKind::Md => "md",
            HolderKind::Lvm => "LVM",
            HolderKind::DmCrypt => "dm-crypt",
            HolderKind::Multipath => "multipath",
            HolderKind::Dm => "dm",
            HolderKind::Other => "another device",
        }
    }
}

/// A device that sits on top of this one (from `holders/`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Holder {
    /// The kernel name, e.g. `dm-0` or `md127`.
    pub name: String,
    pub kind: HolderKind,
    /// A friendlier name, such as the dm name (`vg0-root`).
    pub label: Option<String>,
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.label {
            Some(label) => write!(f, "{} ({}, {})", self.kind.label(), label, self.name),
            None => write!(f, "{} ({})", self.kind.label(), self.name),
        }
    }
}

/// A file's identity (`st_dev`, `st_ino`): two paths name one file when these agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct FileId {
    pub dev: DevNum,
    pub ino: u64,
}

/// What the kernel told of a loop device's backing file (path: `backing_file`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoopBacking {
    /// The backing file's identity (LOOP_GET_STATUS64, else a stat).
    pub file: Option<FileId>,
    /// `st_rdev` of the backing file when it is a block device.
    pub block: Option<DevNum>,
}

/// How a loop device links the node in use to the one whose use it inherits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopLink {
    /// The node is the loop device; `other` is the device under it.
    BackedBy,
    /// The node is the device under the loop device `other`.
    Backs,
    /// The node is a loop device over the same file as the loop device `other`.
    SharesFile,
    /// The node is a file; `other` is a loop device over it.
    BackingFileOf,
    /// The node is part of (a partition of) `other`.
    PartOf,
    /// `other` is a partition of the node.
    Contains,
}

/// Why the device must not be written; `device` is the node in use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InUse {
    Mounted {
        device: String,
        mount_point: String,
        fstype: String,
    },
    Swap {
        device: String,
    },
    Held {
        device: String,
        holder: Holder,
    },
    /// In use through loop devices (which register no holders): `device` shares its data
    /// with `other`, and `cause` says why that is in use ("mounted at /mnt/x").
    Loop {
        device: String,
        link: LoopLink,
        other: String,
        /// The shared backing file's name for `SharesFile`.
        file: Option<String>,
        cause: String,
    },
    /// A file (a test target) that is an active swap file.
    SwapFile {
        device: String,
    },
}

impl InUse {
    pub fn device(&self) -> &str {
        match self {
            InUse::Mounted { device, .. }
            | InUse::Swap { device }
            | InUse::Held { device, .. }
            | InUse::Loop { device, .. }
            | InUse::SwapFile { device } => device,
        }
    }

    /// The reason as seen from the whole device ("loop0p1 mounted at /mnt").
    pub fn describe(&self, owner: &str) -> String {
        let what = match self {
            InUse::Mounted { mount_point, .. } => format!("mounted at {mount_point}"),
            InUse::Swap { .. } => "active swap".to_string(),
            InUse::Held { holder, .. } => format!("held by {holder}"),
            InUse::Loop {
                link,
                other,
                file,
                cause,
                ..
            } => format!(
                "{}, {cause}",
                LoopLink::words(*link, other, file.as_deref())
            ),
            InUse::SwapFile { .. } => "active swap file".to_string(),
        };
        if self.device() == owner {
            what
        } else {
            format!("{} {what}", self.device())
        }
    }
}

impl LoopLink {
    /// "backed by loop4", "shares a.img with loop4", ...
    pub fn words(self, other: &str, file: Option<&str>) -> String {
        match self {
            LoopLink::BackedBy => format!("backed by {other}"),
            LoopLink::Backs => format!("backs {other}"),
            LoopLink::SharesFile => format!("shares {} with {other}", file.unwrap_or("its file")),
            LoopLink::BackingFileOf => format!("backing file of {other}"),
            LoopLink::PartOf => format!("part of {other}"),
            LoopLink::Contains => format!("contains {other}"),
        }
    }
}

/// A partition (a `/sys/block/X` subdirectory with a `partition` file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Partition {
    pub name: String,
    pub path: PathBuf,
    pub dev: Option<DevNum>,
    pub number: Option<u32>,
    /// First sector, in the kernel's 512-byte units.
    pub start_sector: Option<u64>,
    pub size_bytes: Option<Bytes>,
    pub read_only: Option<bool>,
    pub holders: Vec<Holder>,
}

/// Everything the inventory knows about one entry of `/sys/block`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockDevice {
    pub name: String,
    pub path: PathBuf,
    pub dev: Option<DevNum>,
    pub size_bytes: Option<Bytes>,
    pub vendor: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    pub transport: Transport,
    pub rotational: Option<bool>,
    pub logical_block_size: Option<u32>,
    pub physical_block_size: Option<u32>,
    pub scheduler: Option<SchedulerSet>,
    pub nr_requests: Option<u32>,
    pub read_ahead_kb: Option<u32>,
    pub max_sectors_kb: Option<u32>,
    /// The kernel's flush policy, not the drive's cache.
    pub kernel_write_cache: Option<KernelWriteCache>,
    pub removable: Option<bool>,
    pub read_only: Option<bool>,
    /// For loop devices: the file behind it.
    pub backing_file: Option<String>,
    /// For loop devices: the file's identity, compared instead of its path.
    #[serde(skip)]
    pub loop_backing: Option<LoopBacking>,
    /// For device-mapper devices: the dm name (`/dev/mapper/<name>`).
    pub dm_name: Option<String>,
    /// Zoned or shingled media, as sysfs and libata's kept IDENTIFY data say.
    pub zoning: crate::model::Zoning,
    /// The kernel's sequence number of the disk (`diskseq`, Linux 5.15 and later): a new one
    /// each time a disk appears or a loop device is attached to a file, never reused before a
    /// reboot. Internal: it tells two devices apart that share a name and a number.
    #[serde(skip)]
    pub diskseq: Option<u64>,
    pub partitions: Vec<Partition>,
    pub holders: Vec<Holder>,
    /// Why it must not be written; empty when free (`usage_complete`).
    pub in_use: Vec<InUse>,
    /// Fields that could not be read and why (e.g. "serial: needs root").
    pub notes: Vec<String>,
}

impl BlockDevice {
    /// A device with only its name and path known; the reader fills in the rest.
    pub fn unknown(name: &str, path: PathBuf) -> Self {
        BlockDevice {
            name: name.to_string(),
            path,
            dev: None,
            size_bytes: None,
            vendor: None,
            model: None,
            serial: None,
            firmware: None,
            transport: Transport::Unknown,
            rotational: None,
            logical_block_size: None,
            physical_block_size: None,
            scheduler: None,
            nr_requests: None,
            read_ahead_kb: None,
            max_sectors_kb: None,
            kernel_write_cache: None,
            removable: None,
            read_only: None,
            backing_file: None,
            loop_backing: None,
            dm_name: None,
            zoning: crate::model::Zoning::default(),
            diskseq: None,
            partitions: Vec::new(),
            holders: Vec::new(),
            in_use: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn is_in_use(&self) -> bool {
        !self.in_use.is_empty()
    }

    /// Placeholders `list` hides: unattached loops, zram without disksize.
    pub fn is_placeholder(&self) -> bool {
        match self.transport {
            Transport::Loop => self.backing_file.as_deref().is_none_or(str::is_empty),
            Transport::Zram => self.size_bytes == Some(Bytes(0)),
            _ => false,
        }
    }

    /// Is `later` (from a later inventory) still this device? A name comes back for another
    /// disk after a hot-unplug, and a loop device keeps name and number on another file: so
    /// name, number and serial must agree, and so must what a virtual device is made of (a
    /// loop's backing file, by identity when known; a dm name). A new placeholder is not it.
    pub fn same_device(&self, later: &BlockDevice) -> bool {
        let backing = |d: &BlockDevice| d.loop_backing.and_then(|b| b.file);
        let same_backing = match (backing(self), backing(later)) {
            (Some(a), Some(b)) => a == b,
            _ => self.backing_file == later.backing_file,
        };
        let same_seq = match (self.diskseq, later.diskseq) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        self.name == later.name
            && self.dev == later.dev
            && same_seq
            && self.serial == later.serial
            && self.dm_name == later.dm_name
            && same_backing
            && (self.is_placeholder() || !later.is_placeholder())
    }

    /// The identity of this device as the admin chose it (`ChosenDevice`).
    pub fn chosen(&self) -> ChosenDevice {
        ChosenDevice {
            name: self.name.clone(),
            dev: self.dev,
            diskseq: self.diskseq,
            loop_file: self.loop_backing.and_then(|b| b.file),
            backing_file: self.backing_file.clone(),
            serial: self.serial.clone(),
            disk: None,
        }
    }

    /// The identity of its partition `name` as chosen: its number, and what makes its disk that
    /// disk. A partition of the same name on a disk attached since is another partition.
    pub fn chosen_partition(&self, name: &str) -> Option<ChosenDevice> {
        let part = self.partitions.iter().find(|p| p.name == name)?;
        Some(ChosenDevice {
            name: part.name.clone(),
            dev: part.dev,
            disk: Some(self.name.clone()),
            ..self.chosen()
        })
    }

    /// "SSD" or "HDD" from the kernel's rotational flag.
    pub fn media_label(&self) -> &'static str {
        match self.rotational {
            Some(true) => "HDD",
            Some(false) => "SSD",
            None => "?",
        }
    }

    /// "free", or the reasons ("mounted at /, active swap").
    pub fn usage_summary(&self) -> String {
        if self.in_use.is_empty() {
            "free".to_string()
        } else {
            self.in_use
                .iter()
                .map(|u| u.describe(&self.name))
                .collect::<Vec<_>>()
                .join("; ")
        }
    }

    /// The model, or for a virtual device what it is made of.
    pub fn description(&self) -> Option<String> {
        if let Some(model) = &self.model {
            return Some(model.clone());
        }
        match self.transport {
            Transport::Loop => self
                .backing_file
                .as_ref()
                .map(|f| f.rsplit('/').next().unwrap_or(f).to_string()),
            Transport::Dm => self.dm_name.clone(),
            _ => None,
        }
    }
}

/// What backs a swap area: the Type column of `/proc/swaps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwapKind {
    /// A block device ("partition": zram, a disk, an LV alike).
    Partition,
    /// A swap file on a file system ("file").
    File,
    /// A type no kernel known here writes.
    Unknown,
}

impl SwapKind {
    /// The kind `/proc/swaps` names.
    pub fn from_proc(column: &str) -> Self {
        match column {
            "partition" => SwapKind::Partition,
            "file" => SwapKind::File,
            _ => SwapKind::Unknown,
        }
    }
}

/// One active swap area from `/proc/swaps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwapEntry {
    pub path: String,
    pub kind: SwapKind,
    /// For swap files: the file's identity, when the `sys` layer could stat it.
    pub file: Option<FileId>,
}

/// A device as the admin chose it (from the inventory on the screen, or the one the write
/// guard checked): what an action checks on the object it opens, at the moment it acts, so
/// that a device detached and another attached under the same name in between is refused
/// instead of changed (a USB stick swapped, `losetup -d loop5; losetup loop5 other.img`).
///
/// It also holds what was found then (`sys` fills it); fields not read are `None` and not
/// compared, except the device number.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChosenDevice {
    /// The kernel name (`loop5`, `sdb1`).
    pub name: String,
    pub dev: Option<DevNum>,
    /// The disk's `diskseq` (for a partition, its disk's).
    pub diskseq: Option<u64>,
    /// A loop device's backing file (a partition's: its disk's).
    pub loop_file: Option<FileId>,
    /// The backing file's path, for the words and where its identity is unknown.
    pub backing_file: Option<String>,
    pub serial: Option<String>,
    /// For a partition: the disk it is on.
    pub disk: Option<String>,
}

impl ChosenDevice {
    /// Why `found` is not the device chosen, as the refusal's sentence.
    pub fn refusal(&self, found: Option<&ChosenDevice>) -> Option<String> {
        let Some(now) = found else {
            return Some(format!("{} is gone: nothing was done", self.name));
        };
        let both = |a: Option<u64>, b: Option<u64>| matches!((a, b), (Some(x), Some(y)) if x != y);
        let differs = self.dev.is_some() && self.dev != now.dev
            || both(self.diskseq, now.diskseq)
            || matches!((self.loop_file, now.loop_file), (Some(a), Some(b)) if a != b)
            // The image's path decides only where its identity is unknown.
            || (self.loop_file.is_none() || now.loop_file.is_none())
                && self.backing_file.is_some()
                && now.backing_file.is_some()
                && self.backing_file != now.backing_file
            // A loop device chosen attached that is detached now.
            || self.loop_file.is_some() && now.loop_file.is_none() && now.backing_file.is_none()
            || self.serial.is_some() && now.serial.is_some() && self.serial != now.serial;
        if !differs {
            return None;
        }
        Some(format!(
            "{} is no longer the device you chose ({}); now {}: nothing was done",
            self.name,
            self.describe(),
            now.describe_change(self)
        ))
    }

    /// "7:5 backing /dev/shm/a.img", "8:16 serial S1", "8:17 on sdb".
    fn describe(&self) -> String {
        let mut words = vec![self.dev.map_or_else(|| "?".to_string(), |d| d.to_string())];
        if let Some(disk) = &self.disk {
            words.push(format!("on {disk}"));
        }
        if let Some(file) = &self.backing_file {
            words.push(format!("backing {file}"));
        } else if let Some(serial) = &self.serial {
            words.push(format!("serial {serial}"));
        }
        super::text::neutralize_controls(&words.join(" "))
    }

    /// What differs in this (found) reading from `chosen`, in words.
    fn describe_change(&self, chosen: &ChosenDevice) -> String {
        let mut words = Vec::new();
        if self.dev != chosen.dev {
            words.push(format!(
                "device {}",
                self.dev.map_or_else(|| "?".to_string(), |d| d.to_string())
            ));
        }
        match &self.backing_file {
            Some(file) => words.push(format!("backing {file}")),
            None if chosen.backing_file.is_some() => words.push("detached".to_string()),
            None => {}
        }
        if let (Some(now), Some(then)) = (&self.serial, &chosen.serial)
            && now != then
        {
            words.push(format!("serial {now}"));
        }
        if words.is_empty() {
            if let (Some(now), Some(_)) = (self.diskseq, chosen.diskseq) {
                words.push(format!("another disk (diskseq {now})"));
            } else {
                words.push("another disk".to_string());
            }
        }
        super::text::neutralize_controls(&words.join(", "))
    }
}

/// The whole inventory plus what could not be checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Inventory {
    pub devices: Vec<BlockDevice>,
    /// False when mounts or swaps were unreadable: writes then refuse.
    pub usage_complete: bool,
    /// Problems of the whole inventory (an unreadable `/proc/swaps`).
    pub notes: Vec<String>,
    /// Active swap areas, for checking file targets against swap files.
    #[serde(skip)]
    pub swaps: Vec<SwapEntry>,
}

impl Inventory {
    pub fn find(&self, name: &str) -> Option<&BlockDevice> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// The identity of disk or partition `name` as this inventory saw it.
    pub fn chosen(&self, name: &str) -> Option<ChosenDevice> {
        match self.find(name) {
            Some(d) => Some(d.chosen()),
            None => self.devices.iter().find_map(|d| d.chosen_partition(name)),
        }
    }

    /// The device owning `name`'s queue (a partition has none).
    pub fn queue_of(&self, name: &str) -> Option<&BlockDevice> {
        self.find(name).or_else(|| {
            self.devices
                .iter()
                .find(|d| d.partitions.iter().any(|p| p.name == name))
        })
    }

    /// The devices `list` shows: all, or all but unused placeholders.
    pub fn visible(&self, show_all: bool) -> impl Iterator<Item = &BlockDevice> {
        self.devices
            .iter()
            .filter(move |d| show_all || !d.is_placeholder())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_list_with_active() {
        let s: SchedulerSet = "none [mq-deadline] kyber bfq\n".parse().unwrap();
        assert_eq!(s.active.as_deref(), Some("mq-deadline"));
        assert_eq!(s.available, ["none", "mq-deadline", "kyber", "bfq"]);
        assert!(s.offers("bfq"));
        assert!(!s.offers("cfq"));
    }

    #[test]
    fn scheduler_single_and_empty() {
        let s: SchedulerSet = "[none]".parse().unwrap();
        assert_eq!(s.active.as_deref(), Some("none"));
        let empty: SchedulerSet = "\n".parse().unwrap();
        assert!(empty.is_empty());
        assert_eq!(empty.active, None);
    }

    #[test]
    fn scheduler_garbage_is_an_error() {
        assert!("[none".parse::<SchedulerSet>().is_err());
        assert!("[a] [b]".parse::<SchedulerSet>().is_err());
        assert!("\u{1b}[31m".parse::<SchedulerSet>().is_err());
        assert!("[]".parse::<SchedulerSet>().is_err());
    }

    #[test]
    fn devnum_parses_and_rejects() {
        assert_eq!(
            "259:0\n".parse::<DevNum>().unwrap(),
            DevNum {
                major: 259,
                minor: 0
            }
        );
        assert!("259".parse::<DevNum>().is_err());
        assert!("a:b".parse::<DevNum>().is_err());
        assert!("-1:0".parse::<DevNum>().is_err());
    }

    #[test]
    fn usage_describes_partitions_from_the_parent() {
        let mut dev = BlockDevice::unknown("loop0", "/dev/loop0".into());
        assert_eq!(dev.usage_summary(), "free");
        dev.in_use.push(InUse::Mounted {
            device: "loop0p1".into(),
            mount_point: "/mnt/x".into(),
            fstype: "ext4".into(),
        });
        dev.in_use.push(InUse::Held {
            device: "loop0".into(),
            holder: Holder {
                name: "dm-0".into(),
                kind: HolderKind::Lvm,
                label: Some("vg-lv".into()),
            },
        });
        assert_eq!(
            dev.usage_summary(),
            "loop0p1 mounted at /mnt/x; held by LVM (vg-lv, dm-0)"
        );
    }

    #[test]
    fn a_partitions_queue_is_its_disks() {
        let mut disk = BlockDevice::unknown("loop0", "/dev/loop0".into());
        disk.partitions.push(Partition {
            name: "loop0p1".into(),
            path: "/dev/loop0p1".into(),
            dev: None,
            number: Some(1),
            start_sector: Some(2048),
            size_bytes: None,
            read_only: None,
            holders: Vec::new(),
        });
        let inv = Inventory {
            devices: vec![BlockDevice::unknown("zram0", "/dev/zram0".into()), disk],
            usage_complete: true,
            notes: Vec::new(),
            swaps: Vec::new(),
        };
        let name = |n: &str| inv.queue_of(n).map(|d| d.name.as_str());
        assert_eq!(name("loop0p1"), Some("loop0"));
        assert_eq!(name("loop0"), Some("loop0"));
        assert_eq!(name("zram0"), Some("zram0"));
        assert_eq!(name("loop0p2"), None);
    }

    #[test]
    fn same_device_is_more_than_the_name() {
        let mut a = BlockDevice::unknown("loop1", "/dev/loop1".into());
        a.transport = Transport::Loop;
        a.dev = Some(DevNum { major: 7, minor: 1 });
        a.backing_file = Some("/tmp/a.img".into());
        a.loop_backing = Some(LoopBacking {
            file: Some(FileId {
                dev: DevNum { major: 8, minor: 1 },
                ino: 12,
            }),
            block: None,
        });
        assert!(a.same_device(&a.clone()));
        // Attached to another file: another device under the same name and number.
        let mut other_file = a.clone();
        other_file.loop_backing = Some(LoopBacking {
            file: Some(FileId {
                dev: DevNum { major: 8, minor: 1 },
                ino: 13,
            }),
            block: None,
        });
        assert!(!a.same_device(&other_file));
        // The same file under a changed path (deleted, renamed): the same device.
        let mut renamed = a.clone();
        renamed.backing_file = Some("/tmp/a.img (deleted)".into());
        assert!(a.same_device(&renamed));
        // Without the file's identity the path decides.
        let mut by_path = a.clone();
        by_path.loop_backing = None;
        let mut by_path_other = by_path.clone();
        by_path_other.backing_file = Some("/tmp/b.img".into());
        assert!(by_path.same_device(&by_path.clone()));
        assert!(!by_path.same_device(&by_path_other));
        // Detached: a placeholder is not the device that was attached.
        let mut detached = a.clone();
        detached.backing_file = None;
        detached.loop_backing = None;
        assert!(!a.same_device(&detached));
        // Another number or another serial: another disk.
        let mut disk = BlockDevice::unknown("sdb", "/dev/sdb".into());
        disk.dev = Some(DevNum {
            major: 8,
            minor: 16,
        });
        disk.serial = Some("S1".into());
        let mut moved = disk.clone();
        moved.dev = Some(DevNum {
            major: 8,
            minor: 32,
        });
        let mut swapped = disk.clone();
        swapped.serial = Some("S2".into());
        assert!(!disk.same_device(&moved));
        assert!(!disk.same_device(&swapped));
        assert!(disk.same_device(&disk.clone()));
        // diskseq tells a replugged disk from the one before, where both sides know it.
        let mut seq = disk.clone();
        seq.diskseq = Some(7);
        let mut replugged = seq.clone();
        replugged.diskseq = Some(8);
        assert!(!seq.same_device(&replugged));
        assert!(seq.same_device(&disk));
    }

    #[test]
    fn a_request_is_refused_on_another_device_under_the_chosen_name() {
        let mut a = BlockDevice::unknown("loop5", "/dev/loop5".into());
        a.transport = Transport::Loop;
        a.dev = Some(DevNum { major: 7, minor: 5 });
        a.diskseq = Some(40);
        a.backing_file = Some("/dev/shm/a.img".into());
        a.loop_backing = Some(LoopBacking {
            file: Some(FileId {
                dev: DevNum {
                    major: 0,
                    minor: 26,
                },
                ino: 12,
            }),
            block: None,
        });
        let chosen = a.chosen();
        assert_eq!(chosen.refusal(Some(&a.chosen())), None);
        let mut b = a.clone();
        b.diskseq = Some(41);
        b.backing_file = Some("/dev/shm/b.img".into());
        b.loop_backing = Some(LoopBacking {
            file: Some(FileId {
                dev: DevNum {
                    major: 0,
                    minor: 26,
                },
                ino: 13,
            }),
            block: None,
        });
        assert_eq!(
            chosen.refusal(Some(&b.chosen())).as_deref(),
            Some(
                "loop5 is no longer the device you chose (7:5 backing /dev/shm/a.img); now \
                 backing /dev/shm/b.img: nothing was done"
            )
        );
        // Only diskseq differs (image re-attached, serial-less disk replugged): another.
        let mut again = a.clone();
        again.diskseq = Some(42);
        assert!(chosen.refusal(Some(&again.chosen())).is_some());
        // Detached: nothing is behind it now.
        let mut detached = a.clone();
        detached.backing_file = None;
        detached.loop_backing = None;
        assert!(
            chosen
                .refusal(Some(&detached.chosen()))
                .is_some_and(|w| w.contains("now detached"))
        );
        assert_eq!(
            chosen.refusal(None).as_deref(),
            Some("loop5 is gone: nothing was done")
        );
        // A reading without diskseq or image identity is compared on what it has.
        let partial = ChosenDevice {
            name: "loop5".into(),
            dev: a.dev,
            backing_file: a.backing_file.clone(),
            ..ChosenDevice::default()
        };
        assert_eq!(chosen.refusal(Some(&partial)), None);
        // A disk by its serial.
        let mut sdb = BlockDevice::unknown("sdb", "/dev/sdb".into());
        sdb.dev = Some(DevNum {
            major: 8,
            minor: 16,
        });
        sdb.serial = Some("S1".into());
        let mut other = sdb.clone();
        other.serial = Some("S2".into());
        assert_eq!(
            sdb.chosen().refusal(Some(&other.chosen())).as_deref(),
            Some(
                "sdb is no longer the device you chose (8:16 serial S1); now serial S2: nothing was done"
            )
        );
    }

    #[test]
    fn a_partition_is_chosen_with_its_disk() {
        let mut disk = BlockDevice::unknown("loop5", "/dev/loop5".into());
        disk.dev = Some(DevNum { major: 7, minor: 5 });
        disk.diskseq = Some(40);
        disk.partitions.push(Partition {
            name: "loop5p1".into(),
            path: "/dev/loop5p1".into(),
            dev: Some(DevNum {
                major: 259,
                minor: 0,
            }),
            number: Some(1),
            start_sector: Some(2048),
            size_bytes: None,
            read_only: None,
            holders: Vec::new(),
        });
        let part = disk.chosen_partition("loop5p1").unwrap();
        assert_eq!(
            part.dev,
            Some(DevNum {
                major: 259,
                minor: 0
            })
        );
        assert_eq!(part.diskseq, Some(40));
        assert_eq!(part.disk.as_deref(), Some("loop5"));
        // The partition of the same name and number on the disk attached since.
        let new_disk = ChosenDevice {
            diskseq: Some(41),
            ..part.clone()
        };
        assert!(part.refusal(Some(&new_disk)).is_some_and(|w| {
            w.starts_with("loop5p1 is no longer the device you chose (259:0 on loop5)")
        }));
        assert!(disk.chosen_partition("loop5p2").is_none());
    }

    #[test]
    fn placeholders() {
        let mut l = BlockDevice::unknown("loop3", "/dev/loop3".into());
        l.transport = Transport::Loop;
        assert!(l.is_placeholder());
        l.backing_file = Some("/tmp/a.img".into());
        assert!(!l.is_placeholder());
        let mut z = BlockDevice::unknown("zram0", "/dev/zram0".into());
        z.transport = Transport::Zram;
        z.size_bytes = Some(Bytes(0));
        assert!(z.is_placeholder());
        z.size_bytes = Some(Bytes(1 << 30));
        assert!(!z.is_placeholder());
    }
}
