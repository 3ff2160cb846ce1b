//! The surface scan screen (`b` on Devices): snapshots at 80x25 and 132x43 of a scan fed by
//! the real scan loop (`flow::drive_scan`) over a fake disk with chosen unreadable
//! sectors and a slow area, on a fake clock; and its behaviour: the keys, stop, a device gone
//! mid-scan, a refused start, leaving the screen.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use crate::common;
use crate::common::tui::*;
use crate::snap;
use disktriage::app::ScanPhase as Phase;
use disktriage::app::{App, Overlay, Screen};
use disktriage::bench::TestName;
use disktriage::event::{Cmd, Msg, ScanUpdate};
use disktriage::flow::{SCAN_JOB, ScanJob, ScanMsg};
use disktriage::scan::DEFAULT_CELLS;
use disktriage::scan::Mapfile;
use disktriage::scan::Span;
use disktriage::scan::{BlockReader, End, ReadOutcome, Scan, ScanConfig, TimedRead};
use ratatui::crossterm::event::KeyCode;

const MIB: u64 = 1 << 20;
const SIZE: u64 = 64 * MIB;
/// 16 unreadable sectors at LBA 81920 (40 MiB).
const BAD: Span = Span {
    offset: 40 * MIB,
    length: 16 * 512,
};
/// A slow area: 2 MiB at 20 MiB, 300 ms a block.
const SLOW: Span = Span {
    offset: 20 * MIB,
    length: 2 * MIB,
};

/// A disk of `SIZE` bytes read in 4 ms a MiB, slow in `SLOW`, unreadable in `BAD`, gone
/// from `gone_at` on; reads move a shared fake clock; `stop_at` sets a stop flag there.
struct FakeDisk {
    clock: Rc<Cell<Duration>>,
    gone_at: Option<u64>,
    stop_at: Option<(u64, Rc<AtomicBool>)>,
}

impl BlockReader for FakeDisk {
    fn read(&mut self, span: Span) -> TimedRead {
        let elapsed = if span.intersect(&SLOW).is_some() {
            Duration::from_millis(300)
        } else {
            Duration::from_micros(4000 * span.length / MIB).max(Duration::from_micros(50))
        };
        self.clock.set(self.clock.get() + elapsed);
        if let Some((at, flag)) = &self.stop_at
            && span.offset >= *at
        {
            flag.store(true, Ordering::Relaxed);
        }
        let outcome = if self.gone_at.is_some_and(|g| span.end() > g) {
            ReadOutcome::Failed(libc::ENXIO)
        } else if span.intersect(&BAD).is_some() {
            ReadOutcome::Failed(libc::EIO)
        } else {
            ReadOutcome::Read
        };
        TimedRead { outcome, elapsed }
    }

    fn gone(&mut self) -> Option<String> {
        self.gone_at
            .map(|_| "loop0 was detached (the device is gone)".to_string())
    }
}

/// Every update the worker loop sends for a scan of the fake disk (one per 20 ms of the fake
/// clock, and the last).
fn scan_updates(gone_at: Option<u64>, stop_at: Option<u64>) -> Vec<ScanUpdate> {
    let clock = Rc::new(Cell::new(Duration::ZERO));
    let stop = Rc::new(AtomicBool::new(false));
    let mut disk = FakeDisk {
        clock: Rc::clone(&clock),
        gone_at,
        stop_at: stop_at.map(|at| (at, Rc::clone(&stop))),
    };
    let scan = Scan::new(
        ScanConfig {
            domain: Span::new(0, SIZE),
            block: MIB,
            sector: 512,
            slow: Duration::from_millis(150),
            timeout: Duration::from_secs(3),
            retry: false,
            map_cells: DEFAULT_CELLS,
        },
        Mapfile::new(SIZE),
    );
    let (tx, rx) = mpsc::channel();
    disktriage::tui::in_context(SCAN_JOB, &stop, &tx, Duration::from_millis(20), |ctx| {
        disktriage::flow::drive_scan("loop0".into(), scan, &mut disk, ctx, &mut || clock.get())
    });
    drop(tx);
    rx.iter()
        .map(|m| match scan_news(m) {
            ScanMsg::Update(u) => *u,
            other => panic!("{other:?}"),
        })
        .collect()
}

/// The scan job's own message, from what the app hears.
fn scan_news(m: Msg) -> ScanMsg {
    match m {
        Msg::Job(j) => j.take().expect("a scan's message"),
        other => panic!("{other:?}"),
    }
}

