//! The interactive program: terminal set-up and restore (also after a panic or a signal), the
//! main loop that feeds messages to `App::update` and draws, handing the commands it returns
//! to the executor (`executor`), which carries them out through `sys` and the engine.
//!
//! Whatever the exit (q, Ctrl-C, SIGTERM, SIGHUP, a panic), the terminal is restored and the
//! settings this session changed (schedulers, drive write caches) are put back, except those
//! the admin chose to keep. Every change is journaled before it is made (`crate::changes`), so
//! after a SIGKILL the next start offers to put it back. A panic on another thread (a bug)
//! ends only that thread: the screen says so, and the session goes on.

mod executor;

use std::io::{self, IsTerminal};
use std::mem::ManuallyDrop;
use std::panic::PanicHookInfo;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use anyhow::Context;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::crossterm::{cursor, execute};

use crate::app::App;
use crate::bench::session;
use crate::changes::guard::{RestoreGuard, SharedChanger};
use crate::changes::{Changer, Journal};
use crate::event::{self, Cmd, Msg};
use crate::model::Lifetime;
use crate::report::output::write_stderr;
use crate::sys::privilege;
use crate::sys::{DriveControl, LinuxDrives, SysRoot};
use executor::Executor;

/// How often the clock ticks (and the screen may refresh while idle).
const TICK: Duration = Duration::from_millis(250);
/// The fastest the screen is redrawn for data (keys redraw at once).
const MIN_FRAME: Duration = Duration::from_millis(100);

fn restore_terminal() {
    let _ = ratatui::crossterm::terminal::disable_raw_mode();
    let _ = execute!(io::stdout(), LeaveAlternateScreen, cursor::Show);
}

/// Runs the interactive program until the admin quits.
pub fn run(root: SysRoot, journal_dir: &Path, history_dir: &Path) -> anyhow::Result<ExitCode> {
    if !io::stdout().is_terminal() || !io::stdin().is_terminal() {
        anyhow::bail!(
            "the interactive screen needs a terminal; for scripts use `disktriage list` and \
             `disktriage run` (see --help)"
        );
    }
    let drives: Arc<dyn DriveControl> = Arc::new(LinuxDrives::new(root.clone()));
    // Changes need the journal (and root); without it the screen still shows everything, and
    // a change attempt says why it cannot be made.
    let guard = match Journal::open(journal_dir) {
        Ok(journal) if privilege::is_root() => Ok(RestoreGuard::new(
            Changer::new(Arc::clone(&drives), journal, Lifetime::Session),
            crate::report::restore::announce,
        )),
        Ok(_) => Err("changing settings needs root".to_string()),
        Err(e) => Err(format!(
            "cannot open the change journal in {}: {e}",
            journal_dir.display()
        )),
    };
    // The terminal's hook is installed first and the guard's after it, so the guard's runs
    // first: the settings come back, then the terminal, then the panic message and the
    // restore report are printed.
    let (tx, rx) = mpsc::channel();
    let background_panics = Arc::new(Mutex::new(Vec::new()));
    install_panic_routes(
        std::thread::current().id(),
        tx.clone(),
        Arc::clone(&background_panics),
        restore_terminal,
    );
    if let Ok(g) = &guard {
        g.install_panic_hook();
    }
    // Which signal ended the session (0: none); the exit status is then 128 + the signal.
    let signalled = Arc::new(AtomicUsize::new(0));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGQUIT,
    ] {
        signal_hook::flag::register_usize(sig, Arc::clone(&signalled), sig as usize)?;
    }

    ratatui::crossterm::terminal::enable_raw_mode()
        .context("cannot switch the terminal to raw mode")?;
    let mut stdout = io::stdout();
    if let Err(e) = execute!(stdout, EnterAlternateScreen, cursor::Hide) {
        restore_terminal();
        return Err(e).context("cannot set up the terminal");
    }
    // ratatui's Terminal shows the cursor when dropped and `eprintln!`s when it cannot, which
    // panics on a terminal that hung up (and aborts when it happens while unwinding). It is
    // never dropped implicitly: `release_terminal` lets it go.
    let mut terminal = match Terminal::new(CrosstermBackend::new(io::stdout())) {
        Ok(t) => ManuallyDrop::new(t),
        Err(e) => {
            restore_terminal();
            return Err(e).context("cannot set up the terminal");
        }
    };
    let changer = guard
        .as_ref()
        .map(RestoreGuard::shared)
        .map_err(Clone::clone);
    let history = crate::history::History::new(history_dir);
    let result = main_loop(
        &mut terminal,
        (tx, rx),
        &root,
        drives,
        changer,
        history,
        &signalled,
    );
    // Settings first: after a hangup (SSH dropped, window closed) every write to the terminal
    // fails, and nothing done to it may stand between the admin and the original settings.
    let restored = guard.as_ref().ok().map(RestoreGuard::restore_now);
    release_terminal(terminal);
    restore_terminal();
    match restored {
        Some(Ok(outcomes)) => write_stderr(&crate::report::restore::render_text(&outcomes)),
        Some(Err(e)) => write_stderr(&format!(
            "disktriage: could not put back this session's changes: {e}; run `disktriage \
             restore`\n"
        )),
        None => {}
    }
    for what in background_panics
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        write_stderr(&format!(
            "disktriage: internal error during the session (a bug): {what}\n"
        ));
    }
    result
}

