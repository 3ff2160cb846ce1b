//! The device side of `disktriage flushcheck`: one block device opened once (O_DIRECT,
//! read-write, exclusive) through the object the admin's path named, and the three ways a
//! write is made durable that the check times: O_DSYNC per write (RWF_DSYNC, what the kernel
//! turns into FUA or write + flush), a plain write followed by fdatasync (a cache flush), and
//! a plain write left in the drive's cache (for the flush after dirty data).
//!
//! Above this module everything is plain data: the judging in `crate::flush`, the guard in
//! `commands::flushcheck`.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::direct::{self, AlignedBuf, OpenSpec, Opened, SyncMode};
use crate::model::{ChosenDevice, DevNum};

/// How a write is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// A plain O_DIRECT write: it may sit in the drive's volatile cache.
    Plain,
    /// With RWF_DSYNC: durable when it returns (FUA, or write then flush).
    Dsync,
    /// A plain write then fdatasync on the device (an explicit cache flush).
    WriteThenFlush,
}

/// A block device opened for the flush check.
pub struct FlushDevice {
    fd: OwnedFd,
    pub dev: DevNum,
    /// The kernel name (`sdb`, `nullb0`), when sysfs knows the number.
    pub name: Option<String>,
    pub size: u64,
    pub logical: u32,
    pub physical: u32,
}

/// Where the flushes of `name` go when it has no drive (loop, zram): the sentence and the
/// next step. A loop device's flush is an fsync of its backing file, so the file system
/// under it, and its disk, decide.
pub fn without_drive(name: &str) -> Option<(String, String)> {
    use std::os::unix::fs::MetadataExt;
    let dir = PathBuf::from("/sys/class/block").join(name);
    if dir.join("comp_algorithm").exists() {
        return Some((
            format!(
                "{name} is a zram device: its data lives in memory, and a power cut loses all of \
                 it whatever a flush did"
            ),
            "nothing to judge: keep nothing on it that must survive a power cut".into(),
        ));
    }
    let backing = super::sysfs::read_attr_text(&dir.join("loop/backing_file")).ok()?;
    let backing = backing.trim_end();
    let shown = crate::model::text::neutralize_controls(backing);
    let (under, disk) = match std::fs::metadata(backing) {
        Ok(meta) => {
            let dev = direct::devnum(meta.dev());
            let fs = fs_type(Path::new(backing));
            match direct::block_name(dev) {
                Some(part) => {
                    let disk = direct::block_name(super::scan::whole_disk(dev))
                        .unwrap_or_else(|| part.clone());
                    let on = if disk == part {
                        part
                    } else {
                        format!("{part} of {disk}")
                    };
                    (format!("{fs} on {on}"), Some(disk))
                }
                None => (fs, None),
            }
        }
        Err(e) => (format!("a file that cannot be reached ({e})"), None),
    };
    let sentence = format!(
        "{name} is a loop device over {shown} on {under}: it has no drive of its own, so its \
         flushes go to that file system and timing {name} judges nothing"
    );
    let next = match disk {
        Some(disk) => format!(
            "judge {disk} instead: disktriage flushcheck /dev/{disk} on a disk that holds \
             nothing, or triage it"
        ),
        None => "nothing to judge here: nothing under it keeps data through a power cut".into(),
    };
    Some((sentence, next))
}

/// The file system type `path` is on, in words.
fn fs_type(path: &Path) -> String {
    use nix::sys::statfs::{
        BTRFS_SUPER_MAGIC, EXT4_SUPER_MAGIC, FUSE_SUPER_MAGIC, NFS_SUPER_MAGIC, TMPFS_MAGIC,
        XFS_SUPER_MAGIC, statfs,
    };
    let Ok(kind) = statfs(path).map(|s| s.filesystem_type()) else {
        return "a file system".into();
    };
    [
        (EXT4_SUPER_MAGIC, "ext4"),
        (XFS_SUPER_MAGIC, "xfs"),
        (BTRFS_SUPER_MAGIC, "btrfs"),
        (TMPFS_MAGIC, "tmpfs (memory)"),
        (FUSE_SUPER_MAGIC, "a FUSE file system"),
        (NFS_SUPER_MAGIC, "NFS"),
    ]
    .into_iter()
    .find(|(magic, _)| *magic == kind)
    .map_or_else(|| "a file system".to_string(), |(_, w)| w.to_string())
}

/// The sysfs directory of a device number.
pub fn dev_dir(dev: DevNum) -> PathBuf {
    PathBuf::from(format!("/sys/dev/block/{dev}"))
}

