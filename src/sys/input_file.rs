//! Files the admin names for the program to read (the saved smartctl reports of `triage
//! --report`), and standard input for `-`. A name is followed as given (a symlink too: the
//! admin chose it, and what is read only decides what is printed), but only a regular file is
//! read: the open never blocks (a FIFO or a device at the name is refused from `fstat`, not
//! waited on), and at most a stated number of bytes, so a wrong name is an error in words
//! rather than a hang or a whole disk read into memory.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::path::Path;

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
}
