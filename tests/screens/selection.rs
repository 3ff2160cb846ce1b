//! The selection, the Test screen's target, the marks and every pending action follow the
//! device, not the row or the name: a device that goes away (a USB stick pulled, a loop device
//! detached) is said and nothing moves to its neighbour, and a device that comes back under
//! the same name but is another one (a loop device re-attached to another file) is not the
//! one the admin chose. `App::update` is driven with two inventories, as the refresh delivers
//! them.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use common::tui::*;
use disktriage::app::{App, Overlay, Screen};
use disktriage::event::{Cmd, Msg};
use disktriage::model::Inventory;
use disktriage::sys::SysRoot;
use ratatui::crossterm::event::KeyCode;

/// The fixture's inventory: loop0, loop1, vda and zram0 shown (six unused loop/zram hidden).
fn inventory() -> Inventory {
    SysRoot::new(fixture("host-loop-zram"))
        .inventory()
        .expect("fixture")
}

/// The inventory after `losetup -d NAME`: the loop device is an empty placeholder again.
fn detached(mut inv: Inventory, name: &str) -> Inventory {
    let d = inv.devices.iter_mut().find(|d| d.name == name).unwrap();
    d.backing_file = None;
    d.loop_backing = None;
    d.size_bytes = Some(disktriage::model::Bytes(0));
    d.partitions.clear();
    d.in_use.clear();
    inv
}

/// The inventory after a device was unplugged: no entry at all.
fn unplugged(mut inv: Inventory, name: &str) -> Inventory {
    inv.devices.retain(|d| d.name != name);
    inv
}

/// The inventory after the loop device was detached and attached again to another file: same
/// name, same device number, another device.
fn reattached(mut inv: Inventory, name: &str, file: &str) -> Inventory {
    let d = inv.devices.iter_mut().find(|d| d.name == name).unwrap();
    d.backing_file = Some(file.to_string());
    d.loop_backing = None;
    inv
}

fn refresh(app: &mut App, inv: Inventory) -> Vec<Cmd> {
    app.update(Msg::Inventory(Ok(inv)))
}

fn selected(app: &App) -> Option<String> {
    app.selected_device().map(|d| d.name.clone())
}

fn status(app: &App) -> String {
    app.status
        .as_ref()
        .map(|(s, _)| s.clone())
        .unwrap_or_default()
}

/// What the app says about the gone device: the status line, or the dialog a key opened.
fn said(app: &App) -> String {
    let overlay = match &app.overlay {
        Some(Overlay::Error(e)) => e.clone(),
        _ => String::new(),
    };
    format!("{} | {overlay}", status(app))
}

/// Every command that names a device, or starts a run.
fn acts_on_a_device(cmds: &[Cmd]) -> bool {
    cmds.iter().any(|c| {
        matches!(
            c,
            Cmd::StartRun(_)
                | Cmd::SetScheduler { .. }
                | Cmd::SetDriveCache { .. }
                | Cmd::ReadDriveStatus { .. }
        )
    })
}

#[test]
fn the_selection_stays_on_its_device_when_a_row_above_goes() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    assert_eq!(selected(&app).as_deref(), Some("loop1"));
    refresh(&mut app, detached(inventory(), "loop0"));
    assert_eq!(
        selected(&app).as_deref(),
        Some("loop1"),
        "follows the device"
    );
    let s = screen(&app, 80, 25);
    let arrow = s.lines().find(|l| l.contains('>')).unwrap_or_default();
    assert!(arrow.contains("loop1"), "the > is on loop1:\n{s}");
    // The same with the device gone from the list altogether.
    refresh(&mut app, unplugged(inventory(), "loop0"));
    assert_eq!(selected(&app).as_deref(), Some("loop1"));
    // The Test screen's target is the same device: a read test runs on loop1.
    pick_rand_read(&mut app);
    assert!(screen(&app, 80, 25).contains("/dev/loop1"));
    let cmds = keys(&mut app, "r");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(req.target.to_str(), Some("/dev/loop1"));
}

