//! Pure parsers for the text the kernel exposes in `/proc` and `/sys`. They take strings or
//! bytes and never touch the filesystem, so tests feed them captured and garbage input alike.

use crate::model::DevNum;
use crate::model::device::{SwapEntry, SwapKind};
use crate::model::text::{clean_text, unescape_octal};
use crate::model::usage::MountEntry;

/// Parses `/proc/self/mountinfo` (`Documentation/filesystems/proc.rst`); malformed lines are
/// skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_mountinfo_line).collect()
}

fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
    let fields: Vec<&str> = line.split(' ').collect();
    // id, parent, maj:min, root, mount point, options, optional fields..., "-", fstype, source
    let sep = fields.iter().position(|f| *f == "-")?;
    if sep < 6 || fields.len() < sep + 3 {
        return None;
    }
    Some(MountEntry {
        dev: fields[2].parse().ok(),
        mount_point: unescape_octal(fields[4]),
        fstype: unescape_octal(fields[sep + 1]),
        source: unescape_octal(fields[sep + 2]),
    })
}

/// Parses `/proc/swaps` (`Filename Type Size Used Priority`). Columns are split on spaces and
/// tabs; the kernel escapes those, newline and backslash in paths, so other whitespace is path.
pub fn parse_swaps(text: &str) -> Vec<SwapEntry> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut words = line.split([' ', '\t']).filter(|w| !w.is_empty());
            let path = words.next()?;
            let kind = words.next()?;
            Some(SwapEntry {
                path: unescape_octal(path),
                kind: SwapKind::from_proc(kind),
                file: None,
            })
        })
        .collect()
}

/// The unit serial number from a SCSI VPD page 0x80 (`device/vpd_pg80`): byte 1 is the page
/// code, bytes 2-3 the length, the serial follows (SPC-4, 7.8.16).
pub fn parse_vpd_serial(page: &[u8]) -> Option<String> {
    if page.len() < 4 || page[1] != 0x80 {
        return None;
    }
    let len = usize::from(u16::from_be_bytes([page[2], page[3]]));
    let end = (4 + len).min(page.len());
    clean_text(&page[4..end])
}

/// A sysfs boolean ("0"/"1").
pub fn parse_flag(s: &str) -> Option<bool> {
    match s.trim() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// A sysfs decimal number.
pub fn parse_number<T: std::str::FromStr>(s: &str) -> Option<T> {
    s.trim().parse().ok()
}

/// The eleven to seventeen counters of `/sys/block/X/stat`
/// (`Documentation/block/stat.rst`); sectors are 512-byte units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DiskStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub in_flight: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
}

/// Parses `/sys/block/X/stat`.
pub fn parse_disk_stat(s: &str) -> Option<DiskStat> {
    let v: Vec<u64> = s
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    if v.len() < 11 {
        return None;
    }
    Some(DiskStat {
        read_ios: v[0],
        read_merges: v[1],
        read_sectors: v[2],
        read_ticks_ms: v[3],
        write_ios: v[4],
        write_merges: v[5],
        write_sectors: v[6],
        write_ticks_ms: v[7],
        in_flight: v[8],
        io_ticks_ms: v[9],
        time_in_queue_ms: v[10],
    })
}

/// Parses `/sys/block/X/inflight`: outstanding reads and writes.
pub fn parse_inflight(s: &str) -> Option<(u64, u64)> {
    let mut it = s.split_whitespace().map(str::parse::<u64>);
    match (it.next(), it.next()) {
        (Some(Ok(r)), Some(Ok(w))) => Some((r, w)),
        _ => None,
    }
}

/// Parses a `dev` file ("7:0").
pub fn parse_devnum(s: &str) -> Option<DevNum> {
    s.parse().ok()
}

