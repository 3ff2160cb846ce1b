//! Files in directories the program does not own: the change journal's and the history's
//! directories, and the udev rules directory below a target root (the installed system in
//! rescue mode). Whatever is found there may have been planted: a symlink leading elsewhere, a
//! FIFO that blocks an open forever, a device node, a hard link to a file of the system.
//!
//! - `open_checked_dir`: a directory opened without following a symlink, refused when anyone
//!   but root (or the user running) owns it or may write to it.
//! - `open_regular_at`: a file in such a directory, opened relative to its descriptor with
//!   O_NOFOLLOW and O_NONBLOCK (a FIFO never blocks the open), then checked with fstat to be a
//!   regular file (and, when written, to have a single link); O_NONBLOCK is cleared after.
//! - `lock_exclusive`: flock taken by polling, so a wait ends when the caller's stop flag is
//!   set (a signal) or after a bounded time, with a message, never hanging the process.
//! - `walk_in_root` and `replace_file_at`: a directory below a root, each component resolved
//!   inside it (openat2 RESOLVE_IN_ROOT: an absolute link resolves as the booted system would,
//!   a `..` stops at the root), missing directories created, and a file replaced atomically
//!   through the directory's descriptor; `fd_path` says where it really is.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{
    AtFlags, FcntlArg, Flock, FlockArg, OFlag, OpenHow, ResolveFlag, fcntl, openat, openat2,
    readlinkat, renameat,
};
use nix::sys::stat::{FileStat, Mode, SFlag, fchmod, fstat, fstatat, mkdirat};
use nix::unistd::{UnlinkatFlags, unlinkat};

/// The owners a directory holding the program's files may have: root, and the user running
/// when not root; and how to say so.
pub fn allowed_owners() -> (Vec<u32>, String) {
    let euid = nix::unistd::geteuid();
    if euid.is_root() {
        (vec![0], "root".into())
    } else {
        (vec![0, euid.as_raw()], format!("root or uid {euid}"))
    }
}

/// Why a directory was not opened.
#[derive(Debug)]
pub enum DirError {
    /// It could be changed by someone else (or is a link to elsewhere): the problem, in words.
    Unsafe(String),
    Io(io::Error),
}

/// Opens directory `path` without following a symlink at its last component; refused when it
/// is a symlink, not a directory, or owned or writable (group, others) by anyone not allowed.
pub fn open_checked_dir(path: &Path) -> Result<File, DirError> {
    let (owners, _) = allowed_owners();
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => DirError::Unsafe("it is a symbolic link".into()),
            Some(libc::ENOTDIR)
                if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink()) =>
            {
                DirError::Unsafe("it is a symbolic link".into())
            }
            Some(libc::ENOTDIR) => DirError::Unsafe("it is not a directory".into()),
            _ => DirError::Io(e),
        })?;
    let meta = dir.metadata().map_err(DirError::Io)?;
    let mode = meta.mode() & 0o7777;
    if !owners.contains(&meta.uid()) {
        return Err(DirError::Unsafe(format!(
            "it is owned by uid {}",
            meta.uid()
        )));
    }
    if mode & 0o002 != 0 {
        return Err(DirError::Unsafe(format!(
            "it is writable by others (mode {mode:04o})"
        )));
    }
    if mode & 0o020 != 0 {
        return Err(DirError::Unsafe(format!(
            "it is writable by its group (mode {mode:04o})"
        )));
    }
    Ok(dir)
}

/// How a file in a checked directory is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read only; never created.
    Read,
    /// Read and append, created (with `mode`) when missing.
    Append { mode: u32 },
    /// Read and write, created (with `mode`) when missing: a lock file.
    Lock { mode: u32 },
}

/// Why a file in a checked directory was not opened.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("it is a symbolic link, not a file disktriage made; remove it")]
    Symlink,
    #[error("it is {0}, not a regular file; remove it")]
    NotRegular(&'static str),
    #[error("it has {0} hard links, so writing it would change another file too; remove it")]
    HardLinked(libc::nlink_t),
    #[error("{}", crate::sys::error::describe_io_brief(.0))]
    Io(io::Error),
}

impl FileError {
    /// True when the file does not exist (a read of a missing file is no error).
    pub fn is_not_found(&self) -> bool {
        matches!(self, FileError::Io(e) if e.kind() == io::ErrorKind::NotFound)
    }
}

fn kind_word(st: &FileStat) -> &'static str {
    match SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFREG => "a regular file",
        SFlag::S_IFDIR => "a directory",
        SFlag::S_IFLNK => "a symbolic link",
        SFlag::S_IFIFO => "a FIFO (named pipe)",
        SFlag::S_IFSOCK => "a socket",
        SFlag::S_IFCHR => "a character device",
        SFlag::S_IFBLK => "a block device",
        _ => "not a regular file",
    }
}

