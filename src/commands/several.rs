//! `disktriage run TARGET TARGET... --test NAME` and `run MD --members`: the same test on
//! several targets, in parallel by default or one by one, each with the single-target checks
//! (in-use refusal, the typed names, the one-open rule), then one row per target and the
//! verdict that names the outlier. A target that fails (a device error) does not stop the
//! others: its failure is named next to their figures.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::TryRecvError;
use std::time::Duration;

use anyhow::{Context, bail};

use super::params::params_from_args;
use crate::bench::analysis::several_disks::{self, ListRefusal, Role};
use crate::bench::exec::run_input::RunEvent;
use crate::bench::exec::safety::WriteRefusal;
use crate::bench::exec::session::{self, RunRequest, Session, TempPoll};
use crate::bench::exec::target;
use crate::bench::plan::params::TestParams;
use crate::bench::plan::test_name::{TestName, Writes};
use crate::cli::RunArgs;
use crate::flow::progress::ProgressLine;
use crate::model::BytesPerSec;
use crate::model::text::neutralize_controls;
use crate::report::output::{DEFAULT_WIDTH, write_stderr, write_stdout};
use crate::report::several::{self as report, Mode, SeveralResult, TargetResult};
use crate::sys::SysRoot;
use crate::sys::direct::{self, PathKind};
use crate::sys::signals::{Catch, StopSignals};

/// Does this command line ask for the several-targets run?
pub fn wanted(args: &RunArgs) -> bool {
    // `--repeats` with one target is the single-target run, repeated (`super::run`).
    !args.more_targets.is_empty() || args.members || args.one_by_one
}

/// One target as planned: its path, role and the confirmation that is its own.
#[derive(Debug, Clone)]
struct Planned {
    path: PathBuf,
    role: Role,
    confirmation: Option<String>,
}

/// Checks the flags that only make sense with several targets.
fn check_flags(args: &RunArgs) -> anyhow::Result<()> {
    let several = !args.more_targets.is_empty();
    if args.members && several {
        bail!("--members takes one target, the md array: its members are found from it");
    }
    if !several && !args.members && args.one_by_one {
        bail!(
            "--one-by-one needs several targets (or --members): disktriage run TARGET \
             TARGET..."
        );
    }
    if args.fio {
        bail!("--fio prints the commands of one target: give one target");
    }
    if args.csv {
        bail!(
            "--csv holds the series of one target: give one target, or use --json, which has every target's full report"
        );
    }
    Ok(())
}

/// The targets of `--members`: the array, then each member (by kernel name, as /dev paths).
fn members_of(
    root: &SysRoot,
    array: &Path,
    test: TestName,
    params: &TestParams,
    args: &RunArgs,
) -> anyhow::Result<Vec<Planned>> {
    let PathKind::BlockDevice { name, .. } =
        direct::identify(array).with_context(|| format!("cannot open {}", array.display()))?
    else {
        bail!(
            "--members needs an md array (e.g. /dev/md0); {} is not a block device",
            array.display()
        );
    };
    if test.writes_with(params) == Writes::Always || args.destroy_data.is_some() {
        bail!(
            "--members runs read tests only: the members of an active array are held by it and \
             cannot be written. Run the write test on the array alone: disktriage run {} --test {test}",
            array.display()
        );
    }
    let inv = root.inventory()?;
    let members = several_disks::md_members(&inv, &name);
    if members.is_empty() {
        bail!(
            "{name} has no members in the device list: --members needs an assembled md array \
             (see disktriage list: its members show \"held by md\")"
        );
    }
    let mut out = vec![Planned {
        path: array.to_path_buf(),
        role: Role::Array,
        confirmation: None,
    }];
    out.extend(members.into_iter().map(|m| Planned {
        path: PathBuf::from("/dev").join(m),
        role: Role::Member,
        confirmation: None,
    }));
    Ok(out)
}

