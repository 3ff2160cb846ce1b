//! Reads sysfs and procfs under a root: `/` on a live system, a captured tree in
//! `tests/fixtures/sysfs/<scenario>/` in tests. `SysRoot` is the root; this file reads what is
//! the same for every device (attributes, holders, partitions, identities, typed names,
//! counters). The inventory walk is in `drives/inventory.rs`, beside the transport table.
//!
//! Every attribute is optional: a missing, unreadable or malformed one leaves its field `None`
//! and, when the reason is worth telling (permission, I/O error), adds a note to the device; it
//! never aborts the inventory.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::error::DriveError;

mod chosen;
pub use chosen::DeviceDir;

use super::direct;
use super::parse::{
    DiskStat, parse_devnum, parse_disk_stat, parse_flag, parse_inflight, parse_number,
};
use crate::model::text::clean_text;
use crate::model::{
    Bytes, DevNum, DeviceIdentity, DiskIdentity, Holder, HolderKind, LoopBacking, Partition,
    ZoneModel,
};

/// sysfs attributes are at most a page, VPD pages a little more: anything longer is cut.
const MAX_ATTR_BYTES: u64 = 64 * 1024;

/// Largest `/proc` table (mountinfo, swaps) read. Never cut: a partial mount table would hide
/// mounts from the write guard, so a larger one is an error (writes are refused).
pub(in crate::sys) const MAX_TABLE_BYTES: u64 = 16 << 20;

/// Opens a file under the root only if it is a regular file: a FIFO (whose open waits forever),
/// node or socket in a captured tree is refused, checked before a non-blocking open and after.
fn open_regular(path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    not_regular(&fs::metadata(path)?)?;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    not_regular(&file.metadata()?)?;
    Ok(file)
}

/// An error for anything but a regular file (a directory keeps its usual EISDIR).
fn not_regular(meta: &fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    let what = if t.is_file() {
        return Ok(());
    } else if t.is_dir() {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        format!("not a regular file: {what}"),
    ))
}

/// Reads at most `limit` bytes of a sysfs attribute; the rest of an overlong one is cut.
pub fn read_attr_bytes(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    open_regular(path)?.take(limit).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Reads a whole sysfs or procfs file as lossy UTF-8; an error when longer than `limit` or not
/// a regular file.
pub fn read_text_file(path: &Path, limit: u64) -> io::Result<String> {
    let mut buf = Vec::new();
    open_regular(path)?
        .take(limit.saturating_add(1))
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("longer than {} bytes: not read", limit),
        ));
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Writes a sysfs attribute, only if it is a regular file, without blocking (`open_regular`).
pub fn write_attr(path: &Path, value: &str) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    not_regular(&fs::metadata(path)?)?;
    let mut file = fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    not_regular(&file.metadata()?)?;
    file.write_all(value.as_bytes())
}

/// Reads one sysfs attribute as text (a page at most in a real sysfs).
pub fn read_attr_text(path: &Path) -> io::Result<String> {
    read_text_file(path, MAX_ATTR_BYTES)
}

/// The root under which `sys/` and `proc/` are found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysRoot {
    root: PathBuf,
}