/// Routes panics while the screen is up. A panic on the UI thread `ui` ends the session: the
/// terminal is restored (`restore`), then the previous hook prints it. Another thread's panic
/// (the test runner's, a task's) ends only that thread, and whoever waits for it says so (a
/// run: "the test runner thread panicked"); printing it would scribble over the screen, so
/// the UI is told instead (`tell`), and `printed_at_exit` keeps it for after the terminal is
/// restored.
pub fn install_panic_routes(
    ui: ThreadId,
    tell: Sender<Msg>,
    printed_at_exit: Arc<Mutex<Vec<String>>>,
    restore: fn(),
) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == ui {
            restore();
            previous(info);
            return;
        }
        let what = panic_text(info);
        printed_at_exit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(what.clone());
        let _ = tell.send(Msg::ThreadPanicked(what));
    }));
}

/// "thread 'io-runner' panicked at src/x.rs:10:5: what it said", as the default hook words it.
pub fn panic_text(info: &PanicHookInfo) -> String {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("<unnamed>");
    // `PanicHookInfo::payload_as_str` does this from Rust 1.91, above the crate's MSRV (1.88).
    let said = info
        .payload()
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    match info.location() {
        Some(at) => format!("thread '{name}' panicked at {at}: {said}"),
        None => format!("thread '{name}' panicked: {said}"),
    }
}

type Tty = Terminal<CrosstermBackend<io::Stdout>>;

/// Shows the cursor and drops the terminal, or leaks it (a screen buffer, just before the
/// process exits) when the terminal cannot be written, so its `Drop` has nothing to print.
fn release_terminal(mut terminal: ManuallyDrop<Tty>) {
    if terminal.show_cursor().is_ok() {
        drop(ManuallyDrop::into_inner(terminal));
    }
}

/// The exit status: 128 + the signal that ended the session, else success.
fn exit_code(signalled: &AtomicUsize) -> ExitCode {
    match signalled.load(Ordering::Relaxed) {
        0 => ExitCode::SUCCESS,
        sig => u8::try_from(128 + sig).map_or(ExitCode::FAILURE, ExitCode::from),
    }
}

