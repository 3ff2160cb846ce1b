//! The TUI's surface scan on real loop devices (root): the worker reads every block of a
//! device, refuses a device re-attached under the name the admin chose, ends with what it
//! read when the device changes under it; and in tmux at 80x25 (TERM=linux) `b` on Devices
//! scans the selected device to the end, shows every block read and the ranges, `h` opens
//! the Health view of the same disk.

use std::fs;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common;
use crate::common::{LoopDev, root_or_skip, scratch};
use crate::tui_tmux::Tmux;
use disktriage::event::{Msg, ScanUpdate};
use disktriage::flow::{SCAN_JOB, ScanMsg};
use disktriage::scan::DEFAULT_CELLS;
use disktriage::scan::Mapfile;
use disktriage::scan::Span;
use disktriage::scan::{End, Scan, ScanConfig};
use disktriage::sys::ScanDevice;
use disktriage::sys::SysRoot;

/// Images in memory: a scan reads them at memory speed.
fn shm_scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("disktriage-scan-tui-")
        .tempdir_in("/dev/shm")
        .unwrap()
}

/// The scan job's own message, taken out of what the app hears.
fn news(m: Msg) -> ScanMsg {
    match m {
        Msg::Job(j) => j.take().expect("a scan's message"),
        other => panic!("{other:?}"),
    }
}

/// Every message of a scan until its last update (or a refusal), within `timeout`.
fn until_end(rx: &mpsc::Receiver<Msg>, timeout: Duration) -> Vec<ScanMsg> {
    let deadline = Instant::now() + timeout;
    let mut out = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let msg = news(rx.recv_timeout(left).expect("the scan ends in time"));
        let end = match &msg {
            ScanMsg::Update(u) => u.end.is_some(),
            ScanMsg::Refused(_) => true,
        };
        out.push(msg);
        if end {
            return out;
        }
    }
}

fn last_update(msgs: &[ScanMsg]) -> &ScanUpdate {
    match msgs.last() {
        Some(ScanMsg::Update(u)) => u,
        other => panic!("{other:?}"),
    }
}

#[test]
fn root_scan_worker_reads_every_block_of_the_chosen_loop_device() {
    if !root_or_skip("root_scan_worker_reads_every_block_of_the_chosen_loop_device") {
        return;
    }
    let dir = shm_scratch();
    let dev = LoopDev::new(dir.path(), 256 << 20, 512);
    let chosen = SysRoot::host().inventory().unwrap().chosen(&dev.name);
    assert!(chosen.is_some());
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let job = disktriage::flow::ScanJob {
        device: dev.name.clone(),
        path: dev.path.clone(),
        chosen,
    };
    let worker = std::thread::spawn(move || disktriage::tui::run_here(job, &stop, &tx));
    let msgs = until_end(&rx, Duration::from_secs(60));
    worker.join().unwrap();
    let last = last_update(&msgs);
    assert_eq!(last.end, Some(End::Finished));
    assert_eq!(last.done, 256 << 20);
    assert_eq!(last.bytes_read, 256 << 20);
    assert!(last.errors.is_empty() && last.timeouts.is_empty());
    assert!(
        last.verdict
            .as_deref()
            .unwrap()
            .starts_with("every block read")
    );
}

#[test]
fn root_scan_worker_refuses_a_device_reattached_under_the_chosen_name() {
    if !root_or_skip("root_scan_worker_refuses_a_device_reattached_under_the_chosen_name") {
        return;
    }
    let dir = shm_scratch();
    let mut dev = LoopDev::new(dir.path(), 64 << 20, 512);
    let chosen = SysRoot::host().inventory().unwrap().chosen(&dev.name);
    assert!(chosen.is_some());
    // Another image under the same name: what the admin chose is not there any more.
    let other = common::sparse_image(dir.path(), "other.img", 64 << 20);
    dev.reattach(&other);
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let job = disktriage::flow::ScanJob {
        device: dev.name.clone(),
        path: dev.path.clone(),
        chosen,
    };
    let worker = std::thread::spawn(move || disktriage::tui::run_here(job, &stop, &tx));
    let msgs = until_end(&rx, Duration::from_secs(20));
    worker.join().unwrap();
    let [ScanMsg::Refused(why)] = msgs.as_slice() else {
        let ends: Vec<_> = msgs
            .iter()
            .map(|m| match m {
                ScanMsg::Update(u) => format!("read {} bytes, end {:?}", u.done, u.end),
                other => format!("{other:?}"),
            })
            .collect();
        panic!("the scan started on another device: {ends:?}")
    };
    assert!(why.contains("no longer the device you chose"), "{why}");
    assert!(why.contains("other.img"), "{why}");
}

