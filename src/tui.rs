//! The interactive program: terminal set-up and restore (also after a panic or a signal), the
//! main loop that feeds messages to `App::update` and draws, and the executor that carries out
//! the commands it returns through `sys` and the engine.
//!
//! Whatever the exit (q, Ctrl-C, SIGTERM, SIGHUP, a panic), the terminal is restored and the
//! schedulers this session changed are put back, except those the admin chose to keep.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use crate::app::App;
use crate::bench::session::{self, Session};
use crate::event::{self, Cmd, ExportFormat, Msg};
use crate::report::run::{self as report, RunReport};
use crate::sys::SysRoot;
use crate::sys::privilege;

/// How often the clock ticks (and the screen may refresh while idle).
const TICK: Duration = Duration::from_millis(250);
/// The fastest the screen is redrawn for data (keys redraw at once).
const MIN_FRAME: Duration = Duration::from_millis(100);

/// A scheduler to put back on exit.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Restore {
    device: String,
    original: String,
    keep: bool,
}

/// Settings to put back, shared with the panic hook.
type Restores = Arc<Mutex<Vec<Restore>>>;

fn lock(r: &Restores) -> std::sync::MutexGuard<'_, Vec<Restore>> {
    r.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Puts back every change not kept; returns one line per change for the admin.
fn restore_all(root: &SysRoot, restores: &Restores) -> Vec<String> {
    let mut out = Vec::new();
    for r in lock(restores).drain(..) {
        if r.keep {
            out.push(format!("{}: kept the new scheduler (as chosen)", r.device));
            continue;
        }
        match root.set_scheduler(&r.device, &r.original) {
            Ok(active) => out.push(format!("{}: scheduler put back to {active}", r.device)),
            Err(e) => out.push(format!(
                "{}: could not put the scheduler back to {}: {e:#}",
                r.device, r.original
            )),
        }
    }
    out
}

fn restore_terminal() {
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = execute!(io::stdout(), LeaveAlternateScreen, cursor::Show);
}

/// Runs the interactive program until the admin quits.
pub fn run(root: SysRoot) -> anyhow::Result<ExitCode> {
    if !io::stdout().is_terminal() || !io::stdin().is_terminal() {
        anyhow::bail!(
            "the interactive screen needs a terminal; for scripts use `disktriage list` and \
             `disktriage run` (see --help)"
        );
    }
    let restores: Restores = Arc::new(Mutex::new(Vec::new()));
    // A panic: terminal first, then the settings, then the message (the default hook prints it
    // on the restored screen).
    let default_hook = std::panic::take_hook();
    {
        let root = root.clone();
        let restores = Arc::clone(&restores);
        std::panic::set_hook(Box::new(move |info| {
            restore_terminal();
            for line in restore_all(&root, &restores) {
                eprintln!("disktriage: {line}");
            }
            default_hook(info);
        }));
    }
    let signalled = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGQUIT,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&signalled))?;
    }

    crossterm::terminal::enable_raw_mode().context("cannot switch the terminal to raw mode")?;
    let mut stdout = io::stdout();
    if let Err(e) = execute!(stdout, EnterAlternateScreen, cursor::Hide) {
        restore_terminal();
        return Err(e).context("cannot set up the terminal");
    }
    let result = main_loop(&root, &restores, &signalled);
    restore_terminal();
    let lines = restore_all(&root, &restores);
    for line in &lines {
        eprintln!("disktriage: {line}");
    }
    result
}

fn main_loop(
    root: &SysRoot,
    restores: &Restores,
    signalled: &AtomicBool,
) -> anyhow::Result<ExitCode> {
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    let started = Instant::now();
    let (tx, rx) = mpsc::channel();
    event::spawn_input(tx.clone())?;
    event::spawn_ticker(tx.clone(), started, TICK)?;
    let console = std::env::var("TERM").is_ok_and(|t| t == "linux");
    let mut app = App::new(privilege::is_root(), console);
    let mut exec = Executor {
        root: root.clone(),
        tx: tx.clone(),
        restores: Arc::clone(restores),
        stop: None,
        forwarder: None,
    };
    exec.execute(Cmd::RefreshInventory);

    let mut stats = UiStats::new(started);
    let mut dirty = true;
    let mut last_frame = Instant::now() - MIN_FRAME;
    loop {
        stats.account(app.running());
        if dirty && (last_frame.elapsed() >= MIN_FRAME) {
            terminal.draw(|f| crate::ui::render(&app, f))?;
            stats.frames += 1;
            last_frame = Instant::now();
            dirty = false;
        }
        if signalled.load(Ordering::Relaxed) {
            break;
        }
        let msg = match rx.recv_timeout(MIN_FRAME) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let key = matches!(msg, Msg::Key(_) | Msg::Resize);
        if matches!(msg, Msg::Resize) {
            terminal.autoresize()?;
        }
        let cmds = app.update(msg);
        dirty = true;
        if key {
            // Keys answer at once.
            last_frame = Instant::now() - MIN_FRAME;
        }
        for c in cmds {
            if c == Cmd::Quit {
                exec.shutdown();
                stats.write();
                return Ok(ExitCode::SUCCESS);
            }
            exec.execute(c);
        }
    }
    exec.shutdown();
    stats.write();
    Ok(ExitCode::SUCCESS)
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
        let json = format!(
            "{{\"ui_cpu_seconds\": {:.6}, \"wall_seconds\": {:.6}, \"frames\": {}, \
             \"ui_cpu_during_runs_seconds\": {:.6}, \"run_wall_seconds\": {:.6}}}\n",
            cpu.as_secs_f64(),
            self.started.elapsed().as_secs_f64(),
            self.frames,
            self.run_cpu.as_secs_f64(),
            self.run_wall.as_secs_f64()
        );
        let _ = std::fs::write(path, json);
    }
}

