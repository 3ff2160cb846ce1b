//! The interactive program: terminal set-up and restore (also after a panic or a signal), and
//! the main loop that feeds messages to `App::update`, draws, and hands the commands it
//! returns to `executor`.
//!
//! Whatever the exit (q, Ctrl-C, SIGTERM, SIGHUP, a panic), the terminal is restored and the
//! session's setting changes are put back, except those the admin chose to keep. Every change
//! is journaled first (`crate::changes`), so after a SIGKILL the next start offers to put it
//! back. A panic on another thread ends only that thread: the screen says so.

pub mod drive_reads;
pub mod executor;
pub mod jobs;
pub mod runs;

// The library's surface, as `disktriage::tui::Item` (the integration tests check it).
pub use executor::{Executor, RunStarter};
pub use jobs::{INTERVAL, Jobs, in_context, run_here};

use std::io::{self, IsTerminal};
use std::mem::ManuallyDrop;
use std::panic::PanicHookInfo;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use anyhow::Context;
use ratatui::Terminal;
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::crossterm::terminal::{Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::crossterm::{cursor, execute};

use crate::app::App;
use crate::bench::exec::session;
use crate::changes::guard::{RestoreGuard, SharedChanger};
use crate::changes::{Changer, Journal};
use crate::event::{self, Cmd, Msg};
use crate::flow::job::PutBack;
use crate::flow::scan::ScanMsg;
use crate::model::Lifetime;
use crate::report::output::write_stderr;
use crate::sys::privilege;
use crate::sys::signals::{self, Catch, StopSignals};
use crate::sys::{DriveControl, LinuxDrives, SysRoot};

/// How often the clock ticks (and the screen may refresh while idle).
const TICK: Duration = Duration::from_millis(250);
/// The fastest the screen is redrawn for data (keys redraw at once).
const MIN_FRAME: Duration = Duration::from_millis(100);

/// Set when the terminal has no alternate screen (the kernel's console): what the session
/// drew stays on the one screen there, so leaving clears it (read by the panic route too).
static NO_ALTERNATE_SCREEN: AtomicBool = AtomicBool::new(false);

fn restore_terminal() {
    let _ = ratatui::crossterm::terminal::disable_raw_mode();
    if NO_ALTERNATE_SCREEN.load(Ordering::Relaxed) {
        // No screen to go back to: a blank one, the cursor at its top, so the shell's prompt
        // and the restore report stand on lines of their own, nothing of the frame around.
        let _ = execute!(
            io::stdout(),
            Clear(ClearType::All),
            cursor::MoveTo(0, 0),
            cursor::Show
        );
    } else {
        let _ = execute!(io::stdout(), LeaveAlternateScreen, cursor::Show);
    }
}

/// Does a terminal of type `term` lack an alternate screen (terminfo without smcup/rmcup)?
/// The Linux console (`linux`, and its variants such as `linux-16color`) has none and keeps
/// its earlier output; so do the old VTs. Without TERM nothing can be confirmed: no.
pub fn lacks_alternate_screen(term: Option<&str>) -> bool {
    term.is_some_and(|t| {
        t == "linux" || t.starts_with("linux-") || t == "dumb" || t.starts_with("vt1")
    })
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
    // Changes need the journal (and root); a captured tree (`--root TREE`) gets none. Without
    // it the screen still shows everything, and a change says why it cannot be made.
    let guard = if let Some(why) = root.switching_refused() {
        Err(why)
    } else {
        match Journal::open(journal_dir) {
            Ok(journal) if privilege::is_root() => Ok(RestoreGuard::new(
                Changer::new(Arc::clone(&drives), journal, Lifetime::Session),
                crate::report::restore::announce,
            )),
            Ok(_) => Err("changing settings needs root".to_string()),
            Err(e) => Err(format!(
                "cannot open the change journal in {}: {e}",
                journal_dir.display()
            )),
        }
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
    let signals = StopSignals::catch(Catch::Session)?;
    let signalled = signals.signalled();

    let term = std::env::var("TERM").ok();
    let console = term
        .as_deref()
        .is_some_and(|t| t == "linux" || t.starts_with("linux-"));
    NO_ALTERNATE_SCREEN.store(lacks_alternate_screen(term.as_deref()), Ordering::Relaxed);
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
    // The renderer writes only changed cells, starting from blank ones: on the kernel's
    // console (no alternate screen) earlier output would show through.
    if let Err(e) = terminal.clear() {
        release_terminal(terminal);
        restore_terminal();
        return Err(e).context("cannot clear the terminal");
    }
    let changer = guard
        .as_ref()
        .map(RestoreGuard::shared)
        .map_err(Clone::clone);
    let history = crate::history::History::new(history_dir);
    let put_back = PutBack::default();
    let result = event::spawn_input(tx.clone())
        .map_err(anyhow::Error::from)
        .and_then(|_| {
            main_loop(
                &mut terminal,
                (tx, rx),
                &root,
                drives,
                changer,
                (history, Arc::clone(&put_back)),
                signalled,
                (privilege::is_root(), console),
            )
        });
    // Settings first: after a hangup (SSH dropped, window closed) every write to the terminal
    // fails, and nothing done to it may stand between the admin and the original settings.
    let restored = guard.as_ref().ok().map(RestoreGuard::restore_now);
    release_terminal(terminal);
    restore_terminal();
    // What the jobs stopped on the way out put back (a sweep's setting): its screen is gone.
    let by_jobs = std::mem::take(&mut *put_back.lock().unwrap_or_else(PoisonError::into_inner));
    write_stderr(&crate::report::restore::render_text(&by_jobs));
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
/// ends only that thread; printing it would scribble over the screen, so the UI is told
/// (`tell`) and `printed_at_exit` keeps it for after the restore.
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
        sig => signals::exit_code(sig).map_or(ExitCode::FAILURE, ExitCode::from),
    }
}

/// A terminal's error: whether it says the terminal hung up (`hung_up`).
trait TermError: std::error::Error + Send + Sync + 'static {
    fn hung_up(&self) -> bool;
}

