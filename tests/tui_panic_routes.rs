//! Where a panic goes while the interactive screen is up, in a process of its own (a panic
//! hook is global to the process). A panic on another thread than the UI's (a bug in the test
//! runner or a task) must not restore the terminal under a screen that goes on, nor print over
//! it: the UI is told, and the text is kept for after the session. The UI thread's own panic
//! ends the session, the terminal restored first.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use disktriage::event::Msg;
use disktriage::tui::install_panic_routes;

static TERMINAL_RESTORED: AtomicUsize = AtomicUsize::new(0);

fn restore_terminal() {
    TERMINAL_RESTORED.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn a_background_panic_is_told_to_the_ui_and_the_uis_own_restores_the_terminal() {
    let (tx, rx) = mpsc::channel();
    let kept = Arc::new(Mutex::new(Vec::new()));
    install_panic_routes(
        std::thread::current().id(),
        tx,
        Arc::clone(&kept),
        restore_terminal,
    );
    let told = |rx: &mpsc::Receiver<Msg>| match rx.try_recv() {
        Ok(Msg::ThreadPanicked(what)) => Some(what),
        Ok(other) => panic!("{other:?}"),
        Err(_) => None,
    };

    let runner = std::thread::Builder::new()
        .name("io-runner".into())
        .spawn(|| panic!("boom"))
        .unwrap();
    assert!(runner.join().is_err());
    assert_eq!(TERMINAL_RESTORED.load(Ordering::SeqCst), 0);
    let what = told(&rx).expect("the UI is told");
    assert!(
        what.starts_with("thread 'io-runner' panicked at tests/tui_panic_routes.rs:"),
        "{what}"
    );
    assert!(what.ends_with(": boom"), "{what}");
    // A formatted message, from an unnamed thread.
    let n = 7;
    assert!(
        std::thread::spawn(move || panic!("slot {n} is not free"))
            .join()
            .is_err()
    );
    let second = told(&rx).expect("the UI is told");
    assert!(
        second.starts_with("thread '<unnamed>' panicked at"),
        "{second}"
    );
    assert!(second.ends_with(": slot 7 is not free"), "{second}");
    assert_eq!(*kept.lock().unwrap(), [what, second]);

    // The UI thread's own panic ends the session: the terminal first, and the UI is not told.
    assert!(std::panic::catch_unwind(|| panic!("the UI's bug")).is_err());
    assert_eq!(TERMINAL_RESTORED.load(Ordering::SeqCst), 1);
    assert_eq!(told(&rx), None);
    assert_eq!(kept.lock().unwrap().len(), 2);
    drop(std::panic::take_hook());
}
