//! Setting sweeps from the Test screen, the Health view, the probe on the run screen and what must stay whole at 80 columns.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use common::tui::*;
use disktriage::app::{App, Overlay, Screen};
use disktriage::bench::TestName;
use disktriage::event::{Cmd, Msg};
use disktriage::flow::{
    Job, JobContext, JobEnv, Order, RunOne, SWEEP_JOB, StepOutcome, SweepMsg, SweepOrder,
    sweep_outcome,
};
use disktriage::model::Transport;
use disktriage::sys::{DriveControl, FakeDevice, FakeDrives, SysRoot};
use ratatui::crossterm::event::KeyCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use crate::snap;

/// How the test ends one run of the sweep.
enum Ran {
    /// The run's report, as the runner hands it over.
    Report(disktriage::bench::RunReport),
    /// The report, then `x` before the job goes on (while it would switch).
    ReportThenStop(disktriage::bench::RunReport),
    /// Refused before it started.
    Refused(String),
}

/// What a sweep did: every command the app gave, and every switch the job made.
struct Swept {
    cmds: Vec<Cmd>,
    switches: Vec<String>,
}

/// Fake drives where `device` has `scheduler` active (the four schedulers offered).
fn fake(device: &str, transport: Transport, scheduler: &str) -> Arc<FakeDrives> {
    let drives = FakeDrives::new().with(FakeDevice::new(device, transport));
    let set: disktriage::model::SchedulerSet = ["none", "mq-deadline", "kyber", "bfq"]
        .iter()
        .map(|s| {
            if *s == scheduler {
                format!("[{s}]")
            } else {
                s.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
        .parse()
        .unwrap();
    drives.update(device, |d| {
        d.device.scheduler = Some(set.clone());
        d.scheduler = Ok(set);
    });
    Arc::new(drives)
}

/// Runs the sweep `first` asks for (`Cmd::StartJob`): the real job on `drives`, with its
/// journal in `journal`, its messages handed to the app as the loop would. Each
/// run is made by the test: `run(app, n)` feeds run `n` (from 0) to the app and says how it
/// ended. `x` on the app stops the job as `Cmd::StopJob` does.
fn sweep_job(
    app: &mut App,
    first: Vec<Cmd>,
    drives: &Arc<FakeDrives>,
    journal: &std::path::Path,
    mut run: impl FnMut(&mut App, usize) -> Ran,
) -> Swept {
    let [Cmd::StartJob(order)] = first.as_slice() else {
        panic!("a sweep is a job: {first:?}")
    };
    let mut order: SweepOrder = order.get::<SweepOrder>().unwrap().clone();
    // The fake drives are not the fixture's devices.
    order.request.device = None;
    let (reply, replies) = mpsc::channel::<StepOutcome>();
    let replies = Mutex::new(replies);
    let one: RunOne = Arc::new(move |_, _, _| {
        let next = replies.lock().unwrap().recv();
        next.unwrap_or(StepOutcome::Stopped)
    });
    let control: Arc<dyn DriveControl> = Arc::clone(drives) as Arc<dyn DriveControl>;
    let mut env = JobEnv::new(
        SysRoot::new("/nonexistent"),
        control,
        Duration::from_millis(250),
    )
    .with_stand_in(one);
    env.journal_dir = Some(journal.to_path_buf());
    let job = order.job(&env);
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<SweepMsg>();
    let flag = Arc::clone(&stop);
    let thread = std::thread::spawn(move || {
        let send = move |m| tx.send(m).is_ok();
        job.run(&JobContext::new(&flag, &send, Duration::from_millis(250)));
    });
    let mut cmds = Vec::new();
    let mut n = 0;
    let hear = |app: &mut App, m: SweepMsg, cmds: &mut Vec<Cmd>| {
        let more = app.update(Msg::job(SWEEP_JOB, m));
        if more.contains(&Cmd::StopJob(SWEEP_JOB)) {
            stop.store(true, Ordering::Relaxed);
        }
        cmds.extend(more);
    };
    for m in rx.iter() {
        let step = matches!(m, SweepMsg::Step { .. });
        hear(app, m, &mut cmds);
        if !step {
            continue;
        }
        let test = app.sweep.as_ref().unwrap().request.test;
        let outcome = match run(app, n) {
            Ran::Report(r) => {
                let o = sweep_outcome(test, &r);
                hear(app, SweepMsg::Finished(Box::new(r)), &mut cmds);
                o
            }
            Ran::ReportThenStop(r) => {
                let o = sweep_outcome(test, &r);
                hear(app, SweepMsg::Finished(Box::new(r)), &mut cmds);
                assert_eq!(keys(app, "x"), [Cmd::StopJob(SWEEP_JOB)]);
                stop.store(true, Ordering::Relaxed);
                o
            }
            Ran::Refused(e) => {
                hear(app, SweepMsg::RunFailed(e.clone()), &mut cmds);
                StepOutcome::Failed(e)
            }
        };
        // `x` during the run stops the job as the runner would.
        if app.sweep.as_ref().is_some_and(|s| s.stopping) {
            stop.store(true, Ordering::Relaxed);
        }
        n += 1;
        reply.send(outcome).unwrap();
    }
    thread.join().unwrap();
    let switches = drives
        .set_calls()
        .iter()
        .filter_map(|c| c.rsplit(' ').next().map(str::to_string))
        .collect();
    Swept { cmds, switches }
}

/// A run of the sweep fed and finished at `mbps(value, repeat)` MB/s (p99 `p99(value)` ms);
/// `at_run(app, n)` looks at the app while run `n` (from 0) is live.
fn runs<'a>(
    test: TestName,
    mbps: impl Fn(&str, u32) -> f64 + 'a,
    p99: impl Fn(&str) -> f64 + 'a,
    mut at_run: impl FnMut(&App, usize) + 'a,
) -> impl FnMut(&mut App, usize) -> Ran + 'a {
    move |app, n| {
        let sw = app.sweep.as_ref().unwrap();
        let step = sw.steps[sw.at];
        let value = sw.settings[step.setting].clone();
        let device = sw.device.clone();
        // The scheduler a run reports is the device's; a cache sweep keeps it.
        let sched = match sw.kind {
            disktriage::bench::SweepKind::Scheduler => value.clone(),
            disktriage::bench::SweepKind::WriteCache => "mq-deadline".into(),
        };
        let m = mbps(&value, step.repeat);
        feed(app, test, &device, &sched, 8, m);
        at_run(app, n);
        Ran::Report(report(test, &device, &sched, m, p99(&value)))
    }
}

#[test]
fn scheduler_sweep_from_the_test_screen() {
    use disktriage::bench::SweepKind;
    use disktriage::report::{SweepEnd, render_sweep_text};
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    app.picker_test = disktriage::app::index_of(TestName::SeqRead);
    let first = keys(&mut app, "S");
    assert!(matches!(first.as_slice(), [Cmd::StartJob(_)]), "{first:?}");
    let sw = app.sweep.as_ref().unwrap();
    assert_eq!(sw.kind, SweepKind::Scheduler);
    assert_eq!(sw.settings, ["none", "mq-deadline", "kyber", "bfq"]);
    assert_eq!(sw.repeats, 3, "3 repeats unless the Test screen sets more");
    let figure = |s: &str, repeat: u32| {
        let base = match s {
            "none" => 500.0,
            "mq-deadline" => 510.0,
            "kyber" => 400.0,
            _ => 600.0,
        };
        base + f64::from(repeat) * 2.0
    };
    let drives = fake("loop0", Transport::Loop, "none");
    let dir = tempfile::tempdir().unwrap();
    let at_run = |app: &App, n: usize| {
        if n == 5 {
            let s = screen(app, 80, 25);
            assert!(
                s.contains("Scheduler sweep, run 6 of 12: mq-deadline, repeat 2 of 3"),
                "{s}"
            );
            assert!(s.contains("RUNNING"), "{s}");
            snap("sweep_running", app);
            // Nothing else starts or switches while a sweep runs.
            let mut probe = app.clone();
            assert!(keys(&mut probe, "s").is_empty());
            assert!(matches!(probe.overlay, Some(Overlay::Error(_))));
        }
    };
    let run = runs(TestName::SeqRead, figure, |_| 0.5, at_run);
    let swept = sweep_job(&mut app, first, &drives, dir.path(), run);
    let cmds = swept.cmds;
    // Every one of the 12 runs goes to the history, one entry each, as the CLI's sweep does.
    let recorded: Vec<usize> = cmds
        .iter()
        .filter_map(|c| match c {
            Cmd::RecordHistory { runs, .. } => Some(runs.len()),
            _ => None,
        })
        .collect();
    assert_eq!(recorded, vec![1; 12]);
    // Interleaved: each repeat goes through every scheduler; the one at start comes back at
    // the end.
    assert_eq!(
        swept.switches,
        [
            "mq-deadline",
            "kyber",
            "bfq",
            "none",
            "mq-deadline",
            "kyber",
            "bfq",
            "none",
            "mq-deadline",
            "kyber",
            "bfq",
            "none"
        ]
    );
    let sw = app.sweep.as_ref().unwrap();
    assert!(!sw.active());
    assert!(!app.running());
    assert!(matches!(&app.overlay, Some(Overlay::Sweep(s)) if s.scroll == 0));
    // Each scheduler's runs are one record in Results, with its three repeats.
    assert_eq!(app.results.records.len(), 4);
    assert!(app.results.records.iter().all(|r| r.runs.len() == 3));
    assert_eq!(app.results.records[3].scheduler.as_deref(), Some("bfq"));

    let result = sw.result();
    assert_eq!(result.tests[0].verdict.winner(), Some("bfq"));
    let s = screen(&app, 80, 25);
    // The CLI's figures, word for word.
    let cli = render_sweep_text(&result, &SweepEnd::default(), 80);
    for line in cli.lines().skip(4).take(4) {
        let cells: Vec<&str> = line.split_whitespace().collect();
        let row = s
            .lines()
            .find(|l| l.contains(&format!("│{} ", cells[0])))
            .unwrap_or_else(|| panic!("no row for {line}: {s}"));
        for cell in cells
            .iter()
            .filter(|c| c.chars().any(|ch| ch.is_ascii_digit()))
        {
            assert!(row.contains(cell), "{cell} of {line:?} not in {row:?}");
        }
    }
    assert!(s.contains("winner: bfq, +19.9 % MB/s against none"), "{s}");
    assert!(s.contains("the scheduler of loop0 is back to none"), "{s}");
    assert!(s.contains("█"), "{s}");
    assert!(
        s.lines()
            .any(|l| l.contains("bfq") && l.contains(" winner")),
        "{s}"
    );
    snap("sweep_result", &app);

    // Closed, and shown again from Results.
    keys(&mut app, "q");
    assert_eq!(app.overlay, None);
    keys(&mut app, "4v");
    assert!(matches!(&app.overlay, Some(Overlay::Sweep(s)) if s.scroll == 0));
    // P makes the winner permanent: the rule for bfq on loop0 is planned (and shown before
    // anything is written), not for the scheduler the device has now.
    assert_eq!(
        keys(&mut app, "P"),
        [Cmd::PlanPersist {
            device: "loop0".into(),
            scheduler: "bfq".into(),
            class: false,
            chosen: None,
        }]
    );
}

#[test]
fn sweep_result_on_the_linux_console_uses_only_its_glyphs() {
    let mut app = app_with("host-loop-zram", true);
    app.console = true;
    keys(&mut app, "2");
    let first = keys(&mut app, "S");
    let drives = fake("loop0", Transport::Loop, "none");
    let dir = tempfile::tempdir().unwrap();
    let run = runs(
        TestName::SeqRead,
        |s, r| if s == "kyber" { 300.0 } else { 500.0 } + f64::from(r),
        |_| 0.5,
        |_, _| {},
    );
    sweep_job(&mut app, first, &drives, dir.path(), run);
    for line in symbols(&app, 80, 25) {
        for ch in line.chars() {
            assert!(
                ch.is_ascii() || ('\u{2500}'..='\u{259f}').contains(&ch),
                "{ch:?} is not on the Linux console: {line}"
            );
        }
    }
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("no scheduler is better beyond the noise than none (the one at start)"),
        "{s}"
    );
}