#[test]
fn the_test_screens_target_follows_its_device_across_a_refresh() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    pick_rand_read(&mut app);
    // The refresh comes while the Test screen is shown.
    refresh(&mut app, detached(inventory(), "loop0"));
    let s = screen(&app, 80, 25);
    assert!(s.contains("/dev/loop1"), "{s}");
    let cmds = keys(&mut app, "r");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(req.target.to_str(), Some("/dev/loop1"));
}

#[test]
fn a_vanished_device_is_said_and_nothing_moves_to_its_neighbour() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    refresh(&mut app, detached(inventory(), "loop1"));
    assert_eq!(selected(&app), None, "nothing else is chosen for the admin");
    assert!(status(&app).contains("loop1 is gone"), "{}", status(&app));
    let s = screen(&app, 80, 25);
    assert!(
        !s.lines().any(|l| l.contains('>')),
        "no > on a neighbour:\n{s}"
    );
    assert!(s.contains("loop1 is gone"), "{s}");
    // The status line fades, the screen still says it.
    tick(&mut app, 30.0);
    assert!(screen(&app, 80, 25).contains("loop1 is gone"));

    // Every key that acts on the selection refuses, with the reason.
    for k in ["s", "w", " ", "f", "h", "m"] {
        let cmds = keys(&mut app, k);
        assert!(!acts_on_a_device(&cmds), "{k:?}: {cmds:?}");
        assert!(
            !matches!(
                app.overlay,
                Some(Overlay::Scheduler { .. } | Overlay::DriveCache { .. })
            ),
            "{k:?}: {:?}",
            app.overlay
        );
        assert!(
            said(&app).contains("loop1 is gone"),
            "{k:?}: {}",
            said(&app)
        );
        app.overlay = None;
    }
    assert!(app.several.marks.is_empty(), "{:?}", app.several.marks);
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        app.screen,
        Screen::Devices,
        "Enter does not go to test nothing"
    );
    // The Test screen has no target and r starts nothing.
    pick_rand_read(&mut app);
    let s = screen(&app, 80, 25);
    assert!(s.contains("loop1 is gone"), "{s}");
    let cmds = keys(&mut app, "r");
    assert!(!acts_on_a_device(&cmds), "{cmds:?}");
    assert!(said(&app).contains("loop1 is gone"), "{}", said(&app));
    app.overlay = None;

    // Choosing a row again is the admin's choice.
    keys(&mut app, "1");
    key(&mut app, KeyCode::Up);
    assert!(selected(&app).is_some());
    assert!(!screen(&app, 80, 25).contains("loop1 is gone"));
}

#[test]
fn a_loop_device_attached_to_another_file_is_another_device() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    refresh(&mut app, reattached(inventory(), "loop1", "/tmp/other.img"));
    assert_eq!(selected(&app), None);
    assert!(status(&app).contains("loop1"), "{}", status(&app));
    let cmds = keys(&mut app, "s");
    assert!(!matches!(app.overlay, Some(Overlay::Scheduler { .. })));
    assert!(!acts_on_a_device(&cmds));
    // A device with the same dev_t but another serial is another disk, too.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "jj");
    assert_eq!(selected(&app).as_deref(), Some("vda"));
    let mut inv = inventory();
    inv.devices
        .iter_mut()
        .find(|d| d.name == "vda")
        .unwrap()
        .serial = Some("another-disk".into());
    refresh(&mut app, inv);
    assert_eq!(selected(&app), None);
    assert!(status(&app).contains("vda"), "{}", status(&app));
}

