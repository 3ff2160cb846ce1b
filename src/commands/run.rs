//! `disktriage run`: prepare the target (with the write guard), build the plan, run it with a
//! live progress line on stderr, print the report. Ctrl-C, SIGTERM or SIGHUP stop the run
//! cleanly: what completed is still reported, and the exit status is 128 + the signal.

use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::bench::catalog::{CATALOG, TestName, Writes};
use crate::bench::runner::RunEvent;
use crate::bench::safety::{self, WriteRefusal};
use crate::bench::session::{self, RunRequest};
use crate::bench::spec::{self, EngineKind, TestParams};
use crate::bench::target::{self, TargetRequest};
use crate::cli::{EngineArg, RunArgs, SyncArg};
use crate::model::BytesPerSec;
use crate::model::text::neutralize_controls;
use crate::report::export::{self, ExportFormat};
use crate::report::run as report;
use crate::sys::direct::PathKind;
use crate::sys::direct::SyncMode;
use crate::sys::{SysRoot, direct, signals};

/// The admin's flags as test parameters.
pub fn params_from_args(a: &RunArgs) -> TestParams {
    TestParams {
        bs: a.bs,
        qd: a.qd,
        jobs: a.jobs,
        time: a.time,
        warmup: a.warmup,
        size: a.size,
        offset: a.offset,
        io_size: a.io_size,
        count: a.count,
        read_pct: a.read_pct,
        interval: a.interval,
        buffered: a.buffered,
        huge_pages: a.huge_pages,
        zeros: a.zeros,
        preserve: a.preserve,
        sync: a.sync.map(|s| match s {
            SyncArg::Dsync => SyncMode::Dsync,
            SyncArg::Sync => SyncMode::Sync,
        }),
        engine: match a.engine {
            EngineArg::Auto => EngineKind::Auto,
            EngineArg::Uring => EngineKind::Uring,
            EngineArg::Sync => EngineKind::Sync,
        },
        min_bs: a.min_bs,
        max_bs: a.max_bs,
        qds: a.qds.clone(),
        include_writes: a.write,
        seed: a.seed,
        files: a.files,
    }
}

/// Runs the command; the exit code is 1 when the run failed part-way (after its report).
pub fn run(root: &SysRoot, history_dir: &Path, args: &RunArgs) -> anyhow::Result<ExitCode> {
    if super::multi::wanted(args) {
        return super::multi::run(root, history_dir, args);
    }
    let test: TestName = args
        .test
        .as_deref()
        .unwrap_or(crate::cli::DEFAULT_TEST)
        .parse()?;
    let params = params_from_args(args);
    let request = TargetRequest {
        path: &args.target,
        root,
        test,
        params: &params,
        confirmation: args.destroy_data.as_deref(),
        stop: None,
        laid_out: None,
        chosen: None,
    };
    if args.fio {
        return print_fio(&request);
    }
    // Ctrl-C, SIGTERM and SIGHUP (the terminal or the SSH connection went away) are caught from
    // here on. During the layout of a new test file they stop it and the partial file is
    // removed; during the run they set the runner's stop flag: workers finish their current
    // I/O and the figures of what completed are reported. The exit status is 128 + the signal.
    // A SIGHUP ignored at start (`nohup`) stays ignored.
    let stop_signals: Vec<Signal> = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP]
        .into_iter()
        .filter(|&sig| !(sig == Signal::SIGHUP && signals::is_ignored(sig)))
        .collect();
    let layout_stop = Arc::new(AtomicBool::new(false));
    let interrupted = Arc::new(AtomicUsize::new(0));
    for &sig in &stop_signals {
        signal_hook::flag::register(sig as i32, Arc::clone(&layout_stop))?;
        signal_hook::flag::register_usize(sig as i32, Arc::clone(&interrupted), sig as usize)?;
    }
    // `--repeats N`: the test N times, one after the other, each with its own session (the
    // engine probe is remembered for the invocation); a signal or a failed repeat ends the
    // repeats, and what completed is reported.
    let asked = args.repeats.unwrap_or(1);
    let mut reports: Vec<crate::bench::outcome::RunReport> = Vec::new();
    let mut later_error: Option<anyhow::Error> = None;
    for repeat in 1..=asked {
        if repeat > 1 && layout_stop.load(Ordering::Relaxed) {
            break;
        }
        let started = session::start_with_stop(
            root,
            &RunRequest {
                target: args.target.clone(),
                test,
                params: params.clone(),
                confirmation: args.destroy_data.clone(),
                temperature: session::TempPoll::Off,
                device: None,
            },
            Some(&layout_stop),
        );
        let session = match started {
            Ok(s) => s,
            Err(e) if !reports.is_empty() => {
                later_error = Some(e);
                break;
            }
            Err(e) => match signal_exit_code(interrupted.load(Ordering::Relaxed)) {
                Some(code) => {
                    let text = neutralize_controls(&format!("{e:#}"));
                    crate::report::output::write_stderr(&format!("disktriage: {text}\n"));
                    return Ok(ExitCode::from(code));
                }
                None => return Err(e),
            },
        };
        let stop = session.handle.stop_flag();
        let mut registered = Vec::new();
        for &sig in &stop_signals {
            registered.push(signal_hook::flag::register(sig as i32, Arc::clone(&stop))?);
        }
        // A signal between the start and the registration above.
        if layout_stop.load(Ordering::Relaxed) {
            stop.store(true, Ordering::Relaxed);
        }
        let progress = io::stderr().is_terminal();
        follow(&session.events, &session.plan, progress, (repeat, asked));
        let finished = session.finish();
        // This session's flag is done with: the next repeat registers its own.
        for id in registered {
            signal_hook::low_level::unregister(id);
        }
        match finished {
            Ok(report) => {
                let ended = report.error().is_some() || report.outcome.stopped;
                reports.push(report);
                if ended {
                    break;
                }
            }
            Err(e) if !reports.is_empty() => {
                later_error = Some(e);
                break;
            }
            Err(e) => return Err(e),
        }
    }
    let Some(last) = reports.last() else {
        anyhow::bail!("no repeat ran");
    };
    let text = if args.json && args.repeats.is_some() {
        report::render_repeats_json(&reports, asked)?
    } else if args.json {
        export::render(&reports, ExportFormat::Json)?
    } else if args.csv {
        export::render(&reports, ExportFormat::Csv)?
    } else if args.repeats.is_some() {
        let n = reports.len();
        let ran = if n < asked as usize {
            format!(", {n} of the {asked} asked ran")
        } else {
            String::new()
        };
        report::render_repeats_text(
            &reports,
            &format!("mean of {n} repeats{ran} (their spread is the run-to-run noise):"),
        )
    } else {
        report::render_text(last)
    };
    crate::report::output::write_stdout(&text)?;
    // All the repeats are one run in the history, as the TUI records its repeats.
    super::history::record_run(root, history_dir, &reports);
    if let Some(e) = later_error {
        return Err(e.context(format!(
            "repeat {} of {asked} could not run (the report above has those that did)",
            reports.len() + 1
        )));
    }
    if let Some(e) = last.error() {
        if args.json || args.csv {
            crate::report::output::write_stderr(&format!("disktriage: {e}\n"));
        }
        return Ok(ExitCode::FAILURE);
    }
    if let Some(code) = signal_exit_code(interrupted.load(Ordering::Relaxed)) {
        return Ok(ExitCode::from(code));
    }
    Ok(ExitCode::SUCCESS)
}