fn is_regular(st: &FileStat) -> bool {
    st.st_mode & SFlag::S_IFMT.bits() == SFlag::S_IFREG.bits()
}

/// Refuses what is not a regular file (or, for a write, a file with more than one link).
fn check_regular(st: &FileStat, writing: bool) -> Result<(), FileError> {
    if st.st_mode & SFlag::S_IFMT.bits() == SFlag::S_IFLNK.bits() {
        return Err(FileError::Symlink);
    }
    if !is_regular(st) {
        return Err(FileError::NotRegular(kind_word(st)));
    }
    if writing && st.st_nlink > 1 {
        return Err(FileError::HardLinked(st.st_nlink));
    }
    Ok(())
}

/// Opens `name` in `dir` as `access` says: never through a symlink, never blocking, only a
/// regular file, for a write only one with one link. A device node is refused from its stat
/// before any open (an open alone can act on some devices); the opened file is checked again.
pub fn open_regular_at(dir: &impl AsFd, name: &str, access: Access) -> Result<File, FileError> {
    let writing = access != Access::Read;
    match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => check_regular(&st, writing)?,
        Err(Errno::ENOENT) if writing => {}
        Err(e) => return Err(FileError::Io(io::Error::from(e))),
    }
    let (flags, mode) = match access {
        Access::Read => (OFlag::O_RDONLY, 0),
        Access::Append { mode } => (OFlag::O_RDWR | OFlag::O_APPEND | OFlag::O_CREAT, mode),
        Access::Lock { mode } => (OFlag::O_RDWR | OFlag::O_CREAT, mode),
    };
    let fd = openat(
        dir,
        name,
        flags | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(mode),
    )
    .map_err(|e| match e {
        Errno::ELOOP => FileError::Symlink,
        // A FIFO opened for writing with no reader, or a socket.
        Errno::ENXIO => match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => FileError::NotRegular(kind_word(&st)),
            Err(_) => FileError::Io(io::Error::from(e)),
        },
        e => FileError::Io(io::Error::from(e)),
    })?;
    let st = fstat(&fd).map_err(|e| FileError::Io(io::Error::from(e)))?;
    check_regular(&st, writing)?;
    // Regular files ignore O_NONBLOCK today; cleared so no read or write can ever see EAGAIN.
    let now = fcntl(&fd, FcntlArg::F_GETFL).map_err(|e| FileError::Io(io::Error::from(e)))?;
    let cleared = OFlag::from_bits_truncate(now) & !OFlag::O_NONBLOCK;
    fcntl(&fd, FcntlArg::F_SETFL(cleared)).map_err(|e| FileError::Io(io::Error::from(e)))?;
    Ok(File::from(fd))
}

/// The size of `name` in `dir` if it is a regular file; `None` when missing; what it is
/// otherwise. Never follows a symlink.
pub fn regular_size_at(dir: &impl AsFd, name: &str) -> Result<Option<u64>, FileError> {
    match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => {
            check_regular(&st, false)?;
            Ok(Some(st.st_size as u64))
        }
        Err(Errno::ENOENT) => Ok(None),
        Err(e) => Err(FileError::Io(io::Error::from(e))),
    }
}

/// What is at `name` in `dir`, in words ("a symbolic link"), never following a symlink;
/// `None` when nothing is there (or it cannot be told).
pub fn kind_at(dir: &impl AsFd, name: &str) -> Option<&'static str> {
    fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW)
        .ok()
        .map(|st| kind_word(&st))
}

/// Renames `from` over `to`, both in `dir` (a symlink at `to` is replaced, never followed).
pub fn rename_at(dir: &impl AsFd, from: &str, to: &str) -> io::Result<()> {
    renameat(dir, from, dir, to).map_err(io::Error::from)
}

/// Why a lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("stopped while waiting for the lock (another disktriage holds it)")]
    Stopped,
    #[error(
        "another process has held the lock for {} s; gave up waiting",
        .0.as_secs()
    )]
    TimedOut(Duration),
    #[error("{}", crate::sys::error::describe_io_brief(.0))]
    Io(io::Error),
}