#[test]
fn marks_follow_their_devices() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j ");
    keys(&mut app, "j "); // loop1 and vda marked
    assert_eq!(app.several.marks, ["loop1", "vda"]);
    refresh(&mut app, detached(inventory(), "loop0"));
    assert_eq!(app.several.marks, ["loop1", "vda"], "a row above went");
    assert_eq!(selected(&app).as_deref(), Some("vda"));
    // loop1 comes back attached to another file: its mark does not go to that device.
    refresh(&mut app, reattached(inventory(), "loop1", "/tmp/other.img"));
    assert_eq!(app.several.marks, ["vda"]);
    assert!(status(&app).contains("loop1"), "{}", status(&app));
    let s = screen(&app, 80, 25);
    assert!(!s.contains("*loop1"), "{s}");
    // A test started now runs on the one device still marked and selected, not on loop1.
    pick_rand_read(&mut app);
    let cmds = keys(&mut app, "r");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(req.target.to_str(), Some("/dev/vda"));
}

#[test]
fn open_switch_dialogs_close_when_their_device_goes() {
    // The scheduler menu, open on loop1 while loop1 goes.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    keys(&mut app, "s");
    assert!(matches!(app.overlay, Some(Overlay::Scheduler { .. })));
    refresh(&mut app, reattached(inventory(), "loop1", "/tmp/other.img"));
    assert!(said(&app).contains("loop1 is gone"), "{}", said(&app));
    key(&mut app, KeyCode::Down);
    let cmds = key(&mut app, KeyCode::Enter);
    assert!(!acts_on_a_device(&cmds), "{cmds:?}");
    // The drive-cache dialog, the same.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    keys(&mut app, "w");
    assert!(matches!(app.overlay, Some(Overlay::DriveCache { .. })));
    refresh(&mut app, detached(inventory(), "loop1"));
    assert!(said(&app).contains("loop1 is gone"), "{}", said(&app));
    let cmds = keys(&mut app, "o");
    assert!(!acts_on_a_device(&cmds), "{cmds:?}");
    // A dialog on a device that stays is left open.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    keys(&mut app, "s");
    refresh(&mut app, detached(inventory(), "loop0"));
    assert!(
        matches!(&app.overlay, Some(Overlay::Scheduler(s)) if s.device == "loop1"),
        "{:?}",
        app.overlay
    );
}

#[test]
fn a_write_confirmation_waiting_for_a_name_is_withdrawn_when_its_device_goes() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    keys(&mut app, "2");
    key(&mut app, KeyCode::Down); // seq-write
    keys(&mut app, "r");
    assert!(matches!(app.overlay, Some(Overlay::Confirm { .. })));
    keys(&mut app, "loo");
    refresh(&mut app, reattached(inventory(), "loop1", "/tmp/other.img"));
    keys(&mut app, "p1");
    let cmds = key(&mut app, KeyCode::Enter);
    assert!(!acts_on_a_device(&cmds), "nothing written: {cmds:?}");
    assert!(said(&app).contains("loop1 is gone"), "{}", said(&app));
}

#[test]
fn retest_does_not_land_on_another_device() {
    // R after a switch on loop1, once loop1 is another device.
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060); // on loop0
    keys(&mut app, "1");
    keys(&mut app, "j");
    keys(&mut app, "s");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    app.update(Msg::SchedulerSet {
        device: "loop1".into(),
        result: Ok("mq-deadline".into()),
    });
    refresh(&mut app, reattached(inventory(), "loop1", "/tmp/other.img"));
    let cmds = keys(&mut app, "R");
    assert!(!acts_on_a_device(&cmds), "{cmds:?}");
    if let Some(Overlay::Retest { .. }) = &app.overlay {
        let cmds = keys(&mut app, "y");
        assert!(!acts_on_a_device(&cmds), "{cmds:?}");
    }
    assert!(said(&app).contains("loop1 is gone"), "{}", said(&app));

    // R (and R on Results) after a run on loop1, once loop1 is another device.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    complete_run(&mut app, "none", 512.0, 0.060); // on loop1
    refresh(&mut app, reattached(inventory(), "loop1", "/tmp/other.img"));
    let cmds = keys(&mut app, "R");
    assert!(!acts_on_a_device(&cmds), "{cmds:?}");
    assert!(said(&app).contains("loop1 is gone"), "{}", said(&app));
    app.overlay = None;
    keys(&mut app, "4");
    let cmds = keys(&mut app, "R");
    assert!(!acts_on_a_device(&cmds), "{cmds:?}");
    // A run on a device that stayed still reruns.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    complete_run(&mut app, "none", 512.0, 0.060);
    refresh(&mut app, detached(inventory(), "loop0"));
    let cmds = keys(&mut app, "R");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(req.target.to_str(), Some("/dev/loop1"));
}

