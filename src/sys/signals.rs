//! SIGINT, SIGTERM and SIGHUP turned into a call on a normal thread, so the process can put
//! back the settings it changed before it exits.
//!
//! The program has one signal mechanism, `signal-hook`: its handler only writes to a pipe
//! (async-signal-safe); a thread named `signal-restore` reads the first signal, runs the
//! registered callback (which may lock, allocate and issue ioctls, as restoring needs), then
//! exits with 128 + the signal. A second signal during the restore waits in the pipe: the
//! restore is not interrupted. Flags set by signals (the TUI's loop, a CLI run's stop) are
//! `signal_hook::flag` registrations, which live alongside this one.
//! SIGKILL cannot be caught; `disktriage restore` covers that case from the journal. Signals
//! the parent set to be ignored (`nohup`) stay ignored.

use std::ffi::c_int;
use std::sync::{Mutex, OnceLock};

use nix::sys::signal::Signal;
use signal_hook::iterator::Signals;

/// The callback run on the signal thread before the process exits.
pub type TerminationHook = Box<dyn Fn(Signal) + Send>;

static HOOK: Mutex<Option<TerminationHook>> = Mutex::new(None);
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();

const SIGNALS: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// Makes SIGINT, SIGTERM and SIGHUP run `hook` on a dedicated thread, then exit with status
/// 128 + signal. Calling it again replaces the hook; the handlers are installed once.
pub fn on_termination(hook: TerminationHook) -> Result<(), String> {
    if let Ok(mut slot) = HOOK.lock() {
        *slot = Some(hook);
    }
    INSTALLED.get_or_init(install).clone()
}

/// True when `sig` is ignored (SIG_IGN), as `nohup` leaves SIGHUP: a program that catches the
/// signal itself should then leave it ignored, as the parent asked.
pub fn is_ignored(sig: Signal) -> bool {
    let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: a null new action only reads the current one into `old`, which is zeroed memory
    // of the right type and lives across the call.
    let rc = unsafe { libc::sigaction(sig as c_int, std::ptr::null(), old.as_mut_ptr()) };
    if rc != 0 {
        return false;
    }
    // SAFETY: sigaction succeeded, so it filled `old` (and zeroed memory is a valid value).
    let old = unsafe { old.assume_init() };
    old.sa_sigaction == libc::SIG_IGN
}

/// Removes the hook: signals then only exit the process (after nothing to restore).
pub fn clear_termination_hook() {
    if let Ok(mut slot) = HOOK.lock() {
        *slot = None;
    }
}

fn install() -> Result<(), String> {
    // A signal ignored at start (`nohup`, a background job of a script) stays ignored, as the
    // parent asked: it is not registered at all.
    let wanted: Vec<c_int> = SIGNALS
        .into_iter()
        .filter(|&sig| !is_ignored(sig))
        .map(|sig| sig as c_int)
        .collect();
    let mut signals =
        Signals::new(&wanted).map_err(|e| format!("cannot handle termination signals: {e}"))?;
    std::thread::Builder::new()
        .name("signal-restore".into())
        .spawn(move || {
            let Some(raw) = signals.forever().next() else {
                return;
            };
            let sig = Signal::try_from(raw).unwrap_or(Signal::SIGTERM);
            if let Ok(slot) = HOOK.lock()
                && let Some(hook) = slot.as_ref()
            {
                hook(sig);
            }
            std::process::exit(128 + sig as i32);
        })
        .map_err(|e| format!("cannot start the signal thread: {e}"))?;
    Ok(())
}

/// A flag that SIGINT, SIGTERM and SIGHUP set while it lives (a SIGHUP ignored at start stays
/// ignored), for a wait that must end on them (a lock held by another process): the wait
/// polls `is_set`. Dropping it removes its handlers; the program's other handlers stay.
pub struct StopFlag {
    flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl StopFlag {
    pub fn new() -> std::io::Result<StopFlag> {
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut out = StopFlag {
            flag,
            ids: Vec::new(),
        };
        for sig in SIGNALS {
            if sig == Signal::SIGHUP && is_ignored(sig) {
                continue;
            }
            let id = signal_hook::flag::register(sig as c_int, std::sync::Arc::clone(&out.flag))?;
            out.ids.push(id);
        }
        Ok(out)
    }

    /// True once one of the signals came after the flag was made.
    pub fn is_set(&self) -> bool {
        self.flag.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for StopFlag {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
