//! The gate between warm-up and measurement: workers arrive and wait while the runner reads
//! the kernel's counters, then the runner opens it. Both the runner and the workers use it, so
//! it lives below both.

use std::sync::{Condvar, Mutex};

/// Where workers wait between warm-up and measurement while the runner reads the counters.
#[derive(Debug)]
pub struct Gate {
    state: Mutex<GateState>,
    cv: Condvar,
}

#[derive(Debug)]
struct GateState {
    expected: usize,
    arrived: usize,
    open: bool,
}

impl Gate {
    pub fn new(expected: usize) -> Self {
        Gate {
            state: Mutex::new(GateState {
                expected,
                arrived: 0,
                open: false,
            }),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A worker arrives and waits until the runner opens the gate.
    pub fn arrive_and_wait(&self) {
        let mut s = self.lock();
        s.arrived += 1;
        self.cv.notify_all();
        while !s.open {
            s = self
                .cv
                .wait(s)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// A worker that will never arrive (it failed to start).
    pub fn forget(&self) {
        let mut s = self.lock();
        s.expected = s.expected.saturating_sub(1);
        self.cv.notify_all();
    }

    /// Waits until every expected worker arrived.
    pub(super) fn wait_all(&self) {
        let mut s = self.lock();
        while s.arrived < s.expected {
            s = self
                .cv
                .wait(s)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    pub(super) fn open(&self) {
        let mut s = self.lock();
        s.open = true;
        self.cv.notify_all();
    }
}
