//! The device side of the surface scan: the target opened read-only with O_DIRECT (never for
//! writing, never exclusively: a scan is allowed on a mounted or held device because it only
//! reads), its geometry and largest transfer, the timed reads `scan::engine` asks for, and
//! whether it is still the device the scan started on. Also the scan's output files (mapfile,
//! badblocks list): opened through their directory, never through a link at their name, and
//! replaced atomically.
//!
//! A plain O_DIRECT read cannot be abandoned: a weak sector is waited for through the kernel's
//! own retries (`/sys/block/X/device/timeout`, 30 s by default) and then classified TIME. The
//! per-command timeout of SG_IO is not used here yet.

use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::confined::{self, Access};
use super::direct::{self, AlignedBuf, OpenSpec, Opened, SyncMode};
use super::sysfs::read_attr_text;
use crate::model::DevNum;
use crate::scan::Span;
use crate::scan::engine::{BlockReader, ReadOutcome, TimedRead};

/// The largest read of a scan whatever the device says (the kernel splits larger requests).
pub const MAX_BLOCK: u64 = 64 << 20;

/// A block device opened for the scan.
pub struct ScanDevice {
    fd: OwnedFd,
    pub dev: DevNum,
    /// The kernel name (`sdb`, `loop0`), when sysfs knows the number.
    pub name: Option<String>,
    pub size: u64,
    pub logical: u32,
    pub physical: u32,
    /// `queue/max_sectors_kb` in bytes: the largest request the kernel sends the device.
    pub max_transfer: Option<u64>,
    /// For a partition: where it starts on its disk, in bytes (sysfs `start`, 512-byte units).
    pub partition_start: Option<u64>,
    /// `diskseq` at open: another device under the same number has another one.
    diskseq: Option<u64>,
    buf: Option<AlignedBuf>,
}

/// The sysfs directory of a device number.
fn dev_dir(dev: DevNum) -> PathBuf {
    PathBuf::from(format!("/sys/dev/block/{dev}"))
}

/// The whole disk a device is part of: itself, or for a partition its parent.
pub fn whole_disk(dev: DevNum) -> DevNum {
    let dir = dev_dir(dev);
    if !dir.join("partition").exists() {
        return dev;
    }
    read_attr_text(&dir.join("../dev"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(dev)
}

fn number(path: &Path) -> Option<u64> {
    read_attr_text(path).ok()?.trim().parse().ok()
}

impl ScanDevice {
    /// Opens `path` for the scan: resolved once, checked to be a block device, then opened
    /// read-only with O_DIRECT through the same descriptor.
    pub fn open(path: &Path) -> io::Result<ScanDevice> {
        let pinned = direct::pin(path)?;
        let Opened::Block { dev, name } = direct::describe_fd(&pinned)? else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a block device (a scan reads a disk or a partition)",
            ));
        };
        let fd = direct::reopen(
            &pinned,
            OpenSpec {
                write: false,
                direct: true,
                exclusive: false,
                sync: SyncMode::None,
            },
        )?;
        let (size, logical, physical) = direct::block_geometry(&fd)?;
        let disk_dir = dev_dir(whole_disk(dev));
        let max_transfer =
            number(&disk_dir.join("queue/max_sectors_kb")).map(|kb| kb.saturating_mul(1024));
        Ok(ScanDevice {
            fd,
            dev,
            name,
            size,
            logical,
            physical,
            max_transfer,
            diskseq: number(&disk_dir.join("diskseq")),
            partition_start: number(&dev_dir(dev).join("partition"))
                .and_then(|_| number(&dev_dir(dev).join("start")))
                .map(|sectors| sectors.saturating_mul(512)),
            buf: None,
        })
    }

    /// Whether the opened device is still the one the admin chose (`ChosenDevice`): the
    /// sentence of the refusal when it is not (another device under the name since).
    pub fn refuse_unless_chosen(
        &self,
        chosen: &crate::model::ChosenDevice,
    ) -> io::Result<Result<(), String>> {
        direct::refuse_unless_chosen(&self.fd, chosen)
    }

    /// Prepares the read buffer for blocks of `block` bytes.
    pub fn set_block(&mut self, block: u64) -> io::Result<()> {
        let len = usize::try_from(block)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "block too large"))?;
        self.buf = Some(AlignedBuf::for_requests(len, false)?);
        Ok(())
    }
}

