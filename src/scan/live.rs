//! A scan shared by the thread that reads and a thread that shows it. The reader holds the
//! lock only to take the next read and hand back its result, never across the read, so the
//! scan is shown as it stood when the read began, with the read in flight ("waiting 16 s at
//! 150.0 MiB"). The cost: two uncontended locks a read; nothing is sent per read.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::Span;
use super::engine::{BlockReader, Scan, Step};

/// The read in flight as shown: where it reads and how long it has waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlight {
    pub offset: u64,
    pub length: u64,
    pub waited: Duration,
}

impl InFlight {
    /// A read is waiting from this long: a healthy disk's never are.
    pub const SHOWN_AFTER: Duration = Duration::from_secs(1);

    /// The read `more` later (the screen's clock runs on).
    pub fn later(self, more: Duration) -> InFlight {
        InFlight {
            waited: self.waited.saturating_add(more),
            ..self
        }
    }

    /// Worth saying: it has waited `SHOWN_AFTER` or more.
    pub fn shown(&self) -> bool {
        self.waited >= Self::SHOWN_AFTER
    }

    /// "waiting 6 s at 150.0 MiB": whole seconds, the offset in IEC units.
    pub fn text(&self) -> String {
        format!(
            "waiting {} s at {}",
            self.waited.as_secs(),
            crate::model::Bytes(self.offset)
        )
    }
}

/// A scan and its read in flight (see the module documentation).
#[derive(Debug)]
pub struct LiveScan {
    shared: Mutex<Shared>,
}

#[derive(Debug)]
struct Shared {
    scan: Scan,
    /// The read in flight and when it began.
    in_flight: Option<(Span, Instant)>,
}

impl LiveScan {
    pub fn new(scan: Scan) -> LiveScan {
        LiveScan {
            shared: Mutex::new(Shared {
                scan,
                in_flight: None,
            }),
        }
    }

    /// A poisoned lock still holds what was read: it is used.
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Does one read, as `Scan::step`, with the lock released while it reads.
    pub fn step(&self, reader: &mut dyn BlockReader) -> Step {
        let next = {
            let mut s = self.lock();
            let Some(next) = s.scan.begin() else {
                return Step::Done;
            };
            s.in_flight = Some((next.span, Instant::now()));
            next
        };
        let r = reader.read(next.span);
        let mut s = self.lock();
        s.in_flight = None;
        s.scan.complete(next, r, reader);
        if s.scan.end.is_some() {
            Step::Done
        } else {
            Step::Continue
        }
    }

    /// `f` of the scan and the read in flight; the reader waits, so `f` must be quick.
    pub fn view<R>(&self, f: impl FnOnce(&Scan, Option<InFlight>) -> R) -> R {
        let s = self.lock();
        let in_flight = s.in_flight.map(|(span, since)| InFlight {
            offset: span.offset,
            length: span.length,
            waited: since.elapsed(),
        });
        f(&s.scan, in_flight)
    }

    /// `f` of the scan itself, between reads (to stop it, to save its mapfile).
    pub fn with<R>(&self, f: impl FnOnce(&mut Scan) -> R) -> R {
        f(&mut self.lock().scan)
    }

    /// The scan, once nobody else shows it.
    pub fn into_scan(self) -> Scan {
        self.shared
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .scan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::blockmap::DEFAULT_CELLS;
    use crate::scan::engine::{ReadOutcome, ScanConfig, TimedRead};
    use crate::scan::mapfile::Mapfile;
    use std::sync::mpsc;

    const MIB: u64 = 1 << 20;

    /// Reads at once, but the block at `hang_at` waits for `release`.
    struct Hanging {
        hang_at: u64,
        release: mpsc::Receiver<()>,
        reached: mpsc::Sender<()>,
    }

    impl BlockReader for Hanging {
        fn read(&mut self, span: Span) -> TimedRead {
            if span.offset == self.hang_at {
                let _ = self.reached.send(());
                let _ = self.release.recv();
            }
            let outcome = if span.offset == 2 * MIB {
                ReadOutcome::Failed(libc::EIO)
            } else {
                ReadOutcome::Read
            };
            TimedRead {
                outcome,
                elapsed: Duration::from_millis(1),
            }
        }
        fn gone(&mut self) -> Option<String> {
            None
        }
    }

    fn scan() -> Scan {
        Scan::new(
            ScanConfig {
                domain: Span::new(0, 8 * MIB),
                block: MIB,
                sector: MIB,
                slow: Duration::from_millis(150),
                timeout: Duration::from_secs(3),
                retry: false,
                map_cells: DEFAULT_CELLS,
            },
            Mapfile::new(8 * MIB),
        )
    }

    #[test]
    fn the_read_in_flight_reads_in_whole_seconds_at_its_offset() {
        let f = InFlight {
            offset: 150 * MIB,
            length: MIB,
            waited: Duration::from_millis(6900),
        };
        assert_eq!(f.text(), "waiting 6 s at 150.0 MiB");
        assert_eq!(
            f.later(Duration::from_millis(200)).text(),
            "waiting 7 s at 150.0 MiB"
        );
        assert!(f.shown());
        let brief = InFlight {
            waited: Duration::from_millis(400),
            ..f
        };
        assert!(!brief.shown());
    }

    #[test]
    fn a_hanging_read_shows_as_in_flight_with_what_was_found_before_it() {
        let live = LiveScan::new(scan());
        let (release_tx, release) = mpsc::channel();
        let (reached, reached_rx) = mpsc::channel();
        let mut disk = Hanging {
            hang_at: 5 * MIB,
            release,
            reached,
        };
        std::thread::scope(|s| {
            let reading = s.spawn(|| while live.step(&mut disk) == Step::Continue {});
            reached_rx.recv().unwrap();
            std::thread::sleep(Duration::from_millis(30));
            let (done, bad, in_flight) =
                live.view(|scan, f| (scan.done, scan.bytes_bad, f.unwrap()));
            assert_eq!((done, bad), (5 * MIB, MIB), "the scan as it stood");
            assert_eq!((in_flight.offset, in_flight.length), (5 * MIB, MIB));
            assert!(in_flight.waited >= Duration::from_millis(30));
            let later = live.view(|_, f| f.unwrap().waited);
            assert!(later >= in_flight.waited, "the wait grows");
            release_tx.send(()).unwrap();
            reading.join().unwrap();
        });
        assert_eq!(live.view(|_, f| f), None);
        let scan = live.into_scan();
        assert_eq!((scan.done, scan.bytes_bad), (8 * MIB, MIB));
    }
}
