//! The surface scan's read-ahead: while the scan reads one block, two threads of its own
//! read the blocks the scan names next (`BlockReader::read_ahead`), so that with blocks of a
//! SATA disk's largest transfer (128 KiB, one SG_IO command each) two commands are in flight
//! as with dd's 1 MiB requests. Each block is timed by the thread that reads it, from its own
//! start, so its bucket is its own. The reads themselves are the caller's (`Reader`): this
//! module only carries blocks to the threads and their results back.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};

use super::direct::AlignedBuf;
use crate::scan::Span;
use crate::scan::engine::TimedRead;

/// Reads one block into the buffer, timed (a plain O_DIRECT read or an SG_IO command on a
/// descriptor of the scanned device).
pub type Reader = Arc<dyn Fn(&mut AlignedBuf, Span) -> TimedRead + Send + Sync>;

/// Blocks in flight ahead of the scan, at most: with the scan's own read, two commands are
/// in flight at any time; the threads are as many.
const IN_FLIGHT: usize = 2;
/// Results kept that the scan has not asked for (a block read ahead before the scan took
/// another way); older ones are dropped.
const KEPT: usize = 4;

type Job = (Span, AlignedBuf);
type Done = (Span, TimedRead, AlignedBuf);

/// The threads, started with the first block read ahead.
struct Threads {
    jobs: Sender<Job>,
    done: Receiver<Done>,
}

/// The read-ahead state of one scanned device.
#[derive(Default)]
pub struct ReadAhead {
    threads: Option<Threads>,
    /// Blocks handed to the threads whose result has not come back.
    outstanding: Vec<Span>,
    /// Results that came back and were not asked for yet.
    done: Vec<(Span, TimedRead)>,
    spare: Vec<AlignedBuf>,
}

impl ReadAhead {
    /// The read of `span` when it was read ahead: waits for it when it is still in flight.
    /// `None` when it was not (the caller reads it itself).
    pub fn take(&mut self, span: Span) -> Option<TimedRead> {
        loop {
            if let Some(i) = self.done.iter().position(|(s, _)| *s == span) {
                return Some(self.done.remove(i).1);
            }
            if !self.outstanding.contains(&span) {
                return None;
            }
            let received = self.threads.as_ref()?.done.recv();
            match received {
                Ok((s, read, buf)) => self.arrived(s, read, buf),
                // The threads are gone (one panicked): the caller reads the block itself.
                Err(_) => {
                    self.threads = None;
                    self.outstanding.clear();
                    return None;
                }
            }
        }
    }

    fn arrived(&mut self, span: Span, read: TimedRead, buf: AlignedBuf) {
        self.outstanding.retain(|s| *s != span);
        self.spare.push(buf);
        self.done.push((span, read));
        if self.done.len() > KEPT {
            self.done.remove(0);
        }
    }

    /// Starts reading `next` on a thread when fewer than `IN_FLIGHT` blocks are in flight and
    /// it is not read or being read already. `reader` starts the threads the first time.
    pub fn start(&mut self, next: Span, reader: impl FnOnce() -> Option<Reader>) {
        // Results that came back meanwhile make room.
        if let Some(t) = &self.threads {
            let arrived: Vec<Done> = t.done.try_iter().collect();
            for (s, read, buf) in arrived {
                self.arrived(s, read, buf);
            }
        }
        if self.outstanding.len() >= IN_FLIGHT
            || self.outstanding.contains(&next)
            || self.done.iter().any(|(s, _)| *s == next)
        {
            return;
        }
        let len = usize::try_from(next.length).unwrap_or(usize::MAX);
        let buf = match self.spare.iter().position(|b| b.len() >= len) {
            Some(i) => self.spare.swap_remove(i),
            None => match AlignedBuf::for_requests(len, false) {
                Ok(b) => b,
                Err(_) => return,
            },
        };
        if self.threads.is_none() {
            match reader().and_then(|r| spawn(r).ok()) {
                Some(t) => self.threads = Some(t),
                None => {
                    self.spare.push(buf);
                    return;
                }
            }
        }
        let sent = self
            .threads
            .as_ref()
            .is_some_and(|t| t.jobs.send((next, buf)).is_ok());
        if sent {
            self.outstanding.push(next);
        } else {
            self.threads = None;
        }
    }
}