impl SysRoot {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        SysRoot { root: root.into() }
    }

    /// The running system.
    pub fn host() -> Self {
        SysRoot::new("/")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Why nothing may be switched under this root, or None for the running system (a root
    /// resolving to `/`). A captured tree is for reading: a write would land in a file (or,
    /// through a symlink, outside the tree), and the journal would tie a change the system
    /// never saw to the live disk of that name for the next `restore`.
    pub fn switching_refused(&self) -> Option<String> {
        if fs::canonicalize(&self.root).is_ok_and(|r| r == Path::new("/")) {
            return None;
        }
        Some(format!(
            "--root {} is a captured tree, read-only: switching (a scheduler, a write cache, \
             a boot rule on this system, a self-test, a sweep, a restore) is refused, nothing \
             was opened or journaled; run disktriage without --root on the system itself (a \
             boot rule for an installed system's image takes --persist --target-root DIR)",
            self.root.display()
        ))
    }

    /// Whether `<root>/sys/class/block/<name>` exists; a name that is not one plain path
    /// component never does.
    pub fn has_block_device(&self, name: &str) -> bool {
        let plain = !name.is_empty() && name != "." && name != ".." && !name.contains('/');
        plain && self.root.join("sys/class/block").join(name).exists()
    }

    /// `<root>/sys/block/<name>`.
    pub fn block_dir(&self, name: &str) -> PathBuf {
        self.root.join("sys/block").join(name)
    }

    /// A disk's zone model (`queue/zoned`, "none" is `None`), zone count and command timeout
    /// in seconds (`device/timeout`, SCSI and ATA disks); `None` when absent.
    pub fn zones_and_timeout(&self, name: &str) -> (Option<ZoneModel>, Option<u64>, Option<u32>) {
        let dir = self.block_dir(name);
        let text = |rel: &str| read_attr_text(&dir.join(rel)).ok();
        let zoned = text("queue/zoned").and_then(|w| ZoneModel::from_kernel(&w));
        let zones = text("queue/nr_zones")
            .and_then(|n| n.trim().parse().ok())
            .filter(|n| *n > 0);
        let timeout = text("device/timeout").and_then(|t| t.trim().parse().ok());
        (zoned, zones, timeout)
    }

    /// An absolute path of the running system as seen below this root.
    pub(in crate::sys) fn below_root(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// What is behind loop device `name`: LOOP_GET_STATUS64 (right even when the path is stale
    /// or deleted), else a stat of sysfs's path, else unknown (the path text is compared).
    pub(in crate::sys) fn loop_backing(
        &self,
        name: &str,
        dev: Option<DevNum>,
        text: &str,
    ) -> LoopBacking {
        let node = self.below_root(&dev_node_path(name).to_string_lossy());
        if let Some(dev) = dev
            && let Ok((file, block)) = direct::loop_status(&node, dev)
        {
            return LoopBacking {
                file: Some(file),
                block,
            };
        }
        let path = text.strip_suffix(" (deleted)").unwrap_or(text);
        match direct::file_identity(&self.below_root(path)) {
            Some((file, block)) if !text.ends_with(" (deleted)") => LoopBacking {
                file: Some(file),
                block,
            },
            _ => LoopBacking::default(),
        }
    }

    /// What identifies disk `name` beyond its name, for the change journal: `diskseq`, the
    /// world-wide id, and for a loop device its image and inode.
    pub fn device_identity(&self, name: &str) -> DeviceIdentity {
        let dir = self.block_dir(name);
        let mut r = AttrReader::new(&dir);
        let backing_file = r.clean("loop/backing_file");
        // As the in-use check finds it: the kernel's answer first (it knows a deleted image).
        let dev = r.text("dev").as_deref().and_then(parse_devnum);
        let backing_inode = backing_file
            .as_deref()
            .and_then(|text| self.loop_backing(name, dev, text).file)
            .map(|file| file.ino);
        DeviceIdentity {
            diskseq: r.number("diskseq"),
            backing_file,
            backing_inode,
            wwid: r.clean("wwid").or_else(|| r.clean("device/wwid")),
            model: r.clean("device/model"),
        }
    }

    /// What disk `name` is across reboots and renames (`DiskIdentity`): its world-wide id
    /// (`wwid`, or `device/wwid` of its SCSI device), else a text serial (`serial` of virtio,
    /// `device/serial` of NVMe or MMC), else a loop device's image, else the kernel name. As
    /// udev reads them: only trailing white space cut (the udev rule refuses what it cannot
    /// quote safely).
    pub fn disk_identity(&self, name: &str) -> DiskIdentity {
        let dir = self.block_dir(name);
        let mut r = AttrReader::new(&dir);
        let mut raw = |rel: &str| {
            r.bytes(rel)
                .map(|b| String::from_utf8_lossy(&b).trim_end().to_string())
                .filter(|v| !v.is_empty())
        };
        if let Some(wwid) = raw("wwid").or_else(|| raw("device/wwid")) {
            return DiskIdentity::Wwid(wwid);
        }
        if let Some(serial) = raw("serial").or_else(|| raw("device/serial")) {
            return DiskIdentity::Serial(serial);
        }
        if let Some(image) = raw("loop/backing_file") {
            return DiskIdentity::LoopImage(image);
        }
        DiskIdentity::Name(name.to_string())
    }

    /// The path below `sys/` with the `/sys/block` link resolved (`Seen::sys_path`).
    pub(in crate::sys) fn relative_canonical(&self, dir: &Path) -> String {
        let (Ok(full), Ok(root)) = (
            fs::canonicalize(dir),
            fs::canonicalize(self.root.join("sys")),
        ) else {
            return String::new();
        };
        full.strip_prefix(&root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    pub(in crate::sys) fn holders(&self, holders_dir: &Path) -> Vec<Holder> {
        let mut names: Vec<String> = match fs::read_dir(holders_dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .collect(),
            Err(_) => return Vec::new(),
        };
        names.sort();
        names
            .into_iter()
            .map(|name| {
                let holder_dir = self.block_dir(&name);
                let mut r = AttrReader::new(&holder_dir);
                let uuid = r.clean("dm/uuid");
                let label = r.clean("dm/name");
                let kind = classify_holder(&name, uuid.as_deref());
                Holder { name, kind, label }
            })
            .collect()
    }

    pub(in crate::sys) fn partitions(&self, dir: &Path) -> Vec<Partition> {
        let Ok(entries) = fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut parts: Vec<Partition> = entries
            .filter_map(Result::ok)
            // An attribute (a regular file) is no partition: skipping it by entry type saves
            // a stat for each of the 30 or so attributes of every device.
            .filter(|e| !e.file_type().is_ok_and(|t| t.is_file()))
            .filter(|e| e.path().join("partition").is_file())
            .filter_map(|e| e.file_name().into_string().ok())
            .map(|name| {
                let pdir = dir.join(&name);
                let mut r = AttrReader::new(&pdir);
                Partition {
                    path: dev_node_path(&name),
                    dev: r.text("dev").as_deref().and_then(parse_devnum),
                    number: r.number("partition"),
                    start_sector: r.number("start"),
                    size_bytes: r
                        .text("size")
                        .as_deref()
                        .and_then(parse_number::<u64>)
                        .map(Bytes::from_kernel_sectors),
                    read_only: r.text("ro").as_deref().and_then(parse_flag),
                    holders: self.holders(&pdir.join("holders")),
                    name,
                }
            })
            .collect();
        parts.sort_by(|a, b| {
            (a.number, natural_key(&a.name)).cmp(&(b.number, natural_key(&b.name)))
        });
        parts
    }

    /// Resolves what an admin typed (`sda`, `/dev/sda`, `sda1`, `/dev/disk/by-id/...`) to the
    /// whole disk's kernel name, plus the partition if one was named: settings are the disk's.
    pub fn resolve_disk(&self, arg: &str) -> Result<(String, Option<String>), DriveError> {
        let name = self.device_name(arg)?;
        if self.block_dir(&name).is_dir() {
            return Ok((name, None));
        }
        let block = self.root.join("sys/block");
        let mut disks: Vec<String> = fs::read_dir(&block)
            .map_err(|e| DriveError::from_io("list", &block, &e))?
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        disks.sort_by_key(|a| natural_key(a));
        for disk in disks {
            if self
                .block_dir(&disk)
                .join(&name)
                .join("partition")
                .is_file()
            {
                return Ok((disk, Some(name)));
            }
        }
        Err(DriveError::NoDevice(format!(
            "no block device {:?} (see `disktriage list`)",
            crate::model::text::neutralize_controls(arg)
        )))
    }

    /// The kernel name in an argument: a block device node anywhere (dmsetup without udev,
    /// mknod) by its number; else a path under `/dev`, links resolved below the root.
    fn device_name(&self, arg: &str) -> Result<String, DriveError> {
        let invalid = || {
            DriveError::NoDevice(format!(
                "{:?} is not a block device name or a path under /dev",
                crate::model::text::neutralize_controls(arg)
            ))
        };
        if let Some(rel) = arg.strip_prefix('/')
            && let Some(name) = self.node_name(&self.root.join(rel))
        {
            return Ok(name);
        }
        let name = if let Some(rel) = arg.strip_prefix('/') {
            let dev_root = self.root.join("dev");
            match fs::canonicalize(self.root.join(rel)) {
                Ok(full) => match (fs::canonicalize(&dev_root), full) {
                    (Ok(dev_root), full) if full.starts_with(&dev_root) => full
                        .strip_prefix(&dev_root)
                        .map(|p| p.to_string_lossy().replace('/', "!"))
                        .map_err(|_| invalid())?,
                    _ => return Err(invalid()),
                },
                // Not below the root (a captured tree has no /dev): take the name.
                Err(_) => arg
                    .strip_prefix("/dev/")
                    .map(|n| n.replace('/', "!"))
                    .ok_or_else(invalid)?,
            }
        } else {
            arg.to_string()
        };
        let valid = !name.is_empty()
            && name.len() <= 64
            && name != "."
            && name != ".."
            && !name.contains('/')
            && !name.chars().any(char::is_control);
        if valid { Ok(name) } else { Err(invalid()) }
    }

    /// The kernel name of the block device node at `path` (followed), by number; `None` when it
    /// is none or sysfs does not know the number.
    fn node_name(&self, path: &Path) -> Option<String> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let meta = fs::metadata(path).ok()?;
        if !meta.file_type().is_block_device() {
            return None;
        }
        let dev = super::direct::devnum(meta.rdev());
        let link = fs::read_link(self.root.join(format!("sys/dev/block/{dev}"))).ok()?;
        let name = link.file_name()?.to_str()?.to_string();
        crate::model::is_kernel_name(&name).then_some(name)
    }

    /// The kernel's I/O counters for a device (`/sys/block/X/stat`).
    pub fn disk_stat(&self, name: &str) -> anyhow::Result<DiskStat> {
        let path = self.block_dir(name).join("stat");
        let text =
            read_attr_text(&path).with_context(|| format!("cannot read {}", path.display()))?;
        parse_disk_stat(&text)
            .with_context(|| format!("unexpected content in {}: {text:?}", path.display()))
    }

    /// The I/O counters of any block device, disk or partition (`/sys/dev/block/M:m/stat`).
    pub fn dev_stat(&self, dev: DevNum) -> anyhow::Result<DiskStat> {
        let path = self.root.join(format!("sys/dev/block/{dev}/stat"));
        let text =
            read_attr_text(&path).with_context(|| format!("cannot read {}", path.display()))?;
        parse_disk_stat(&text)
            .with_context(|| format!("unexpected content in {}: {text:?}", path.display()))
    }

    /// Whether `/sys/dev/block/M:m` still exists (a removed device's is gone).
    pub fn dev_present(&self, dev: DevNum) -> bool {
        self.root.join(format!("sys/dev/block/{dev}")).exists()
    }

    /// Outstanding reads and writes as the block layer counts them (`/sys/block/X/inflight`).
    pub fn inflight(&self, name: &str) -> anyhow::Result<(u64, u64)> {
        let path = self.block_dir(name).join("inflight");
        let text =
            read_attr_text(&path).with_context(|| format!("cannot read {}", path.display()))?;
        parse_inflight(&text)
            .with_context(|| format!("unexpected content in {}: {text:?}", path.display()))
    }
}

/// Reads attributes below one directory and remembers why some could not be read.
pub(in crate::sys) struct AttrReader<'a> {
    dir: &'a Path,
    pub(in crate::sys) notes: Vec<String>,
}

impl<'a> AttrReader<'a> {
    pub(in crate::sys) fn new(dir: &'a Path) -> Self {
        AttrReader {
            dir,
            notes: Vec::new(),
        }
    }

    /// Raw bytes of an attribute; `None` when absent or unreadable (then noted).
    pub(in crate::sys) fn bytes(&mut self, rel: &str) -> Option<Vec<u8>> {
        let path = self.dir.join(rel);
        match read_attr_bytes(&path, MAX_ATTR_BYTES) {
            Ok(buf) => Some(buf),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            // A directory where a file was expected: unknown, no note.
            Err(e) if e.raw_os_error() == Some(libc::EISDIR) => None,
            Err(e) => {
                self.notes
                    .push(format!("{rel}: {}", super::error::describe_io_brief(&e)));
                None
            }
        }
    }

    /// The attribute as trimmed text (lossy UTF-8).
    pub(in crate::sys) fn text(&mut self, rel: &str) -> Option<String> {
        self.bytes(rel)
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
    }

    /// The attribute as display-safe text, `None` if empty.
    pub(in crate::sys) fn clean(&mut self, rel: &str) -> Option<String> {
        self.bytes(rel).and_then(|b| clean_text(&b))
    }

    pub(in crate::sys) fn number<T: std::str::FromStr>(&mut self, rel: &str) -> Option<T> {
        self.text(rel).as_deref().and_then(parse_number)
    }
}

/// `/dev/<name>`; the kernel writes `/` in device names as `!` in sysfs (e.g. `cciss!c0d0`).
pub fn dev_node_path(name: &str) -> PathBuf {
    PathBuf::from("/dev").join(name.replace('!', "/"))
}

/// What kind of stacked device a holder is, from its name and dm uuid prefix (lvm2 uses
/// `LVM-`, cryptsetup `CRYPT-`, multipath `mpath-`).
pub fn classify_holder(name: &str, dm_uuid: Option<&str>) -> HolderKind {
    if name.starts_with("md") {
        return HolderKind::Md;
    }
    if name.starts_with("dm-") {
        return match dm_uuid {
            Some(u) if u.starts_with("LVM-") => HolderKind::Lvm,
            Some(u) if u.starts_with("CRYPT-") => HolderKind::DmCrypt,
            Some(u) if u.starts_with("mpath-") => HolderKind::Multipath,
            _ => HolderKind::Dm,
        };
    }
    HolderKind::Other
}

/// Sort key that orders `loop2` before `loop10`.
pub(in crate::sys) fn natural_key(s: &str) -> Vec<(String, u64)> {
    let mut key = Vec::new();
    let mut text = String::new();
    let mut digits = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            if !digits.is_empty() {
                key.push((
                    std::mem::take(&mut text),
                    digits.parse().unwrap_or(u64::MAX),
                ));
                digits.clear();
            }
            text.push(c);
        }
    }
    key.push((text, digits.parse().unwrap_or(0)));
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_identity_of_the_lab_drives_and_of_a_loop_device() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysfs");
        let lab = SysRoot::new(fixtures.join("qemu-lab"));
        // The SATA disk's t10 id (no WWN under QEMU): inner spaces kept, trailing cut, as udev.
        assert_eq!(
            lab.disk_identity("sda"),
            DiskIdentity::Wwid(
                "t10.ATA     DT SATA DISK                            DT-SATA-0".into()
            )
        );
        // The NVMe controller's serial is padded with spaces.
        assert_eq!(
            lab.disk_identity("nvme0n1"),
            DiskIdentity::Serial("DT-NVME-0".into())
        );
        assert_eq!(
            lab.disk_identity("vda"),
            DiskIdentity::Serial("DT-VIRTIO-0".into())
        );
        // scsi-hd's serial is only in its binary VPD page; md has nothing.
        assert_eq!(lab.disk_identity("sdb"), DiskIdentity::Name("sdb".into()));
        assert_eq!(lab.disk_identity("md0"), DiskIdentity::Name("md0".into()));
        let host = SysRoot::new(fixtures.join("host-loop-zram"));
        assert_eq!(
            host.disk_identity("loop0"),
            DiskIdentity::LoopImage("/tmp/dtcap/a.img".into())
        );
    }

    #[test]
    fn zones_and_the_kernels_timeout() {
        let root = tempfile::tempdir().unwrap();
        let sys = SysRoot::new(root.path());
        let z = root.path().join("sys/block/nullb1");
        fs::create_dir_all(z.join("queue")).unwrap();
        fs::write(z.join("queue/zoned"), "host-managed\n").unwrap();
        fs::write(z.join("queue/nr_zones"), "4\n").unwrap();
        assert_eq!(
            sys.zones_and_timeout("nullb1"),
            (Some(ZoneModel::HostManaged), Some(4), None)
        );
        let sd = root.path().join("sys/block/sdq");
        fs::create_dir_all(sd.join("queue")).unwrap();
        fs::create_dir_all(sd.join("device")).unwrap();
        fs::write(sd.join("queue/zoned"), "none\n").unwrap();
        fs::write(sd.join("queue/nr_zones"), "0\n").unwrap();
        fs::write(sd.join("device/timeout"), "180\n").unwrap();
        assert_eq!(sys.zones_and_timeout("sdq"), (None, None, Some(180)));
        fs::write(sd.join("device/timeout"), "garbage\n").unwrap();
        assert_eq!(sys.zones_and_timeout("sdq"), (None, None, None));
        assert_eq!(sys.zones_and_timeout("absent"), (None, None, None));
    }

    #[test]
    fn disk_identity_keeps_what_udev_would_read() {
        let root = tempfile::tempdir().unwrap();
        let sys = SysRoot::new(root.path());
        let nvme = root.path().join("sys/block/nvme1n1");
        fs::create_dir_all(nvme.join("device")).unwrap();
        fs::write(nvme.join("device/serial"), "S1\"\nX  \n").unwrap();
        assert_eq!(
            sys.disk_identity("nvme1n1"),
            DiskIdentity::Serial("S1\"\nX".into()),
            "nothing cleaned: the rule decides what it can quote"
        );
        fs::write(nvme.join("wwid"), "eui.0025385b71b0a0d1\n").unwrap();
        assert_eq!(
            sys.disk_identity("nvme1n1"),
            DiskIdentity::Wwid("eui.0025385b71b0a0d1".into()),
            "the namespace's wwid comes before the controller's serial"
        );
    }

    #[test]
    fn device_identity_of_a_loop_device_and_of_a_disk() {
        let root = tempfile::tempdir().unwrap();
        let sys = SysRoot::new(root.path());
        let loop0 = root.path().join("sys/block/loop0");
        fs::create_dir_all(loop0.join("loop")).unwrap();
        fs::write(loop0.join("diskseq"), "42\n").unwrap();
        fs::write(loop0.join("loop/backing_file"), "/images/a.img\n").unwrap();
        fs::create_dir_all(root.path().join("images")).unwrap();
        fs::write(root.path().join("images/a.img"), "").unwrap();
        let id = sys.device_identity("loop0");
        assert_eq!(id.diskseq, Some(42));
        assert_eq!(id.backing_file.as_deref(), Some("/images/a.img"));
        let inode = {
            use std::os::unix::fs::MetadataExt;
            fs::metadata(root.path().join("images/a.img"))
                .unwrap()
                .ino()
        };
        assert_eq!(id.backing_inode, Some(inode));
        assert_eq!(id.wwid, None);

        let sda = root.path().join("sys/block/sda");
        fs::create_dir_all(sda.join("device")).unwrap();
        fs::write(sda.join("device/wwid"), "naa.5000c500a1b2c3d4\n").unwrap();
        fs::write(sda.join("device/model"), "ST4000NM0035    \n").unwrap();
        let id = sys.device_identity("sda");
        assert_eq!(id.diskseq, None, "an old kernel");
        assert_eq!(id.wwid.as_deref(), Some("naa.5000c500a1b2c3d4"));
        assert_eq!(id.model.as_deref(), Some("ST4000NM0035"));
        assert_eq!(id.backing_file, None);
    }

    #[test]
    fn holder_kinds() {
        assert_eq!(classify_holder("md0", None), HolderKind::Md);
        assert_eq!(classify_holder("dm-0", Some("LVM-abc")), HolderKind::Lvm);
        assert_eq!(
            classify_holder("dm-1", Some("CRYPT-LUKS2-x")),
            HolderKind::DmCrypt
        );
        assert_eq!(
            classify_holder("dm-2", Some("mpath-3600")),
            HolderKind::Multipath
        );
        assert_eq!(classify_holder("dm-2", None), HolderKind::Dm);
        assert_eq!(classify_holder("bcache0", None), HolderKind::Other);
    }

    #[test]
    fn natural_order() {
        let mut v = vec![
            "loop10", "loop2", "sda", "loop1", "nvme0n1", "nvme10n1", "nvme2n1",
        ];
        v.sort_by_key(|a| natural_key(a));
        assert_eq!(
            v,
            [
                "loop1", "loop2", "loop10", "nvme0n1", "nvme2n1", "nvme10n1", "sda"
            ]
        );
    }

    #[test]
    fn files_are_read_whole_or_not_at_all_and_attributes_are_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("table");
        fs::write(&path, "12345").unwrap();
        assert_eq!(read_text_file(&path, 5).unwrap(), "12345");
        let err = read_text_file(&path, 4).unwrap_err();
        assert_eq!(err.to_string(), "longer than 4 bytes: not read");
        assert_eq!(read_attr_bytes(&path, 4).unwrap(), b"1234");
        let err = read_attr_bytes(Path::new("/dev/null"), 4).unwrap_err();
        assert_eq!(err.to_string(), "not a regular file: a character device");
        let err = read_attr_bytes(dir.path(), 4).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EISDIR));
    }

    #[test]
    fn a_mount_point_that_is_not_utf8_keeps_the_in_use_check_complete() {
        // Linux allows any byte in a directory name; one such mount point once made the whole
        // mount table unreadable, refusing every write test (found by parser_props.rs).
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir_all(root.join("sys/block/sda")).unwrap();
        fs::create_dir_all(root.join("proc/self")).unwrap();
        fs::write(
            root.join("proc/self/mountinfo"),
            b"99 27 8:1 / /mnt/caf\xe9 rw - ext4 /dev/sda rw\n",
        )
        .unwrap();
        fs::write(
            root.join("proc/swaps"),
            "Filename\tType\tSize\tUsed\tPriority\n",
        )
        .unwrap();
        let inv = SysRoot::new(root).inventory().unwrap();
        assert!(inv.usage_complete, "{:?}", inv.notes);
        assert!(
            matches!(&inv.devices[0].in_use[..], [crate::model::InUse::Mounted { mount_point, .. }]
                if mount_point == "/mnt/caf\u{fffd}"),
            "{:?}",
            inv.devices[0].in_use
        );
    }

    /// Several threads read many devices: the inventory lists them in natural order, each as
    /// a read of it alone finds it.
    #[test]
    fn many_devices_are_read_in_order_and_whole() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for i in 0..70u32 {
            let dev = root.join(format!("sys/block/sd{i}"));
            fs::create_dir_all(dev.join("queue")).unwrap();
            fs::write(dev.join("dev"), format!("8:{}\n", i * 16)).unwrap();
            fs::write(dev.join("size"), format!("{}\n", (i + 1) * 2048)).unwrap();
            fs::write(dev.join("queue/rotational"), "0\n").unwrap();
            if i % 7 == 0 {
                let part = dev.join(format!("sd{i}p1"));
                fs::create_dir_all(&part).unwrap();
                fs::write(part.join("partition"), "1\n").unwrap();
                fs::write(part.join("size"), "1024\n").unwrap();
            }
        }
        fs::create_dir_all(root.join("proc/self")).unwrap();
        fs::write(root.join("proc/self/mountinfo"), "").unwrap();
        fs::write(
            root.join("proc/swaps"),
            "Filename Type Size Used Priority\n",
        )
        .unwrap();
        let sys = SysRoot::new(root);
        let inv = sys.inventory().unwrap();
        let names: Vec<&str> = inv.devices.iter().map(|d| d.name.as_str()).collect();
        let expected: Vec<String> = (0..70).map(|i| format!("sd{i}")).collect();
        assert_eq!(names, expected);
        for d in &inv.devices {
            let mut alone = sys.read_device(&d.name);
            alone.in_use.clone_from(&d.in_use);
            assert_eq!(*d, alone);
        }
        assert_eq!(inv.devices[7].partitions.len(), 1);
        assert_eq!(inv.devices[8].partitions.len(), 0);
    }

    #[test]
    fn dev_paths() {
        assert_eq!(dev_node_path("sda"), PathBuf::from("/dev/sda"));
        assert_eq!(
            dev_node_path("cciss!c0d0"),
            PathBuf::from("/dev/cciss/c0d0")
        );
    }
}