impl TermError for io::Error {
    fn hung_up(&self) -> bool {
        hung_up(self)
    }
}

impl TermError for std::convert::Infallible {
    fn hung_up(&self) -> bool {
        match *self {}
    }
}

/// After `Executor::shutdown` stopped a scan the quit cut short, its last update goes into the
/// history through the app, as a stopped scan's does. Nothing else runs once quitting.
fn record_stopped_scan(app: &mut App, rx: &Receiver<Msg>, exec: &mut Executor) {
    while let Ok(msg) = rx.try_recv() {
        let ended = |m: &crate::event::JobMsg| matches!(m.get::<ScanMsg>(), Some(ScanMsg::Update(u)) if u.end.is_some());
        if let Msg::Job(m) = msg
            && ended(&m)
        {
            for c in app.update(Msg::Job(m)) {
                if matches!(c, Cmd::RecordScan { .. }) {
                    exec.execute(c);
                }
            }
        }
    }
}

/// Draws the app, and counts the frame. `Ok(false)`: the terminal hung up.
fn draw<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &App,
    stats: &mut UiStats,
) -> anyhow::Result<bool>
where
    B::Error: TermError,
{
    match terminal.draw(|f| crate::ui::render(app, f)) {
        Ok(_) => {
            stats.frames += 1;
            Ok(true)
        }
        Err(e) if e.hung_up() => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Feeds the messages on `rx` to the app, draws, and hands the app's commands to the
/// executor, until the app quits, a signal arrives or the terminal hangs up.
///
/// The device list comes first: the inventory is drawn before anything slower starts, without
/// `MIN_FRAME`'s wait; the drives' state and the offer of orphaned changes fill in later.
#[allow(clippy::too_many_arguments)]
fn main_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    (tx, rx): (Sender<Msg>, Receiver<Msg>),
    root: &SysRoot,
    drives: Arc<dyn DriveControl>,
    changer: Result<SharedChanger, String>,
    (history, put_back): (crate::history::History, PutBack),
    signalled: &AtomicUsize,
    (is_root, console): (bool, bool),
) -> anyhow::Result<ExitCode>
where
    B::Error: TermError,
{
    let started = Instant::now();
    event::spawn_ticker(tx.clone(), started, TICK)?;
    let mut app = App::new(is_root, console);
    app.captured_root = root.switching_refused();
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
    .with_history(history)
    .with_put_back(put_back);
    // Queues the inventory: the first message, and the first frame.
    exec.execute(Cmd::RefreshInventory);
    let mut orphans_offered = false;

    let mut hangup = false;
    let mut stats = UiStats::new(started);
    // Nothing is drawn before the inventory: a frame without the devices would hold the
    // device list back by `MIN_FRAME`.
    let mut dirty = false;
    let mut last_frame = Instant::now() - MIN_FRAME;
    loop {
        stats.account(app.running());
        // A signal ends the session before anything more is drawn: after a hangup the
        // terminal is gone.
        if signalled.load(Ordering::Relaxed) != 0 {
            break;
        }
        if dirty && (last_frame.elapsed() >= MIN_FRAME) {
            if !draw(terminal, &app, &mut stats)? {
                hangup = true;
                break;
            }
            last_frame = Instant::now();
            dirty = false;
        }
        let msg = match rx.recv_timeout(MIN_FRAME) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        // Keys answer at once; an inventory (the first one is the device list the admin
        // waits for, the others come every 10 s) is no stream to pace.
        let at_once = matches!(msg, Msg::Key(_) | Msg::Resize | Msg::Inventory(_));
        let inventory = matches!(msg, Msg::Inventory(_));
        // While a test runs its samples redraw the screen (4 a second at the default
        // interval); the clock alone only needs to move the progress bar once a second.
        let quiet_tick = matches!(msg, Msg::Tick(_))
            && app.running()
            && last_frame.elapsed() < Duration::from_secs(1);
        if matches!(msg, Msg::Resize)
            && let Err(e) = terminal.autoresize()
        {
            if e.hung_up() {
                hangup = true;
                break;
            }
            return Err(e.into());
        }
        let cmds = app.update(msg);
        dirty |= !quiet_tick;
        if at_once {
            // Drawn before the commands start (the drive reads the first inventory asks
            // for, a run a key starts): what they do arrives as messages and is drawn then.
            if !draw(terminal, &app, &mut stats)? {
                hangup = true;
                break;
            }
            last_frame = Instant::now();
            dirty = false;
        }
        for c in cmds {
            if c == Cmd::Quit {
                exec.shutdown();
                record_stopped_scan(&mut app, &rx, &mut exec);
                stats.write();
                return Ok(if app.interrupted {
                    ExitCode::from(128 + libc::SIGINT as u8)
                } else {
                    ExitCode::SUCCESS
                });
            }
            exec.execute(app.stamp(c));
        }
        if inventory && !orphans_offered {
            // The journal is read after the device list is on the screen.
            orphans_offered = true;
            exec.offer_orphans();
        }
    }
    exec.shutdown();
    record_stopped_scan(&mut app, &rx, &mut exec);
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::mpsc;

    use ratatui::backend::{ClearType, TestBackend, WindowSize};
    use ratatui::buffer::Cell;
    use ratatui::layout::{Position, Size};

    use super::*;
    use crate::model::Transport;
    use crate::sys::{FakeDevice, FakeDrives};

    #[test]
    fn the_kernels_console_has_no_alternate_screen() {
        for term in ["linux", "linux-16color", "vt100", "dumb"] {
            assert!(lacks_alternate_screen(Some(term)), "{term}");
        }
        for term in ["xterm-256color", "screen", "tmux-256color", "rxvt-unicode"] {
            assert!(!lacks_alternate_screen(Some(term)), "{term}");
        }
        assert!(!lacks_alternate_screen(None));
    }

    /// One frame as the terminal got it: its text, and how many drive commands had been
    /// issued by then.
    struct Shown {
        text: String,
        drive_calls: usize,
    }

    /// A `TestBackend` that keeps every frame it is sent (`Shown`).
    struct Recording {
        inner: TestBackend,
        drives: Arc<FakeDrives>,
        frames: Vec<Shown>,
    }

    impl Backend for Recording {
        type Error = std::convert::Infallible;

        fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
        where
            I: Iterator<Item = (u16, u16, &'a Cell)>,
        {
            self.inner.draw(content)
        }
        fn hide_cursor(&mut self) -> Result<(), Self::Error> {
            self.inner.hide_cursor()
        }
        fn show_cursor(&mut self) -> Result<(), Self::Error> {
            self.inner.show_cursor()
        }
        fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
            self.inner.get_cursor_position()
        }
        fn set_cursor_position<P: Into<Position>>(
            &mut self,
            position: P,
        ) -> Result<(), Self::Error> {
            self.inner.set_cursor_position(position)
        }
        fn clear(&mut self) -> Result<(), Self::Error> {
            self.inner.clear()
        }
        fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
            self.inner.clear_region(clear_type)
        }
        fn size(&self) -> Result<Size, Self::Error> {
            self.inner.size()
        }
        fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
            self.inner.window_size()
        }
        fn flush(&mut self) -> Result<(), Self::Error> {
            let buffer = self.inner.buffer();
            let text = buffer
                .content()
                .chunks(usize::from(buffer.area.width.max(1)))
                .map(|row| row.iter().map(Cell::symbol).collect::<String>())
                .collect::<Vec<_>>()
                .join("\n");
            self.frames.push(Shown {
                text,
                drive_calls: self.drives.calls().len(),
            });
            self.inner.flush()
        }
    }

    /// The first frame lists the devices (no empty frame first, which held the list back by
    /// `MIN_FRAME`) and is drawn before the drives are asked anything. Timed on a real
    /// terminal: `benches/first_frame.rs`.
    #[test]
    fn the_first_frame_lists_the_devices_before_the_drives_are_read() {
        let drives = Arc::new(FakeDrives::new().with(FakeDevice::new("sda", Transport::Sata)));
        let mut terminal = Terminal::new(Recording {
            inner: TestBackend::new(80, 25),
            drives: Arc::clone(&drives),
            frames: Vec::new(),
        })
        .unwrap();
        let (tx, rx) = mpsc::channel();
        let quit = tx.clone();
        let quitter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            let _ = quit.send(Msg::Key(ratatui::crossterm::event::KeyEvent::new(
                ratatui::crossterm::event::KeyCode::Char('q'),
                ratatui::crossterm::event::KeyModifiers::NONE,
            )));
        });
        let history = tempfile::tempdir().unwrap();
        let drives_dyn: Arc<dyn DriveControl> = drives.clone();
        let code = main_loop(
            &mut terminal,
            (tx, rx),
            &SysRoot::new("tests/fixtures/sysfs/qemu-lab"),
            drives_dyn,
            Err("no changes in this test".into()),
            (
                crate::history::History::new(history.path()),
                PutBack::default(),
            ),
            &AtomicUsize::new(0),
            (true, false),
        )
        .unwrap();
        quitter.join().unwrap();
        assert_eq!(code, ExitCode::SUCCESS);
        let frames = &terminal.backend().frames;
        let first = frames.first().expect("a frame was drawn");
        assert!(
            first.text.contains("sda") && first.text.contains("nvme0n1"),
            "the first frame does not list the devices:\n{}",
            first.text
        );
        assert_eq!(
            first.drive_calls, 0,
            "the drives were read before the device list was drawn"
        );
        assert!(
            drives.calls().iter().any(|c| c.contains("sda")),
            "the drive was never read: {:?}",
            drives.calls()
        );
    }
}