#[test]
fn root_scan_worker_ends_with_what_it_read_when_the_device_changes_under_it() {
    if !root_or_skip("root_scan_worker_ends_with_what_it_read_when_the_device_changes_under_it") {
        return;
    }
    let dir = shm_scratch();
    let size: u64 = 1 << 30;
    let dev = LoopDev::new(dir.path(), size, 512);
    // Small reads, so the scan is still going when the device shrinks.
    let mut reader = ScanDevice::open(&dev.path).unwrap();
    reader.set_block(64 << 10).unwrap();
    let scan = Scan::new(
        ScanConfig {
            domain: Span::new(0, size),
            block: 64 << 10,
            sector: 512,
            slow: Duration::from_millis(150),
            timeout: Duration::from_secs(3),
            retry: false,
            map_cells: DEFAULT_CELLS,
        },
        Mapfile::new(size),
    );
    let (tx, rx) = mpsc::channel();
    let stop = AtomicBool::new(false);
    let image = dev.image.clone();
    let path = dev.path_str().to_string();
    let msgs = std::thread::scope(|s| {
        s.spawn(|| {
            let started = Instant::now();
            disktriage::tui::in_context(SCAN_JOB, &stop, &tx, Duration::from_millis(50), |ctx| {
                disktriage::flow::drive_scan(dev.name.clone(), scan, &mut reader, ctx, &mut || {
                    started.elapsed()
                })
            });
        });
        // The first update: the scan reads; then the image shrinks and the device follows.
        let first = news(rx.recv_timeout(Duration::from_secs(20)).unwrap());
        assert!(
            matches!(&first, ScanMsg::Update(u) if u.end.is_none()),
            "{first:?}"
        );
        fs::OpenOptions::new()
            .write(true)
            .open(&image)
            .unwrap()
            .set_len(128 << 20)
            .unwrap();
        common::sh("losetup", &["-c", &path]);
        until_end(&rx, Duration::from_secs(120))
    });
    let last = last_update(&msgs);
    assert!(matches!(&last.end, Some(End::Gone(_))), "{:?}", last.end);
    assert!(last.done < size, "{}", last.done);
    assert!(
        last.errors.is_empty(),
        "no bad sector invented: {:?}",
        last.errors
    );
}

// ---------------------------------------------------------------------------------------
// In tmux
// ---------------------------------------------------------------------------------------

#[test]
fn root_tmux_b_scans_the_selected_loop_device_to_the_end_and_lists_the_ranges() {
    let Some(_one_at_a_time) = crate::tui_tmux::prerequisites(
        "root_tmux_b_scans_the_selected_loop_device_to_the_end_and_lists_the_ranges",
    ) else {
        return;
    };
    let dir = shm_scratch();
    let journal = scratch();
    let dev = LoopDev::new(dir.path(), 512 << 20, 512);
    let tmux = Tmux {
        socket: format!("disktriage-test-scan-{}", std::process::id()),
    };
    tmux.start(
        &["TERM=linux"],
        &format!("--journal-dir {}", journal.path().display()),
    );
    tmux.select(&dev.name);
    tmux.keys(&["b"]);
    tmux.wait_for(
        &format!("Surface scan of {}", dev.name),
        Duration::from_secs(5),
        "the scan screen",
    );
    tmux.wait_for("finished", Duration::from_secs(120), "the scan finished");
    // The ranges view is the end of the frame that says "finished": once it is on the pane,
    // the frame is whole (a capture taken while the terminal is still being drawn shows the
    // top of the new frame over the bottom of the old, as CI once saw).
    let s = tmux.wait_for(
        "0 unreadable, 0 slow",
        Duration::from_secs(5),
        "the ranges view",
    );
    assert!(
        s.contains("512 MiB of 512 MiB") || s.contains("512.0 MiB of 512.0 MiB"),
        "{s}"
    );
    assert!(s.contains("every block read"), "{s}");
    // Every cell of the map read: no blank left inside its box.
    let map_rows: Vec<&str> = s
        .lines()
        .skip_while(|l| !l.starts_with("┌ Map"))
        .skip(1)
        .take_while(|l| l.starts_with('│'))
        .collect();
    assert!(!map_rows.is_empty(), "{s}");
    assert!(
        map_rows.iter().all(|r| !r.trim_matches('│').contains(' ')),
        "a cell not read:\n{s}"
    );
    tmux.keys(&["h"]);
    tmux.wait_for(
        &format!("Health of {}", dev.name),
        Duration::from_secs(5),
        "the health view of the same disk",
    );
    tmux.keys(&["q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "after quit");
}

#[test]
fn root_tmux_a_scan_stopped_by_quitting_is_in_the_history_as_stopped() {
    let Some(_one_at_a_time) = crate::tui_tmux::prerequisites(
        "root_tmux_a_scan_stopped_by_quitting_is_in_the_history_as_stopped",
    ) else {
        return;
    };
    let dir = shm_scratch();
    let journal = scratch();
    // Sparse and large: the scan is still reading when the program is quit.
    let dev = LoopDev::new(dir.path(), 64 << 30, 512);
    let history = dir.path().join("history");
    let tmux = Tmux {
        socket: format!("disktriage-test-scan-quit-{}", std::process::id()),
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
    tmux.keys(&["b"]);
    tmux.wait_for(
        &format!("Surface scan of {}", dev.name),
        Duration::from_secs(5),
        "the scan screen",
    );
    std::thread::sleep(Duration::from_secs(2));
    // q, and q again to confirm quitting while the scan runs.
    tmux.keys(&["q", "q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(20), "after quit");
    let text = std::fs::read_to_string(history.join("history.jsonl"))
        .unwrap_or_else(|e| panic!("no history written: {e}"));
    let scans: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["test"] == "surface-scan")
        .collect();
    assert_eq!(scans.len(), 1, "{text}");
    let e = &scans[0];
    assert_eq!(e["device"], dev.name.as_str(), "{e}");
    assert_eq!(e["stopped"], true, "{e}");
    assert_eq!(e["scan"]["end"], "stopped", "{e}");
    let read = e["scan"]["bytes_read"].as_u64().unwrap();
    assert!(read > 0 && read < 64 << 30, "read part of it: {e}");
}
