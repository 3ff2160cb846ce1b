//! The TUI's triage on real loop devices (root): the worker refuses, before it reads any, a
//! set of disks one of which is no longer the device the admin chose; it triages a loop
//! device to a report with its verdict and records it in the history; and in tmux at 80x25
//! (TERM=linux) `v` on Devices triages the selected loop device and shows its verdict line.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::Duration;

use crate::common;
use crate::common::{LoopDev, root_or_skip, scratch};
use crate::tui_tmux::Tmux;
use disktriage::event::{Msg, TriageMsg};
use disktriage::flow::{TriageJob, TriageNews, real_gatherer};
use disktriage::history::History;
use disktriage::sys::{LinuxDrives, SysRoot};
use disktriage::triage::GatherOptions;
use disktriage::tui::run_here;

/// Images in memory: the triage reads them at memory speed.
fn shm_scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("disktriage-triage-tui-")
        .tempdir_in("/dev/shm")
        .unwrap()
}

fn job(devices: &[&LoopDev], history: Option<History>) -> TriageJob {
    let inv = SysRoot::host().inventory().unwrap();
    TriageJob {
        root: SysRoot::host(),
        devices: devices.iter().map(|d| d.name.clone()).collect(),
        chosen: devices.iter().map(|d| inv.chosen(&d.name)).collect(),
        options: GatherOptions {
            bound: Duration::from_secs(20),
            quick: true,
            since: None,
        },
        drives: Arc::new(LinuxDrives::new(SysRoot::host())),
        history,
        gatherer: real_gatherer(),
    }
}

/// The triage job's own message, taken out of what the app hears.
fn news(m: Msg) -> TriageNews {
    match m {
        Msg::Job(j) => j.take().expect("a triage's message"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn root_triage_worker_refuses_all_when_one_name_holds_another_device() {
    if !root_or_skip("root_triage_worker_refuses_all_when_one_name_holds_another_device") {
        return;
    }
    let dir = shm_scratch();
    let a = LoopDev::new(dir.path(), 64 << 20, 512);
    let mut b = LoopDev::new(dir.path(), 64 << 20, 512);
    let job = job(&[&a, &b], None);
    // Another image under b's name: what the admin chose is not there any more.
    let other = common::sparse_image(dir.path(), "other.img", 64 << 20);
    b.reattach(&other);
    let (tx, rx) = mpsc::channel();
    run_here(job, &AtomicBool::new(false), &tx);
    drop(tx);
    let msgs: Vec<TriageNews> = rx.iter().map(news).collect();
    let [TriageNews::Triage(TriageMsg::Refused(why))] = msgs.as_slice() else {
        panic!("the triage went on with another device: {msgs:?}")
    };
    assert!(why.contains("no longer the device you chose"), "{why}");
}

#[test]
fn root_triage_worker_reports_a_loop_device_and_records_it() {
    if !root_or_skip("root_triage_worker_reports_a_loop_device_and_records_it") {
        return;
    }
    let dir = shm_scratch();
    let history_dir = scratch();
    let history = History::new(history_dir.path());
    let dev = LoopDev::new(dir.path(), 128 << 20, 512);
    let (tx, rx) = mpsc::channel();
    run_here(
        job(&[&dev], Some(history.clone())),
        &AtomicBool::new(false),
        &tx,
    );
    drop(tx);
    let msgs: Vec<TriageNews> = rx.iter().map(news).collect();
    let report = msgs
        .iter()
        .find_map(|m| match m {
            TriageNews::Triage(TriageMsg::Finished(r)) => Some(r),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no report: {msgs:?}"));
    assert_eq!(report.disks.len(), 1);
    assert_eq!(report.disks[0].facts.identity.device, dev.name);
    assert!(report.seconds <= 20.0 + 2.0, "{}", report.seconds);
    let loaded = history.load().unwrap();
    assert_eq!(loaded.entries.len(), 1);
    assert_eq!(loaded.entries[0].device, dev.name);
    assert!(loaded.entries[0].triage.is_some());
}

#[test]
fn root_tmux_v_triages_the_selected_loop_device_and_shows_its_verdict() {
    let Some(_one_at_a_time) = crate::tui_tmux::prerequisites(
        "root_tmux_v_triages_the_selected_loop_device_and_shows_its_verdict",
    ) else {
        return;
    };
    let dir = shm_scratch();
    let journal = scratch();
    let dev = LoopDev::new(dir.path(), 256 << 20, 512);
    let tmux = Tmux {
        socket: format!("disktriage-test-triage-{}", std::process::id()),
    };
    tmux.start(
        &["TERM=linux"],
        &format!("--journal-dir {}", journal.path().display()),
    );
    tmux.select(&dev.name);
    tmux.keys(&["v"]);
    tmux.wait_for(
        "Triage of 1 disk",
        Duration::from_secs(5),
        "the triage screen",
    );
    let s = tmux.wait_for("worst", Duration::from_secs(90), "the triage ended");
    // The verdict line of the loop device: its name, selected, then its verdict in a word.
    let line = s
        .lines()
        .find(|l| l.starts_with(&format!(">{} ", dev.name)))
        .unwrap_or_else(|| panic!("no verdict line for {}:\n{s}", dev.name));
    assert!(
        ["healthy", "SUSPECT", "FAILING", "UNKNOWN"]
            .iter()
            .any(|w| line.split_whitespace().nth(1) == Some(w)),
        "{line}"
    );
    assert!(s.contains(&format!("{} ", dev.name)), "{s}");
    tmux.keys(&["h"]);
    tmux.wait_for(
        &format!("Health of {}", dev.name),
        Duration::from_secs(5),
        "the health view of the same disk",
    );
    tmux.keys(&["q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "after quit");
}