/// loop0's partition loop0p1 is mounted at /tmp/dtcap/mnt in the host fixture.
fn file_target() -> Msg {
    Msg::FileTarget(Ok(Box::new(disktriage::event::FileTarget {
        device: "loop0p1".into(),
        mount: "/tmp/dtcap/mnt".into(),
        fstype: "ext4".into(),
        free: 3 << 30,
        total: 4 << 30,
        file: "/tmp/dtcap/mnt/disktriage-test-1.bin".into(),
    })))
}

#[test]
fn a_file_test_and_the_health_view_of_a_gone_device_are_withdrawn() {
    // The file dialog, open while its device goes.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "f");
    app.update(file_target());
    assert!(matches!(app.overlay, Some(Overlay::FileTarget(_))));
    refresh(&mut app, reattached(inventory(), "loop0", "/tmp/other.img"));
    assert!(said(&app).contains("loop0 is gone"), "{}", said(&app));
    let cmds = key(&mut app, KeyCode::Enter);
    assert!(!acts_on_a_device(&cmds));
    assert_eq!(app.file_target, None);
    // A file test chosen, then its device goes: no run goes to a file on the new loop0.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "f");
    app.update(file_target());
    key(&mut app, KeyCode::Enter);
    assert!(app.file_target.is_some());
    refresh(&mut app, reattached(inventory(), "loop0", "/tmp/other.img"));
    assert_eq!(app.file_target, None);
    pick_rand_read(&mut app);
    let cmds = keys(&mut app, "r");
    assert!(!acts_on_a_device(&cmds), "{cmds:?}");
    // The health view of a device that goes returns to the list and says so.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "jj"); // vda
    keys(&mut app, "h");
    assert_eq!(app.screen, Screen::Health);
    refresh(&mut app, unplugged(inventory(), "vda"));
    assert_eq!(app.screen, Screen::Devices);
    assert!(status(&app).contains("vda is gone"), "{}", status(&app));
}

/// A device nothing referred to just leaves the list: the status line keeps what the admin's
/// last action said (another user's loop device going must not hide "scheduler now ...").
#[test]
fn an_unrelated_device_going_leaves_the_status_alone() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    keys(&mut app, "s");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    app.update(Msg::SchedulerSet {
        device: "loop1".into(),
        result: Ok("mq-deadline".into()),
    });
    assert!(status(&app).contains("scheduler now"), "{}", status(&app));
    refresh(&mut app, detached(inventory(), "loop0"));
    assert!(status(&app).contains("scheduler now"), "{}", status(&app));
    assert_eq!(selected(&app).as_deref(), Some("loop1"));
}

