//! The TUI's flush check on real loop devices (root): the worker runs the real timing check
//! on the device the admin chose, refuses one re-attached under its name without writing a
//! byte, refuses without the right typed name; and in tmux at 80x25 (TERM=linux) `F` on
//! Devices, the typed name and the verdict with its figures, recorded in the history.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::Duration;

use crate::common;
use crate::common::{LoopDev, root_or_skip, scratch};
use crate::tui_tmux::Tmux;
use disktriage::event::{FlushMsg, Msg};
use disktriage::flow::{FlushJob, real_flush_checker as real_checker};
use disktriage::history::History;
use disktriage::sys::SysRoot;
use disktriage::tui::run_here;

fn shm_scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("disktriage-flush-tui-")
        .tempdir_in("/dev/shm")
        .unwrap()
}

/// The first MiB of the device.
fn head(path: &Path) -> Vec<u8> {
    let out = std::process::Command::new("dd")
        .args([
            &format!("if={}", path.display()),
            "bs=1M",
            "count=1",
            "iflag=direct",
            "status=none",
        ])
        .output()
        .unwrap();
    out.stdout
}

/// Writes `byte` over the device's first MiB (the test's own device), durably.
fn fill(path: &Path, byte: u8) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all(&vec![byte; 1 << 20]).unwrap();
    f.sync_all().unwrap();
}

/// The worker's messages until its end, each taken out of what the app hears.
fn run_job(job: FlushJob) -> Vec<FlushMsg> {
    let (tx, rx) = mpsc::channel();
    run_here(job.with(real_checker()), &AtomicBool::new(false), &tx);
    drop(tx);
    rx.try_iter()
        .map(|m| match m {
            Msg::Job(j) => j.take().expect("a flush check's message"),
            other => panic!("{other:?}"),
        })
        .collect()
}

fn job(dev: &LoopDev, typed: &str, journal: &Path, history: Option<History>) -> FlushJob {
    FlushJob {
        device: dev.name.clone(),
        path: dev.path.clone(),
        confirmation: typed.into(),
        chosen: SysRoot::host().inventory().unwrap().chosen(&dev.name),
        journal_dir: Some(journal.to_path_buf()),
        history,
        width: 78,
        interval: disktriage::tui::INTERVAL,
    }
}

#[test]
fn root_flush_worker_checks_the_chosen_device_and_records_it() {
    if !root_or_skip("root_flush_worker_checks_the_chosen_device_and_records_it") {
        return;
    }
    let dir = shm_scratch();
    let journal = scratch();
    let dev = LoopDev::new(dir.path(), 128 << 20, 512);
    let history = History::new(dir.path().join("history"));
    let msgs = run_job(job(&dev, &dev.name, journal.path(), Some(history.clone())));
    let Some(FlushMsg::Finished(done)) = msgs.last() else {
        panic!("{msgs:?}")
    };
    // A loop device has no drive of its own: where its flushes go, nothing judged, no power
    // cut offered.
    assert_eq!(done.verdict, "unknown", "{done:?}");
    assert!(!done.next_step.contains("power-cut"), "{done:?}");
    assert!(done.next_step.contains("nothing to judge here"), "{done:?}");
    assert!(
        done.lines
            .iter()
            .any(|l| l.contains("O_DSYNC 4 KiB commits")),
        "{done:?}"
    );
    assert!(
        done.lines
            .iter()
            .all(|l| !l.trim_start().starts_with("Verdict:")),
        "the verdict is the screen's own line: {done:?}"
    );
    assert!(
        done.lines.iter().all(|l| l.chars().count() <= 78),
        "{done:?}"
    );
    // Progress per interval and phase, never per write (600 writes and more here).
    let progress = msgs
        .iter()
        .filter(|m| matches!(m, FlushMsg::Progress { .. }))
        .count();
    assert!((1..=40).contains(&progress), "{progress} progress messages");
    let loaded = history.load().unwrap();
    assert_eq!(loaded.entries.len(), 1, "{:?}", loaded.entries);
    assert_eq!(loaded.entries[0].test, "flushcheck");
    assert_eq!(loaded.entries[0].flush.as_ref().unwrap().verdict, "unknown");
}

#[test]
fn root_flush_worker_refuses_a_reattached_device_and_a_wrong_name_writing_nothing() {
    if !root_or_skip(
        "root_flush_worker_refuses_a_reattached_device_and_a_wrong_name_writing_nothing",
    ) {
        return;
    }
    let dir = shm_scratch();
    let journal = scratch();
    let mut dev = LoopDev::new(dir.path(), 64 << 20, 512);
    fill(&dev.path, 0xA5);
    let wrong = job(&dev, "loop999", journal.path(), None);
    let before = head(&dev.path);
    let msgs = run_job(wrong);
    let [FlushMsg::Failed(why)] = msgs.as_slice() else {
        panic!("{msgs:?}")
    };
    assert!(why.contains(&dev.name), "{why}");
    assert_eq!(head(&dev.path), before, "a wrong name wrote");

    // The admin chose this device; another image is under its name by the time it runs.
    let chosen = job(&dev, &dev.name, journal.path(), None);
    let other = common::sparse_image(dir.path(), "other.img", 64 << 20);
    dev.reattach(&other);
    fill(&dev.path, 0x5A);
    let before = head(&dev.path);
    let msgs = run_job(chosen);
    let [FlushMsg::Failed(why)] = msgs.as_slice() else {
        panic!("the check ran on another device: {msgs:?}")
    };
    assert!(why.contains("no longer the device you chose"), "{why}");
    assert_eq!(head(&dev.path), before, "the other device was written");
}

#[test]
fn root_tmux_f_checks_the_selected_loop_device_and_shows_the_verdict() {
    let Some(_one_at_a_time) = crate::tui_tmux::prerequisites(
        "root_tmux_f_checks_the_selected_loop_device_and_shows_the_verdict",
    ) else {
        return;
    };
    let dir = shm_scratch();
    let journal = scratch();
    let dev = LoopDev::new(dir.path(), 128 << 20, 512);
    let history = dir.path().join("history");
    let tmux = Tmux {
        socket: format!("disktriage-test-flush-{}", std::process::id()),
    };
    tmux.start(
        &["TERM=linux"],
        &format!(
            "--journal-dir {} --history-dir {}",
            journal.path().display(),
            history.display()
        ),
    );
    tmux.select(&dev.name);
    tmux.keys(&["F"]);
    tmux.wait_for(
        &format!("Type the device name ({})", dev.name),
        Duration::from_secs(5),
        "the name is asked",
    );
    tmux.keys(&[dev.name.as_str(), "Enter"]);
    // The figures' last line ends the frame: once it is on the pane, the frame is whole.
    let s = tmux.wait_for("Floor per commit", Duration::from_secs(60), "the verdict");
    assert!(s.contains("Verdict: timing cannot tell (UNKNOWN)"), "{s}");
    assert!(s.contains(&format!("Flush check of {}", dev.name)), "{s}");
    assert!(s.contains("Next: nothing to judge here"), "{s}");
    assert!(s.contains("O_DSYNC 4 KiB commits"), "{s}");
    tmux.keys(&["h"]);
    tmux.wait_for(
        &format!("Health of {}", dev.name),
        Duration::from_secs(5),
        "the health view of the same device",
    );
    tmux.keys(&["q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "after quit");
    let text = std::fs::read_to_string(history.join("history.jsonl")).unwrap();
    assert!(text.contains("\"test\":\"flushcheck\""), "{text}");
}
