//! Files a scan or triage writes beside its work (mapfile, badblocks list, Prometheus
//! textfile): held by their directory, checked before the work starts, replaced atomically,
//! never through a link or into /proc or /sys, and read back (a mapfile) only when the running
//! user owns it.

use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::confined::{self, Access};
use super::direct;
use crate::model::DevNum;

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

/// Opens the directory `path` names its file in (followed as given). With `refuse_shared`, a
/// world-writable one without the sticky bit is refused: the file could be swapped there.
pub fn open_parent(
    path: &Path,
    refuse_shared: bool,
) -> io::Result<(OwnedFd, String, std::fs::Metadata)> {
    let name = match path.file_name().map(|n| n.to_str()) {
        Some(Some(n)) if !n.is_empty() && n != "." && n != ".." => n.to_string(),
        Some(None) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "its file name is not UTF-8: name the file in plain characters",
            ));
        }
        _ if path.is_dir() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is a directory: name a file in it (DIR/NAME)",
            ));
        }
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "it names no file (it ends in /, . or ..)",
            ));
        }
    };
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(parent)?;
    let meta = dir.metadata()?;
    if let Some(fs) = kernel_interface(&dir) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is {fs}, a kernel interface, not a file system for files: name a file on a \
                 disk (e.g. under /var/lib or /tmp)",
                parent.display()
            ),
        ));
    }
    if refuse_shared && meta.mode() & 0o002 != 0 && meta.mode() & 0o1000 == 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "anyone can write to {} (and it has no sticky bit): choose a directory only \
                 its owner can write, or `chmod o-w` it",
                parent.display()
            ),
        ));
    }
    Ok((OwnedFd::from(dir), name, meta))
}

/// The kernel interface `dir` is in (`/proc`, `/sys`), in words; `None` for a file system that
/// holds files. A file written there is a command to the kernel, never a report.
fn kernel_interface(dir: &impl std::os::fd::AsFd) -> Option<&'static str> {
    use nix::sys::statfs::{
        CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, DEBUGFS_MAGIC, DEVPTS_SUPER_MAGIC,
        PROC_SUPER_MAGIC, SECURITYFS_MAGIC, SYSFS_MAGIC, TRACEFS_MAGIC, fstatfs,
    };
    let kind = fstatfs(dir).ok()?.filesystem_type();
    [
        (PROC_SUPER_MAGIC, "procfs (/proc)"),
        (SYSFS_MAGIC, "sysfs (/sys)"),
        (CGROUP_SUPER_MAGIC, "cgroupfs"),
        (CGROUP2_SUPER_MAGIC, "cgroup2fs"),
        (DEBUGFS_MAGIC, "debugfs"),
        (SECURITYFS_MAGIC, "securityfs"),
        (TRACEFS_MAGIC, "tracefs"),
        (DEVPTS_SUPER_MAGIC, "devpts"),
    ]
    .into_iter()
    .find(|(magic, _)| *magic == kind)
    .map(|(_, words)| words)
}

impl OutputFile {
    /// Opens the directory of `path` (its own path followed as given) and keeps the name.
    pub fn at(path: &Path) -> io::Result<OutputFile> {
        let (dir, name, meta) = open_parent(path, true)?;
        Ok(OutputFile {
            dir,
            name,
            path: path.to_path_buf(),
            fs_dev: direct::devnum(meta.dev()),
        })
    }

    /// The file opened for reading line by line (a read past `MAX_MAPFILE` fails), `None` when
    /// missing. Refused: a symlink, FIFO, device or directory, and a file another user owns or
    /// can write (its contents decide what the scan reads; a planted one could mark the whole
    /// disk read).
    pub fn open_existing(&self) -> io::Result<Option<io::BufReader<io::Take<std::fs::File>>>> {
        let file = match confined::open_regular_at(&self.dir, &self.name, Access::Read) {
            Ok(f) => f,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(io::Error::other(e.to_string())),
        };
        let meta = file.metadata()?;
        let me = nix::unistd::geteuid().as_raw();
        if meta.uid() != me {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "it belongs to uid {}, not to uid {me} who runs the scan: another user's file \
                     is not trusted to say what was read (remove it or name another file)",
                    meta.uid()
                ),
            ));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "other users can write it (mode {:04o}): it is not trusted to say what was \
                     read (`chmod go-w` it, or name another file)",
                    meta.mode() & 0o7777
                ),
            ));
        }
        if meta.len() > MAX_MAPFILE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "it is {} MiB, more than the {} MiB a mapfile of the worst disk reaches",
                    meta.len() >> 20,
                    MAX_MAPFILE >> 20
                ),
            ));
        }
        Ok(Some(io::BufReader::new(file.take(MAX_MAPFILE))))
    }

    /// Refuses anything but a regular file at the name (link, FIFO, device, directory), never
    /// followed. Nothing there passes.
    pub fn refuse_unless_replaceable(&self) -> io::Result<()> {
        match confined::kind_at(&self.dir, &self.name) {
            None | Some("a regular file") => Ok(()),
            Some(kind) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("it is {kind}, not a regular file: name a file or a new name"),
            )),
        }
    }

    /// Refuses a name that exists already (never followed): the file is written new, so
    /// nothing is lost to it.
    pub fn refuse_existing(&self) -> io::Result<()> {
        match confined::kind_at(&self.dir, &self.name) {
            None => Ok(()),
            Some(kind) => Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "it already exists (as {kind}): it is written new, never over another \
                     file; move the old one away or name another file"
                ),
            )),
        }
    }

    /// Replaces the file with `text` atomically (a temporary file renamed over it).
    pub fn replace(&self, text: &str) -> io::Result<()> {
        self.replace_with(&mut |w| w.write_all(text.as_bytes()))
    }

    /// `replace`, the text written by `write` as it goes.
    pub fn replace_with(
        &self,
        write: &mut dyn FnMut(&mut dyn io::Write) -> io::Result<()>,
    ) -> io::Result<()> {
        confined::replace_file_with(&self.dir, &self.name, 0o644, write)
            .map_err(|e| io::Error::other(format!("cannot {} it: {}", e.op, e.error)))
    }
}
