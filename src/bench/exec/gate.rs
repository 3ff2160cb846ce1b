//! The gate between warm-up and measurement: workers wait while the runner reads the kernel's
//! counters, then the runner opens it. It lives below both, which use it.
//!
//! Opening gives every I/O thread the same start instant and wakes each on its own
//! (`unpark`), not through one mutex: with a condition variable, 32 I/O threads on 2 CPUs took
//! the mutex in turn behind threads already doing I/O, and the last started up to 0.45 s after
//! the first, leaving the phase's tail to a few threads.

use std::sync::{Condvar, Mutex, OnceLock};
use std::thread::Thread;
use std::time::Instant;

/// Where workers wait between warm-up and measurement while the runner reads the counters.
#[derive(Debug)]
pub struct Gate {
    state: Mutex<GateState>,
    /// Wakes the runner as workers arrive.
    arrivals: Condvar,
    /// When the runner opened the gate: the measured phase's start for every thread.
    opened: OnceLock<Instant>,
}

#[derive(Debug)]
struct GateState {
    expected: usize,
    arrived: usize,
    /// The threads waiting at the gate, to wake one by one when it opens.
    waiting: Vec<Thread>,
}

impl Gate {
    pub fn new(expected: usize) -> Self {
        Gate {
            state: Mutex::new(GateState {
                expected,
                arrived: 0,
                waiting: Vec::new(),
            }),
            arrivals: Condvar::new(),
            opened: OnceLock::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A worker arrives and waits until the runner opens the gate; returns the instant it
    /// opened, the start of the measured phase.
    pub fn arrive_and_wait(&self) -> Instant {
        {
            let mut s = self.lock();
            s.arrived += 1;
            s.waiting.push(std::thread::current());
            self.arrivals.notify_all();
        }
        // `open` sets the instant before it wakes anyone, and a thread registered after `open` took
        // the list finds it set: nobody sleeps through it. `park` may return early, hence the loop.
        loop {
            if let Some(&opened) = self.opened.get() {
                return opened;
            }
            std::thread::park();
        }
    }

    /// A worker that will never arrive (it failed to start).
    pub fn forget(&self) {
        let mut s = self.lock();
        s.expected = s.expected.saturating_sub(1);
        self.arrivals.notify_all();
    }

    /// Waits until every expected worker arrived.
    pub(super) fn wait_all(&self) {
        let mut s = self.lock();
        while s.arrived < s.expected {
            s = self
                .arrivals
                .wait(s)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// Opens the gate and returns the instant it opened (the same one every worker gets).
    pub(super) fn open(&self) -> Instant {
        let opened = *self.opened.get_or_init(Instant::now);
        let waiting = std::mem::take(&mut self.lock().waiting);
        for thread in waiting {
            thread.unpark();
        }
        opened
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn every_thread_leaves_with_the_instant_the_gate_opened() {
        let gate = Arc::new(Gate::new(8));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let g = Arc::clone(&gate);
                std::thread::spawn(move || g.arrive_and_wait())
            })
            .collect();
        gate.wait_all();
        let opened = gate.open();
        for t in threads {
            assert_eq!(t.join().unwrap(), opened);
        }
        // A late arrival (a thread that raced `open`) does not wait for a wake-up that came.
        assert_eq!(gate.arrive_and_wait(), opened);
    }
}
