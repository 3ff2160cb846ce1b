//! The bodies of the headless commands: the long ones in modules of their own; here `cache`,
//! `smart`, `sched`, `restore` and the hidden `debug` tools. Each resolves the device, acts
//! (changes through the journaled `Changer`), and prints what the device reports afterwards.

pub mod capacity;
pub mod flushcheck;
pub mod history;
pub mod job;
pub mod params;
pub mod run;
pub mod scan;
pub mod setting_sweep;
pub mod several;
pub mod smrcheck;
pub mod triage;
pub mod trimcheck;

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;

use crate::changes::guard::RestoreGuard;
use crate::changes::{Changer, Journal, RestoreScope};
use crate::cli::{CacheArgs, OnOff, RestoreArgs, SchedArgs, SmartArgs};
use crate::model::cache::on_off;
use crate::model::{CacheStatus, Lifetime, SelfTestKind, Verdict, exit};
use crate::report::output::write_stdout;
use crate::sys::{DriveControl, DriveError, LinuxDrives, SysRoot, process};
use crate::{drive_state, persist, report};

fn drives(root: &SysRoot) -> Arc<dyn DriveControl> {
    Arc::new(LinuxDrives::new(root.clone()))
}

/// A line about session changes left behind by a disktriage that did not exit cleanly.
fn orphan_hint(journal_dir: &Path) -> String {
    let Some(journal) = Journal::existing(journal_dir) else {
        return String::new();
    };
    let orphans = journal
        .entries()
        .map(|entries| {
            entries
                .iter()
                .filter(|e| e.lifetime == Lifetime::Session && !process::is_alive(&e.owner))
                .count()
        })
        .unwrap_or(0);
    if orphans == 0 {
        return String::new();
    }
    report::table::wrap(
        "Note: ",
        &format!(
            "{} holds {orphans} change(s) left by a disktriage that did not exit cleanly; \
             `disktriage restore` puts them back.",
            journal_dir.display()
        ),
        crate::report::output::DEFAULT_WIDTH,
    )
}

/// The exit status of a command's error: 2 for a usage error (a bad argument found after
/// parsing, or a write without `--destroy-data`), else 1 (the table is in `model::exit`).
pub fn exit_status_of(err: &anyhow::Error) -> u8 {
    let unconfirmed = err.chain().any(|e| {
        crate::bench::exec::safety::is_unconfirmed(e)
            || matches!(
                e.downcast_ref::<crate::bench::analysis::several_disks::ListRefusal>(),
                Some(crate::bench::analysis::several_disks::ListRefusal::NotConfirmed { .. })
            )
    });
    if unconfirmed || exit::is_usage(err) {
        exit::USAGE
    } else {
        exit::ERROR
    }
}