/// The exit status after a stop by signal `signo` (0: none): 128 + the signal, as a shell
/// reports a process the signal ended (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).
pub(crate) fn signal_exit_code(signo: usize) -> Option<u8> {
    if signo == 0 {
        return None;
    }
    u8::try_from(128 + signo).ok()
}

/// Prints what fio would run. Nothing is written and no file is created: a missing file
/// target is planned at its --size.
///
/// A command that writes to a block device disktriage itself would refuse (mounted, swap,
/// held, or its use unknown) comes after a `# WARNING:` comment that says why, also on
/// stderr: the output stays a script that can be pasted, and the reason is in it.
fn print_fio(req: &TargetRequest) -> anyhow::Result<ExitCode> {
    let facts = target::probe(req.path, req.root, req.params.size)?;
    let plan = spec::build_plan(req.test, req.params, &facts, true)?;
    let mut text = String::new();
    // A rewrite's fio line only reads (fio cannot rewrite in place): no write to warn of.
    if plan.writes()
        && !plan.rewrites()
        && let Some(warning) = fio_write_warning(req)?
    {
        text.push_str(&format!("# WARNING: {warning}\n"));
        crate::report::output::write_stderr(&format!("disktriage: WARNING: {warning}\n"));
    }
    text.push_str(&report::fio_commands(&plan, req.path, None));
    crate::report::output::write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Why fio should not write to the target, when it is a block device in use.
fn fio_write_warning(req: &TargetRequest) -> anyhow::Result<Option<String>> {
    // A directory test writes only in a directory of its own.
    if let Ok(crate::sys::dirops::DirTarget::Directory(_)) = crate::sys::dirops::classify(req.path)
    {
        return Ok(None);
    }
    let PathKind::BlockDevice { name, .. } = direct::identify(req.path)? else {
        return Ok(None);
    };
    // The device fio would write is a live one: its use is read from the live system, as
    // the write guard reads it, whatever --root says.
    let inv = SysRoot::host().inventory()?;
    Ok(fio_warning_text(
        &req.path.display().to_string(),
        safety::check_device_write(&inv, &name, Some(&name)),
    ))
}

/// The warning for a fio command that writes to `path`, from the write guard's verdict.
fn fio_warning_text(path: &str, verdict: Result<(), WriteRefusal>) -> Option<String> {
    let why = match verdict {
        Ok(()) | Err(WriteRefusal::NotConfirmed { .. } | WriteRefusal::WrongName { .. }) => {
            return None;
        }
        Err(WriteRefusal::InUse { reasons, .. }) => format!("it is in use: {reasons}"),
        Err(refusal) => refusal.to_string(),
    };
    Some(neutralize_controls(&format!(
        "this command writes to {path} and destroys data that is in use; disktriage refuses \
         to run it ({why})"
    )))
}

/// Reads the runner's events until it finishes, drawing a progress line when stderr is a
/// terminal.
/// With repeats, `repeat` (this one, how many) is named before the phase.
fn follow(rx: &mpsc::Receiver<RunEvent>, plan: &spec::Plan, progress: bool, repeat: (u32, u32)) {
    let started = Instant::now();
    // Until the runner says which phases probe the engines, none is counted.
    let mut expected = plan.expected_duration();
    let mut label = String::new();
    let mut phase = (0, plan.phases.len());
    let mut measuring_since: Option<Instant> = None;
    // Locked per write, never for the whole run: a panic message or warning another thread
    // writes meanwhile would wait for the lock forever, and the run with it.
    let mut err = io::stderr();
    for event in rx.iter() {
        if !progress {
            continue;
        }
        match event {
            RunEvent::Probes { phases } => {
                expected = crate::bench::engine::expected_duration(plan, &phases);
                continue;
            }
            RunEvent::PhaseStarted {
                index,
                count,
                label: l,
                job,
                probing,
            } => {
                label = if repeat.1 > 1 {
                    format!("repeat {}/{} {l}", repeat.0, repeat.1)
                } else {
                    l
                };
                phase = (index + 1, count);
                measuring_since = None;
                let what = before_measuring(probing, &job);
                let _ = write!(err, "\r\x1b[K[{}/{} {label}] {what}", phase.0, phase.1);
            }
            RunEvent::Probed { index } => {
                if let Some(p) = plan.phases.get(index) {
                    let what = before_measuring(false, &p.job);
                    let _ = write!(err, "\r\x1b[K[{}/{} {label}] {what}", phase.0, phase.1);
                }
            }
            RunEvent::Measuring { .. } => measuring_since = Some(Instant::now()),
            RunEvent::Point { point, .. } => {
                let eta = expected
                    .map(|e| e.saturating_sub(started.elapsed()))
                    .map_or(String::new(), |left| format!("  ETA {}", fmt_secs(left)));
                let lat = point.latency().map_or(String::new(), |l| {
                    format!("  p99 {:.3} ms", l.p99_ns as f64 / 1e6)
                });
                let _ = write!(
                    err,
                    "\r\x1b[K[{}/{} {label}] {:.1} s  {:.1} MB/s  {:.0} IOPS{lat}{eta}",
                    phase.0,
                    phase.1,
                    measuring_since.map_or(0.0, |t| t.elapsed().as_secs_f64()),
                    BytesPerSec(point.rate()).mb_per_sec(),
                    point.iops(),
                );
            }
            RunEvent::PhaseFinished { .. } => {}
        }
        let _ = err.flush();
    }
    if progress {
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
    }
}

/// What a phase does before it measures: "probing the engines", "warming up", "starting".
fn before_measuring(probing: bool, job: &spec::Job) -> &'static str {
    if probing {
        "probing the engines (io_uring vs sync threads)"
    } else if job.warmup.is_zero() {
        "starting"
    } else {
        "warming up"
    }
}