/// Takes an exclusive flock on `file`, polling every 20 ms for at most `limit` and while `stop`
/// is false: a process blocked in flock(2) would not end on the signals turned into flags.
pub fn lock_exclusive(
    mut file: File,
    stop: &dyn Fn() -> bool,
    limit: Duration,
) -> Result<Flock<File>, LockError> {
    let start = Instant::now();
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => return Ok(lock),
            Err((f, Errno::EWOULDBLOCK | Errno::EINTR)) => file = f,
            Err((_, e)) => return Err(LockError::Io(io::Error::from(e))),
        }
        if stop() {
            return Err(LockError::Stopped);
        }
        if start.elapsed() >= limit {
            return Err(LockError::TimedOut(limit));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Opens a target root given by the admin (a link in its own path is the admin's choice and is
/// followed).
pub fn open_root(path: &Path) -> io::Result<OwnedFd> {
    nix::fcntl::open(
        path,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)
}

/// Why a directory below a root was not reached.
#[derive(Debug)]
pub enum RootedError {
    /// `at` (relative to the root) is a symbolic link to `target`, which does not exist
    /// inside the root.
    Dangling { at: PathBuf, target: PathBuf },
    /// `at` is a symbolic link, and this kernel has no openat2 (Linux 5.6) to follow it
    /// inside the root.
    LinkUnsupported { at: PathBuf },
    /// The OS's error at `at` (relative to the root).
    Io { at: PathBuf, error: io::Error },
}

/// Where `walk_in_root` got.
#[derive(Debug)]
pub enum Walked {
    /// Every component exists: the directory, opened.
    Open(OwnedFd),
    /// Not created (`create` false): the deepest directory that exists, and the path still
    /// missing below it.
    Missing { deepest: OwnedFd, rest: PathBuf },
}

/// Opens `prefix` (relative) as a directory inside `root`, every link resolved inside it.
/// `None` when the kernel has no openat2.
fn open_in_root(root: &OwnedFd, prefix: &Path) -> Option<Result<OwnedFd, Errno>> {
    let how = OpenHow::new()
        .flags(OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_IN_ROOT | ResolveFlag::RESOLVE_NO_MAGICLINKS);
    // EAGAIN: a rename elsewhere in the tree raced a `..` lookup; the kernel asks to retry.
    let mut result = openat2(root, prefix, how);
    for _ in 0..16 {
        if !matches!(result, Err(Errno::EAGAIN)) {
            break;
        }
        result = openat2(root, prefix, how);
    }
    match result {
        Err(Errno::ENOSYS) => None,
        other => Some(other),
    }
}

/// The directory `rel` below `root`, resolved as in the module doc; with `create`, missing ones
/// are made (0755), never through a link. Without openat2 (< 5.6), links are refused.
pub fn walk_in_root(root: &OwnedFd, rel: &Path, create: bool) -> Result<Walked, RootedError> {
    let names: Vec<&OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let io_at = |at: &Path, e: Errno| RootedError::Io {
        at: at.to_path_buf(),
        error: io::Error::from(e),
    };
    let mut cur = root.try_clone().map_err(|error| RootedError::Io {
        at: PathBuf::from("."),
        error,
    })?;
    // Without openat2, each name is opened in the directory reached, never through a link.
    let has_openat2 = open_in_root(root, Path::new(".")).is_some();
    let mut prefix = PathBuf::new();
    for (i, name) in names.iter().enumerate() {
        prefix.push(name);
        let step = |cur: &OwnedFd| match open_in_root(root, &prefix) {
            Some(r) => r,
            None => openat(
                cur,
                *name,
                OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                Mode::empty(),
            ),
        };
        let dangling = |cur: &OwnedFd| {
            readlinkat(cur, *name)
                .ok()
                .map(|target| RootedError::Dangling {
                    at: prefix.clone(),
                    target: PathBuf::from(target),
                })
        };
        let next = match step(&cur) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) if !create => {
                return match dangling(&cur) {
                    Some(e) => Err(e),
                    None => Ok(Walked::Missing {
                        deepest: cur,
                        rest: names[i..].iter().collect(),
                    }),
                };
            }
            Err(Errno::ENOENT) => {
                match mkdirat(&cur, *name, Mode::from_bits_truncate(0o755)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(io_at(&prefix, e)),
                }
                match step(&cur) {
                    Ok(fd) => fd,
                    Err(Errno::ENOENT) => {
                        return Err(dangling(&cur).unwrap_or_else(|| io_at(&prefix, Errno::ENOENT)));
                    }
                    Err(e) => return Err(io_at(&prefix, e)),
                }
            }
            Err(Errno::ELOOP | Errno::ENOTDIR)
                if !has_openat2
                    && fstatat(&cur, *name, AtFlags::AT_SYMLINK_NOFOLLOW).is_ok_and(|st| {
                        st.st_mode & SFlag::S_IFMT.bits() == SFlag::S_IFLNK.bits()
                    }) =>
            {
                return Err(RootedError::LinkUnsupported { at: prefix });
            }
            Err(e) => return Err(io_at(&prefix, e)),
        };
        cur = next;
    }
    Ok(Walked::Open(cur))
}