/// Every command that acts on a device leaves the app with the identity of the device on the
/// screen (`App::stamp`, as the TUI's loop hands it to the executor): the executor refuses it
/// when the name holds another device by the time it acts (root_identity.rs tests that on
/// real loop devices).
#[test]
fn commands_carry_the_identity_of_the_device_on_the_screen() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    keys(&mut app, "s");
    key(&mut app, KeyCode::Down);
    let cmds: Vec<Cmd> = key(&mut app, KeyCode::Enter)
        .into_iter()
        .map(|c| app.stamp(c))
        .collect();
    let want = inventory().chosen("loop1").unwrap();
    assert!(
        want.dev.is_some() && want.backing_file.is_some(),
        "{want:?}"
    );
    let [Cmd::SetScheduler { device, chosen, .. }] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(device, "loop1");
    assert_eq!(chosen.as_ref(), Some(&want));
    // A run on the Test screen: its request names the device chosen.
    pick_rand_read(&mut app);
    let cmds: Vec<Cmd> = keys(&mut app, "r")
        .into_iter()
        .map(|c| app.stamp(c))
        .collect();
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(req.device.as_ref(), Some(&want));
    // The identity taken before loop1 was re-attached to another file is refused against
    // the device under the name now.
    let now = reattached(inventory(), "loop1", "/tmp/other.img");
    let new = now.chosen("loop1").unwrap();
    assert!(
        want.refusal(Some(&new))
            .is_some_and(|w| w.contains("loop1 is no longer the device you chose")),
        "{:?}",
        want.refusal(Some(&new))
    );
}

/// After a scan, a triage or a flush check of loop0, its name holds another device: `h` on
/// that screen says so instead of showing the other device's health.
#[test]
fn h_after_a_check_refuses_a_device_reattached_under_its_name() {
    use disktriage::event::{FlushDone, FlushMsg};
    use disktriage::flow::{FLUSHCHECK_JOB, SCAN_JOB, ScanMsg};
    // The flush check.
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Char('F'));
    keys(&mut app, "loop0");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.screen, Screen::Flush);
    app.update(Msg::job(
        FLUSHCHECK_JOB,
        FlushMsg::Finished(Box::new(FlushDone {
            verdict: "unknown".into(),
            ..FlushDone::default()
        })),
    ));
    refresh(&mut app, reattached(inventory(), "loop0", "/tmp/other.img"));
    assert!(key(&mut app, KeyCode::Char('h')).is_empty());
    assert_ne!(app.screen, Screen::Health, "another device's health shown");
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("/tmp/other.img")),
        "{:?}",
        app.overlay
    );
    // The same device still there: h opens its health.
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Char('F'));
    keys(&mut app, "loop0");
    key(&mut app, KeyCode::Enter);
    app.update(Msg::job(FLUSHCHECK_JOB, FlushMsg::Finished(Box::default())));
    refresh(&mut app, inventory());
    key(&mut app, KeyCode::Char('h'));
    assert_eq!(app.screen, Screen::Health);

    // The scan: stopped, then the name holds another device.
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Char('b'));
    assert_eq!(app.screen, Screen::Scan);
    key(&mut app, KeyCode::Char('x'));
    app.update(Msg::job(SCAN_JOB, ScanMsg::Refused("stopped".into())));
    app.overlay = None;
    refresh(&mut app, reattached(inventory(), "loop0", "/tmp/other.img"));
    key(&mut app, KeyCode::Char('h'));
    assert_ne!(
        app.screen,
        Screen::Health,
        "another device's health shown after a scan"
    );
}

#[test]
fn under_a_captured_tree_every_switch_key_says_why_and_does_nothing() {
    let why = "--root /srv/capture is a captured tree, read-only";
    // s and w on Devices, P anywhere but Test, F the flush check (it switches the cache).
    for k in ["s", "w", "P", "F"] {
        let mut app = app_with("host-loop-zram", true);
        app.captured_root = Some(why.to_string());
        keys(&mut app, "j");
        let cmds = keys(&mut app, k);
        assert!(cmds.is_empty(), "{k}: {cmds:?}");
        assert!(
            app.overlay.is_none() || said(&app).contains(why),
            "{k}: {:?}",
            app.overlay
        );
        assert!(said(&app).contains(why), "{k}: {}", said(&app));
    }
    // The same keys on the running system open their dialogs.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    keys(&mut app, "s");
    assert!(matches!(app.overlay, Some(Overlay::Scheduler { .. })));
}
