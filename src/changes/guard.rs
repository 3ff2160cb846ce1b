//! `RestoreGuard`: a session's changes are put back whatever the exit: on drop (normal return
//! or unwinding), on SIGINT/SIGTERM/SIGHUP (a signal thread restores, then exits), and on
//! panic in any thread (the panic hook restores). SIGKILL and crashes leave the journal for
//! `disktriage restore`.
//!
//! Settings are put back before anything is printed, and nothing printed on the way out may
//! fail the exit: after a terminal hangup every write to stderr fails (EIO), so messages go
//! through `write_stderr`, which ignores that.
//!
//! The `Changer` sits behind a mutex: a signal arriving while a change is being applied waits
//! until the change and its journal entry are complete, then restores.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use super::{ChangeError, Changer, RestoreOutcome, RestoreScope};
use crate::report;
use crate::report::output::write_stderr;
use crate::sys::signals;

/// Shared access to the session's `Changer`.
pub type SharedChanger = Arc<Mutex<Changer>>;

fn lock(c: &Mutex<Changer>) -> MutexGuard<'_, Changer> {
    c.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Restores this process's session changes when dropped.
pub struct RestoreGuard {
    changer: SharedChanger,
}

impl RestoreGuard {
    /// Wraps a session `Changer` (its lifetime should be `Lifetime::Session`).
    pub fn new(changer: Changer) -> Self {
        RestoreGuard {
            changer: Arc::new(Mutex::new(changer)),
        }
    }

    /// Both `install_signal_handlers` and `install_panic_hook`: for headless sessions that
    /// have no signal handling of their own.
    pub fn install_handlers(&self) -> Result<(), String> {
        self.install_signal_handlers()?;
        self.install_panic_hook();
        Ok(())
    }

    /// Restores on SIGINT, SIGTERM and SIGHUP, then exits with 128 + signal (from a thread of
    /// its own, so whatever the main thread is doing). A program that handles these signals
    /// itself (the TUI registers them with signal-hook to leave its loop and restore the
    /// terminal) must not call this: two handlers for one signal replace each other. It calls
    /// `restore_now` on its way out instead.
    pub fn install_signal_handlers(&self) -> Result<(), String> {
        let weak = Arc::downgrade(&self.changer);
        signals::on_termination(Box::new(move |sig| {
            if let Some(changer) = weak.upgrade() {
                let result = lock(&changer).restore(RestoreScope::Mine);
                write_stderr(&format!(
                    "disktriage: {sig}: putting back the settings this session changed\n"
                ));
                report_outcomes(result);
            }
        }))
    }

    /// Restores when any thread panics, before the previous hook runs (and prints the panic).
    /// A TUI installs its terminal-restoring hook before this one, so the settings come back
    /// first and the terminal second.
    pub fn install_panic_hook(&self) {
        install_panic_hook(Arc::downgrade(&self.changer));
    }

    /// The session's `Changer`, locked.
    pub fn changer(&self) -> MutexGuard<'_, Changer> {
        lock(&self.changer)
    }

    /// A handle for other threads.
    pub fn shared(&self) -> SharedChanger {
        Arc::clone(&self.changer)
    }

    /// Restores now and returns what happened (the drop then has nothing left to do).
    pub fn restore_now(&self) -> Result<Vec<RestoreOutcome>, ChangeError> {
        self.changer().restore(RestoreScope::Mine)
    }
}

impl Drop for RestoreGuard {
    fn drop(&mut self) {
        report_outcomes(lock(&self.changer).restore(RestoreScope::Mine));
    }
}

/// Prints outcomes on stderr (the only channel left on the way out), if there are any; a
/// stderr that cannot be written is ignored.
pub fn report_outcomes(result: Result<Vec<RestoreOutcome>, ChangeError>) {
    match result {
        Ok(outcomes) if outcomes.is_empty() => {}
        Ok(outcomes) => write_stderr(&report::restore::render_text(&outcomes)),
        Err(e) => write_stderr(&format!(
            "disktriage: could not restore this session's changes: {e}; run `disktriage \
             restore`\n"
        )),
    }
}

/// The panic hook: settings first (the panicking thread may be about to abort, or its
/// terminal may be gone), then the previous hook (the TUI's restores the terminal and the
/// default one prints the panic), then what was put back.
fn install_panic_hook(weak: Weak<Mutex<Changer>>) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let restored = weak.upgrade().map(|changer| restore_after_panic(&changer));
        previous(info);
        match restored {
            Some(Some(result)) => {
                write_stderr("disktriage: panic: putting back the settings this session changed\n");
                report_outcomes(result);
            }
            Some(None) => write_stderr(
                "disktriage: panic while changing a setting; if it is not put back on exit, \
                 run `disktriage restore`\n",
            ),
            None => {}
        }
    }));
}

/// Restores after a panic; None when the changer stayed locked.
fn restore_after_panic(
    changer: &Mutex<Changer>,
) -> Option<Result<Vec<RestoreOutcome>, ChangeError>> {
    // The panicking thread may hold the lock (then it is released only while unwinding, and
    // the guard's drop restores); another thread may be finishing a change. Wait a little,
    // never forever.
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