#[test]
fn write_cache_sweep_confirms_once_and_puts_the_cache_back() {
    let mut app = lab_app_with_drive_states(true);
    while app.selected_device().unwrap().name != "sda" {
        key(&mut app, KeyCode::Down);
    }
    keys(&mut app, "2");
    app.picker_test = disktriage::app::index_of(TestName::SyncLatency);
    assert!(keys(&mut app, "W").is_empty());
    let Some(Overlay::Confirm(confirm)) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    assert_eq!(
        confirm.sweep,
        Some(disktriage::bench::SweepKind::WriteCache)
    );
    let first = keys(&mut app, "sda");
    assert!(first.is_empty());
    let first = key(&mut app, KeyCode::Enter);
    let [Cmd::StartJob(order)] = first.as_slice() else {
        panic!("{first:?}")
    };
    // Every run of the sweep goes with the one confirmation.
    let req = &order.get::<SweepOrder>().unwrap().request;
    assert_eq!(req.confirmation.as_deref(), Some("sda"));
    let drives = fake("sda", Transport::Sata, "mq-deadline");
    let dir = tempfile::tempdir().unwrap();
    let run = runs(
        TestName::SyncLatency,
        |_, _| 1.0,
        // The seed's laptop: 0.36 ms a write with the cache, 11.18 ms without.
        |v| if v == "on" { 0.36 * 3.0 } else { 11.18 * 3.0 },
        |_, _| {},
    );
    let swept = sweep_job(&mut app, first, &drives, dir.path(), run);
    assert_eq!(swept.switches, ["off", "on", "off", "on", "off", "on"]);
    let s = screen(&app, 80, 25);
    assert!(s.contains("WRITE CACHE"), "{s}");
    assert!(s.contains("ms/write"), "{s}");
    assert!(s.contains("11.180"), "{s}");
    assert!(
        s.contains("no write cache state is better beyond the noise than cache on"),
        "{s}"
    );
    assert!(
        s.contains("the write cache of sda is back to cache on"),
        "{s}"
    );
    snap("sweep_cache_result", &app);
    assert_eq!(
        app.changes.cache.len(),
        0,
        "back as found: nothing to restore"
    );
    // A cache state is no scheduler: P says so and plans no rule.
    assert!(keys(&mut app, "P").is_empty());
    assert!(screen(&app, 80, 25).contains("only a scheduler can be made permanent"));
}

