//! `disktriage run`: prepare the target (with the write guard), build the plan, run it with a
//! progress line on stderr, print the report. A stop signal ends the run cleanly: what
//! completed is reported, and the exit status is 128 + the signal.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use crate::bench::catalog::CATALOG;
use crate::bench::catalog::build::build_plan;
use crate::bench::exec::safety::{self, WriteRefusal};
use crate::bench::exec::session::{self, RunRequest};
use crate::bench::exec::target::{self, TargetRequest};
use crate::bench::plan::test_name::{TestName, Writes};
use crate::cli::RunArgs;
use crate::flow::progress::{ProgressLine, follow_run};
use crate::model::text::neutralize_controls;
use crate::report::export::{self, ExportFormat};
use crate::report::run as report;
use crate::sys::direct::PathKind;
use crate::sys::signals::{Catch, StopSignals};
use crate::sys::{SysRoot, direct};

/// Runs the command; the exit code is 1 when the run failed part-way (after its report).
pub fn run(root: &SysRoot, history_dir: &Path, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let test: TestName = args
        .test
        .as_deref()
        .unwrap_or(crate::cli::DEFAULT_TEST)
        .parse()?;
    let params = super::params::params_from_args(args);
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
    // Stop signals (`sys::signals`) are caught from here on: they stop a new test file's
    // layout (the partial file removed) or the run (workers finish their current I/O).
    let signals = StopSignals::catch(Catch::Command)?;
    let layout_stop = signals.flag();
    // `--repeats N`: one session each (the engine probe is remembered); a signal or a failed
    // repeat ends the repeats, and what completed is reported.
    let asked = args.repeats.unwrap_or(1);
    let mut reports: Vec<crate::bench::results::outcome::RunReport> = Vec::new();
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
            Some(layout_stop.as_ref()),
        );
        let session = match started {
            Ok(s) => s,
            Err(e) if !reports.is_empty() => {
                later_error = Some(e);
                break;
            }
            Err(e) => match signals.exit_code() {
                Some(code) => {
                    let text = neutralize_controls(&format!("{e:#}"));
                    crate::report::output::write_stderr(&format!("disktriage: {text}\n"));
                    return Ok(ExitCode::from(code));
                }
                None => return Err(e),
            },
        };
        // A signal between the start and this link is passed on by the link.
        let linked = signals.also_set(&session.handle.stop_flag())?;
        follow_run(
            &session.events,
            &session.plan,
            ProgressLine::on_terminal(),
            (repeat, asked),
        );
        let finished = session.finish();
        // This session's flag is done with: the next repeat links its own.
        drop(linked);
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
    if let Some(code) = signals.exit_code() {
        return Ok(ExitCode::from(code));
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints what fio would run; nothing is written (a missing file is planned at its --size).
///
/// A write to a block device disktriage would refuse comes after a `# WARNING:` comment, also
/// on stderr: the output stays a script that can be pasted, with the reason in it.
fn print_fio(req: &TargetRequest) -> anyhow::Result<ExitCode> {
    let facts = target::probe(req.path, req.root, req.params.size)?;
    let plan = build_plan(req.test, req.params, &facts, true)?;
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
    // fio would write a live device: its use is read from the live system, whatever --root
    // says.
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

/// `disktriage tests`: the catalogue, wrapped to `width` columns, each test's text in its
/// own column.
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
}
