//! SIGINT, SIGTERM and SIGHUP turned into a call on a normal thread, so the process can put
//! back the settings it changed before it exits.
//!
//! One signal mechanism, `signal-hook`: the handler only writes to a pipe (async-signal-safe);
//! a thread named `signal-restore` reads the first signal, runs the callback (which may lock,
//! allocate and issue ioctls), then exits with 128 + the signal. A second signal waits in the
//! pipe: the restore is not interrupted. Flags set by signals are `StopSignals`', registered
//! alongside. SIGKILL cannot be caught: `disktriage restore` covers it from the journal.
//! Signals the parent ignored (`nohup`) stay ignored.

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

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

/// True when `sig` is ignored (SIG_IGN), as `nohup` leaves SIGHUP: a program catching it
/// should then leave it ignored.
pub fn is_ignored(sig: Signal) -> bool {
    let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: a null new action only reads the current one into `old`, zeroed memory of the
    // right type that outlives the call.
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
    // Ignored at start (`nohup`, a script's background job): not registered, as the parent asked.
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

/// The signals a [`StopSignals`] catches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Catch {
    /// A headless command's: SIGINT, SIGTERM and SIGHUP (terminal or SSH gone); a SIGHUP
    /// ignored at start stays ignored.
    Command,
    /// The interactive program's: SIGTERM, SIGHUP, SIGINT and SIGQUIT, caught whatever the
    /// parent left (the program owns the terminal).
    Session,
}

impl Catch {
    fn signals(self) -> Vec<Signal> {
        match self {
            Catch::Command => SIGNALS
                .into_iter()
                .filter(|&sig| !(sig == Signal::SIGHUP && is_ignored(sig)))
                .collect(),
            Catch::Session => vec![
                Signal::SIGTERM,
                Signal::SIGHUP,
                Signal::SIGINT,
                Signal::SIGQUIT,
            ],
        }
    }
}

/// The program's one stop-signal guard: while it lives, the signals of its [`Catch`] set its
/// stop flag and record the (last) signal instead of ending the process. A run polls the flag
/// (or links its own with [`StopSignals::also_set`]) and finishes what it can; the exit status
/// is [`StopSignals::exit_code`]. Dropping it removes its handlers; a signal left with no
/// handler is then ignored (`signal-hook` does not restore the default).
pub struct StopSignals {
    flag: Arc<AtomicBool>,
    signo: Arc<AtomicUsize>,
    signals: Vec<Signal>,
    ids: Vec<signal_hook::SigId>,
}

impl StopSignals {
    /// Starts catching the signals of `catch`.
    pub fn catch(catch: Catch) -> std::io::Result<StopSignals> {
        let mut out = StopSignals {
            flag: Arc::new(AtomicBool::new(false)),
            signo: Arc::new(AtomicUsize::new(0)),
            signals: catch.signals(),
            ids: Vec::new(),
        };
        for &sig in &out.signals {
            let flag = signal_hook::flag::register(sig as c_int, Arc::clone(&out.flag))?;
            out.ids.push(flag);
            let signo = signal_hook::flag::register_usize(
                sig as c_int,
                Arc::clone(&out.signo),
                sig as usize,
            )?;
            out.ids.push(signo);
        }
        Ok(out)
    }

    /// True once one of the signals came after the guard was made.
    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// The stop flag the signals set, to hand to what polls it (a runner, a test-file layout).
    pub fn flag(&self) -> &Arc<AtomicBool> {
        &self.flag
    }

    /// The number of the signal that came (0: none), for a loop that ends on it.
    pub fn signalled(&self) -> &AtomicUsize {
        &self.signo
    }

    /// The signal that came, if one did.
    pub fn signal(&self) -> Option<Signal> {
        i32::try_from(self.signo.load(Ordering::Relaxed))
            .ok()
            .and_then(|n| Signal::try_from(n).ok())
    }

    /// 128 + the signal after a stop by one; `None` when none came.
    pub fn exit_code(&self) -> Option<u8> {
        exit_code(self.signo.load(Ordering::Relaxed))
    }

    /// Makes the same signals also set `flag` (a run's own stop flag) until the returned
    /// link is dropped. A signal that came before the link is passed on at once.
    pub fn also_set(&self, flag: &Arc<AtomicBool>) -> std::io::Result<Linked> {
        let mut ids = Vec::new();
        for &sig in &self.signals {
            ids.push(signal_hook::flag::register(sig as c_int, Arc::clone(flag))?);
        }
        if self.is_set() {
            flag.store(true, Ordering::Relaxed);
        }
        Ok(Linked { ids })
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// A flag linked by [`StopSignals::also_set`]; dropping it unlinks the flag.
pub struct Linked {
    ids: Vec<signal_hook::SigId>,
}

impl Drop for Linked {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// The exit status after a stop by signal `signo` (0: none): 128 + the signal, as a shell
/// reports a process the signal ended (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).
pub fn exit_code(signo: usize) -> Option<u8> {
    if signo == 0 {
        return None;
    }
    u8::try_from(128 + signo).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_by_signal_exits_with_128_plus_the_signal() {
        assert_eq!(exit_code(0), None);
        assert_eq!(exit_code(Signal::SIGINT as usize), Some(130));
        assert_eq!(exit_code(Signal::SIGTERM as usize), Some(143));
        assert_eq!(exit_code(Signal::SIGHUP as usize), Some(129));
    }

    #[test]
    fn a_command_catches_int_term_and_hup_and_a_session_also_quit() {
        let command = Catch::Command.signals();
        assert!(command.contains(&Signal::SIGINT) && command.contains(&Signal::SIGTERM));
        assert!(!command.contains(&Signal::SIGQUIT));
        assert_eq!(
            Catch::Session.signals(),
            [
                Signal::SIGTERM,
                Signal::SIGHUP,
                Signal::SIGINT,
                Signal::SIGQUIT
            ]
        );
    }
}