#[test]
fn sweeps_are_refused_where_the_setting_cannot_change() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    // Loop devices have no drive: their state is never read, and the reason is the CLI's.
    assert!(keys(&mut app, "W").is_empty());
    assert_eq!(
        app.overlay,
        Some(Overlay::Error(
            "cannot sweep the write cache of loop0: not supported on loop".into()
        ))
    );
    app.overlay = None;
    // The same once a state is read, from what the drive says.
    let fake = disktriage::sys::FakeDrives::new()
        .with(disktriage::sys::FakeDevice::new("loop0", Transport::Loop));
    use disktriage::sys::DriveControl;
    let dev = fake.device("loop0").unwrap();
    fake.update("loop0", |d| {
        if let Ok(c) = &mut d.cache {
            c.enabled = None;
        }
    });
    app.update(Msg::DriveStatus {
        device: "loop0".into(),
        cache: Ok(disktriage::drive_state::cache_status(&fake, &dev).unwrap()),
        health: None,
    });
    assert!(keys(&mut app, "W").is_empty());
    assert_eq!(
        app.overlay,
        Some(Overlay::Error(
            "cannot sweep the write cache of loop0: the drive reports no volatile write cache"
                .into()
        ))
    );
    app.overlay = None;
    // The drive state of loop0 as the loop reads it.
    let fake = disktriage::sys::FakeDrives::new()
        .with(disktriage::sys::FakeDevice::new("loop0", Transport::Loop).without_cache_control());
    let dev = fake.device("loop0").unwrap();
    app.update(Msg::DriveStatus {
        device: "loop0".into(),
        cache: Ok(disktriage::drive_state::cache_status(&fake, &dev).unwrap()),
        health: None,
    });
    assert!(keys(&mut app, "W").is_empty());
    assert_eq!(
        app.overlay,
        Some(Overlay::Error(
            "cannot sweep the write cache of loop0: not supported on loop".into()
        ))
    );
    assert!(app.sweep.is_none());
}