/// Carries out `Cmd`s: sysfs writes, runs, exports.
struct Executor {
    root: SysRoot,
    tx: Sender<Msg>,
    restores: Restores,
    stop: Option<Arc<AtomicBool>>,
    forwarder: Option<JoinHandle<()>>,
}

impl Executor {
    fn send(&self, msg: Msg) {
        let _ = self.tx.send(msg);
    }

    fn execute(&mut self, cmd: Cmd) {
        match cmd {
            Cmd::RefreshInventory => {
                let inv = self.root.inventory().map_err(|e| format!("{e:#}"));
                self.send(Msg::Inventory(inv));
            }
            Cmd::SetScheduler { device, name } => {
                // Record the original before changing anything, so every exit can put it back.
                let original = self
                    .root
                    .read_device(&device)
                    .scheduler
                    .and_then(|s| s.active);
                if let Some(original) = original
                    && !lock(&self.restores).iter().any(|r| r.device == device)
                {
                    lock(&self.restores).push(Restore {
                        device: device.clone(),
                        original,
                        keep: false,
                    });
                }
                let result = self
                    .root
                    .set_scheduler(&device, &name)
                    .map_err(|e| format!("{e:#}"));
                self.send(Msg::SchedulerSet { device, result });
            }
            Cmd::KeepScheduler { device } => {
                for r in lock(&self.restores)
                    .iter_mut()
                    .filter(|r| r.device == device)
                {
                    r.keep = true;
                }
            }
            Cmd::StartRun(request) => self.start_run(&request),
            Cmd::StopRun => {
                if let Some(stop) = &self.stop {
                    stop.store(true, Ordering::Relaxed);
                }
            }
            Cmd::Export {
                reports,
                format,
                stem,
            } => {
                let result = export(&reports, format, &stem).map_err(|e| format!("{e:#}"));
                self.send(Msg::Exported(result));
            }
            Cmd::Quit => {}
        }
    }

    fn start_run(&mut self, request: &session::RunRequest) {
        if let Some(f) = self.forwarder.take() {
            let _ = f.join();
        }
        let session = match session::start(&self.root, request) {
            Ok(s) => s,
            Err(e) => {
                self.send(Msg::RunRefused(format!("{e:#}")));
                return;
            }
        };
        self.send(Msg::RunStarted {
            target: Box::new(session.target.clone()),
            plan: Box::new(session.plan.clone()),
            notes: session.notes.clone(),
        });
        self.stop = Some(session.handle.stop_flag());
        let tx = self.tx.clone();
        let spawned = std::thread::Builder::new()
            .name("run-events".into())
            .spawn(move || forward(session, &tx));
        match spawned {
            Ok(h) => self.forwarder = Some(h),
            Err(e) => self.send(Msg::RunRefused(format!("cannot follow the run: {e}"))),
        }
    }

    /// Stops a run and waits (a few seconds at most) for it to wind down.
    fn shutdown(&mut self) {
        if let Some(stop) = &self.stop {
            stop.store(true, Ordering::Relaxed);
        }
        if let Some(f) = self.forwarder.take() {
            let deadline = Instant::now() + Duration::from_secs(5);
            while !f.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if f.is_finished() {
                let _ = f.join();
            }
        }
    }
}

/// Relays a session's events to the main loop, then its report.
fn forward(session: Session, tx: &Sender<Msg>) {
    while let Ok(ev) = session.events.recv() {
        if tx.send(Msg::Run(Box::new(ev))).is_err() {
            break;
        }
    }
    let result = session.finish().map_err(|e| format!("{e:#}"));
    let _ = tx.send(Msg::RunFinished(Box::new(result)));
}

/// Where exports go: the current directory when writable (rescue systems often have a
/// read-only one), else /tmp.
fn export_dir() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/tmp"));
    let probe = cwd.join(format!(".disktriage-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            cwd
        }
        Err(_) => PathBuf::from("/tmp"),
    }
}

fn export(reports: &[RunReport], format: ExportFormat, stem: &str) -> anyhow::Result<PathBuf> {
    let first = reports.first().context("nothing to export")?;
    let text = match format {
        ExportFormat::Json if reports.len() == 1 => report::render_json(first)?,
        ExportFormat::Json => {
            let mut s = serde_json::to_string_pretty(reports)?;
            s.push('\n');
            s
        }
        ExportFormat::Csv => reports
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let csv = report::render_csv(r);
                if reports.len() > 1 {
                    format!("# repeat {}\n{csv}", i + 1)
                } else {
                    csv
                }
            })
            .collect(),
        ExportFormat::Fio => format!(
            "#!/bin/sh\n# fio jobs equivalent to disktriage's {}\n{}",
            first.test,
            report::fio_commands(&first.plan, &first.target.path)
        ),
    };
    let path = unique_path(&export_dir(), stem, format.extension());
    let mut f = std::fs::File::create(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// `dir/stem.ext`, or `dir/stem-2.ext` and so on: an export never overwrites a file.
fn unique_path(dir: &Path, stem: &str, ext: &str) -> PathBuf {
    let mut path = dir.join(format!("{stem}.{ext}"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{stem}-{n}.{ext}"));
        n += 1;
    }
    path
}
