//! The one-line verdict of a scan: the unreadable sectors by LBA when there are any, else the
//! blocks that took too long, else how fast the slowest block read.

use super::Span;
use super::buckets::Bucket;
use super::engine::{End, Scan};
use super::mapfile::Status;

/// The verdict, naming too the mapfile's bad sectors this scan did not read again.
pub fn verdict(scan: &Scan) -> String {
    let sector = scan.config.sector.max(1);
    let body = findings(scan, sector);
    let percent = if scan.planned == 0 {
        100.0
    } else {
        scan.done as f64 * 100.0 / scan.planned as f64
    };
    match &scan.end {
        Some(End::Stopped) => format!("stopped after {percent:.1} % of the range: {body}"),
        Some(End::Gone(why)) => {
            format!("the scan ended after {percent:.1} % of the range ({why}): {body}")
        }
        Some(End::Finished) | None => body,
    }
}

fn lbas(span: Span, sector: u64) -> String {
    let first = span.offset / sector;
    let last = (span.end() - 1) / sector;
    if first == last {
        format!("LBA {first}")
    } else {
        format!("LBA {first}-{last}")
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn findings(scan: &Scan, sector: u64) -> String {
    let previously_bad = scan
        .mapfile
        .bytes_with(Status::BadSector, scan.config.domain)
        .saturating_sub(scan.bytes_bad);
    let old = if previously_bad > 0 {
        format!(
            "; {} marked bad in the mapfile not read again (--retry reads them)",
            plural(previously_bad.div_ceil(sector), "sector", "sectors")
        )
    } else {
        String::new()
    };
    if let Some((first, _)) = scan.errors.iter().next() {
        let sectors = scan.errors.total_bytes().div_ceil(sector);
        let areas = scan.errors.len();
        let unreadable = plural(sectors, "unreadable sector", "unreadable sectors");
        return if areas == 1 {
            format!("{unreadable} at {}{old}", lbas(*first, sector))
        } else {
            format!(
                "{unreadable} in {areas} areas, the first at {}{old}",
                lbas(*first, sector)
            )
        };
    }
    if scan.buckets.total() == 0 {
        return if scan.planned == 0 {
            format!("nothing to read: the mapfile has every block of the range tried{old}")
        } else {
            format!("nothing read{old}")
        };
    }
    if scan.bytes_abandoned > 0 {
        let first = scan.timeouts.iter().next().map(|(s, _)| *s);
        let at = first.map_or(String::new(), |s| {
            format!(", the first at {}", lbas(s, sector))
        });
        // The Timeout line says when (`sys::scan::SG_MIN_TIMEOUT`).
        return format!(
            "{} not read: abandoned at the command timeout{at}{old}",
            plural(scan.bytes_abandoned.div_ceil(sector), "sector", "sectors"),
        );
    }
    let timeouts = scan.buckets.get(Bucket::Time);
    if timeouts > 0 {
        return format!(
            "every block read, {} at or over the timeout ({} ms){old}",
            plural(timeouts, "block", "blocks"),
            scan.config.timeout.as_millis()
        );
    }
    if !scan.slow.is_empty() {
        let worst = scan.slow.iter().map(|(_, t)| t.ms).max().unwrap_or(0);
        let blocks = scan.slow.total_bytes().div_ceil(scan.config.block.max(1));
        let twice = scan.slow_twice();
        let again = if twice > 0 {
            format!(
                ", {} slow again on a second read",
                plural(twice as u64, "area", "areas")
            )
        } else {
            String::new()
        };
        return format!(
            "every block read; {} at or over {} ms, the worst {worst} ms{again}{old}",
            plural(blocks, "slow block", "slow blocks"),
            scan.config.slow.as_millis()
        );
    }
    let flaky = if scan.failed_then_read > 0 {
        format!(
            "; {} failed once, then read in parts",
            plural(scan.failed_then_read, "block", "blocks")
        )
    } else {
        String::new()
    };
    match scan.buckets.slowest_read().and_then(|b| b.upto_ms()) {
        Some(ms) => format!("every block read in under {ms} ms{flaky}{old}"),
        None => format!("every block read, the slowest in 500 ms or more{flaky}{old}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::engine::tests::{FakeDisk, config, run_to_end};
    use crate::scan::mapfile::Mapfile;
    use std::time::Duration;

    fn scan_of(disk: &mut FakeDisk) -> Scan {
        let mut scan = Scan::new(config(Span::new(0, disk.size)), Mapfile::new(disk.size));
        run_to_end(&mut scan, disk);
        scan
    }

    #[test]
    fn blocks_abandoned_at_the_timeout_are_not_called_read() {
        let mut disk = FakeDisk::new(8 << 20, 512);
        disk.abandon.push(Span::new(2 << 20, 1 << 20));
        let scan = scan_of(&mut disk);
        assert_eq!(
            verdict(&scan),
            "2048 sectors not read: abandoned at the command timeout, the first at LBA 4096-6143"
        );
    }

    #[test]
    fn sentences() {
        let mut clean = FakeDisk::new(8 << 20, 512);
        clean
            .latency
            .push((Span::new(0, 8 << 20), Duration::from_millis(30)));
        assert_eq!(
            verdict(&scan_of(&mut clean)),
            "every block read in under 50 ms"
        );

        let mut bad = FakeDisk::new(8 << 20, 512);
        for lba in 8192..8208 {
            bad.bad.insert(lba, libc::EIO);
        }
        assert_eq!(
            verdict(&scan_of(&mut bad)),
            "16 unreadable sectors at LBA 8192-8207"
        );
        bad.bad.insert(100, libc::EIO);
        assert_eq!(
            verdict(&scan_of(&mut bad)),
            "17 unreadable sectors in 2 areas, the first at LBA 100"
        );

        let mut slow = FakeDisk::new(8 << 20, 512);
        slow.latency
            .push((Span::new(2 << 20, 1 << 20), Duration::from_millis(400)));
        assert_eq!(
            verdict(&scan_of(&mut slow)),
            "every block read; 1 slow block at or over 150 ms, the worst 400 ms, 1 area slow \
             again on a second read"
        );

        let mut time = FakeDisk::new(8 << 20, 512);
        time.latency.push((Span::new(0, 1), Duration::from_secs(5)));
        assert_eq!(
            verdict(&scan_of(&mut time)),
            "every block read, 1 block at or over the timeout (3000 ms)"
        );

        let mut gone = FakeDisk::new(8 << 20, 512);
        gone.gone_after = Some(2);
        assert_eq!(
            verdict(&scan_of(&mut gone)),
            "the scan ended after 25.0 % of the range (removed): every block read in under 5 ms"
        );
    }

    #[test]
    fn a_resume_with_nothing_left_and_old_bad_sectors() {
        let size = 4 << 20;
        let mut map = Mapfile::new(size);
        map.set(Span::new(0, size), crate::scan::mapfile::Status::Finished);
        map.set(
            Span::new(4096, 1024),
            crate::scan::mapfile::Status::BadSector,
        );
        let mut scan = Scan::new(config(Span::new(0, size)), map);
        run_to_end(&mut scan, &mut FakeDisk::new(size, 512));
        assert_eq!(
            verdict(&scan),
            "nothing to read: the mapfile has every block of the range tried; 2 sectors marked \
             bad in the mapfile not read again (--retry reads them)"
        );
    }
}