#[test]
fn a_stopped_sweep_puts_the_scheduler_back_and_shows_what_completed() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    // Every switch of the sweep names loop0 as it was when the sweep started.
    let loop0 = app.devices.inventory.as_ref().unwrap().chosen("loop0");
    let cmds = keys(&mut app, "S");
    let [Cmd::StartJob(order)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(order.get::<SweepOrder>().unwrap().request.device, loop0);
    let drives = fake("loop0", Transport::Loop, "none");
    let dir = tempfile::tempdir().unwrap();
    // Two runs complete (none, then mq-deadline); the third (kyber) is stopped with x.
    let swept = sweep_job(&mut app, cmds, &drives, dir.path(), |app, n| {
        let sched = ["none", "mq-deadline", "kyber"][n];
        if n < 2 {
            feed(app, TestName::SeqRead, "loop0", sched, 8, 500.0);
            return Ran::Report(report(TestName::SeqRead, "loop0", sched, 500.0, 0.5));
        }
        feed(app, TestName::SeqRead, "loop0", sched, 4, 500.0);
        assert_eq!(keys(app, "x"), [Cmd::StopJob(SWEEP_JOB)]);
        // The runner reports the stopped run; the sweep puts the scheduler at start back.
        let mut stopped = report(TestName::SeqRead, "loop0", sched, 100.0, 0.5);
        stopped.outcome.stopped = true;
        Ran::Report(stopped)
    });
    let recorded = swept
        .cmds
        .iter()
        .filter(|c| matches!(c, Cmd::RecordHistory { .. }))
        .count();
    assert_eq!(recorded, 2, "the stopped run is not recorded");
    assert_eq!(swept.switches, ["mq-deadline", "kyber", "none"]);
    assert!(!app.sweeping());
    assert!(app.changes.scheduler.is_empty(), "back as found");
    let s = screen(&app, 80, 25);
    assert!(s.contains("stopped (x), after 2 of 12 runs"), "{s}");
    assert!(s.contains("the scheduler of loop0 is back to none"), "{s}");
    // The stopped run's figures are not counted.
    let r = app.sweep.as_ref().unwrap().result();
    assert_eq!(r.runs_done, 2);
    assert!(r.tests[0].rows[2].figure.is_none());
}

