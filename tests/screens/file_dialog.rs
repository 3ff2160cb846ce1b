//! The `f` file-target dialog on Devices: the default size of the new test file fits the
//! free space the dialog shows, the Test screen shows that size, and a run with the default
//! region creates a file of it. Driven through `App::update` without a terminal.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use common::tui::*;
use disktriage::app::Screen;
use disktriage::event::{Cmd, Msg};
use ratatui::crossterm::event::KeyCode;

fn file_target(free: u64) -> Box<disktriage::event::FileTarget> {
    Box::new(disktriage::event::FileTarget {
        device: "loop0p1".into(),
        mount: "/tmp/dtcap/mnt".into(),
        fstype: "ext4".into(),
        free,
        total: 1 << 30,
        file: "/tmp/dtcap/mnt/disktriage-test-1.bin".into(),
    })
}

#[test]
fn the_default_region_fits_the_free_space_the_dialog_shows() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "f");
    // 600 MiB free: a 1 GiB file cannot be the default.
    let free: u64 = 600 << 20;
    app.update(Msg::FileTarget(Ok(file_target(free))));
    let s = screen(&app, 80, 25);
    assert!(s.contains("free space 600.0 MiB of 1.0 GiB"), "{s}");
    let dialog = screen(&app, 132, 43);
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.screen, Screen::Tests);
    // seq-read, its region left at its default: it runs, on a file that fits.
    app.picker_test = disktriage::app::index_of(disktriage::bench::TestName::SeqRead);
    let s = screen(&app, 80, 25);
    assert!(!s.contains("1.0 GiB (the new file)"), "{s}");
    let cmds = keys(&mut app, "r");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?} {:?}", app.overlay)
    };
    let size = disktriage::bench::test_file_size(&req.params);
    assert!(size <= free, "a {size}-byte file in {free} bytes free");
    assert!(size >= free / 2, "{size}: most of the free space is used");
    // The dialog and the Test screen said that size.
    let offered = format!("{} unless set", disktriage::model::Bytes(size).iec());
    assert!(dialog.contains(&offered), "{offered}: {dialog}");
    let shown = format!("{} (the new file)", disktriage::model::Bytes(size).iec());
    keys(&mut app, "2");
    let s = screen(&app, 80, 25);
    assert!(s.contains(&shown), "{shown}: {s}");
}

#[test]
fn with_room_the_default_stays_1_gib() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "f");
    app.update(Msg::FileTarget(Ok(file_target(3 << 30))));
    let s = screen(&app, 80, 25);
    assert!(s.contains("1.0 GiB unless set"), "{s}");
    key(&mut app, KeyCode::Enter);
    app.picker_test = disktriage::app::index_of(disktriage::bench::TestName::SeqRead);
    let cmds = keys(&mut app, "r");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?} {:?}", app.overlay)
    };
    assert_eq!(disktriage::bench::test_file_size(&req.params), 1 << 30);
}
