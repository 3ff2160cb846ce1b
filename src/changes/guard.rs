//! `RestoreGuard`: a session's changes are put back whatever the exit: on drop (normal return
//! or unwinding), on SIGINT/SIGTERM/SIGHUP (a signal thread restores, then exits), and on
//! panic in any thread (the panic hook restores). SIGKILL and crashes leave the journal for
//! `disktriage restore`.
//!
//! The `Changer` sits behind a mutex: a signal arriving while a change is being applied waits
//! until the change and its journal entry are complete, then restores.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use super::{ChangeError, Changer, RestoreOutcome, RestoreScope};
use crate::report;
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

    /// Also restores on SIGINT, SIGTERM and SIGHUP (then exits with 128 + signal) and on
    /// panic. The TUI, which must put the terminal back first, can chain its own panic hook
    /// after this one (hooks installed later run first).
    pub fn install_handlers(&self) -> Result<(), String> {
        let weak = Arc::downgrade(&self.changer);
        let on_signal = weak.clone();
        signals::on_termination(Box::new(move |sig| {
            if let Some(changer) = on_signal.upgrade() {
                eprintln!("disktriage: {sig}: putting back the settings this session changed");
                report_outcomes(lock(&changer).restore(RestoreScope::Mine));
            }
        }))?;
        install_panic_hook(weak);
        Ok(())
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

/// Prints outcomes on stderr (the only channel left on the way out), if there are any.
fn report_outcomes(result: Result<Vec<RestoreOutcome>, ChangeError>) {
    match result {
        Ok(outcomes) if outcomes.is_empty() => {}
        Ok(outcomes) => eprint!("{}", report::restore::render_text(&outcomes)),
        Err(e) => eprintln!(
            "disktriage: could not restore this session's changes: {e}; run `disktriage \
             restore`"
        ),
    }
}

fn install_panic_hook(weak: Weak<Mutex<Changer>>) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        let Some(changer) = weak.upgrade() else {
            return;
        };
        // The panicking thread may hold the lock (then it is released only while unwinding,
        // and the guard's drop restores); another thread may be finishing a change. Wait a
        // little, never forever.
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            match changer.try_lock() {
                Ok(c) => {
                    eprintln!("disktriage: panic: putting back the settings this session changed");
                    report_outcomes(c.restore(RestoreScope::Mine));
                    return;
                }
                Err(std::sync::TryLockError::Poisoned(p)) => {
                    report_outcomes(p.into_inner().restore(RestoreScope::Mine));
                    return;
                }
                Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(std::sync::TryLockError::WouldBlock) => {
                    eprintln!(
                        "disktriage: panic while changing a setting; if it is not put back \
                         on exit, run `disktriage restore`"
                    );
                    return;
                }
            }
        }
    }));
}