/// `disktriage cache DEV [on|off] [--keep]`.
pub fn cache(
    root: &SysRoot,
    journal_dir: &Path,
    args: &CacheArgs,
    width: usize,
) -> anyhow::Result<ExitCode> {
    let drives = drives(root);
    let target = drives.resolve(&args.device)?;
    let dev = &target.device;
    let partition = target.partition.as_deref();
    let Some(state) = args.state else {
        let status = drive_state::cache_status(drives.as_ref(), dev)
            .with_context(|| format!("cannot read the write cache of {}", dev.name))?;
        let text = if args.json {
            report::cache::render_json(&status, None, partition)?
        } else {
            report::cache::render_status(&status, partition, width) + &orphan_hint(journal_dir)
        };
        write_stdout(&text)?;
        return Ok(ExitCode::SUCCESS);
    };
    let word = on_off(state.enabled());
    let journal = Journal::open(journal_dir).with_context(|| {
        format!(
            "cannot open the change journal in {}",
            journal_dir.display()
        )
    })?;
    let changer = Changer::new(Arc::clone(&drives), journal, Lifetime::Persisted);
    let change = changer
        .set_write_cache(dev, state.enabled(), args.keep)
        .with_context(|| format!("cannot turn the write cache of {} {word}", dev.name))?;
    let status = CacheStatus::new(
        &dev.name,
        dev.transport,
        Ok(change.after.clone()),
        change.kernel_after,
    );
    let text = if args.json {
        report::cache::render_json(&status, Some(&change), partition)?
    } else {
        report::cache::render_change(&change, &status, partition, journal_dir, width)
    };
    write_stdout(&text)?;
    Ok(if change.took_effect() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `disktriage smart DEV [--self-test KIND]`. Exit 0 PASSED, 3 WARNING, 4 FAILED, 5 not
/// available (`model::exit`, as `triage` says suspect, failing, unknown); with `--self-test`,
/// 0 when the drive took the command.
pub fn smart(root: &SysRoot, args: &SmartArgs, width: usize) -> anyhow::Result<ExitCode> {
    let drives = drives(root);
    let target = drives.resolve(&args.device)?;
    let dev = &target.device;
    let partition = target.partition.as_deref();
    if let Some(arg) = args.self_test {
        return self_test(drives.as_ref(), dev, arg.kind(), args.json, width);
    }
    let (health, logs) = drive_state::smart_report(drives.as_ref(), dev)
        .with_context(|| format!("cannot read SMART data of {}", dev.name))?;
    let text = if args.json {
        report::smart::render_json(
            &health,
            logs.as_ref().map_err(ToString::to_string),
            partition,
        )?
    } else {
        let mut text = report::smart::render_text(&health, partition, width);
        match &logs {
            // Nothing was read from anywhere (a loop device, a SCSI disk without smartctl):
            // the SMART line already says why; the JSON still has the reasons.
            Ok(logs) if logs.source == "none" => {}
            Ok(logs) => {
                text.push('\n');
                text.push_str(&report::smart::render_logs_text(logs, width));
            }
            Err(e) => {
                text.push('\n');
                text.push_str(&report::table::wrap(
                    "Drive logs: ",
                    &format!("unreadable: {e}"),
                    width,
                ));
            }
        }
        text
    };
    write_stdout(&text)?;
    Ok(smart_exit_code(health.verdict))
}

/// `smart`'s exit status: a script asking whether a disk is healthy must not read "no drive
/// answered" (a loop device, a bridge that passes no commands) as a pass.
fn smart_exit_code(verdict: Verdict) -> ExitCode {
    match verdict {
        Verdict::Passed => ExitCode::SUCCESS,
        Verdict::Warning => ExitCode::from(exit::SUSPECT),
        Verdict::Failed => ExitCode::from(exit::FAILING),
        Verdict::Unavailable => ExitCode::from(exit::UNKNOWN),
    }
}

/// `disktriage smart DEV --self-test KIND`: starts or aborts, then reads the state back.
fn self_test(
    drives: &dyn DriveControl,
    dev: &crate::model::BlockDevice,
    kind: SelfTestKind,
    json: bool,
    width: usize,
) -> anyhow::Result<ExitCode> {
    let before = drives.self_test_status(dev).ok();
    let what = match kind {
        SelfTestKind::Abort => "abort the self-test".to_string(),
        k => format!("start a {k} self-test"),
    };
    drives
        .start_self_test(dev, kind)
        .with_context(|| format!("cannot {what} on {}", dev.name))?;
    let warning = report::smart::self_test_warning(kind, before.as_ref());
    let after = drives.self_test_status(dev);
    let text = if json {
        #[derive(serde::Serialize)]
        struct Started<'a> {
            schema: u32,
            device: &'a str,
            requested: SelfTestKind,
            note: &'a str,
            status: Option<&'a crate::model::SelfTestStatus>,
            status_error: Option<String>,
        }
        let mut text = serde_json::to_string_pretty(&Started {
            schema: report::smart::SMART_JSON_SCHEMA,
            device: &dev.name,
            requested: kind,
            note: &warning,
            status: after.as_ref().ok(),
            status_error: after.as_ref().err().map(ToString::to_string),
        })?;
        text.push('\n');
        text
    } else {
        let done = match kind {
            SelfTestKind::Abort => format!("{}: the self-test abort was sent.", dev.name),
            k => format!("{}: {k} self-test started.", dev.name),
        };
        let mut text = report::table::wrap("", &done, width);
        text.push_str(&report::table::wrap("", &warning, width));
        text.push_str(&match &after {
            Ok(st) => report::table::wrap("Now: ", &report::smart::self_test_line(st), width),
            Err(e) => report::table::wrap("Now: ", &format!("cannot read the state: {e}"), width),
        });
        text.push_str(&report::table::wrap(
            "",
            &format!(
                "`disktriage smart {}` shows its progress and, at the end, its result.",
                dev.name
            ),
            width,
        ));
        text
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `disktriage sched DEV [NAME] [--keep]`.
pub fn sched(
    root: &SysRoot,
    journal_dir: &Path,
    args: &SchedArgs,
    width: usize,
) -> anyhow::Result<ExitCode> {
    let drives = drives(root);
    let target = drives.resolve(&args.device)?;
    let dev = &target.device;
    let partition = target.partition.as_deref();
    if args.persist
        && let Some(name) = &args.name
    {
        let done = persist::persist_scheduler(
            root,
            &dev.name,
            name,
            &persist::PersistOptions {
                target_root: args.target_root.clone(),
                class: args.persist_class,
                dry_run: args.dry_run,
            },
        )?;
        let text = if args.json {
            report::sched::render_persist_json(&done, partition)?
        } else {
            report::sched::render_persist(&done, partition, width)
        };
        write_stdout(&text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(name) = &args.name else {
        let set = match drive_state::scheduler(drives.as_ref(), dev) {
            Ok(set) => set,
            Err(DriveError::NotSupported {
                transport, detail, ..
            }) => {
                write_stdout(&report::table::wrap(
                    "",
                    &format!(
                        "{}: no I/O scheduler: not supported on {transport}{}",
                        dev.name,
                        detail.map(|d| format!(" ({d})")).unwrap_or_default()
                    ),
                    width,
                ))?;
                return Ok(ExitCode::SUCCESS);
            }
            Err(e) => return Err(e).context(format!("cannot read the scheduler of {}", dev.name)),
        };
        let text = if args.json {
            report::sched::render_json(&dev.name, &set, None, partition)?
        } else {
            report::sched::render_status(&dev.name, &set, partition) + &orphan_hint(journal_dir)
        };
        write_stdout(&text)?;
        return Ok(ExitCode::SUCCESS);
    };
    let journal = Journal::open(journal_dir).with_context(|| {
        format!(
            "cannot open the change journal in {}",
            journal_dir.display()
        )
    })?;
    let changer = Changer::new(Arc::clone(&drives), journal, Lifetime::Persisted);
    let change = changer
        .set_scheduler(dev, name, args.keep)
        .with_context(|| format!("cannot switch the scheduler of {}", dev.name))?;
    let text = if args.json {
        report::sched::render_json(&dev.name, &change.after, Some(&change), partition)?
    } else {
        report::sched::render_change(&change, partition, journal_dir, width)
    };
    write_stdout(&text)?;
    Ok(if change.took_effect() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `disktriage restore [--list] [--force]`.
pub fn restore(root: &SysRoot, journal_dir: &Path, args: &RestoreArgs) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.capacity {
        return capacity::restore(path);
    }
    let Some(journal) = Journal::existing(journal_dir) else {
        write_stdout(&format!(
            "Nothing to restore: no changes recorded in {}.\n",
            journal_dir.display()
        ))?;
        return Ok(ExitCode::SUCCESS);
    };
    if args.list {
        let entries = journal.entries()?;
        write_stdout(&report::restore::render_list(&entries, journal_dir))?;
        return Ok(ExitCode::SUCCESS);
    }
    let changer = Changer::new(drives(root), journal, Lifetime::Persisted);
    let outcomes = changer
        .restore(RestoreScope::All { force: args.force })
        .context("cannot restore")?;
    let text = if args.json {
        report::restore::render_json(&outcomes, journal_dir)?
    } else if outcomes.is_empty() {
        format!(
            "Nothing to restore: no changes recorded in {}.\n",
            journal_dir.display()
        )
    } else {
        report::restore::render_text(&outcomes)
    };
    write_stdout(&text)?;
    Ok(if outcomes.iter().any(|o| o.failed()) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `disktriage debug pages DEV`: raw pages as hex, for fixtures.
pub fn debug_pages(root: &SysRoot, arg: &str) -> anyhow::Result<ExitCode> {
    let drives = LinuxDrives::new(root.clone());
    let target = drives.resolve(arg)?;
    let name = &target.device.name;
    let mut out = String::new();
    for page in drives.raw_pages(&target.device) {
        match page.bytes {
            Ok(bytes) => {
                out.push_str(&format!(
                    "----- page {name} {} {}\n",
                    page.name,
                    bytes.len()
                ));
                for chunk in bytes.chunks(32) {
                    let line: String = chunk.iter().map(|b| format!("{b:02x}")).collect();
                    out.push_str(&line);
                    out.push('\n');
                }
            }
            Err(e) => out.push_str(&format!("----- error {name} {}: {e}\n", page.name)),
        }
    }
    write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// `disktriage debug temp DEV`: `count` samples from the temperature poller, one a line.
pub fn debug_temp(
    root: &SysRoot,
    arg: &str,
    count: usize,
    interval: u64,
) -> anyhow::Result<ExitCode> {
    use crate::drive_state::temperature::{PollConfig, TempPoller};
    let drives = drives(root);
    let target = drives.resolve(arg)?;
    let (tx, rx) = std::sync::mpsc::channel();
    let poller = TempPoller::spawn(
        drives,
        target.device,
        PollConfig::every(std::time::Duration::from_secs(interval)),
        std::time::Instant::now(),
        move |sample| tx.send(sample).is_ok(),
    )?;
    for sample in rx.iter().take(count) {
        let value = match (sample.celsius, &sample.error) {
            (Some(c), _) => format!("{c} C"),
            (None, Some(e)) => format!("error: {e}"),
            (None, None) => "no sensor".into(),
        };
        write_stdout(&format!(
            "{} {:.1} s: {value}\n",
            sample.device,
            sample.at.as_secs_f64()
        ))?;
    }
    poller.stop();
    Ok(ExitCode::SUCCESS)
}

/// What `debug hold` is asked to change.
pub struct HoldPlan<'a> {
    pub device: &'a str,
    pub cache: Option<OnOff>,
    pub sched: Option<&'a str>,
    pub seconds: Option<u64>,
    pub panic: bool,
}

/// `disktriage debug hold`: a long-lived session in miniature. It changes settings through a
/// `RestoreGuard` with its signal and panic handlers, prints `holding pid N`, waits, and
/// restores when it ends, whichever way it ends. The stand-in for `run` in restore tests.
pub fn debug_hold(
    root: &SysRoot,
    journal_dir: &Path,
    plan: &HoldPlan<'_>,
) -> anyhow::Result<ExitCode> {
    let drives = drives(root);
    let target = drives.resolve(plan.device)?;
    let dev = target.device;
    let journal = Journal::open(journal_dir)?;
    let guard = RestoreGuard::new(
        Changer::new(Arc::clone(&drives), journal, Lifetime::Session),
        report::restore::announce,
    );
    guard
        .install_handlers()
        .map_err(anyhow::Error::msg)
        .context("cannot install the restore handlers")?;
    if let Some(state) = plan.cache {
        let change = guard
            .changer()
            .set_write_cache(&dev, state.enabled(), false)?;
        let status = CacheStatus::new(
            &dev.name,
            dev.transport,
            Ok(change.after.clone()),
            change.kernel_after,
        );
        write_stdout(&report::cache::render_change(
            &change,
            &status,
            None,
            journal_dir,
            crate::report::output::DEFAULT_WIDTH,
        ))?;
    }
    if let Some(name) = plan.sched {
        let change = guard.changer().set_scheduler(&dev, name, false)?;
        write_stdout(&report::sched::render_change(
            &change,
            None,
            journal_dir,
            crate::report::output::DEFAULT_WIDTH,
        ))?;
    }
    write_stdout(&format!("holding pid {}\n", std::process::id()))?;
    if plan.panic {
        panic!("debug hold: panic requested");
    }
    match plan.seconds {
        Some(s) => std::thread::sleep(std::time::Duration::from_secs(s)),
        None => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
    }
    let outcomes = guard.restore_now()?;
    write_stdout(&report::restore::render_text(&outcomes))?;
    Ok(ExitCode::SUCCESS)
}