/// The start time (field 22, clock ticks after boot) from `/proc/PID/stat`, counted after the
/// last `)`: the command name may hold spaces and parentheses.
pub fn parse_stat_start_time(text: &str) -> Option<u64> {
    let (_, rest) = text.rsplit_once(')')?;
    // rest starts with field 3 (state); field 22 is the 20th from there.
    rest.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines() {
        let text = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n\
                    99 27 7:1 / /tmp/my\\040dir rw shared:5 master:2 - ext4 /dev/loop0p1 rw\n\
                    garbage line\n\
                    22 27 0:21 / /proc rw,relatime - proc proc rw\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].source, "/dev/vda");
        assert_eq!(m[0].dev, "254:0".parse().ok());
        assert_eq!(m[1].mount_point, "/tmp/my dir");
        assert_eq!(m[1].source, "/dev/loop0p1");
        assert_eq!(m[1].fstype, "ext4");
        assert_eq!(m[2].fstype, "proc");
    }

    #[test]
    fn swaps_table() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                    /dev/zram0                              partition\t1048572\t\t0\t\t100\n\
                    /swap\\040file                           file\t\t1024\t\t0\t\t-2\n";
        let s = parse_swaps(text);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].path, "/dev/zram0");
        assert_eq!(s[0].kind, SwapKind::Partition);
        assert_eq!(s[1].path, "/swap file");
        assert!(parse_swaps("").is_empty());
    }

    #[test]
    fn swap_paths_keep_whitespace_the_kernel_does_not_escape() {
        // Only space, tab, newline and backslash are escaped: a carriage return or no-break
        // space is part of the name (found by tests/behaviour/parser_props.rs).
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                    /\r                                      partition\t0\t\t0\t\t0\n\
                    /swap\u{a0}file                          file\t1024\t\t0\t\t-2\n";
        let s = parse_swaps(text);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].path.as_str(), s[0].kind), ("/?", SwapKind::Partition));
        assert_eq!(
            (s[1].path.as_str(), s[1].kind),
            ("/swap\u{a0}file", SwapKind::File)
        );
    }

    #[test]
    fn vpd_serial() {
        let mut page = vec![0x00, 0x80, 0x00, 0x0a];
        page.extend_from_slice(b"QM00001   ");
        assert_eq!(parse_vpd_serial(&page).as_deref(), Some("QM00001"));
        assert_eq!(parse_vpd_serial(&[0, 0x83, 0, 0]), None);
        assert_eq!(parse_vpd_serial(&[0, 0x80]), None);
        // A length longer than the page is clamped, not a panic.
        assert_eq!(
            parse_vpd_serial(&[0, 0x80, 0xff, 0xff, b'A']).as_deref(),
            Some("A")
        );
    }

    #[test]
    fn disk_stat_and_inflight() {
        let s = parse_disk_stat(
            "     269        0    21016       73        0        0        0        0        0       96       73        0        0        0        0        0        0\n",
        )
        .unwrap();
        assert_eq!(s.read_ios, 269);
        assert_eq!(s.read_sectors, 21016);
        assert_eq!(s.io_ticks_ms, 96);
        assert_eq!(parse_disk_stat("1 2 3"), None);
        assert_eq!(parse_disk_stat("x 2 3 4 5 6 7 8 9 10 11"), None);
        assert_eq!(parse_inflight("       3        1\n"), Some((3, 1)));
        assert_eq!(parse_inflight("3"), None);
    }

    #[test]
    fn flags_and_numbers() {
        assert_eq!(parse_flag("1\n"), Some(true));
        assert_eq!(parse_flag("0"), Some(false));
        assert_eq!(parse_flag("2"), None);
        assert_eq!(parse_number::<u32>("128\n"), Some(128));
        assert_eq!(parse_number::<u32>("-1"), None);
        assert_eq!(parse_number::<u32>("99999999999"), None);
    }

    #[test]
    fn stat_start_time() {
        let line = "1234 (we ird) name)) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 \
                    987654 1000 100 18446744073709551615";
        assert_eq!(parse_stat_start_time(line), Some(987654));
        assert_eq!(parse_stat_start_time("1234 (x) S 1 2"), None);
        assert_eq!(parse_stat_start_time("garbage"), None);
        assert_eq!(parse_stat_start_time(""), None);
    }
}