#[test]
fn a_refused_run_or_a_stop_during_a_switch_ends_the_sweep_and_puts_back() {
    let start = || {
        let mut app = app_with("host-loop-zram", true);
        keys(&mut app, "2");
        let first = keys(&mut app, "S");
        (app, first)
    };
    let none = || report(TestName::SeqRead, "loop0", "none", 500.0, 0.5);
    // Refused at once (under the scheduler at start): nothing to put back, the view says why.
    let (mut app, first) = start();
    let drives = fake("loop0", Transport::Loop, "none");
    let dir = tempfile::tempdir().unwrap();
    let swept = sweep_job(&mut app, first, &drives, dir.path(), |_, _| {
        Ran::Refused("loop0 is busy".into())
    });
    assert_eq!(swept.cmds, [Cmd::RefreshInventory]);
    assert!(swept.switches.is_empty());
    assert!(!app.sweeping() && !app.running());
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("ended by an error: loop0 is busy, after 0 of 12"),
        "{s}"
    );

    // x once the first run ended, before the switch to the second scheduler: no run starts,
    // nothing is switched.
    let (mut app, first) = start();
    let drives = fake("loop0", Transport::Loop, "none");
    let swept = sweep_job(&mut app, first, &drives, dir.path(), |app, _| {
        feed(app, TestName::SeqRead, "loop0", "none", 8, 500.0);
        assert!(app.running());
        Ran::ReportThenStop(none())
    });
    assert!(swept.switches.is_empty(), "{:?}", swept.switches);
    assert!(!app.sweeping());
    let s = screen(&app, 80, 25);
    assert!(s.contains("stopped (x), after 1 of 12 runs"), "{s}");

    // A switch the kernel refuses ends the sweep with its reason.
    let (mut app, first) = start();
    let drives = fake("loop0", Transport::Loop, "none");
    let refusing = Arc::clone(&drives);
    let swept = sweep_job(&mut app, first, &drives, dir.path(), |app, _| {
        feed(app, TestName::SeqRead, "loop0", "none", 8, 500.0);
        refusing.update("loop0", |d| {
            d.fail_next_set = Some(disktriage::sys::DriveError::Invalid("EBUSY".into()))
        });
        Ran::Report(none())
    });
    // Refused (the one call), still at none: nothing to put back.
    assert_eq!(swept.switches, ["mq-deadline"]);
    let dev = drives.device("loop0").unwrap();
    assert_eq!(
        drives.scheduler(&dev).unwrap().active.as_deref(),
        Some("none")
    );
    assert_eq!(
        swept
            .cmds
            .iter()
            .filter(|c| !matches!(c, Cmd::RecordHistory { .. }))
            .collect::<Vec<_>>(),
        [&Cmd::RefreshInventory]
    );
    let s = flat_screen(&app);
    assert!(
        s.contains("ended by an error: cannot switch the scheduler of loop0 to mq-deadline"),
        "{s}"
    );
    assert!(s.contains("EBUSY"), "{s}");
}