/// What a target is called in a confirmation, and what makes two paths the same object at
/// first sight: a block device by number, a file by device and inode (two hard links are one
/// file), a new file by its directory's real path and its name.
fn identity(path: &Path) -> anyhow::Result<(Option<String>, String)> {
    match direct::identify(path).with_context(|| format!("cannot open {}", path.display()))? {
        PathKind::BlockDevice { name, dev } => Ok((Some(name), format!("block {dev}"))),
        PathKind::File { .. } => {
            let real = std::fs::canonicalize(path)
                .with_context(|| format!("cannot resolve {}", path.display()))?;
            let name = real
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let key = match direct::file_identity(&real) {
                Some((id, _)) => format!("file {}:{}", id.dev, id.ino),
                None => format!("file {}", real.display()),
            };
            Ok((Some(name), key))
        }
        // A file this run creates needs no confirmation.
        PathKind::Missing => {
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let dir = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
            let name = path.file_name().unwrap_or_default();
            Ok((None, format!("new {}", dir.join(name).display())))
        }
    }
}

/// Refuses two targets that are one object's data under two names: a loop device and its
/// backing file (or the device it is stacked on, through any chain), two loop devices over one
/// file, a disk and its partition, two hard links, one device under two nodes. Decided on the
/// live inventory, as the write guard is.
fn refuse_same_data(paths: &[&PathBuf], checked: &[target::Checked]) -> anyhow::Result<()> {
    use crate::model::usage::{DataRef, same_data};
    use target::TargetObject;
    let live = SysRoot::host().inventory()?;
    /// The data an existing target reaches, and whether it is a file.
    fn data(o: &TargetObject) -> Option<(DataRef<'_>, bool)> {
        match o {
            TargetObject::Block { name } => Some((DataRef::Node(name), false)),
            TargetObject::File { id, path } => Some((DataRef::File { id: *id, path }, true)),
            TargetObject::New { .. } => None,
        }
    }
    for (i, a) in checked.iter().enumerate() {
        for (j, b) in checked.iter().enumerate().skip(i + 1) {
            let why = match (&a.object, &b.object) {
                (
                    TargetObject::New {
                        dir: Some(d1),
                        name: n1,
                        ..
                    },
                    TargetObject::New {
                        dir: Some(d2),
                        name: n2,
                        ..
                    },
                ) if d1 == d2 && n1 == n2 => Some("one new file under two paths"),
                _ => match (data(&a.object), data(&b.object)) {
                    (Some((x, x_file)), Some((y, y_file))) if same_data(&live.devices, x, y) => {
                        Some(match (x_file, y_file) {
                            (true, true) => "two hard links to one file",
                            (false, false) if x == y => "one device under two names",
                            (false, false) => {
                                "a disk and its partition, or a loop device and the device \
                                 behind it"
                            }
                            _ => "a loop device and its backing file",
                        })
                    }
                    _ => None,
                },
            };
            if let Some(why) = why {
                return Err(WriteRefusal::SameData {
                    first: neutralize_controls(&paths[i].display().to_string()),
                    second: neutralize_controls(&paths[j].display().to_string()),
                    why,
                }
                .into());
            }
        }
    }
    Ok(())
}

