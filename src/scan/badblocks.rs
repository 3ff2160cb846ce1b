//! The unreadable areas as a badblocks list: block numbers in `bb_size`-byte units from the
//! start of the device, one a line, ascending, each once — what `e2fsck -l FILE` and
//! `mke2fs -l FILE` read (give the file system's block size: `--bb-size`, default 4096).

use super::Span;

/// The block size refused or accepted: a power of two from 512 to 1 MiB.
pub fn check_bb_size(size: u64) -> Result<u64, String> {
    if !(512..=1 << 20).contains(&size) || !size.is_power_of_two() {
        return Err(format!(
            "--bb-size {size}: a power of two from 512 to 1M (the file system's block size, \
             e.g. 4096)"
        ));
    }
    Ok(size)
}

/// The list's text for the bad areas `bad` (in ascending order, as a range list keeps them).
pub fn render(bad: impl Iterator<Item = Span>, bb_size: u64) -> String {
    let mut out = String::new();
    let mut last: Option<u64> = None;
    for span in bad {
        if span.is_empty() || bb_size == 0 {
            continue;
        }
        let first = span.offset / bb_size;
        let end = (span.end() - 1) / bb_size;
        // A block shared with the area before is already listed.
        let from = match last {
            Some(l) if l >= first => l + 1,
            _ => first,
        };
        for block in from..=end {
            out.push_str(&block.to_string());
            out.push('\n');
        }
        last = Some(last.map_or(end, |l| l.max(end)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sectors_become_the_blocks_that_hold_them() {
        // 16 bad 512-byte sectors at LBA 8192-8207: bytes 4 MiB .. 4 MiB + 8 KiB, 4 KiB blocks
        // 1024 and 1025; a sector at LBA 8215 shares block 1026 with nothing else.
        let bad = [Span::new(8192 * 512, 16 * 512), Span::new(8215 * 512, 512)];
        assert_eq!(render(bad.into_iter(), 4096), "1024\n1025\n1026\n");
        assert_eq!(render(bad.into_iter(), 1024).lines().count(), 9);
        // Two areas in one block: listed once.
        let shared = [Span::new(0, 512), Span::new(1024, 512)];
        assert_eq!(render(shared.into_iter(), 4096), "0\n");
        assert_eq!(render(std::iter::empty(), 4096), "");
    }

    #[test]
    fn block_sizes_are_checked() {
        assert_eq!(check_bb_size(4096), Ok(4096));
        assert_eq!(check_bb_size(512), Ok(512));
        for bad in [0, 1, 511, 1000, 3 << 20, u64::MAX] {
            assert!(check_bb_size(bad).is_err(), "{bad}");
        }
    }
}