fn flat_screen(app: &App) -> String {
    screen(app, 132, 43)
        .lines()
        .map(|l| l.trim_matches('"').trim_matches('│').trim())
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The lab's SATA disk's logs as the driver assembles them from the captured pages: after
/// a short self-test, with its execution status byte and estimates.
fn sata_logs() -> disktriage::model::DriveLogs {
    use disktriage::model::{DriveLogs, LogRead, Transport};
    use disktriage::smart;
    let data = smart::parse_smart_data(&page("qemu-sata-0-aftertest-ata-smart-data.hex")).unwrap();
    DriveLogs {
        device: "sda".into(),
        transport: Transport::Sata,
        source: "ATA SMART logs".into(),
        error_log: LogRead::Read(
            smart::parse_summary_error_log(&page("qemu-sata-0-aftertest-ata-smart-log-error.hex"))
                .unwrap(),
        ),
        self_test_log: LogRead::Read(
            smart::parse_self_test_log(&page("qemu-sata-0-aftertest-ata-smart-log-selftest.hex"))
                .unwrap(),
        ),
        self_test: smart::self_test_status(&data),
    }
}

/// What the lab's SATA disk answers to `h`: its cache and its SMART health, judged from the
/// captured pages as the driver reads them.
fn sata_status() -> Msg {
    use disktriage::model::{
        AtaSmart, CacheStatus, DriveCache, KernelWriteCache, SmartReading, Transport,
    };
    use disktriage::smart;
    use disktriage::smart::{AtaOutcome, ata_outcome};
    let data = smart::parse_smart_data(&page("qemu-sata-0-ata-smart-data.hex")).unwrap();
    let thresholds =
        smart::parse_smart_thresholds(&page("qemu-sata-0-ata-smart-thresholds.hex")).unwrap();
    let sense = page("qemu-sata-0-ata-smart-status-sense.hex");
    let AtaOutcome::Done(Some(regs)) = ata_outcome(sense[0], &sense[1..]) else {
        panic!("no registers")
    };
    let (status, status_note) = smart::smart_status(regs.lba_mid, regs.lba_high);
    let reading = SmartReading::Ata(AtaSmart {
        smart_supported: true,
        smart_enabled: true,
        status,
        status_note,
        attributes: smart::attribute_table(&data, Some(&thresholds)),
        drive: Default::default(),
        attribute_problem: None,
    });
    let cache = DriveCache {
        enabled: Some(true),
        changeable: true,
        fixed_reason: None,
        source: "ATA IDENTIFY".into(),
    };
    Msg::DriveStatus {
        device: "sda".into(),
        cache: Ok(CacheStatus::new(
            "sda",
            Transport::Sata,
            Ok(cache),
            Some(KernelWriteCache::WriteBack),
        )),
        health: Some(Ok(Box::new(disktriage::smart::assess(
            "sda",
            Transport::Sata,
            reading,
        )))),
    }
}

/// The lab's NVMe drive's logs: the captured error log, and no Device Self-test.
fn nvme_logs() -> disktriage::model::DriveLogs {
    use disktriage::model::{DriveLogs, LogRead, SelfTestStatus, Transport};
    use disktriage::smart;
    let why = "not supported by this drive (Identify Controller: OACS bit 4, Device \
               Self-test, is clear)";
    DriveLogs {
        device: "nvme0n1".into(),
        transport: Transport::Nvme,
        source: "NVMe log pages".into(),
        error_log: LogRead::Read(
            smart::parse_error_log(&page("qemu-nvme-warn-nvme-error-log.hex")).unwrap(),
        ),
        self_test_log: LogRead::NotSupported { reason: why.into() },
        self_test: SelfTestStatus::unsupported(why),
    }
}

#[test]
fn health_view_shows_smart_the_logs_and_runs_a_self_test() {
    use disktriage::model::{SelfTestKind, SelfTestProgress};
    let mut app = lab_app_with_drive_states(true);
    // sda is the fourth visible device.
    for _ in 0..3 {
        key(&mut app, KeyCode::Down);
    }
    let cmds = keys(&mut app, "h");
    assert_eq!(
        cmds,
        [Cmd::ReadDriveStatus {
            device: "sda".into(),
            health: true
        }]
    );
    assert_eq!(app.screen, Screen::Health);
    app.update(sata_status());
    app.update(Msg::DriveLogs {
        device: "sda".into(),
        result: Ok(Box::new(sata_logs())),
    });
    let s = screen(&app, 80, 25);
    assert!(s.contains("Health of sda"), "{s}");
    // The logs go on below the box, and its lower edge says so.
    assert!(s.contains("more below (Up/Down)"), "{s}");
    assert!(
        s.contains("Self-test: none running; the last one: completed without error"),
        "{s}"
    );
    assert!(
        s.contains("t short (about 2 min)  T long (about 54 min)"),
        "{s}"
    );
    let big = screen(&app, 132, 43);
    assert!(
        big.contains("Error log: 0 error(s) over the drive's life"),
        "{big}"
    );
    assert!(big.contains("SMART PASSED (from ATA SMART)"), "{big}");
    assert!(
        big.contains("1 short completed without error  4660"),
        "{big}"
    );
    snap("health_sata", &app);

    // The long test asks first and says what it costs.
    keys(&mut app, "T");
    let s = screen(&app, 80, 25);
    assert!(s.contains("about 54 min"), "{s}");
    assert!(s.contains("changes no data"), "{s}");
    snap("health_long_test_confirm", &app);
    let cmds = keys(&mut app, "y");
    assert_eq!(
        cmds,
        [Cmd::StartSelfTest {
            device: "sda".into(),
            kind: SelfTestKind::Long,
            chosen: None,
        }]
    );
    let cmds = app.update(Msg::SelfTestStarted {
        device: "sda".into(),
        kind: SelfTestKind::Long,
        result: Ok(()),
    });
    assert_eq!(
        cmds,
        [Cmd::PollSelfTest {
            device: "sda".into()
        }]
    );
    let mut running = sata_logs().self_test;
    running.last = None;
    running.running = Some(SelfTestProgress {
        kind: None,
        percent_done: 40,
    });
    app.update(Msg::SelfTestStatus {
        device: "sda".into(),
        result: Ok(running),
    });
    let s = screen(&app, 80, 25);
    assert!(s.contains("long self-test 40% done"), "{s}");
    snap("health_self_test_running", &app);
}

#[test]
fn health_view_of_a_drive_without_self_tests() {
    let mut app = lab_app_with_drive_states(true);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    keys(&mut app, "h");
    app.update(Msg::DriveLogs {
        device: "nvme0n1".into(),
        result: Ok(Box::new(nvme_logs())),
    });
    let s = screen(&app, 80, 25);
    assert!(s.contains("Self-test: not supported by this drive"), "{s}");
    // t says why instead of asking.
    assert!(keys(&mut app, "t").is_empty());
    assert!(app.overlay.is_none());
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("nvme0n1: cannot start a self-test: not supported by this drive"),
        "{s}"
    );
    snap("health_nvme_no_self_test", &app);
    // Esc goes back to the list.
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Devices);
}

#[test]
fn the_health_view_of_a_loop_device_offers_no_self_test() {
    // loop0 has no drive behind it: the view says so, and the status line offered t short,
    // T long, x abort and r reread all the same.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "h");
    assert_eq!(app.screen, Screen::Health);
    let s = screen(&app, 80, 25);
    assert!(s.contains("No drive behind this device"), "{s}");
    let status = s.lines().last().unwrap();
    for k in ["t short", "T long", "x abort", "r reread"] {
        assert!(!status.contains(k), "{k} offered: {status}");
    }
    assert!(status.contains("Esc back"), "{status}");
}