fn main_loop(
    terminal: &mut Tty,
    (tx, rx): (Sender<Msg>, Receiver<Msg>),
    root: &SysRoot,
    drives: Arc<dyn DriveControl>,
    changer: Result<SharedChanger, String>,
    history: crate::history::History,
    signalled: &AtomicUsize,
) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    event::spawn_input(tx.clone())?;
    event::spawn_ticker(tx.clone(), started, TICK)?;
    let console = std::env::var("TERM").is_ok_and(|t| t == "linux");
    let mut app = App::new(privilege::is_root(), console);
    app.export_dir = crate::report::export::export_dir(history.dir());
    let mut exec = Executor::new(
        root.clone(),
        tx.clone(),
        drives,
        changer,
        Arc::new(|root, request, stop, laid_out| {
            session::start_watched(root, request, Some(stop), Some(laid_out))
        }),
    )
    .with_history(history);
    exec.execute(Cmd::RefreshInventory);
    exec.offer_orphans();

    let mut hangup = false;
    let mut stats = UiStats::new(started);
    let mut dirty = true;
    let mut last_frame = Instant::now() - MIN_FRAME;
    loop {
        stats.account(app.running());
        // A signal ends the session before anything more is drawn: after a hangup the
        // terminal is gone.
        if signalled.load(Ordering::Relaxed) != 0 {
            break;
        }
        if dirty && (last_frame.elapsed() >= MIN_FRAME) {
            if let Err(e) = terminal.draw(|f| crate::ui::render(&app, f)) {
                if hung_up(&e) {
                    hangup = true;
                    break;
                }
                return Err(e.into());
            }
            stats.frames += 1;
            last_frame = Instant::now();
            dirty = false;
        }
        let msg = match rx.recv_timeout(MIN_FRAME) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let key = matches!(msg, Msg::Key(_) | Msg::Resize);
        // While a test runs its samples redraw the screen (4 a second at the default
        // interval); the clock alone only needs to move the progress bar once a second.
        let quiet_tick = matches!(msg, Msg::Tick(_))
            && app.running()
            && last_frame.elapsed() < Duration::from_secs(1);
        if matches!(msg, Msg::Resize)
            && let Err(e) = terminal.autoresize()
        {
            if hung_up(&e) {
                hangup = true;
                break;
            }
            return Err(e.into());
        }
        let cmds = app.update(msg);
        dirty |= !quiet_tick;
        if key {
            // Keys answer at once.
            last_frame = Instant::now() - MIN_FRAME;
        }
        for c in cmds {
            if c == Cmd::Quit {
                exec.shutdown();
                stats.write();
                return Ok(if app.interrupted {
                    ExitCode::from(128 + libc::SIGINT as u8)
                } else {
                    ExitCode::SUCCESS
                });
            }
            exec.execute(c);
        }
    }
    exec.shutdown();
    stats.write();
    if hangup && signalled.load(Ordering::Relaxed) == 0 {
        // The terminal went away before its SIGHUP arrived: the same end, the same status.
        return Ok(ExitCode::from(128 + libc::SIGHUP as u8));
    }
    Ok(exit_code(signalled))
}

/// True when a terminal write failed because the terminal is gone (it hung up: an SSH
/// connection dropped, the window closed).
fn hung_up(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EIO | libc::ENXIO))
}

/// The file `DISKTRIAGE_UI_STATS` names (read by `benches/tui_overhead.rs`).
#[derive(serde::Serialize)]
struct UiStatsFile {
    ui_cpu_seconds: f64,
    wall_seconds: f64,
    frames: u64,
    ui_cpu_during_runs_seconds: f64,
    run_wall_seconds: f64,
}

/// What the UI thread costs, for the UI-overhead benchmark: its CPU time over the session and
/// while a test runs, written as JSON where `DISKTRIAGE_UI_STATS` points.
struct UiStats {
    started: Instant,
    cpu0: Duration,
    last_cpu: Duration,
    last_wall: Instant,
    run_cpu: Duration,
    run_wall: Duration,
    frames: u64,
}

impl UiStats {
    fn new(started: Instant) -> Self {
        let cpu = privilege::thread_cpu_time();
        UiStats {
            started,
            cpu0: cpu,
            last_cpu: cpu,
            last_wall: Instant::now(),
            run_cpu: Duration::ZERO,
            run_wall: Duration::ZERO,
            frames: 0,
        }
    }

    /// Adds the time since the last call to the running totals when a test was running.
    fn account(&mut self, running: bool) {
        let cpu = privilege::thread_cpu_time();
        let now = Instant::now();
        if running {
            self.run_cpu += cpu.saturating_sub(self.last_cpu);
            self.run_wall += now - self.last_wall;
        }
        self.last_cpu = cpu;
        self.last_wall = now;
    }

    fn write(&self) {
        let Some(path) = std::env::var_os("DISKTRIAGE_UI_STATS") else {
            return;
        };
        let cpu = privilege::thread_cpu_time().saturating_sub(self.cpu0);
        let stats = UiStatsFile {
            ui_cpu_seconds: cpu.as_secs_f64(),
            wall_seconds: self.started.elapsed().as_secs_f64(),
            frames: self.frames,
            ui_cpu_during_runs_seconds: self.run_cpu.as_secs_f64(),
            run_wall_seconds: self.run_wall.as_secs_f64(),
        };
        let Ok(mut json) = serde_json::to_string(&stats) else {
            return;
        };
        json.push('\n');
        let _ = std::fs::write(path, json);
    }
}