/// A scan's update, as the app hears it.
fn update(u: ScanUpdate) -> Msg {
    Msg::job(SCAN_JOB, ScanMsg::Update(Box::new(u)))
}

/// The app on Devices with loop0 selected, `b` pressed: the scan asked for.
fn app_scanning() -> App {
    let mut app = app_with("host-loop-zram", true);
    let cmds = key(&mut app, KeyCode::Char('b'));
    let [Cmd::StartJob(order)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    let Some(ScanJob { device, path, .. }) = order.get() else {
        panic!("{order:?}")
    };
    assert_eq!(device, "loop0");
    assert_eq!(path.to_str(), Some("/dev/loop0"));
    assert_eq!(app.screen, Screen::Scan);
    app
}

fn feed(app: &mut App, updates: impl IntoIterator<Item = ScanUpdate>) {
    for u in updates {
        app.update(update(u));
    }
}

/// The updates up to the first at or past `at` bytes.
fn up_to(updates: &[ScanUpdate], at: u64) -> Vec<ScanUpdate> {
    let n = updates.iter().position(|u| u.position >= at).unwrap() + 1;
    updates[..n].to_vec()
}

#[test]
fn the_worker_sends_few_bounded_updates_and_the_last_says_why_it_ended() {
    let updates = scan_updates(None, None);
    // Per interval, not per read: 64 reads of 1 MiB, the bisection's and the slow re-reads.
    assert!(updates.len() < 60, "{}", updates.len());
    let last = updates.last().unwrap();
    assert_eq!(last.end, Some(End::Finished));
    assert_eq!(last.done, SIZE);
    assert_eq!(last.errors, vec![(BAD, libc::EIO)]);
    assert_eq!(last.slow.len(), 1);
    assert_eq!(last.slow[0].0, SLOW);
    assert!(updates[..updates.len() - 1].iter().all(|u| u.end.is_none()));
    assert!(last.zone.len() <= disktriage::event::ZONE_POINTS);
}

#[test]
fn running_scan_shows_the_map_counts_zone_curve_position_eta_and_stop_key() {
    let updates = scan_updates(None, None);
    let mut app = app_scanning();
    feed(&mut app, up_to(&updates, 48 * MIB));
    assert_eq!(app.screens.scan.phase, Phase::Running);
    let s = screen(&app, 80, 25);
    assert!(s.contains("Surface scan of loop0"), "{s}");
    assert!(s.contains("ETA"), "{s}");
    assert!(s.contains("read-only"), "{s}");
    // The status line says the scan started, then lists the keys.
    assert!(
        s.contains("surface scan, read-only (nothing is written)"),
        "{s}"
    );
    tick(&mut app, 10.0);
    let s = screen(&app, 80, 25);
    assert!(s.contains("x stop"), "{s}");
    assert!(
        !s.contains("h health"),
        "no health key while it reads:\n{s}"
    );
    assert!(s.contains('X'), "the unreadable sectors on the map:\n{s}");
    assert!(s.contains("Throughput"), "{s}");
    snap("scan_running", &app);
}

#[test]
fn finished_scan_lists_the_ranges_in_bytes_and_lbas_and_h_opens_health() {
    let mut updates = scan_updates(None, None);
    let mut app = app_scanning();
    let last = updates.pop().unwrap();
    feed(&mut app, updates);
    // The end goes into the history, as a run does.
    let cmds = app.update(update(last));
    assert!(
        matches!(cmds.as_slice(), [Cmd::RecordScan { update, path }]
            if update.end == Some(End::Finished) && path.to_str() == Some("/dev/loop0")),
        "{cmds:?}"
    );
    assert_eq!(app.screens.scan.phase, Phase::Ended);
    let s = screen(&app, 132, 43);
    assert!(s.contains("finished"), "{s}");
    assert!(s.contains("41943040 +8192  LBA 81920-81935  EIO"), "{s}");
    assert!(s.contains("20971520 +2097152  LBA 40960-45055"), "{s}");
    assert!(s.contains("scan finished: h reads the disk's SMART"), "{s}");
    snap("scan_finished", &app);
    tick(&mut app, 10.0);
    let s = screen(&app, 80, 25);
    assert!(s.contains("h health"), "{s}");
    assert!(!s.contains("x stop"), "{s}");
    key(&mut app, KeyCode::Char('h'));
    assert_eq!(app.screen, Screen::Health);
    assert_eq!(app.health.device.as_deref(), Some("loop0"));
}

#[test]
fn on_the_linux_console_each_bucket_has_its_own_glyph_and_the_legend_names_them() {
    let updates = scan_updates(None, None);
    let mut app = app_scanning();
    app.console = true;
    feed(&mut app, up_to(&updates, 48 * MIB));
    let s = screen(&app, 80, 25);
    for glyph in [". <5", "= <150", "# >=500", "X ERR", "T TIME"] {
        assert!(s.contains(glyph), "{glyph}:\n{s}");
    }
    // Only ASCII, box drawing and CP437 blocks on the console.
    for c in s.chars() {
        assert!(
            c.is_ascii() || ('\u{2500}'..='\u{259f}').contains(&c),
            "{c:?} is not a console glyph:\n{s}"
        );
    }
    snap("scan_console", &app);
}

#[test]
fn x_stops_the_scan_and_it_ends_with_what_it_read() {
    let mut app = app_scanning();
    let updates = scan_updates(None, None);
    feed(&mut app, up_to(&updates, 8 * MIB));
    let cmds = key(&mut app, KeyCode::Char('x'));
    assert!(
        matches!(cmds.as_slice(), [Cmd::StopJob(SCAN_JOB)]),
        "{cmds:?}"
    );
    assert_eq!(app.screens.scan.phase, Phase::Stopping);
    // The worker stops between reads and sends what it read.
    let stopped = scan_updates(None, Some(10 * MIB));
    let last = stopped.last().unwrap().clone();
    assert_eq!(last.end, Some(End::Stopped));
    assert!(last.done < SIZE && last.done >= 10 * MIB, "{}", last.done);
    feed(&mut app, [last]);
    assert_eq!(app.screens.scan.phase, Phase::Ended);
    tick(&mut app, 10.0);
    let s = screen(&app, 80, 25);
    assert!(s.contains("stopped"), "{s}");
    assert!(!s.contains("x stop"), "no stop key once it ended:\n{s}");
    // x again does nothing.
    assert!(key(&mut app, KeyCode::Char('x')).is_empty());
}

#[test]
fn a_device_gone_mid_scan_ends_it_with_what_it_read_and_says_why() {
    let updates = scan_updates(Some(30 * MIB), None);
    let last = updates.last().unwrap();
    assert!(
        matches!(&last.end, Some(End::Gone(why)) if why.contains("detached")),
        "{:?}",
        last.end
    );
    assert!(last.done < SIZE);
    let mut app = app_scanning();
    feed(&mut app, updates);
    let s = screen(&app, 80, 25);
    assert!(s.contains("device gone"), "{s}");
    assert!(s.contains("loop0 was detached"), "{s}");
    snap("scan_gone", &app);
}

#[test]
fn the_scan_carries_the_chosen_device_and_a_refusal_is_shown() {
    let mut app = app_with("host-loop-zram", true);
    let cmds = key(&mut app, KeyCode::Char('b'));
    let stamped: Vec<Cmd> = cmds.into_iter().map(|c| app.stamp(c)).collect();
    let [Cmd::StartJob(order)] = stamped.as_slice() else {
        panic!("{stamped:?}")
    };
    let Some(ScanJob { chosen, .. }) = order.get() else {
        panic!("{order:?}")
    };
    assert_eq!(chosen.as_ref().map(|c| c.name.as_str()), Some("loop0"));
    app.update(Msg::job(
        SCAN_JOB,
        ScanMsg::Refused(
            "loop0 is no longer the device you chose (7:0 backing /tmp/a.img); now backing \
             /tmp/b.img: nothing was done"
                .into(),
        ),
    ));
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("no longer the device")),
        "{:?}",
        app.overlay
    );
    assert!(matches!(app.screens.scan.phase, Phase::Refused(_)));
}