/// The Run screen says what a phase does before it measures: probing the engines (counted
/// in the ETA), warming up, or nothing at all when there is no warm-up.
#[test]
fn the_run_screen_says_it_probes_and_counts_the_probe_in_the_eta() {
    use disktriage::bench::RunEvent;
    use std::time::Duration;
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    let mut plan = plan(TestName::RandRead);
    plan.phases[0].job.time = Some(Duration::from_secs(2));
    plan.phases[0].job.warmup = Duration::from_millis(200);
    app.update(Msg::RunStarted {
        target: Box::new(target("loop0", "none")),
        plan: Box::new(plan.clone()),
        notes: vec![],
    });
    app.update(Msg::Run(Box::new(RunEvent::Probes { phases: vec![true] })));
    app.update(Msg::Run(Box::new(RunEvent::PhaseStarted {
        index: 0,
        count: 1,
        label: "rand-read".into(),
        job: Box::new(plan.phases[0].job.clone()),
        probing: true,
    })));
    let s = screen(&app, 80, 25);
    assert!(s.contains("probing engines"), "{s}");
    assert!(!s.contains("warming up"), "{s}");
    // 2 s measured after the probe (0.6 s), which outlasts the 0.2 s warm-up: 2.6 s.
    assert!(s.contains("/ 2.6 s"), "{s}");
    assert!(s.contains("ETA 0:03"), "{s}");
    app.update(Msg::Run(Box::new(RunEvent::Probed { index: 0 })));
    let s = screen(&app, 80, 25);
    assert!(s.contains("warming up"), "{s}");
    assert!(!s.contains("probing"), "{s}");

    // No warm-up: nothing is done before the measurement, and nothing says "warming up".
    let mut plan = plan.clone();
    plan.phases[0].job.warmup = Duration::ZERO;
    app.update(Msg::Run(Box::new(RunEvent::Probes {
        phases: vec![false],
    })));
    app.update(Msg::Run(Box::new(RunEvent::PhaseStarted {
        index: 0,
        count: 1,
        label: "rand-read".into(),
        job: Box::new(plan.phases[0].job.clone()),
        probing: false,
    })));
    let s = screen(&app, 80, 25);
    assert!(!s.contains("warming up") && !s.contains("probing"), "{s}");
    assert!(s.contains("/ 2.0 s"), "{s}");
}

#[test]
fn a_sweep_of_a_device_another_disktriage_holds_is_refused_before_anything() {
    use disktriage::changes::{Changer, Journal};
    use disktriage::model::Lifetime;
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    let first = keys(&mut app, "S");
    let [Cmd::StartJob(order)] = first.as_slice() else {
        panic!("{first:?}")
    };
    let order = order.get::<SweepOrder>().unwrap();
    assert_eq!(
        (order.device.as_str(), order.kind),
        ("loop0", disktriage::bench::SweepKind::Scheduler)
    );
    assert!(app.sweeping(), "waiting for the claim");
    // Another disktriage (another journal handle on the same directory) sweeps loop0.
    let drives = fake("loop0", Transport::Loop, "none");
    let dir = tempfile::tempdir().unwrap();
    let other = Changer::new(
        Arc::clone(&drives) as Arc<dyn DriveControl>,
        Journal::open(dir.path()).unwrap(),
        Lifetime::Session,
    );
    let loop0 = drives.device("loop0").unwrap();
    other.claim(&loop0, "scheduler sweep of loop0").unwrap();
    let swept = sweep_job(&mut app, first, &drives, dir.path(), |_, _| {
        panic!("nothing runs")
    });
    // Nothing runs, nothing is switched.
    assert!(swept.cmds.is_empty(), "{:?}", swept.cmds);
    assert!(swept.switches.is_empty());
    assert!(!app.sweeping() && !app.running());
    let Some(Overlay::Error(e)) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    assert!(
        e.contains("cannot sweep loop0: loop0's settings are held by"),
        "{e}"
    );
    assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
    // Once the other one is done, S sweeps; while it runs, the other is refused the device,
    // and its end releases the claim.
    other.release("loop0");
    keys(&mut app, "q");
    let first = keys(&mut app, "S");
    let mut refused = Vec::new();
    let run = runs(
        TestName::SeqRead,
        |_, _| 500.0,
        |_| 0.5,
        |_, _| {
            refused.push(other.claim(&loop0, "scheduler sweep of loop0").is_err());
        },
    );
    sweep_job(&mut app, first, &drives, dir.path(), run);
    assert_eq!(refused, vec![true; 12]);
    assert!(!app.sweeping());
    other.claim(&loop0, "scheduler sweep of loop0").unwrap();
}

