//! `RestoreGuard`: a session's changes are put back whatever the exit: on drop (normal return
//! or unwinding), on SIGINT/SIGTERM/SIGHUP (a signal thread restores, then exits), and on
//! panic in any thread (the panic hook restores). SIGKILL and crashes leave the journal for
//! `disktriage restore`.
//!
//! Settings are put back before anything is said. The guard does not print: it hands what it
//! did (`RestoreNews`) to the announcer it was given (`report::restore::announce` writes it to
//! stderr in a way that cannot fail the exit), so this layer stays below the reports.
//!
//! The `Changer` sits behind a mutex: a signal arriving while a change is being applied waits
//! until the change and its journal entry are complete, then restores.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use super::{ChangeError, Changer, RestoreOutcome, RestoreScope};
use crate::sys::signals;

/// Shared access to the session's `Changer`.
pub type SharedChanger = Arc<Mutex<Changer>>;

fn lock(c: &Mutex<Changer>) -> MutexGuard<'_, Changer> {
    c.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a restore on the way out gave: the outcomes, or why there are none.
pub type Restoration = Result<Vec<RestoreOutcome>, ChangeError>;

/// What the guard did without being asked, for the admin to be told.
#[derive(Debug)]
pub enum RestoreNews {
    /// A termination signal (`SIGTERM`...) came; the settings were put back.
    Signal {
        signal: String,
        restoration: Restoration,
    },
    /// A thread panicked: what was put back, or `None` (the changer was locked).
    Panic(Option<Restoration>),
    /// The guard was dropped (normal return or unwinding).
    Dropped(Restoration),
}

/// Tells the admin what the guard did; on the way out, so it never fails.
pub type Announcer = fn(RestoreNews);

/// Restores this process's session changes when dropped.
pub struct RestoreGuard {
    changer: SharedChanger,
    announce: Announcer,
}

impl RestoreGuard {
    /// Wraps a session `Changer`; `announce` tells the admin what was put back.
    pub fn new(changer: Changer, announce: Announcer) -> Self {
        RestoreGuard {
            changer: Arc::new(Mutex::new(changer)),
            announce,
        }
    }

    /// Both handlers, for headless sessions.
    pub fn install_handlers(&self) -> Result<(), String> {
        self.install_signal_handlers()?;
        self.install_panic_hook();
        Ok(())
    }

    /// Restores on SIGINT, SIGTERM and SIGHUP from a thread of its own, then exits with 128 +
    /// signal. Not for a program with its own handlers (the TUI): two handlers for one signal
    /// replace each other; it calls `restore_now` on its way out instead.
    pub fn install_signal_handlers(&self) -> Result<(), String> {
        let weak = Arc::downgrade(&self.changer);
        let announce = self.announce;
        signals::on_termination(Box::new(move |sig| {
            if let Some(changer) = weak.upgrade() {
                let restoration = lock(&changer).restore(RestoreScope::Mine);
                announce(RestoreNews::Signal {
                    signal: sig.to_string(),
                    restoration,
                });
            }
        }))
    }

    /// Restores when the calling thread panics, before the previous hook (which prints it). A
    /// TUI installs its terminal hook first, so the settings come back before the terminal.
    pub fn install_panic_hook(&self) {
        install_panic_hook(Arc::downgrade(&self.changer), self.announce);
    }

    /// The session's `Changer`, locked.
    pub fn changer(&self) -> MutexGuard<'_, Changer> {
        lock(&self.changer)
    }

    /// A handle for other threads.
    pub fn shared(&self) -> SharedChanger {
        Arc::clone(&self.changer)
    }

    /// Restores now and returns what happened.
    pub fn restore_now(&self) -> Result<Vec<RestoreOutcome>, ChangeError> {
        self.changer().restore(RestoreScope::Mine)
    }
}

impl Drop for RestoreGuard {
    fn drop(&mut self) {
        (self.announce)(RestoreNews::Dropped(
            lock(&self.changer).restore(RestoreScope::Mine),
        ));
    }
}

/// The panic hook: settings first (the thread may abort, its terminal may be gone), then the
/// previous hook, then what was put back. Only the session thread's panic ends the session:
/// a worker's is reported by whoever joins it, and a restore would undo a switch still shown.
fn install_panic_hook(weak: Weak<Mutex<Changer>>, announce: Announcer) {
    let owner = std::thread::current().id();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() != owner {
            previous(info);
            return;
        }
        let restored = weak.upgrade().map(|changer| restore_after_panic(&changer));
        previous(info);
        if let Some(restored) = restored {
            announce(RestoreNews::Panic(restored));
        }
    }));
}

/// Restores after a panic; None when the changer stayed locked.
fn restore_after_panic(changer: &Mutex<Changer>) -> Option<Restoration> {
    // The panicking thread may hold the lock (its unwinding drop restores), or another may be
    // finishing a change: wait a little, never forever.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match changer.try_lock() {
            Ok(c) => return Some(c.restore(RestoreScope::Mine)),
            Err(std::sync::TryLockError::Poisoned(p)) => {
                return Some(p.into_inner().restore(RestoreScope::Mine));
            }
            Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(std::sync::TryLockError::WouldBlock) => return None,
        }
    }
}