impl BlockReader for ScanDevice {
    fn read(&mut self, span: Span) -> TimedRead {
        let start = Instant::now();
        let outcome = match self.buf.as_mut() {
            None => ReadOutcome::Failed(libc::ENOMEM),
            Some(buf) => {
                let len = usize::try_from(span.length).unwrap_or(usize::MAX);
                match buf.as_mut_slice().get_mut(..len) {
                    None => ReadOutcome::Failed(libc::EINVAL),
                    Some(slice) => read_full(&self.fd, slice, span.offset),
                }
            }
        };
        TimedRead {
            outcome,
            elapsed: start.elapsed(),
        }
    }

    fn gone(&mut self) -> Option<String> {
        let dir = dev_dir(self.dev);
        if !dir.exists() {
            return Some(format!("the device {} was removed", self.dev));
        }
        let disk_dir = dev_dir(whole_disk(self.dev));
        let seq = number(&disk_dir.join("diskseq"));
        if self.diskseq.is_some() && seq != self.diskseq {
            return Some(format!(
                "the device {} is another disk now (diskseq {} -> {})",
                self.dev,
                self.diskseq.unwrap_or(0),
                seq.map_or("none".into(), |s| s.to_string())
            ));
        }
        match direct::block_geometry(&self.fd) {
            Ok((size, _, _)) if size != self.size => Some(format!(
                "the device's size changed from {} to {size} bytes",
                self.size
            )),
            Ok(_) => None,
            Err(e) => Some(format!(
                "the device cannot be asked its size any more: {}",
                super::error::describe_io(&e)
            )),
        }
    }
}

/// Reads all of `buf` at `offset`: the errno of a failed read, or how much came before the
/// device's end.
fn read_full(fd: &OwnedFd, buf: &mut [u8], offset: u64) -> ReadOutcome {
    let mut got = 0usize;
    while got < buf.len() {
        match direct::read_at(fd, &mut buf[got..], offset + got as u64) {
            Ok(0) => return ReadOutcome::Short(got as u64),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return ReadOutcome::Failed(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    }
    ReadOutcome::Read
}

/// The largest mapfile read back (a mapfile of a dying disk with a million bad areas is about
/// 30 MiB).
const MAX_MAPFILE: u64 = 256 << 20;

/// A file the scan writes (a mapfile, a badblocks list), held by its directory.
pub struct OutputFile {
    dir: OwnedFd,
    name: String,
    /// The path as given, for messages.
    pub path: PathBuf,
    /// The device of the file system the directory is on.
    pub fs_dev: DevNum,
}

impl OutputFile {
    /// Opens the directory of `path` (its own path followed as given) and keeps the name.
    pub fn at(path: &Path) -> io::Result<OutputFile> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.is_empty() && *n != "." && *n != "..")
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name (UTF-8)"))?
            .to_string();
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(parent)?;
        let fs_dev = direct::devnum(dir.metadata()?.dev());
        Ok(OutputFile {
            dir: OwnedFd::from(dir),
            name,
            path: path.to_path_buf(),
            fs_dev,
        })
    }

    /// The file's text, `None` when it does not exist; a symlink, FIFO, device or directory
    /// at the name is refused.
    pub fn read_existing(&self) -> io::Result<Option<String>> {
        let file = match confined::open_regular_at(&self.dir, &self.name, Access::Read) {
            Ok(f) => f,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(io::Error::other(e.to_string())),
        };
        let mut text = String::new();
        file.take(MAX_MAPFILE).read_to_string(&mut text)?;
        Ok(Some(text))
    }

    /// Replaces the file with `text` atomically (a temporary file renamed over it).
    pub fn replace(&self, text: &str) -> io::Result<()> {
        confined::replace_file_at(&self.dir, &self.name, text.as_bytes(), 0o644)
            .map_err(|e| io::Error::other(format!("cannot {} it: {}", e.op, e.error)))
    }
}
