//! The metadata test's system calls: a scratch directory of its own in the target directory,
//! and one create (O_CREAT|O_EXCL, close), stat or unlink at a time, each relative to the
//! scratch directory's descriptor so a path swapped under the test cannot send it elsewhere.
//!
//! Dropping `ScratchDir` removes it and every file left in it: a failed, stopped (Ctrl-C,
//! SIGTERM) or panicking run leaves nothing. Only a SIGKILL can; the name says what it is.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::Mode;
use nix::unistd::UnlinkatFlags;

/// Prefix of the scratch directory's name: `.disktriage-metadata-<pid>-<n>`.
pub const SCRATCH_PREFIX: &str = ".disktriage-metadata-";

/// What the target path is, for the metadata test's checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirTarget {
    /// A directory; its real path (symlinks resolved).
    Directory(PathBuf),
    /// Something else: "a block device", "a regular file", ...
    Other(&'static str),
}

/// Looks at `path` once (symlinks followed).
pub fn classify(path: &Path) -> io::Result<DirTarget> {
    let meta = std::fs::metadata(path)?;
    let ft = meta.file_type();
    use std::os::unix::fs::FileTypeExt;
    Ok(if ft.is_dir() {
        DirTarget::Directory(std::fs::canonicalize(path)?)
    } else if ft.is_block_device() {
        DirTarget::Other("a block device")
    } else if ft.is_file() {
        DirTarget::Other("a regular file")
    } else if ft.is_char_device() {
        DirTarget::Other("a character device")
    } else {
        DirTarget::Other("not a directory")
    })
}

/// Free and total bytes of the file system holding `path`, for an unprivileged user (statvfs
/// `f_bavail`, `f_blocks`).
pub fn free_space(path: &Path) -> io::Result<(u64, u64)> {
    let st = nix::sys::statvfs::statvfs(path).map_err(io::Error::from)?;
    let unit = st.fragment_size() as u64;
    Ok((
        (st.blocks_available() as u64).saturating_mul(unit),
        (st.blocks() as u64).saturating_mul(unit),
    ))
}

/// `dir/<stem>-<n>.<ext>` for the first n from 1 that names nothing yet (not even a dangling
/// link): the name of a new test file.
pub fn unused_name(dir: &Path, stem: &str, ext: &str) -> io::Result<PathBuf> {
    for n in 1..10_000u32 {
        let path = dir.join(format!("{stem}-{n}.{ext}"));
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(path),
            Err(e) => return Err(e),
            Ok(_) => {}
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{stem}-1.{ext} to {stem}-9999.{ext} all exist"),
    ))
}

/// The device number of the file system holding `path` (`st_dev`).
pub fn filesystem_dev(path: &Path) -> io::Result<crate::model::DevNum> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path)?.dev();
    Ok(crate::model::DevNum {
        major: nix::sys::stat::major(dev) as u32,
        minor: nix::sys::stat::minor(dev) as u32,
    })
}

/// A scratch directory the test created, with the files it holds now.
pub struct ScratchDir {
    parent: OwnedFd,
    dir: OwnedFd,
    name: OsString,
    path: PathBuf,
    /// `present[i]`: file `i` exists (created and not deleted yet).
    present: Vec<bool>,
}

/// The name of file `i`: fixed width, so creation order is name order (bonnie++ numbers its
/// files too).
pub fn file_name(i: usize) -> CString {
    // A decimal number never holds a NUL byte.
    CString::new(format!("f{i:010}")).unwrap_or_default()
}

