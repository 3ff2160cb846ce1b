//! `disktriage scan`'s progress line on stderr: the scan's figures, the read in flight while
//! one hangs ("waiting 6 s at 150.0 MiB") and what it found, on one line that fits an
//! 80-column console (a wrapped line leaves its wrapped part behind at every redraw).

use std::time::Duration;

use crate::model::{Bytes, clock};
use crate::scan::engine::Scan;
use crate::scan::live::InFlight;
use crate::scan::snapshot::ScanUpdate;

/// The widest line drawn: one less than an 80-column console, whose last column would leave
/// the cursor waiting to wrap.
pub const WIDTH: usize = 79;

/// How the line reads: the scan's figures at a moment.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanFigures {
    pub name: String,
    pub planned: u64,
    pub done: u64,
    pub bytes_bad: u64,
    /// Merged slow ranges and TIME ranges, as the report counts them.
    pub slow: usize,
    pub timeouts: usize,
    pub elapsed: Duration,
    pub in_flight: Option<InFlight>,
}

impl ScanFigures {
    pub fn of(name: &str, scan: &Scan, in_flight: Option<InFlight>, elapsed: Duration) -> Self {
        ScanFigures {
            name: name.to_string(),
            planned: scan.planned,
            done: scan.done,
            bytes_bad: scan.bytes_bad,
            slow: scan.slow.len(),
            timeouts: scan.timeouts.len(),
            elapsed,
            in_flight,
        }
    }
}

impl ScanFigures {
    /// The figures of a scan's update (`ScanMsg::Update`), for the scan of `name`.
    pub fn of_update(name: &str, u: &ScanUpdate) -> Self {
        ScanFigures {
            name: name.to_string(),
            planned: u.planned,
            done: u.done,
            bytes_bad: u.bytes_bad,
            slow: u.slow.len(),
            timeouts: u.timeouts.len(),
            elapsed: u.elapsed,
            in_flight: u.in_flight,
        }
    }
}

/// The line, at most `width` columns: the fullest form that fits (the name shortened with
/// `~`), else the shortest cut with a `~` at its end: never cut without a mark.
pub fn line(f: &ScanFigures, width: usize) -> String {
    // Rounded down: 100.0 % only once every byte is done.
    let pct = if f.planned == 0 {
        100.0
    } else {
        (f.done as f64 * 1000.0 / f.planned as f64).floor() / 10.0
    };
    let secs = f.elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        f.done as f64 / secs
    } else {
        0.0
    };
    let waiting = f.in_flight.filter(InFlight::shown);
    let eta = if rate > 0.0 {
        clock(Duration::from_secs_f64(
            (f.planned.saturating_sub(f.done) as f64 / rate).min(1e9),
        ))
    } else {
        "-".into()
    };
    // Fullest first. Without the total, a waiting line drops the bytes done too: the read's
    // offset says where the scan is.
    let forms = [
        (true, true, true, 2),
        (true, true, true, 1),
        (false, true, true, 1),
        (false, false, true, 1),
        (false, false, false, 1),
    ];
    let mut last = String::new();
    for name_cols in [usize::MAX, 12, 8] {
        for (total, eta_shown, labels, gap) in forms {
            let name = shorten(&f.name, name_cols);
            // The last form drops the word "scan" too.
            let head = if labels { "scan " } else { "" };
            let mut fields = vec![match (total, waiting.is_some()) {
                (true, _) => format!(
                    "{head}{name}: {pct:.1}% {} of {}",
                    Bytes(f.done),
                    Bytes(f.planned)
                ),
                (false, false) => format!("{head}{name}: {pct:.1}% {}", Bytes(f.done)),
                (false, true) => format!("{head}{name}: {pct:.1}%"),
            }];
            match waiting {
                Some(w) => fields.push(w.text()),
                None => {
                    fields.push(format!("{:.0} MB/s", rate / 1e6));
                    if eta_shown {
                        fields.push(format!("ETA {eta}"));
                    }
                }
            }
            let (el, bad) = if labels {
                ("elapsed ", "unreadable ")
            } else {
                ("", "bad ")
            };
            fields.push(format!("{el}{}", clock(f.elapsed)));
            fields.push(format!("{bad}{}", Bytes(f.bytes_bad)));
            // Slow and TIME ranges once there are any.
            if f.slow > 0 {
                fields.push(format!("slow {}", f.slow));
            }
            if f.timeouts > 0 {
                fields.push(format!("TIME {}", f.timeouts));
            }
            last = fields.join(&" ".repeat(gap));
            if last.chars().count() <= width {
                return last;
            }
        }
    }
    let mut cut: String = last.chars().take(width.saturating_sub(1)).collect();
    cut.push('~');
    cut
}

