//! `disktriage run`: prepare the target (with the write guard), build the plan, run it with a
//! live progress line on stderr, print the report. Ctrl-C or SIGTERM stop the run cleanly:
//! what completed is still reported.

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::bench::catalog::{CATALOG, TestName, Writes};
use crate::bench::runner::RunEvent;
use crate::bench::session::{self, RunRequest};
use crate::bench::spec::{self, EngineKind, TestParams};
use crate::bench::target::{self, TargetRequest};
use crate::cli::{EngineArg, RunArgs, SyncArg};
use crate::model::BytesPerSec;
use crate::report::run as report;
use crate::sys::SysRoot;
use crate::sys::direct::SyncMode;

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
        zeros: a.zeros,
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
    }
}

/// Runs the command; the exit code is 1 when the run failed part-way (after its report).
pub fn run(root: &SysRoot, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let test: TestName = args.test.parse()?;
    let params = params_from_args(args);
    let request = TargetRequest {
        path: &args.target,
        root,
        test,
        params: &params,
        confirmation: args.destroy_data.as_deref(),
    };
    if args.fio {
        return print_fio(&request);
    }
    let session = session::start(
        root,
        &RunRequest {
            target: args.target.clone(),
            test,
            params: params.clone(),
            confirmation: args.destroy_data.clone(),
            temperature: session::TempPoll::Off,
        },
    )?;
    // Ctrl-C and SIGTERM set the runner's stop flag: workers finish their current I/O, the
    // figures of what completed are reported.
    let stop = session.handle.stop_flag();
    let interrupted = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
        signal_hook::flag::register(sig, Arc::clone(&interrupted))?;
    }
    let progress = io::stderr().is_terminal();
    follow(&session.events, &session.plan, progress);
    let report = session.finish()?;
    let text = if args.json {
        report::render_json(&report)?
    } else if args.csv {
        report::render_csv(&report)
    } else {
        report::render_text(&report)
    };
    crate::write_stdout(&text)?;
    if let Some(e) = report.error() {
        if args.json || args.csv {
            eprintln!("disktriage: {e}");
        }
        return Ok(ExitCode::FAILURE);
    }
    if interrupted.load(Ordering::Relaxed) {
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints what fio would run. Nothing is written and no file is created: a missing file
/// target is planned at its --size.
fn print_fio(req: &TargetRequest) -> anyhow::Result<ExitCode> {
    let facts = target::probe(req.path, req.root, req.params.size)?;
    let plan = spec::build_plan(req.test, req.params, &facts, true)?;
    crate::write_stdout(&report::fio_commands(&plan, req.path, None))?;
    Ok(ExitCode::SUCCESS)
}

/// Reads the runner's events until it finishes, drawing a progress line when stderr is a
/// terminal.
fn follow(rx: &mpsc::Receiver<RunEvent>, plan: &spec::Plan, progress: bool) {
    let started = Instant::now();
    let expected = plan.expected_duration();
    let mut label = String::new();
    let mut phase = (0, plan.phases.len());
    let mut measuring_since: Option<Instant> = None;
    let mut err = io::stderr().lock();
    for event in rx.iter() {
        if !progress {
            continue;
        }
        match event {
            RunEvent::PhaseStarted {
                index,
                count,
                label: l,
                ..
            } => {
                label = l;
                phase = (index + 1, count);
                measuring_since = None;
                let _ = write!(err, "\r\x1b[K[{}/{} {label}] warming up", phase.0, phase.1);
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

fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// `disktriage tests`: the catalogue.
pub fn list_tests() -> String {
    let mut out = String::from("Tests (disktriage run TARGET --test NAME):\n");
    for t in &CATALOG {
        let writes = match t.writes {
            Writes::Never => "",
            Writes::Always => " [writes]",
            Writes::Optional => " [writes optional]",
        };
        out.push_str(&format!(
            "  {:<17}{}{writes}\n  {:<17}  from: {}\n",
            t.id, t.summary, "", t.origin
        ));
    }
    out
}