/// Collapses a screen's rows into one text (borders and padding out), so a line that wraps
/// reads as one.
fn flowing(screen: &str) -> String {
    screen
        .lines()
        .map(|l| {
            l.trim_matches('"')
                .trim_matches(|c| c == '│' || c == '┌' || c == '└' || c == ' ')
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Draws at 80x25 and fails on any cut, naming it.
fn assert_nothing_cut(app: &App) -> String {
    let (t, cuts) = draw_checked(app, 80, 25);
    assert!(cuts.is_empty(), "{cuts:#?}\n{}", t.backend());
    flowing(&t.backend().to_string())
}

#[test]
fn a_qd_sweep_still_rising_keeps_its_queue_depth_in_the_legend_at_80_columns() {
    let mut app = app_with("host-loop-zram", true);
    let phases = plan(TestName::QdSweep).phases;
    // IOPS that grow with every depth: the legend says where it still rises.
    let sweep = report_phases(TestName::QdSweep, "loop0", "none", |i| {
        match phases[i].tag {
            disktriage::bench::PhaseTag::QdSweep { small: true, qd } => (f64::from(qd) * 20.0, 0.1),
            disktriage::bench::PhaseTag::QdSweep { qd, .. } => (f64::from(qd) * 90.0, 0.9),
            _ => (100.0, 0.1),
        }
    });
    finish_with(&mut app, TestName::QdSweep, false, &sweep);
    keys(&mut app, "4");
    assert_nothing_cut(&app);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("S IOPS rising at QD 32") && s.contains("L MB/s rising at QD 32"),
        "{s}"
    );
    // Where the panel has room, the whole words.
    let s = screen(&app, 132, 43);
    assert!(s.contains("S IOPS still rising at QD 32"), "{s}");
}

#[test]
fn results_give_the_engine_of_every_phase_whole_at_80_columns() {
    use disktriage::bench::URING;
    let mut app = app_with("host-loop-zram", true);
    let mut cdm = report_phases(TestName::Cdm, "loop0", "none", |_| (1000.0, 0.5));
    for (i, p) in cdm.outcome.phases.iter_mut().enumerate() {
        p.engine_choice = qd1_choice();
        if i % 2 == 1 {
            p.engine = URING;
            p.engine_choice.used = URING;
        }
    }
    finish_with(&mut app, TestName::Cdm, false, &cdm);
    keys(&mut app, "4");
    let s = assert_nothing_cut(&app);
    assert!(s.contains("engine per phase:"), "{s}");
    // The last phase's engine and its probe's figures, whole.
    let last = cdm.outcome.phases.last().unwrap();
    assert!(
        s.contains(&format!(
            "{} io_uring (probe 219k vs sync 494k)",
            last.label
        )),
        "{s}"
    );
}

#[test]
fn a_scheduler_switch_on_a_long_device_name_says_every_key_at_80_columns() {
    let mut app = lab_app_with_drive_states(false);
    app.update(Msg::SchedulerSet {
        device: "nvme0n1".into(),
        result: Ok("none".into()),
    });
    let s = assert_nothing_cut(&app);
    // Nothing has run: R has nothing to retest and is not offered.
    assert!(
        s.contains("nvme0n1: scheduler now none (back to mq-deadline on exit); P permanent"),
        "{s}"
    );
}

#[test]
fn compare_gives_each_runs_parameters_whole_at_80_columns() {
    let mut app = lab_app_with_drive_states(false);
    // nvme0n1 is the third visible device.
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    app.values.repeats = 10;
    for sched in ["mq-deadline", "none"] {
        let r = report(TestName::ConcurrentRead, "nvme0n1", sched, 900.0, 0.5);
        finish_with(&mut app, TestName::ConcurrentRead, sched == "none", &r);
    }
    // B ran deeper: the change of parameters is one change, longer than a row.
    let deeper = app.results.records[0].params.replace(
        "QD1, 2 workers, forward read",
        "QD32, 8 workers, random read",
    );
    assert_ne!(deeper, app.results.records[0].params);
    app.results.records[1].params = deeper.clone();
    keys(&mut app, "4");
    keys(&mut app, "c");
    assert_eq!(app.screen, Screen::Compare);
    let s = assert_nothing_cut(&app);
    for tag in ["A #1", "B #2"] {
        let at = s.find(tag).unwrap_or_else(|| panic!("{tag}:\n{s}"));
        assert!(s[at..].contains("O_DIRECT x10"), "{tag}:\n{s}");
    }
    let change = format!("parameters {} -> {deeper}", app.results.records[0].params);
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words(&s).contains(&words(&change)), "{change}:\n{s}");
}

#[test]
fn results_show_every_test_name_whole_or_elided_in_its_middle_at_80_columns() {
    // seq-read-q8 was drawn "seq-read-q" at 80 columns: the TEST column is narrower than the
    // longest test names. A name may lose its middle (marked), never its end.
    let mut app = app_with("host-loop-zram", true);
    for test in [TestName::SeqReadQ8, TestName::ConcurrentRead] {
        let r = report(test, "loop0", "none", 300.0, 0.05);
        finish_with(&mut app, test, false, &r);
    }
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    assert!(s.contains(" seq-r~d-q8 "), "{s}");
    assert!(!s.contains("seq-read-q "), "{s}");
}