/// The targets, each with its share of the --destroy-data list, once each passed a run's
/// checks (in use, confirmation, read-only, plan, memory) and no two are one object: nothing
/// is written or laid out unless all may run.
fn plan_targets(
    root: &SysRoot,
    args: &RunArgs,
    test: TestName,
    params: &TestParams,
) -> anyhow::Result<Vec<Planned>> {
    let paths: Vec<&PathBuf> = std::iter::once(&args.target)
        .chain(&args.more_targets)
        .collect();
    let mut names = Vec::new();
    let mut seen = HashSet::new();
    for p in &paths {
        let (name, key) = identity(p)?;
        if !seen.insert(key) {
            bail!(
                "{} is given twice (or is the same device or file as another target): each \
                 target must be a different one",
                neutralize_controls(&p.display().to_string())
            );
        }
        names.push(name);
    }
    let writes = match test.writes_with(params) {
        Writes::Never => false,
        Writes::Always => true,
        Writes::Optional => args.destroy_data.is_some(),
    };
    let confirmations = if writes {
        several_disks::split_confirmation(&names, args.destroy_data.as_deref())?
    } else {
        vec![None; names.len()]
    };
    let planned: Vec<Planned> = paths
        .iter()
        .zip(confirmations)
        .map(|(p, confirmation)| Planned {
            path: (*p).clone(),
            role: Role::Target,
            confirmation,
        })
        .collect();
    let checked = planned
        .iter()
        .map(|p| session::check(root, &p.request(test, params)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    refuse_same_data(&paths, &checked)?;
    Ok(planned)
}

impl Planned {
    /// The run request of this target.
    fn request(&self, test: TestName, params: &TestParams) -> RunRequest {
        RunRequest {
            target: self.path.clone(),
            test,
            params: params.clone(),
            confirmation: self.confirmation.clone(),
            temperature: TempPoll::Off,
            device: None,
        }
    }
}

/// Runs the command; the exit status is 1 when a target failed (after the report), 128 + the
/// signal after a stop by signal.
pub fn run(root: &SysRoot, history_dir: &Path, args: &RunArgs) -> anyhow::Result<ExitCode> {
    check_flags(args)?;
    let test: TestName = args
        .test
        .as_deref()
        .unwrap_or(crate::cli::DEFAULT_TEST)
        .parse()?;
    if test.info().family.runs_in_directory() {
        crate::model::exit::usage_bail!(
            "--test {test} runs in one directory at a time (it creates and removes files of its \
             own there): give one directory, and run it again for the next"
        );
    }
    let params = params_from_args(args);
    let planned = if args.members {
        members_of(root, &args.target, test, &params, args)?
    } else {
        plan_targets(root, args, test, &params)?
    };
    let signals = StopSignals::catch(Catch::Command)?;
    let stop = signals.flag();
    let mode = if args.one_by_one {
        Mode::OneByOne
    } else {
        Mode::Parallel
    };
    let repeats = args.repeats.unwrap_or(1);
    let mut result = SeveralResult {
        test,
        mode,
        repeats,
        targets: planned
            .iter()
            .map(|p| TargetResult {
                target: p.path.display().to_string(),
                role: p.role,
                reports: Vec::new(),
                error: None,
            })
            .collect(),
        stopped: false,
    };
    let runner = Runner {
        root,
        test,
        params: &params,
        planned: &planned,
        stop,
        progress: ProgressLine::on_terminal(),
    };
    // The array of a members run goes alone first: its speed is the sum of its members', and
    // measured together they would share the same disks.
    let groups: Vec<Vec<usize>> = if args.members {
        vec![vec![0], (1..planned.len()).collect()]
    } else {
        vec![(0..planned.len()).collect()]
    };
    'repeats: for _ in 0..repeats {
        for group in &groups {
            if stop.load(Ordering::Relaxed) {
                break 'repeats;
            }
            let alive: Vec<usize> = group
                .iter()
                .copied()
                .filter(|&i| result.targets[i].error.is_none())
                .collect();
            match mode {
                Mode::Parallel => runner.together(&alive, &mut result)?,
                Mode::OneByOne => {
                    for i in alive {
                        if stop.load(Ordering::Relaxed) {
                            break 'repeats;
                        }
                        runner.together(&[i], &mut result)?;
                    }
                }
            }
        }
    }
    result.stopped = stop.load(Ordering::Relaxed);
    let text = if args.json {
        report::render_json(&result)?
    } else {
        report::render_text(&result, DEFAULT_WIDTH)
    };
    write_stdout(&text)?;
    // Each target's repeats are one run in the history, under its own disk, as in the TUI.
    for t in &result.targets {
        super::history::record_run(root, history_dir, &t.reports);
    }
    let failed = result.failed();
    if !failed.is_empty() {
        if args.json {
            write_stderr(&format!("disktriage: failed: {}\n", failed.join(", ")));
        }
        return Ok(ExitCode::FAILURE);
    }
    if let Some(code) = signals.exit_code() {
        return Ok(ExitCode::from(code));
    }
    Ok(ExitCode::SUCCESS)
}

/// Starts and follows the sessions of a group of targets.
struct Runner<'a> {
    root: &'a SysRoot,
    test: TestName,
    params: &'a TestParams,
    planned: &'a [Planned],
    stop: &'a Arc<AtomicBool>,
    progress: ProgressLine,
}

