//! Files the admin names for the program to read (saved smartctl reports for `triage
//! --report`), and standard input for `-`. A name is followed as given (a symlink too: the
//! admin chose it), but only a regular file is read, with a non-blocking open (a FIFO or device
//! is refused from `fstat`) and a byte limit: a wrong name is an error, not a hang or a whole
//! disk in memory.
//!
//! A named directory is listed one level deep (`list_input_dir`), in name order without
//! dot-files, each entry told apart without opening it. A symlink in it is followed to a file
//! but never to a directory, so no loop can be walked.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};

use nix::fcntl::{OFlag, open};
use nix::sys::stat::{Mode, SFlag, fstat};

/// What `st_mode` says the file is, in words, when it is not a regular file.
fn not_regular(mode: u32) -> Option<&'static str> {
    Some(
        match SFlag::from_bits_truncate(mode & SFlag::S_IFMT.bits()) {
            SFlag::S_IFREG => return None,
            SFlag::S_IFDIR => "a directory",
            SFlag::S_IFIFO => "a FIFO (named pipe)",
            SFlag::S_IFSOCK => "a socket",
            SFlag::S_IFCHR => "a character device",
            SFlag::S_IFBLK => "a block device",
            _ => "not a regular file",
        },
    )
}

/// Reads at most `limit` bytes from `reader`; more is an error saying the limit.
fn read_limited(reader: impl Read, limit: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it is larger than {} MiB", limit >> 20),
        ));
    }
    Ok(bytes)
}

/// The bytes of the regular file at `path` (`-`: standard input), at most `limit` of them.
/// A directory, FIFO, socket or device is refused with what it is.
pub fn read_input(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    if path == Path::new("-") {
        return read_limited(io::stdin().lock(), limit);
    }
    let fd = open(
        path,
        OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC | OFlag::O_NOCTTY,
        Mode::empty(),
    )
    .map_err(io::Error::from)?;
    let st = fstat(fd.as_fd()).map_err(io::Error::from)?;
    if let Some(kind) = not_regular(st.st_mode) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {kind}, not a file"),
        ));
    }
    read_limited(File::from(fd), limit)
}

/// Whether `path`, followed through symlinks, is a directory (`-` never is). A name that
/// cannot be looked up is not: reading it then says why.
pub fn is_input_dir(path: &Path) -> bool {
    path != Path::new("-") && std::fs::metadata(path).is_ok_and(|m| m.is_dir())
}

/// What an entry of a listed directory is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file or a link to one, for `read_input`; a dangling link too, so reading it
    /// says why.
    File,
    /// A directory, or a symlink to one: not entered (one level only).
    Directory,
    /// A FIFO, socket or device, in words ("a FIFO (named pipe)"): never opened.
    NotAFile(&'static str),
}

/// One entry of a listed directory: the directory's path joined with the entry's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub path: PathBuf,
    pub kind: EntryKind,
}

/// A directory's entries one level deep, in name order (byte order), without its dot-files.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DirListing {
    pub entries: Vec<DirEntry>,
    /// How many dot-files (and dot-directories) were left out.
    pub hidden: usize,
}

/// The `st_mode` file type bits of a directory entry's type (as `readdir` gave it).
fn mode_of(t: std::fs::FileType) -> u32 {
    let flag = if t.is_dir() {
        SFlag::S_IFDIR
    } else if t.is_file() {
        SFlag::S_IFREG
    } else if t.is_fifo() {
        SFlag::S_IFIFO
    } else if t.is_socket() {
        SFlag::S_IFSOCK
    } else if t.is_char_device() {
        SFlag::S_IFCHR
    } else if t.is_block_device() {
        SFlag::S_IFBLK
    } else {
        return 0;
    };
    flag.bits()
}

/// Lists `dir` one level deep without opening anything: `lstat` per entry, `stat` for a link's
/// target.
pub fn list_input_dir(dir: &Path) -> io::Result<DirListing> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        found.push((entry.file_name(), entry.file_type()?));
    }
    // Name order, as `ls` lists them.
    found.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut listing = DirListing::default();
    for (name, file_type) in found {
        // Dot-files are an editor's swap file or a tool's state, never a saved report.
        if name.as_bytes().first() == Some(&b'.') {
            listing.hidden += 1;
            continue;
        }
        let path = dir.join(&name);
        let mode = if file_type.is_symlink() {
            // Dangling: read as a file, so that reading it names the error.
            std::fs::metadata(&path).map_or(SFlag::S_IFREG.bits(), |m| m.mode())
        } else {
            mode_of(file_type)
        };
        let kind = match not_regular(mode) {
            None => EntryKind::File,
            Some(_) if mode & SFlag::S_IFMT.bits() == SFlag::S_IFDIR.bits() => EntryKind::Directory,
            Some(words) => EntryKind::NotAFile(words),
        };
        listing.entries.push(DirEntry { path, kind });
    }
    Ok(listing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_whole_and_what_is_no_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.txt");
        std::fs::write(&file, b"smartctl 7.4\n").unwrap();
        assert_eq!(read_input(&file, 1 << 20).unwrap(), b"smartctl 7.4\n");
        let e = read_input(&file, 4).unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
        let e = read_input(dir.path(), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let e = read_input(&dir.path().join("missing"), 1 << 20).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        // A FIFO with no writer: refused at once, never waited on.
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
        let e = read_input(&fifo, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        // A symlink the admin names is followed.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read_input(&link, 1 << 20).unwrap(), b"smartctl 7.4\n");
    }

    #[test]
    fn a_directory_is_listed_one_level_deep_in_name_order_without_its_dot_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for name in ["b.json", "a.txt", ".hidden.txt", "B.txt"] {
            std::fs::write(d.join(name), b"x").unwrap();
        }
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/deeper.txt"), b"x").unwrap();
        std::fs::create_dir(d.join(".git")).unwrap();
        nix::unistd::mkfifo(&d.join("fifo"), Mode::from_bits_truncate(0o600)).unwrap();
        // A link to a file is a file; to a directory (here a loop) it is not entered; a
        // dangling one is read, so the read says why.
        std::os::unix::fs::symlink(d.join("a.txt"), d.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(d, d.join("loop")).unwrap();
        std::os::unix::fs::symlink(d.join("gone"), d.join("dangling.txt")).unwrap();
        let listing = list_input_dir(d).unwrap();
        assert_eq!(listing.hidden, 2);
        let got: Vec<(String, EntryKind)> = listing
            .entries
            .into_iter()
            .map(|e| {
                assert_eq!(e.path.parent(), Some(d), "joined with the directory");
                let name = e.path.file_name().unwrap().to_string_lossy().into_owned();
                (name, e.kind)
            })
            .collect();
        let want = [
            ("B.txt", EntryKind::File),
            ("a.txt", EntryKind::File),
            ("b.json", EntryKind::File),
            ("dangling.txt", EntryKind::File),
            ("fifo", EntryKind::NotAFile("a FIFO (named pipe)")),
            ("link.txt", EntryKind::File),
            ("loop", EntryKind::Directory),
            ("sub", EntryKind::Directory),
        ];
        let want: Vec<(String, EntryKind)> =
            want.into_iter().map(|(n, k)| (n.to_string(), k)).collect();
        assert_eq!(got, want);
        assert!(is_input_dir(d));
        assert!(is_input_dir(&d.join("loop")), "a named symlink is followed");
        assert!(!is_input_dir(&d.join("a.txt")));
        assert!(!is_input_dir(&d.join("missing")));
        assert!(!is_input_dir(Path::new("-")));
        assert_eq!(
            list_input_dir(&d.join("missing")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }
}