/// `IN_FLIGHT` threads taking blocks from one queue; they end when the `ReadAhead` is dropped
/// (its end of the queue closes).
fn spawn(reader: Reader) -> std::io::Result<Threads> {
    let (jobs, job_rx) = channel::<Job>();
    let (done_tx, done) = channel::<Done>();
    let job_rx = Arc::new(Mutex::new(job_rx));
    for _ in 0..IN_FLIGHT {
        let (job_rx, done_tx, reader) = (Arc::clone(&job_rx), done_tx.clone(), Arc::clone(&reader));
        std::thread::Builder::new()
            .name("scan-ahead".into())
            .spawn(move || {
                loop {
                    let job = job_rx.lock().unwrap_or_else(PoisonError::into_inner).recv();
                    let Ok((span, mut buf)) = job else { break };
                    let read = reader(&mut buf, span);
                    if done_tx.send((span, read, buf)).is_err() {
                        break;
                    }
                }
            })?;
    }
    Ok(Threads { jobs, done })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::engine::ReadOutcome;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    fn counting() -> (Reader, Arc<Mutex<Vec<Span>>>, Arc<AtomicUsize>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let peak = Arc::new(AtomicUsize::new(0));
        let now = Arc::new(AtomicUsize::new(0));
        let (s, p) = (Arc::clone(&seen), Arc::clone(&peak));
        let reader: Reader = Arc::new(move |_buf, span| {
            let n = now.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(n, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(20));
            s.lock().unwrap().push(span);
            now.fetch_sub(1, Ordering::SeqCst);
            TimedRead {
                outcome: ReadOutcome::Read,
                elapsed: Duration::from_millis(20),
            }
        });
        (reader, seen, peak)
    }

    #[test]
    fn each_block_is_read_once_two_at_a_time_and_handed_back_in_the_scans_order() {
        let (reader, seen, peak) = counting();
        let mut ahead = ReadAhead::default();
        let block = |i: u64| Span::new(i * 4096, 4096);
        // The engine's order: name the next block, then ask for this one.
        let mut got = Vec::new();
        for i in 0..10 {
            ahead.start(block(i + 1), || Some(Arc::clone(&reader)));
            match ahead.take(block(i)) {
                Some(read) => got.push((i, read.outcome)),
                // Block 0 was never read ahead: the scan reads it itself.
                None => assert_eq!(i, 0),
            }
        }
        assert_eq!(got.len(), 9);
        assert!(got.iter().all(|(_, o)| *o == ReadOutcome::Read));
        let seen = seen.lock().unwrap().clone();
        let mut sorted = seen.clone();
        sorted.sort_by_key(|s| s.offset);
        sorted.dedup();
        assert_eq!(sorted.len(), seen.len(), "a block read twice: {seen:?}");
        assert!(peak.load(Ordering::SeqCst) <= IN_FLIGHT);
    }

    #[test]
    fn a_block_not_read_ahead_is_left_to_the_caller() {
        let (reader, seen, _) = counting();
        let mut ahead = ReadAhead::default();
        ahead.start(Span::new(8192, 4096), || Some(Arc::clone(&reader)));
        assert!(ahead.take(Span::new(0, 4096)).is_none());
        // Asked later, the block read ahead is handed over, read once.
        assert!(ahead.take(Span::new(8192, 4096)).is_some());
        assert!(
            ahead.take(Span::new(8192, 4096)).is_none(),
            "handed over twice"
        );
        assert_eq!(seen.lock().unwrap().len(), 1);
    }
}
