//! Device-mapper's own account of a mapping: its table's target types (`crypt`, `linear`,
//! ...), from DM_TABLE_STATUS on `/dev/mapper/control` as `dmsetup status` reads them. A uuid
//! prefix (`CRYPT-`) is only cryptsetup's convention; the table is what the kernel runs. Status
//! rather than table, so a crypt key never reaches this process. Root only (CAP_SYS_ADMIN);
//! callers fall back on the uuid.

use std::fs::OpenOptions;
use std::io;
use std::os::fd::AsRawFd;

/// `struct dm_ioctl` (linux/dm-ioctl.h): the header before the data of every dm ioctl.
const HEADER_LEN: usize = 312;
/// `struct dm_target_spec`: sector_start u64, length u64, status i32, next u32, type[16].
const SPEC_LEN: usize = 40;
const TYPE_OFFSET: usize = 24;
const TYPE_LEN: usize = 16;
/// The interface version this code speaks (DM_VERSION_MAJOR 4; any minor).
const VERSION_MAJOR: u32 = 4;
/// Do not flush a thin pool's metadata to report its status.
const DM_NOFLUSH_FLAG: u32 = 1 << 11;
/// The kernel's answer did not fit the buffer.
const DM_BUFFER_FULL_FLAG: u32 = 1 << 8;
/// Enough for any table of a few hundred targets; doubled while the kernel says it is full.
const FIRST_BUFFER: usize = 16 << 10;
const MAX_BUFFER: usize = 1 << 20;

nix::ioctl_readwrite_bad!(
    dm_table_status,
    nix::request_code_readwrite!(0xfd, 12, HEADER_LEN),
    u8
);

fn u32_at(buf: &[u8], at: usize) -> Option<u32> {
    let bytes = buf.get(at..at + 4)?;
    Some(u32::from_ne_bytes(bytes.try_into().ok()?))
}

/// The request: version, buffer size, data start, flags and device number (name and uuid empty:
/// the kernel finds the mapping by number).
fn request(len: usize, major: u32, minor: u32) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    buf[0..4].copy_from_slice(&VERSION_MAJOR.to_ne_bytes());
    let len32 = u32::try_from(len).unwrap_or(u32::MAX);
    buf[12..16].copy_from_slice(&len32.to_ne_bytes());
    buf[16..20].copy_from_slice(&(HEADER_LEN as u32).to_ne_bytes());
    buf[32..36].copy_from_slice(&DM_NOFLUSH_FLAG.to_ne_bytes());
    buf[40..48].copy_from_slice(&libc::makedev(major, minor).to_ne_bytes());
    buf
}

/// The target types in a DM_TABLE_STATUS answer. Every offset is checked against what the
/// kernel wrote, so an odd answer gives fewer types, never an out-of-bounds read.
fn parse_target_types(buf: &[u8]) -> Vec<String> {
    let mut types = Vec::new();
    let (Some(used), Some(start), Some(count)) =
        (u32_at(buf, 12), u32_at(buf, 16), u32_at(buf, 20))
    else {
        return types;
    };
    let end = (used as usize).min(buf.len());
    let start = start as usize;
    let mut offset = 0usize;
    for _ in 0..count.min(4096) {
        let at = start.saturating_add(offset);
        let stop = at.saturating_add(SPEC_LEN);
        let Some(spec) = buf.get(at..stop).filter(|_| stop <= end) else {
            break;
        };
        let name = &spec[TYPE_OFFSET..TYPE_OFFSET + TYPE_LEN];
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(TYPE_LEN)];
        types.push(String::from_utf8_lossy(name).into_owned());
        let Some(next) = u32_at(spec, 20).map(|n| n as usize) else {
            break;
        };
        if next <= offset {
            break;
        }
        offset = next;
    }
    types
}

/// The target types of the mapping with device number `major:minor`, in table order.
pub fn target_types(major: u32, minor: u32) -> io::Result<Vec<String>> {
    let control = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/mapper/control")?;
    let mut len = FIRST_BUFFER;
    loop {
        let mut buf = request(len, major, minor);
        // SAFETY: the kernel reads the header and writes at most `data_size` (= buf.len())
        // bytes into the buffer, which outlives the call; the fd is open.
        unsafe { dm_table_status(control.as_raw_fd(), buf.as_mut_ptr()) }
            .map_err(io::Error::from)?;
        let full = u32_at(&buf, 32).is_some_and(|f| f & DM_BUFFER_FULL_FLAG != 0);
        if !full || len >= MAX_BUFFER {
            return Ok(parse_target_types(&buf));
        }
        len *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ioctl_number_is_the_kernels() {
        // DM_TABLE_STATUS = _IOWR(0xfd, 12, struct dm_ioctl), as strace shows it (c_ulong with
        // glibc, c_int with musl).
        assert_eq!(
            format!("{:x}", nix::request_code_readwrite!(0xfd, 12, HEADER_LEN)),
            "c138fd0c"
        );
    }

    /// An answer as the kernel writes it: specs one after the other at `data_start`, each with
    /// its status text after it, `next` counted from `data_start`.
    fn answer(types: &[&str]) -> Vec<u8> {
        let mut buf = request(4096, 253, 1);
        let mut offset = 0usize;
        for t in types {
            let at = HEADER_LEN + offset;
            buf[at + TYPE_OFFSET..at + TYPE_OFFSET + t.len()].copy_from_slice(t.as_bytes());
            // The status text ("" for crypt's info) and its NUL, then 8-byte alignment.
            offset = (offset + SPEC_LEN + 1).next_multiple_of(8);
            buf[at + 20..at + 24].copy_from_slice(&(offset as u32).to_ne_bytes());
        }
        buf[20..24].copy_from_slice(&(types.len() as u32).to_ne_bytes());
        let used = (HEADER_LEN + offset) as u32;
        buf[12..16].copy_from_slice(&used.to_ne_bytes());
        buf
    }

    #[test]
    fn target_types_are_read_from_each_spec() {
        assert_eq!(parse_target_types(&answer(&["crypt"])), ["crypt"]);
        assert_eq!(
            parse_target_types(&answer(&["linear", "crypt", "linear"])),
            ["linear", "crypt", "linear"]
        );
        assert!(parse_target_types(&answer(&[])).is_empty());
    }

    #[test]
    fn a_short_or_odd_answer_gives_fewer_types_not_a_wild_read() {
        // The kernel wrote less than the count claims.
        let mut buf = answer(&["crypt", "linear"]);
        buf[12..16].copy_from_slice(&((HEADER_LEN + SPEC_LEN) as u32).to_ne_bytes());
        assert_eq!(parse_target_types(&buf), ["crypt"]);
        // A data start past the end, a `next` that loops back.
        let mut buf = answer(&["crypt"]);
        buf[16..20].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert!(parse_target_types(&buf).is_empty());
        let mut buf = answer(&["crypt", "linear"]);
        buf[20..24].copy_from_slice(&1000u32.to_ne_bytes());
        buf[HEADER_LEN + 20..HEADER_LEN + 24].copy_from_slice(&0u32.to_ne_bytes());
        assert_eq!(parse_target_types(&buf), ["crypt"]);
        assert!(parse_target_types(&[0u8; 10]).is_empty());
    }
}