/// What the admin's path named, held by O_PATH: the guard looks at it, and `open` opens this
/// very object, never the name again.
pub struct PinnedDevice {
    pinned: OwnedFd,
    pub dev: DevNum,
    /// The kernel name (`sdb`, `nullb0`), when sysfs knows the number.
    pub name: Option<String>,
}

impl PinnedDevice {
    /// Resolves `path` once and checks that it is a block device.
    pub fn pin(path: &Path) -> io::Result<PinnedDevice> {
        let pinned = direct::pin(path)?;
        let Opened::Block { dev, name } = direct::describe_fd(&pinned)? else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a block device (the flush check writes to a disk)",
            ));
        };
        Ok(PinnedDevice { pinned, dev, name })
    }

    /// Opens the pinned device with O_DIRECT: for `write` read-write and O_EXCL (EBUSY while
    /// mounted or held), else read-only. The caller checks what was opened before any write.
    pub fn open(&self, write: bool) -> io::Result<FlushDevice> {
        let fd = direct::reopen(
            &self.pinned,
            OpenSpec {
                write,
                direct: true,
                exclusive: write,
                sync: SyncMode::None,
            },
        )?;
        let (size, logical, physical) = direct::block_geometry(&fd)?;
        Ok(FlushDevice {
            fd,
            dev: self.dev,
            name: self.name.clone(),
            size,
            logical,
            physical,
        })
    }
}

impl FlushDevice {
    /// Whether it is still the device chosen; else the refusal.
    pub fn refuse_unless_chosen(&self, chosen: &ChosenDevice) -> io::Result<Result<(), String>> {
        direct::refuse_unless_chosen(&self.fd, chosen)
    }

    /// The descriptor, for `sys`'s other commands (BLKDISCARD).
    pub(super) fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// A second handle, for pass-through commands taking a `File`.
    pub fn command_file(&self) -> io::Result<std::fs::File> {
        Ok(std::fs::File::from(self.fd.try_clone()?))
    }

    /// The kernel's read-only flag (BLKROGET).
    pub fn read_only(&self) -> io::Result<bool> {
        direct::read_only_fd(&self.fd)
    }

    /// A buffer aligned for O_DIRECT of `len` bytes, zeroed.
    pub fn buffer(len: usize) -> io::Result<AlignedBuf> {
        AlignedBuf::zeroed(len.max(1), 4096)
    }

    /// Writes `buf` (from `buffer`) at `offset`, durable as `how`; returns the time.
    pub fn write(&self, buf: &[u8], offset: u64, how: Durability) -> io::Result<Duration> {
        let start = Instant::now();
        let mut done = 0usize;
        while done < buf.len() {
            let at = offset + done as u64;
            let n = match how {
                Durability::Dsync => pwrite_dsync(&self.fd, &buf[done..], at),
                Durability::Plain | Durability::WriteThenFlush => {
                    direct::write_at(&self.fd, &buf[done..], at)
                }
            };
            match n {
                Ok(0) => return Err(io::Error::from_raw_os_error(libc::EIO)),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if how == Durability::WriteThenFlush {
            self.flush_data()?;
        }
        Ok(start.elapsed())
    }

    /// One cache flush (fdatasync); returns how long it took.
    pub fn flush(&self) -> io::Result<Duration> {
        let start = Instant::now();
        self.flush_data()?;
        Ok(start.elapsed())
    }

    fn flush_data(&self) -> io::Result<()> {
        loop {
            match direct::sync_data(&self.fd) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => return other,
            }
        }
    }

    /// Reads at `offset`; returns the count (short only at the end).
    pub fn read(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut done = 0usize;
        while done < buf.len() {
            match direct::read_at(&self.fd, &mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    /// `None` while it answers as the device opened, else why not.
    pub fn gone(&self) -> Option<String> {
        match direct::block_geometry(&self.fd) {
            Ok((size, _, _)) if size == self.size => None,
            Ok((size, _, _)) => Some(format!(
                "the device's size changed from {} to {size} bytes",
                self.size
            )),
            Err(e) => Some(format!(
                "the device cannot be asked its size any more: {}",
                super::error::describe_io(&e)
            )),
        }
    }
}

/// pwritev2 with RWF_DSYNC: this one write is durable when it returns.
fn pwrite_dsync(fd: &OwnedFd, buf: &[u8], offset: u64) -> io::Result<usize> {
    let off = libc::off_t::try_from(offset)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))?;
    let iov = libc::iovec {
        iov_base: buf.as_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: `iov` points at `buf`, which outlives the call and is only read by the kernel
    // (a write); one iovec is passed with count 1; the fd is open.
    let n = unsafe { libc::pwritev2(fd.as_raw_fd(), &iov, 1, off, libc::RWF_DSYNC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(usize::try_from(n).unwrap_or(0))
}
