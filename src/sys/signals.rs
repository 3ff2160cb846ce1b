//! SIGINT, SIGTERM and SIGHUP turned into a call on a normal thread, so the process can put
//! back the settings it changed before it exits.
//!
//! The signal handler does the one async-signal-safe thing, `write(2)` of the signal number to
//! a pipe; a thread named `signal-restore` reads it, runs the registered callback (which may
//! lock, allocate and issue ioctls, as restoring needs), then exits with 128 + the signal. A
//! second signal during the restore waits in the pipe: the restore is not interrupted.
//! SIGKILL cannot be caught; `disktriage restore` covers that case from the journal. Signals
//! the parent set to be ignored (`nohup`) stay ignored.

use std::ffi::{c_int, c_void};
use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, IntoRawFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, OnceLock};

use nix::fcntl::OFlag;
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

/// The callback run on the signal thread before the process exits.
pub type TerminationHook = Box<dyn Fn(Signal) + Send>;

/// The pipe's write end, for the handler. -1 until installed.
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
static HOOK: Mutex<Option<TerminationHook>> = Mutex::new(None);
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();

const SIGNALS: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

extern "C" fn on_signal(sig: c_int) {
    let fd = PIPE_WRITE.load(Ordering::Relaxed);
    if fd >= 0 {
        let byte = u8::try_from(sig).unwrap_or(0);
        // SAFETY: write(2) is async-signal-safe; `byte` is a live local and the length is 1.
        // A failed write (pipe full because signals pile up) loses nothing that matters: one
        // byte is already waiting.
        unsafe {
            libc::write(fd, (&byte as *const u8).cast::<c_void>(), 1);
        }
    }
}

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
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)
        .map_err(|e| format!("cannot create the signal pipe: {e}"))?;
    PIPE_WRITE.store(write.into_raw_fd(), Ordering::Relaxed);
    let read_fd = read.into_raw_fd();
    std::thread::Builder::new()
        .name("signal-restore".into())
        .spawn(move || {
            // SAFETY: `read_fd` came from `into_raw_fd` above and is owned by nothing else.
            let mut pipe = unsafe { File::from_raw_fd(read_fd) };
            let mut byte = [0u8; 1];
            loop {
                match pipe.read(&mut byte) {
                    Ok(1) => break,
                    Ok(_) => return,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => return,
                }
            }
            let sig = Signal::try_from(c_int::from(byte[0])).unwrap_or(Signal::SIGTERM);
            if let Ok(slot) = HOOK.lock()
                && let Some(hook) = slot.as_ref()
            {
                hook(sig);
            }
            std::process::exit(128 + sig as i32);
        })
        .map_err(|e| format!("cannot start the signal thread: {e}"))?;
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in SIGNALS {
        // SAFETY: `on_signal` only loads an atomic and calls write(2), both async-signal-safe,
        // so it is a sound handler for any signal at any point.
        let old =
            unsafe { sigaction(sig, &action) }.map_err(|e| format!("cannot handle {sig}: {e}"))?;
        // A signal ignored at start (`nohup`, a background job of a script) stays ignored,
        // as the parent asked.
        if matches!(old.handler(), SigHandler::SigIgn) {
            // SAFETY: restoring SIG_IGN installs no code at all.
            unsafe { sigaction(sig, &old) }.map_err(|e| format!("cannot restore {sig}: {e}"))?;
        }
    }
    Ok(())
}