pub(crate) fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// `disktriage tests`: the catalogue, word-wrapped to `width` columns (80 on a console or a
/// pipe) with each test's text under its own column.
pub fn list_tests(width: usize) -> String {
    let mut out = String::from("Tests (disktriage run TARGET --test NAME):\n");
    for t in &CATALOG {
        let writes = match t.writes {
            Writes::Never => "",
            Writes::Always => " [writes]",
            Writes::Optional => " [writes optional]",
        };
        let name = format!("  {:<17}", t.id);
        out.push_str(&crate::report::table::wrap(
            &name,
            &format!("{}{writes}", t.summary),
            width,
        ));
        out.push_str(&crate::report::table::wrap(
            &" ".repeat(name.len()),
            &format!("from: {}", t.origin),
            width,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_warns_about_a_device_in_use() {
        let w = fio_warning_text(
            "/dev/sdb",
            Err(WriteRefusal::InUse {
                name: "sdb".into(),
                reasons: "mounted at /mnt".into(),
            }),
        )
        .unwrap();
        assert!(
            w.contains("/dev/sdb") && w.contains("in use: mounted at /mnt"),
            "{w}"
        );
        assert!(fio_warning_text("/dev/sdb", Ok(())).is_none());
    }

    #[test]
    fn the_test_list_fits_80_columns_and_keeps_every_word() {
        let text = list_tests(80);
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{} columns: {line}", line.len());
        }
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for t in &CATALOG {
            assert!(
                words.contains(&format!("{} {}", t.id, t.summary)),
                "{}",
                t.id
            );
            assert!(words.contains(&format!("from: {}", t.origin)), "{}", t.id);
        }
    }

    #[test]
    fn a_stop_by_signal_exits_with_128_plus_the_signal() {
        assert_eq!(signal_exit_code(0), None);
        assert_eq!(signal_exit_code(Signal::SIGINT as usize), Some(130));
        assert_eq!(signal_exit_code(Signal::SIGTERM as usize), Some(143));
        assert_eq!(signal_exit_code(Signal::SIGHUP as usize), Some(129));
    }
}