#[test]
fn leaving_the_screen_while_it_runs_stops_the_scan() {
    for leave in [KeyCode::Esc, KeyCode::Char('1'), KeyCode::Tab] {
        let mut app = app_scanning();
        feed(&mut app, up_to(&scan_updates(None, None), 8 * MIB));
        let cmds = key(&mut app, leave);
        assert!(
            matches!(cmds.as_slice(), [Cmd::StopJob(SCAN_JOB)]),
            "{leave:?}: {cmds:?}"
        );
        assert_ne!(app.screen, Screen::Scan);
    }
    // Once it ended, leaving sends nothing.
    let mut app = app_scanning();
    feed(&mut app, scan_updates(None, None));
    assert!(key(&mut app, KeyCode::Esc).is_empty());
    assert_eq!(app.screen, Screen::Devices);
}

#[test]
fn a_second_b_while_a_scan_runs_starts_no_other() {
    let mut app = app_scanning();
    feed(&mut app, up_to(&scan_updates(None, None), 8 * MIB));
    key(&mut app, KeyCode::Esc);
    // Esc stopped it; until the worker says it ended, b shows that scan.
    assert!(key(&mut app, KeyCode::Char('b')).is_empty());
    assert_eq!(app.screen, Screen::Scan);
}

/// A finished rand-read on loop0: R retests it from any screen.
fn after_a_run(app: &mut App) {
    key(app, KeyCode::Char('1'));
    pick_rand_read(app);
    keys(app, "r");
    common::tui::feed(app, TestName::RandRead, "loop0", "none", 4, 300.0);
    app.update(Msg::RunFinished(Box::new(Ok(report(
        TestName::RandRead,
        "loop0",
        "none",
        300.0,
        0.05,
    )))));
    assert!(!app.running());
}

