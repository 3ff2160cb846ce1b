//! Acting on the device the admin chose: its sysfs directory opened once and checked to still
//! be that device (number, `diskseq`, a loop device's image) before anything is written
//! through it, with a loop device's node held open so it cannot be re-attached meanwhile.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::super::direct;
use super::super::error::DriveError;
use super::super::parse::parse_devnum;
use super::{MAX_ATTR_BYTES, SysRoot, dev_node_path, not_regular};
use crate::model::ChosenDevice;

/// A block device's sysfs directory, opened once and checked (`SysRoot::open_chosen_dir`);
/// attributes go through it, never the path, so a later device under the name is never reached.
#[derive(Debug)]
pub struct DeviceDir {
    dir: std::os::fd::OwnedFd,
    path: PathBuf,
    /// A loop device's node, held open while the directory is used: a detach is then deferred
    /// to the last close, so the device checked stays the device written (a loop device keeps
    /// its sysfs directory across detach and attach).
    _held: Option<fs::File>,
}

impl DeviceDir {
    /// The path of attribute `rel` (for messages).
    pub fn path_of(&self, rel: &str) -> PathBuf {
        self.path.join(rel)
    }

    /// Reads attribute `rel` (a regular file, without blocking), trimmed.
    pub fn read(&self, rel: &str) -> io::Result<String> {
        use nix::fcntl::{OFlag, openat};
        use nix::sys::stat::Mode;
        let fd = openat(
            &self.dir,
            rel,
            OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW,
            Mode::empty(),
        )
        .map_err(io::Error::from)?;
        let file = fs::File::from(fd);
        not_regular(&file.metadata()?)?;
        let mut buf = Vec::new();
        file.take(MAX_ATTR_BYTES).read_to_end(&mut buf)?;
        Ok(String::from_utf8_lossy(&buf).trim().to_string())
    }

    /// Writes attribute `rel` (a regular file, without blocking).
    pub fn write(&self, rel: &str, value: &str) -> io::Result<()> {
        use nix::fcntl::{OFlag, openat};
        use nix::sys::stat::Mode;
        use std::io::Write;
        let fd = openat(
            &self.dir,
            rel,
            OFlag::O_WRONLY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW,
            Mode::empty(),
        )
        .map_err(io::Error::from)?;
        let mut file = fs::File::from(fd);
        not_regular(&file.metadata()?)?;
        file.write_all(value.as_bytes())
    }

    /// What the directory says the device is now: number, `diskseq`, a loop device's backing
    /// path (its identity is not in sysfs).
    fn found(&self, name: &str) -> ChosenDevice {
        let backing = self
            .read("loop/backing_file")
            .ok()
            .filter(|s| !s.is_empty());
        ChosenDevice {
            name: name.to_string(),
            dev: self.read("dev").ok().as_deref().and_then(parse_devnum),
            diskseq: self.read("diskseq").ok().and_then(|s| s.parse().ok()),
            loop_file: None,
            backing_file: backing,
            serial: None,
            disk: None,
        }
    }
}

/// Is the device chosen a loop device attached to a file (by what was recorded of it)?
fn is_loop(chosen: &ChosenDevice) -> bool {
    chosen.disk.is_none()
        && (chosen.loop_file.is_some() || chosen.backing_file.is_some())
        && chosen.dev.is_some_and(|d| d.major == LOOP_MAJOR)
}

/// The block major of loop devices (include/uapi/linux/major.h).
const LOOP_MAJOR: u32 = 7;

impl SysRoot {
    /// Opens `chosen`'s sysfs directory and checks on it that it is still that device: one
    /// attached under the name since is refused, with the sentence, before any write.
    pub fn open_chosen_dir(&self, chosen: &ChosenDevice) -> Result<DeviceDir, DriveError> {
        use nix::fcntl::{OFlag, open};
        use nix::sys::stat::Mode;
        if !crate::model::is_kernel_name(&chosen.name) {
            return Err(DriveError::Invalid(format!(
                "{:?} is not a kernel device name",
                crate::model::text::neutralize_controls(&chosen.name)
            )));
        }
        let path = self.block_dir(&chosen.name);
        let dir = match open(
            &path,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) {
            Ok(dir) => dir,
            Err(nix::errno::Errno::ENOENT) => {
                return Err(DriveError::NotChosen(
                    chosen.refusal(None).unwrap_or_default(),
                ));
            }
            Err(e) => return Err(DriveError::io("open", &path, e)),
        };
        let held = if self.root == Path::new("/") && is_loop(chosen) {
            Some(self.hold_loop_node(chosen)?)
        } else {
            None
        };
        let dir = DeviceDir {
            dir,
            path,
            _held: held,
        };
        if let Some(why) = chosen.refusal(Some(&dir.found(&chosen.name))) {
            return Err(DriveError::NotChosen(why));
        }
        Ok(dir)
    }

    /// Opens a loop device's node (read-only, non-blocking, nothing read) and checks it is the
    /// device chosen: held open, it cannot be attached to another file.
    fn hold_loop_node(&self, chosen: &ChosenDevice) -> Result<fs::File, DriveError> {
        use std::os::unix::fs::OpenOptionsExt;
        let node = dev_node_path(&chosen.name);
        let file = match fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&node)
        {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(DriveError::NotChosen(
                    chosen.refusal(None).unwrap_or_default(),
                ));
            }
            Err(e) => return Err(DriveError::from_io("open", &node, &e)),
        };
        match direct::refuse_unless_chosen(&file, chosen) {
            Ok(Ok(())) => Ok(file),
            Ok(Err(why)) => Err(DriveError::NotChosen(why)),
            Err(e) => Err(DriveError::from_io("fstat", &node, &e)),
        }
    }
}