impl ScratchDir {
    /// Creates a new, empty scratch directory (0700) in `parent_path`; the error is the OS's,
    /// for the caller to word.
    pub fn create(parent_path: &Path) -> io::Result<ScratchDir> {
        let parent = nix::fcntl::open(
            parent_path,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(io::Error::from)?;
        let pid = std::process::id();
        let mut n = 0u32;
        let name = loop {
            let name = OsString::from(format!("{SCRATCH_PREFIX}{pid}-{n}"));
            match nix::sys::stat::mkdirat(&parent, name.as_os_str(), Mode::S_IRWXU) {
                Ok(()) => break name,
                Err(nix::errno::Errno::EEXIST) if n < 1000 => n += 1,
                Err(e) => return Err(io::Error::from(e)),
            }
        };
        let dir = match nix::fcntl::openat(
            &parent,
            name.as_os_str(),
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(e) => {
                let _ = nix::unistd::unlinkat(&parent, name.as_os_str(), UnlinkatFlags::RemoveDir);
                return Err(io::Error::from(e));
            }
        };
        let path = parent_path.join(&name);
        Ok(ScratchDir {
            parent,
            dir,
            name,
            path,
            present: Vec::new(),
        })
    }

    /// A second descriptor of the scratch directory itself (a run's open target).
    pub fn dir_fd(&self) -> io::Result<OwnedFd> {
        self.dir.try_clone()
    }

    /// The scratch directory's path (for messages and reports).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates empty file `i` (open O_CREAT|O_EXCL, close), as bonnie++ does.
    pub fn create_file(&mut self, i: usize) -> io::Result<()> {
        let fd = nix::fcntl::openat(
            &self.dir,
            file_name(i).as_c_str(),
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_CLOEXEC,
            Mode::S_IRUSR | Mode::S_IWUSR,
        )
        .map_err(io::Error::from)?;
        if self.present.len() <= i {
            self.present.resize(i + 1, false);
        }
        self.present[i] = true;
        drop(fd);
        Ok(())
    }

    /// Stats file `i` (without following a symlink).
    pub fn stat_file(&self, i: usize) -> io::Result<()> {
        nix::sys::stat::fstatat(
            &self.dir,
            file_name(i).as_c_str(),
            AtFlags::AT_SYMLINK_NOFOLLOW,
        )
        .map(|_| ())
        .map_err(io::Error::from)
    }

    /// Deletes file `i`.
    pub fn delete_file(&mut self, i: usize) -> io::Result<()> {
        nix::unistd::unlinkat(
            &self.dir,
            file_name(i).as_c_str(),
            UnlinkatFlags::NoRemoveDir,
        )
        .map_err(io::Error::from)?;
        if let Some(p) = self.present.get_mut(i) {
            *p = false;
        }
        Ok(())
    }

    /// Removes every file left and the directory; says what could not be removed (`drop` does
    /// the same but loses the error).
    pub fn remove(mut self) -> io::Result<()> {
        self.clean()
    }

    fn clean(&mut self) -> io::Result<()> {
        let mut first_err = None;
        for i in 0..self.present.len() {
            if self.present[i] {
                match self.delete_file(i) {
                    Ok(()) => {}
                    Err(e) if e.raw_os_error() == Some(libc::ENOENT) => self.present[i] = false,
                    Err(e) => {
                        first_err.get_or_insert(e);
                        self.present[i] = false;
                    }
                }
            }
        }
        if self.name.is_empty() {
            return first_err.map_or(Ok(()), Err);
        }
        let r = nix::unistd::unlinkat(
            &self.parent,
            OsStr::from_bytes(self.name.as_bytes()),
            UnlinkatFlags::RemoveDir,
        );
        self.name = OsString::from_vec(Vec::new());
        match (first_err, r) {
            (Some(e), _) => Err(e),
            (None, Err(e)) => Err(io::Error::from(e)),
            (None, Ok(())) => Ok(()),
        }
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = self.clean();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_directory_is_created_used_and_removed() {
        let top = tempfile::tempdir().unwrap();
        let mut d = ScratchDir::create(top.path()).unwrap();
        let path = d.path().to_path_buf();
        assert!(path.is_dir());
        assert!(
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(SCRATCH_PREFIX)
        );
        d.create_file(0).unwrap();
        d.create_file(3).unwrap();
        assert_eq!(
            d.create_file(3).unwrap_err().raw_os_error(),
            Some(libc::EEXIST),
            "never replaces a file"
        );
        d.stat_file(3).unwrap();
        assert!(d.stat_file(1).is_err());
        d.delete_file(0).unwrap();
        assert!(path.join("f0000000003").exists());
        // Dropped with a file still in it: both go.
        drop(d);
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(top.path()).unwrap().count(), 0);
    }

    #[test]
    fn targets_are_classified() {
        let top = tempfile::tempdir().unwrap();
        assert!(matches!(
            classify(top.path()).unwrap(),
            DirTarget::Directory(_)
        ));
        let f = top.path().join("x");
        std::fs::write(&f, b"x").unwrap();
        assert_eq!(classify(&f).unwrap(), DirTarget::Other("a regular file"));
        assert!(classify(&top.path().join("missing")).is_err());
        std::fs::write(top.path().join("t-1.bin"), b"").unwrap();
        assert_eq!(
            unused_name(top.path(), "t", "bin").unwrap(),
            top.path().join("t-2.bin")
        );
        let (free, total) = free_space(top.path()).unwrap();
        assert!(total > 0 && free <= total);
    }
}
