//! A file of records made durable one by one, on a disk other than the one written: the
//! power-cut check's LOG and the capacity probe's journal of saved sectors. Created new (never an old LOG reused, never
//! through a symlink, only a regular file, in a directory others cannot swap it in), every
//! append made durable (written, then fdatasync) before the next record goes to the device.
//! Whether the LOG's file system lives on the device checked is `activity::target_family`'s.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, SFlag, fstat};

use super::confined::{self, Access};
use super::direct::devnum;
use crate::model::DevNum;

/// The largest LOG read back (a recording of days at thousands of records a second).
const MAX_LOG: u64 = 1 << 30;

/// The directory a LOG is in, opened once; the file is then made and read through it.
pub struct LogDir {
    dir: OwnedFd,
    name: String,
    /// The path as given, for messages.
    pub path: PathBuf,
    /// The device number of the file system the directory is on.
    pub fs_dev: DevNum,
    /// Whether that file system keeps its data in RAM only (tmpfs, ramfs): fine for a test,
    /// lost in a real power cut.
    pub in_ram: bool,
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

impl LogDir {
    /// Opens the directory of `path` (followed as given) and keeps the name. With `writing`,
    /// a directory anyone can write without the sticky bit is refused: the LOG could be
    /// swapped there before the verify reads it.
    pub fn open(path: &Path, writing: bool) -> io::Result<LogDir> {
        let (dir, name, meta) = super::output_file::open_parent(path, writing)?;
        let in_ram = nix::sys::statfs::fstatfs(&dir).is_ok_and(|s| {
            let t = s.filesystem_type();
            t == nix::sys::statfs::TMPFS_MAGIC || t.0 == 0x8584_58f6 // ramfs
        });
        Ok(LogDir {
            dir,
            name,
            path: path.to_path_buf(),
            fs_dev: devnum(meta.dev()),
            in_ram,
        })
    }

    /// Creates the LOG: a new regular file (O_CREAT|O_EXCL|O_NOFOLLOW), so an existing file
    /// (an old LOG, a symlink, a device node, a FIFO) is refused and never mixed in.
    pub fn create(&self) -> io::Result<LogFile> {
        self.create_new(
            "--record starts a new LOG (move the old one away, or verify it with --verify)",
            0o644,
        )
    }

    /// `create` with `mode`, saying `when_it_exists` after "it already exists: " (what to do
    /// instead).
    pub fn create_new(&self, when_it_exists: &str, mode: u32) -> io::Result<LogFile> {
        let fd = openat(
            &self.dir,
            self.name.as_str(),
            OFlag::O_WRONLY
                | OFlag::O_APPEND
                | OFlag::O_CREAT
                | OFlag::O_EXCL
                | OFlag::O_NOFOLLOW
                | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(mode),
        )
        .map_err(|e| match e {
            nix::errno::Errno::EEXIST => io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "it already exists{}: {when_it_exists}",
                    self.existing_kind()
                ),
            ),
            e => io::Error::from(e),
        })?;
        let st = fstat(&fd).map_err(io::Error::from)?;
        if SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT != SFlag::S_IFREG {
            return Err(invalid("it is not a regular file".into()));
        }
        let file = File::from(fd);
        // The new name must be durable too: a LOG whose directory entry is lost in the cut
        // is a LOG lost.
        nix::unistd::fsync(&self.dir).map_err(io::Error::from)?;
        Ok(LogFile {
            file,
            dev: st.st_dev,
            ino: st.st_ino,
        })
    }

    /// What is at the name already, in words (" as a block device"); empty for a regular
    /// file or when it cannot be told.
    fn existing_kind(&self) -> String {
        match confined::kind_at(&self.dir, &self.name) {
            None | Some("a regular file") => String::new(),
            Some("a block device") => {
                " as a block device (the LOG is a file on another disk)".to_string()
            }
            Some(kind) => format!(" as {kind}"),
        }
    }

    /// The LOG's text (a regular file, never through a symlink).
    pub fn read(&self) -> io::Result<String> {
        String::from_utf8(self.read_bytes()?)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
    }

    /// The file's bytes (a regular file, never through a symlink), at most `MAX_LOG`.
    pub fn read_bytes(&self) -> io::Result<Vec<u8>> {
        let file = confined::open_regular_at(&self.dir, &self.name, Access::Read)
            .map_err(|e| io::Error::other(e.to_string()))?;
        let mut bytes = Vec::new();
        file.take(MAX_LOG).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Removes the file (never through a symlink: the name itself) and makes that durable.
    pub fn remove(&self) -> io::Result<()> {
        nix::unistd::unlinkat(
            &self.dir,
            self.name.as_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        )
        .map_err(io::Error::from)?;
        nix::unistd::fsync(&self.dir).map_err(io::Error::from)
    }
}

/// The LOG being written.
pub struct LogFile {
    file: File,
    dev: u64,
    ino: u64,
}

impl LogFile {
    /// Appends `text` and makes it durable (fdatasync) before returning.
    pub fn append_durably(&mut self, text: &str) -> io::Result<()> {
        self.append_bytes_durably(text.as_bytes())
    }

    /// `append_durably` for bytes.
    pub fn append_bytes_durably(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)?;
        loop {
            match nix::unistd::fdatasync(self.file.as_fd()) {
                Err(nix::errno::Errno::EINTR) => {}
                other => return other.map_err(io::Error::from),
            }
        }
    }

    /// Device and inode of the LOG (for the messages and tests).
    pub fn id(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_is_created_once_and_appended_durably() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("flush.log");
        let log_dir = LogDir::open(&path, true).expect("dir");
        let mut log = log_dir.create().expect("created");
        log.append_durably("a\n").expect("append");
        log.append_durably("b\n").expect("append");
        assert_eq!(log_dir.read().expect("read"), "a\nb\n");
        let e = LogDir::open(&path, true)
            .expect("dir")
            .create()
            .err()
            .expect("refused");
        assert!(e.to_string().contains("already exists"), "{e}");
    }

    #[test]
    fn a_symlink_is_neither_created_through_nor_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("real");
        std::fs::write(&target, "x").expect("write");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let d = LogDir::open(&link, true).expect("dir");
        assert!(d.create().is_err());
        assert!(d.read().is_err());
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).expect("symlink");
        assert!(
            LogDir::open(&dangling, true)
                .expect("dir")
                .create()
                .is_err()
        );
        assert!(!dir.path().join("nowhere").exists());
    }
}