#[test]
fn a_retest_from_the_scan_screen_stops_the_scan_before_the_run() {
    let mut app = app_with("host-loop-zram", true);
    after_a_run(&mut app);
    key(&mut app, KeyCode::Char('1'));
    assert_eq!(key(&mut app, KeyCode::Char('b')).len(), 1);
    feed(&mut app, up_to(&scan_updates(None, None), 8 * MIB));
    // R goes to the Run screen without a number key: the scan stops all the same.
    let cmds = key(&mut app, KeyCode::Char('R'));
    assert_eq!(app.screen, Screen::Run);
    assert!(cmds.contains(&Cmd::StopJob(SCAN_JOB)), "{cmds:?}");
    assert!(
        cmds.iter().any(|c| matches!(c, Cmd::StartRun(_))),
        "{cmds:?}"
    );
}

#[test]
fn no_scan_starts_while_a_test_runs() {
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    assert!(app.running());
    key(&mut app, KeyCode::Char('1'));
    let cmds = key(&mut app, KeyCode::Char('b'));
    assert!(cmds.is_empty(), "{cmds:?}");
    assert_ne!(app.screen, Screen::Scan);
    let s = screen(&app, 80, 25);
    assert!(s.contains("a test is running"), "{s}");
}

#[test]
fn the_ranges_of_a_large_disk_read_whole_at_80_columns() {
    let mut app = app_scanning();
    let mut last = scan_updates(None, None).pop().unwrap();
    // An 8 TB disk's offsets and LBAs.
    let far = 8_001_563_222_016;
    last.size = 8_001_563_222_016 + (1 << 20);
    last.slow = vec![(
        Span::new(far, MIB),
        disktriage::scan::SlowTimes {
            ms: 612,
            reread_ms: None,
            reread_errno: None,
        },
    )];
    feed(&mut app, [last]);
    let s = screen(&app, 80, 25);
    let joined: String = s
        .lines()
        .map(|l| l.trim_matches(|c| c == '"' || c == '│').trim_end())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        joined.contains(
            "slow 8001563222016 +1048576  LBA 15628053168-15628055215  612 ms, then not read again"
        ),
        "{s}"
    );
}

#[test]
fn ranges_out_of_sight_are_counted_above_and_below() {
    let mut app = app_scanning();
    let mut last = scan_updates(None, None).pop().unwrap();
    last.slow = (0..30)
        .map(|i| {
            (
                Span::new(i * 2 * MIB, MIB),
                disktriage::scan::SlowTimes {
                    ms: 200,
                    reread_ms: None,
                    reread_errno: None,
                },
            )
        })
        .collect();
    feed(&mut app, [last]);
    let s = screen(&app, 80, 25);
    assert!(s.contains("more below (Up/Down)"), "{s}");
    for _ in 0..5 {
        key(&mut app, KeyCode::Down);
    }
    let s = screen(&app, 80, 25);
    assert!(s.contains("5 more above,"), "{s}");
}

/// A disk that reads at once, unreadable in `BAD`, whose read at `hang_at` waits until
/// `release` says go (a dying disk's read that hangs).
struct HangingDisk {
    hang_at: u64,
    reached: mpsc::Sender<()>,
    release: mpsc::Receiver<()>,
}

impl BlockReader for HangingDisk {
    fn read(&mut self, span: Span) -> TimedRead {
        if span.offset == self.hang_at {
            let _ = self.reached.send(());
            let _ = self.release.recv();
        }
        let outcome = if span.intersect(&BAD).is_some() {
            ReadOutcome::Failed(libc::EIO)
        } else {
            ReadOutcome::Read
        };
        TimedRead {
            outcome,
            elapsed: Duration::from_micros(100),
        }
    }