/// Is this start failure the guard's refusal (which stops everything before any I/O of the
/// others goes on), rather than a failing device?
fn is_refusal(e: &anyhow::Error) -> bool {
    e.chain()
        .any(|c| c.is::<WriteRefusal>() || c.is::<ListRefusal>())
}

impl Runner<'_> {
    /// Runs the targets `indices` at the same time and adds each one's report (or failure).
    /// All are opened (new test files laid out) before any starts, so a refusal of one comes
    /// before anything is written to the others.
    fn together(&self, indices: &[usize], result: &mut SeveralResult) -> anyhow::Result<()> {
        let mut ready: Vec<(usize, session::Ready)> = Vec::new();
        for &i in indices {
            let p = &self.planned[i];
            match session::ready(
                self.root,
                &p.request(self.test, self.params),
                Some(self.stop.as_ref()),
                None,
            ) {
                Ok(r) => ready.push((i, r)),
                // Dropping the others' `Ready` removes the files laid out for them.
                Err(e) if is_refusal(&e) => return Err(e),
                Err(e) => {
                    result.targets[i].error = Some(neutralize_controls(&format!("{e:#}")));
                }
            }
        }
        let mut sessions: Vec<(usize, Session)> = Vec::new();
        for (i, r) in ready {
            match r.launch() {
                Ok(s) => sessions.push((i, s)),
                Err(e) => {
                    result.targets[i].error = Some(neutralize_controls(&format!("{e:#}")));
                }
            }
        }
        self.follow(&sessions, result);
        for (i, s) in sessions {
            match s.finish() {
                Ok(report) => {
                    if let Some(e) = report.error()
                        && !report.outcome.stopped
                    {
                        result.targets[i].error = Some(e);
                    }
                    result.targets[i].reports.push(report);
                }
                Err(e) => result.targets[i].error = Some(format!("{e:#}")),
            }
        }
        Ok(())
    }

    /// Reads every session's events until all are done, passing a stop on to each, with one
    /// progress line (each target's latest MB/s) when stderr is a terminal.
    fn follow(&self, sessions: &[(usize, Session)], result: &SeveralResult) {
        let mut latest: Vec<Option<f64>> = vec![None; sessions.len()];
        let mut done = vec![false; sessions.len()];
        while done.iter().any(|d| !d) {
            if self.stop.load(Ordering::Relaxed) {
                for (_, s) in sessions {
                    s.handle.stop();
                }
            }
            for (k, (_, s)) in sessions.iter().enumerate() {
                loop {
                    match s.events.try_recv() {
                        Ok(RunEvent::Point { point, .. }) => {
                            latest[k] = Some(BytesPerSec(point.rate()).mb_per_sec());
                        }
                        Ok(_) => {}
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => {
                            done[k] = true;
                            break;
                        }
                    }
                }
            }
            if self.progress.shown() {
                let figures: Vec<String> = sessions
                    .iter()
                    .zip(&latest)
                    .map(|((i, _), mbps)| {
                        let name = Path::new(&result.targets[*i].target)
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default();
                        match mbps {
                            Some(m) => format!("{} {m:.1}", neutralize_controls(&name)),
                            None => format!("{} -", neutralize_controls(&name)),
                        }
                    })
                    .collect();
                self.progress
                    .show(&format!("[{}] {} MB/s", self.test, figures.join("  ")));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.progress.clear();
    }
}