/// `name` in at most `cols` characters, its end replaced by `~` when longer.
fn shorten(name: &str, cols: usize) -> String {
    if name.chars().count() <= cols {
        return name.to_string();
    }
    let mut s: String = name.chars().take(cols.saturating_sub(1)).collect();
    s.push('~');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn figures() -> ScanFigures {
        ScanFigures {
            name: "sda".into(),
            planned: 1024 * MIB,
            done: 44 * MIB,
            bytes_bad: 8192,
            slow: 1,
            timeouts: 0,
            elapsed: Duration::from_secs(22),
            in_flight: None,
        }
    }

    #[test]
    fn a_read_waited_for_replaces_the_rate_and_the_eta() {
        let mut f = figures();
        assert_eq!(
            line(&f, WIDTH),
            "scan sda: 4.2% 44.0 MiB 2 MB/s ETA 8:10 elapsed 0:22 unreadable 8.0 KiB slow 1"
        );
        f.in_flight = Some(InFlight {
            offset: 150 * MIB,
            length: MIB,
            waited: Duration::from_secs(6),
        });
        assert_eq!(
            line(&f, WIDTH),
            "scan sda: 4.2% waiting 6 s at 150.0 MiB elapsed 0:22 unreadable 8.0 KiB slow 1"
        );
        // Under a second it is no news: a read takes that long on a busy disk.
        f.in_flight = f.in_flight.map(|i| InFlight {
            waited: Duration::from_millis(900),
            ..i
        });
        assert!(line(&f, WIDTH).contains("ETA"));
    }

    #[test]
    fn the_line_fits_80_columns_at_every_figure_size() {
        let huge = ScanFigures {
            name: "disk/by-id/ata-ST16000NM001G-2KK103_ZL2ABCDE".into(),
            planned: 16_000_900_661_248,
            done: 15_999_000_000_000,
            bytes_bad: 1_500_000_000_000,
            slow: 123_456_789,
            timeouts: 9_876_543,
            elapsed: Duration::from_secs(99 * 3600 + 59 * 60 + 59),
            in_flight: Some(InFlight {
                offset: 15_999_000_000_000,
                length: MIB,
                waited: Duration::from_secs(3600),
            }),
        };
        let small = ScanFigures {
            name: "loop0".into(),
            planned: 512,
            done: 0,
            bytes_bad: 0,
            slow: 0,
            timeouts: 0,
            elapsed: Duration::ZERO,
            in_flight: None,
        };
        for f in [huge.clone(), small, figures()] {
            for in_flight in [None, huge.in_flight] {
                let f = ScanFigures {
                    in_flight,
                    ..f.clone()
                };
                let l = line(&f, WIDTH);
                assert!(
                    l.chars().count() <= WIDTH,
                    "{} columns: {l}",
                    l.chars().count()
                );
            }
        }
        // A 16 TB disk, large counts and a long wait: what matters is still there.
        let f = ScanFigures {
            name: "sdb".into(),
            slow: 12_345,
            timeouts: 678,
            ..huge
        };
        let l = line(&f, WIDTH);
        assert_eq!(
            l,
            "sdb: 99.9% waiting 3600 s at 14.6 TiB 99:59:59 bad 1.4 TiB slow 12345 TIME 678"
        );
        assert!(l.contains("TIME 678") && !l.ends_with('~'), "{l}");
    }

    #[test]
    fn a_line_that_cannot_fit_is_cut_with_a_mark() {
        let l = line(&figures(), 20);
        assert_eq!(l.chars().count(), 20);
        assert!(l.ends_with('~'), "{l}");
    }
}