    fn gone(&mut self) -> Option<String> {
        None
    }
}

#[test]
fn while_a_read_hangs_the_worker_sends_it_in_flight_with_what_was_found_before() {
    let scan = Scan::new(
        ScanConfig {
            domain: Span::new(0, SIZE),
            block: MIB,
            sector: 512,
            slow: Duration::from_millis(150),
            timeout: Duration::from_secs(3),
            retry: false,
            map_cells: DEFAULT_CELLS,
        },
        Mapfile::new(SIZE),
    );
    let (reached, reached_rx) = mpsc::channel();
    let (release_tx, release) = mpsc::channel();
    let mut disk = HangingDisk {
        hang_at: 50 * MIB,
        reached,
        release,
    };
    let (tx, rx) = mpsc::channel();
    let stop = AtomicBool::new(false);
    let started = std::time::Instant::now();
    let (waiting, later) = std::thread::scope(|s| {
        s.spawn(|| {
            // Every read is quicker than the interval: only the watcher sends while it hangs.
            disktriage::tui::in_context(SCAN_JOB, &stop, &tx, Duration::from_secs(3600), |ctx| {
                disktriage::flow::drive_scan_watched(
                    "loop0".into(),
                    scan,
                    &mut disk,
                    ctx,
                    &mut || started.elapsed(),
                    Some(Duration::from_millis(20)),
                )
            });
        });
        reached_rx.recv().unwrap();
        // The next update with a read in flight; a failure, not a hang, when none comes.
        let in_flight = || loop {
            match rx.recv_timeout(Duration::from_secs(10)) {
                Ok(m) => {
                    if let ScanMsg::Update(u) = scan_news(m)
                        && u.in_flight.is_some()
                    {
                        return Some(u);
                    }
                }
                Err(_) => return None,
            }
        };
        let first = in_flight();
        let later = in_flight();
        release_tx.send(()).unwrap();
        (
            first.expect("an update while the read hangs"),
            later.expect("another one"),
        )
    });
    // The scan as it stood when the read began: at 50 MiB, the unreadable sectors at 40 MiB
    // found, the read in flight there, its wait growing, the clock with it.
    let f = waiting.in_flight.unwrap();
    assert_eq!((f.offset, f.length), (50 * MIB, MIB));
    assert!(f.waited >= Duration::from_millis(20), "{f:?}");
    assert_eq!(waiting.position, 50 * MIB);
    assert_eq!(waiting.errors, vec![(BAD, libc::EIO)]);
    assert_eq!(waiting.bytes_bad, BAD.length);
    let g = later.in_flight.unwrap();
    assert!(g.waited > f.waited, "{f:?} then {g:?}");
    assert!(later.elapsed > waiting.elapsed);
    assert!(waiting.elapsed >= f.waited);
    // Once it read, the scan goes on to the end and its last word has no read in flight.
    drop(tx);
    let last = rx
        .iter()
        .filter_map(|m| match scan_news(m) {
            ScanMsg::Update(u) => Some(u),
            _ => None,
        })
        .last()
        .unwrap();
    assert_eq!(last.end, Some(End::Finished));
    assert_eq!(last.in_flight, None);
}

#[test]
fn a_read_in_flight_shows_waiting_with_a_clock_that_runs_on_between_updates() {
    let updates = scan_updates(None, None);
    let mut app = app_scanning();
    let mut shown = up_to(&updates, 48 * MIB);
    // The worker's word 6 s into a read at 50 MiB that hangs.
    let mut hanging = shown.last().unwrap().clone();
    hanging.position = 50 * MIB;
    hanging.elapsed += Duration::from_secs(6);
    hanging.in_flight = Some(disktriage::scan::InFlight {
        offset: 50 * MIB,
        length: MIB,
        waited: Duration::from_secs(6),
    });
    shown.push(hanging);
    tick(&mut app, 1.0);
    feed(&mut app, shown);
    let s = screen(&app, 80, 25);
    assert!(s.contains("waiting 6 s at 50.0 MiB"), "{s}");
    assert!(s.contains("elapsed 0:06"), "{s}");
    // No word from the worker for 9 s (it is stuck in the read): the screen's clock runs on.
    tick(&mut app, 10.0);
    let s = screen(&app, 80, 25);
    assert!(s.contains("waiting 15 s at 50.0 MiB"), "{s}");
    assert!(s.contains("elapsed 0:15"), "{s}");
    assert!(!s.contains("ETA"), "no ETA while it waits:\n{s}");
    snap("scan_waiting", &app);
}