/// The path an open descriptor names now (`/proc/self/fd/N`), every link resolved, for words.
pub fn fd_path(fd: &impl AsFd) -> io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd()))
}

/// Why `replace_file_at` failed: the step, and the OS's error or what was found.
#[derive(Debug)]
pub struct ReplaceError {
    /// "create", "write", "rename"; or "replace" when what is there is not a regular file.
    pub op: &'static str,
    pub error: FileError,
}

/// Replaces `name` in `dir` with `bytes` atomically: a synced new temporary file renamed over
/// it, then the directory synced. A `name` that is not a regular file is refused.
pub fn replace_file_at(
    dir: &OwnedFd,
    name: &str,
    bytes: &[u8],
    mode: u32,
) -> Result<(), ReplaceError> {
    replace_file_with(dir, name, mode, &mut |w| w.write_all(bytes))
}

/// `replace_file_at` with the contents written by `write` rather than given whole.
pub fn replace_file_with(
    dir: &OwnedFd,
    name: &str,
    mode: u32,
    write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> Result<(), ReplaceError> {
    let fail = |op, error| ReplaceError { op, error };
    match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => check_regular(&st, false).map_err(|e| fail("replace", e))?,
        Err(Errno::ENOENT) => {}
        Err(e) => return Err(fail("replace", FileError::Io(io::Error::from(e)))),
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut attempt = 0u32;
    let (tmp, fd) = loop {
        let tmp = OsString::from(format!(
            ".{name}.{}-{nanos}-{attempt}.tmp",
            std::process::id()
        ));
        match openat(
            dir,
            tmp.as_os_str(),
            OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_WRONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(mode),
        ) {
            Ok(fd) => break (tmp, fd),
            Err(Errno::EEXIST) if attempt < 16 => attempt += 1,
            Err(e) => return Err(fail("create", FileError::Io(io::Error::from(e)))),
        }
    };
    let written = (|| -> io::Result<()> {
        // The mode asked for, whatever the umask.
        fchmod(&fd, Mode::from_bits_truncate(mode)).map_err(io::Error::from)?;
        let mut file = io::BufWriter::with_capacity(1 << 20, File::from(fd));
        write(&mut file)?;
        file.into_inner().map_err(|e| e.into_error())?.sync_all()
    })()
    .map_err(|e| fail("write", FileError::Io(e)))
    .and_then(|()| {
        renameat(
            dir,
            tmp.as_os_str(),
            dir,
            OsStr::from_bytes(name.as_bytes()),
        )
        .map_err(|e| fail("rename", FileError::Io(io::Error::from(e))))
    });
    if written.is_err() {
        let _ = unlinkat(dir, tmp.as_os_str(), UnlinkatFlags::NoRemoveDir);
        return written;
    }
    // The rename is durable once the directory is synced.
    if let Ok(d) = dir.try_clone() {
        let _ = File::from(d).sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn fifo(path: &Path) {
        nix::unistd::mkfifo(path, Mode::from_bits_truncate(0o600)).unwrap();
    }

    #[test]
    fn a_fifo_a_symlink_or_a_hard_link_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let d = File::open(dir.path()).unwrap();
        fifo(&dir.path().join("f"));
        for access in [
            Access::Read,
            Access::Append { mode: 0o644 },
            Access::Lock { mode: 0o600 },
        ] {
            let err = open_regular_at(&d, "f", access).unwrap_err();
            assert!(
                matches!(err, FileError::NotRegular(w) if w.contains("FIFO")),
                "{err}"
            );
        }
        std::fs::write(dir.path().join("target"), "x").unwrap();
        symlink(dir.path().join("target"), dir.path().join("l")).unwrap();
        let err = open_regular_at(&d, "l", Access::Append { mode: 0o644 }).unwrap_err();
        assert!(matches!(err, FileError::Symlink), "{err}");
        std::fs::hard_link(dir.path().join("target"), dir.path().join("h")).unwrap();
        let err = open_regular_at(&d, "h", Access::Append { mode: 0o644 }).unwrap_err();
        assert!(matches!(err, FileError::HardLinked(2)), "{err}");
        // Reading a hard-linked file changes nothing: allowed.
        assert!(open_regular_at(&d, "h", Access::Read).is_ok());
        let err = open_regular_at(&d, "missing", Access::Read).unwrap_err();
        assert!(err.is_not_found(), "{err}");
        let mut f = open_regular_at(&d, "new", Access::Append { mode: 0o644 }).unwrap();
        f.write_all(b"line\n").unwrap();
        let flags = fcntl(&f, FcntlArg::F_GETFL).unwrap();
        assert_eq!(
            OFlag::from_bits_truncate(flags) & OFlag::O_NONBLOCK,
            OFlag::empty()
        );
        assert_eq!(std::fs::read(dir.path().join("target")).unwrap(), b"x");
    }

    #[test]
    fn a_lock_wait_ends_on_the_stop_flag_and_after_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let held = Flock::lock(File::create(&path).unwrap(), FlockArg::LockExclusive).unwrap();
        let t = Instant::now();
        let err = lock_exclusive(
            File::open(&path).unwrap(),
            &|| true,
            Duration::from_secs(60),
        )
        .unwrap_err();
        assert!(matches!(err, LockError::Stopped), "{err}");
        let err = lock_exclusive(
            File::open(&path).unwrap(),
            &|| false,
            Duration::from_millis(100),
        )
        .unwrap_err();
        assert!(matches!(err, LockError::TimedOut(_)), "{err}");
        assert!(t.elapsed() < Duration::from_secs(5));
        drop(held);
        assert!(lock_exclusive(File::open(&path).unwrap(), &|| false, Duration::ZERO).is_ok());
    }

    #[test]
    fn links_below_a_root_resolve_inside_it() {
        let top = tempfile::tempdir().unwrap();
        let root = top.path().join("root");
        std::fs::create_dir_all(root.join("a")).unwrap();
        // An absolute link to a path that exists outside the root and inside it.
        let abs = top.path().join("elsewhere");
        std::fs::create_dir_all(&abs).unwrap();
        std::fs::create_dir_all(root.join(abs.strip_prefix("/").unwrap())).unwrap();
        symlink(&abs, root.join("a/abs")).unwrap();
        symlink("../../..", root.join("a/up")).unwrap();
        symlink("/nowhere", root.join("a/dangling")).unwrap();
        let r = open_root(&root).unwrap();
        let real = |w: Walked| match w {
            Walked::Open(fd) => fd_path(&fd).unwrap(),
            Walked::Missing { .. } => panic!("missing"),
        };
        let got = real(walk_in_root(&r, Path::new("a/abs/x/y"), true).unwrap());
        assert_eq!(got, root.join(abs.strip_prefix("/").unwrap()).join("x/y"));
        assert!(!abs.join("x").exists(), "created outside the root");
        let got = real(walk_in_root(&r, Path::new("a/up/z"), true).unwrap());
        assert_eq!(got, root.join("z"));
        assert!(!top.path().join("z").exists());
        let err = walk_in_root(&r, Path::new("a/dangling/q"), true).unwrap_err();
        assert!(
            matches!(&err, RootedError::Dangling { at, target }
                if at == Path::new("a/dangling") && target == Path::new("/nowhere")),
            "{err:?}"
        );
        match walk_in_root(&r, Path::new("a/new/deeper"), false).unwrap() {
            Walked::Missing { deepest, rest } => {
                assert_eq!(fd_path(&deepest).unwrap(), root.join("a"));
                assert_eq!(rest, Path::new("new/deeper"));
            }
            Walked::Open(_) => panic!("created without create"),
        }
        assert!(!root.join("a/new").exists());
    }

    #[test]
    fn a_replaced_file_is_whole_and_never_written_through_what_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let d = open_root(dir.path()).unwrap();
        replace_file_at(&d, "r", b"one\n", 0o644).unwrap();
        replace_file_at(&d, "r", b"two\n", 0o644).unwrap();
        assert_eq!(std::fs::read(dir.path().join("r")).unwrap(), b"two\n");
        assert_eq!(
            std::fs::metadata(dir.path().join("r")).unwrap().mode() & 0o777,
            0o644
        );
        std::fs::write(dir.path().join("victim"), "v").unwrap();
        symlink(dir.path().join("victim"), dir.path().join("s")).unwrap();
        let err = replace_file_at(&d, "s", b"x", 0o644).unwrap_err();
        assert!(matches!(err.error, FileError::Symlink), "{:?}", err);
        fifo(&dir.path().join("p"));
        let err = replace_file_at(&d, "p", b"x", 0o644).unwrap_err();
        assert!(matches!(err.error, FileError::NotRegular(_)), "{:?}", err);
        assert_eq!(std::fs::read(dir.path().join("victim")).unwrap(), b"v");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 4, "no temporary left: {names:?}");
    }
}
