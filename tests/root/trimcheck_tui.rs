//! The TRIM check as the screen runs it, on loop devices over files (a discard punches a
//! hole: the range reads zeros): `T` on Devices in the real program at 80x25 (tmux), the
//! name typed, the verdict read, every byte back and the journal gone, the verdict in the
//! history; the screen's order (`TrimOrder`, the device stamped as chosen) refusing another
//! device re-attached under the chosen name before any write; and a check stopped mid-way
//! (`x`, leaving, quitting) putting back what it wrote and leaving no record.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::common::{self, LoopDev};
use disktriage::flow::{TrimMsg, TrimOrder, TrimStep};
use disktriage::history::{History, TRIM_TEST};

fn sha(dev: &LoopDev) -> String {
    common::sh("sha256sum", &[dev.path_str()])[..64].to_string()
}

fn fill_random(dev: &LoopDev, mib: u64) {
    common::sh(
        "dd",
        &[
            "if=/dev/urandom",
            &format!("of={}", dev.path_str()),
            "bs=1M",
            &format!("count={mib}"),
            "oflag=direct",
            "status=none",
        ],
    );
}

/// A directory on a RAM file system: the loop devices' images are on the disk /tmp is on,
/// and a journal there would share it (refused, rightly).
fn ram_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("disktriage-trim-tui.")
        .tempdir_in("/dev/shm")
        .expect("a directory in /dev/shm")
}

/// The history's TRIM check verdicts, oldest first.
fn trim_verdicts(history: &Path) -> Vec<(String, String)> {
    History::new(history)
        .load()
        .map(|l| {
            l.entries
                .iter()
                .filter(|e| e.test == TRIM_TEST)
                .filter_map(|e| e.check.as_ref())
                .map(|c| (c.verdict.clone(), c.sentence.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// `T` on Devices at 80x25 on the Linux console's terminal: the typed name, the steps, the
/// verdict of the CLI's report, every byte as before, the journal gone, the verdict in the
/// history and in `disktriage history`.
#[test]
fn root_tmux_t_checks_a_loop_device_and_puts_every_byte_back() {
    let Some(_one_at_a_time) =
        crate::tui_tmux::prerequisites("root_tmux_t_checks_a_loop_device_and_puts_every_byte_back")
    else {
        return;
    };
    let dir = common::scratch();
    let ram = ram_dir();
    let dev = LoopDev::new(dir.path(), 64 << 20, 512);
    fill_random(&dev, 64);
    let before = sha(&dev);
    let name = dev.name.clone();
    let history = ram.path().join("history");
    let journal = history.join(format!("trimcheck-{name}.journal"));
    let tmux = crate::tui_tmux::Tmux {
        socket: format!("disktriage-test-trim-{}", std::process::id()),
    };
    tmux.start(
        &["TERM=linux"],
        &format!(
            "--journal-dir {} --history-dir {}",
            ram.path().join("changes").display(),
            history.display()
        ),
    );
    tmux.select(&name);
    tmux.keys(&["T"]);
    let s = tmux.wait_for(
        &format!("Type the device name ({name})"),
        Duration::from_secs(5),
        "the name is asked",
    );
    assert!(
        s.contains(&format!("OVERWRITES 4 MiB near the middle of {name}")),
        "{s}"
    );
    // The path is long here: the dialog wraps it.
    assert!(s.contains(&format!("history/trimcheck-{name}.")), "{s}");
    tmux.keys(&[name.as_str(), "Enter"]);
    // The report's last line ends the frame: once it is on the pane, the frame is whole.
    let s = tmux.wait_for("Took ", Duration::from_secs(60), "the verdict");
    println!("the final frame:\n{s}");
    for said in [
        "Verdict: discard works, reads zeros",
        "Claim      nothing promised (no drive to ask: a loop device)",
        "Read back  zeros",
        "Verdict    discard works, reads zeros",
        "8,192 sectors written back, 8,192 read back as saved",
    ] {
        assert!(s.contains(said), "{said}: {s}");
    }
    assert!(!s.contains("did not finish"), "{s}");
    tmux.keys(&["q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "after quit");
    assert_eq!(sha(&dev), before, "every byte is back");
    assert!(!journal.exists(), "the journal goes once all is back");
    assert_eq!(
        trim_verdicts(&history),
        vec![(
            "works".to_string(),
            "discard works, reads zeros".to_string()
        )],
        "the verdict is in the history"
    );
    let out = common::disktriage(&[
        "history",
        "--history-dir",
        history.to_str().unwrap(),
        dev.path_str(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("trimcheck"), "{text}");
    assert!(
        text.contains("verdict works: discard works, reads zeros"),
        "{text}"
    );
}

/// Runs the screen's order through the runner's path, as the screen would, with the
/// history in `history`; `stop_at` sets the stop flag once that step is heard (as `x`,
/// leaving or quitting do). The messages the screen hears.
fn run_order(order: TrimOrder, history: &Path, stop_at: Option<TrimStep>) -> Vec<TrimMsg> {
    use disktriage::flow::{JobEnv, Order};
    use disktriage::sys::{LinuxDrives, SysRoot};
    let mut env = JobEnv::new(
        SysRoot::host(),
        std::sync::Arc::new(LinuxDrives::new(SysRoot::host())),
        disktriage::tui::INTERVAL,
    );
    env.history = Some(History::new(history));
    let job = order.job(&env);
    let stop = AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel();
    let mut heard = Vec::new();
    std::thread::scope(|s| {
        let runner = s.spawn(|| {
            let tx = tx;
            let _outcome = disktriage::tui::run_here(job, &stop, &tx);
        });
        for m in rx.iter() {
            let disktriage::event::Msg::Job(j) = m else {
                panic!("{m:?}")
            };
            let m: TrimMsg = j.take().expect("a TRIM check's message");
            if let (Some(at), TrimMsg::Step(step)) = (stop_at, &m)
                && *step == at
            {
                stop.store(true, Ordering::SeqCst);
            }
            heard.push(m);
        }
        runner.join().unwrap();
    });
    heard
}

fn order(dev: &LoopDev, typed: &str, journal: &Path) -> TrimOrder {
    TrimOrder {
        device: dev.name.clone(),
        path: dev.path.clone(),
        confirmation: typed.into(),
        journal: journal.to_path_buf(),
        chosen: disktriage::sys::SysRoot::host()
            .inventory()
            .unwrap()
            .chosen(&dev.name),
    }
}

/// A wrong name, and another device under the chosen name by the time it runs, are refused
/// before any write (no journal made, nothing recorded), in the words the screen shows.
#[test]
fn root_the_screens_trimcheck_refuses_a_wrong_name_and_another_device_writing_nothing() {
    if !common::root_or_skip("trimcheck_tui::root_the_screens_trimcheck_refuses") {
        return;
    }
    let dir = common::scratch();
    let ram = ram_dir();
    let history = ram.path().join("history");
    let journal = ram.path().join("trim.journal");
    let mut dev = LoopDev::new(dir.path(), 64 << 20, 512);
    fill_random(&dev, 64);
    let before = sha(&dev);
    let msgs = run_order(order(&dev, "loop999", &journal), &history, None);
    let [TrimMsg::Failed(why)] = msgs.as_slice() else {
        panic!("{msgs:?}")
    };
    assert!(why.contains(&dev.name), "{why}");
    assert_eq!(sha(&dev), before, "a wrong name wrote");

    // The admin chose this device; another image is under its name by the time it runs.
    let chosen = order(&dev, &dev.name, &journal);
    let other = common::sparse_image(dir.path(), "other.img", 64 << 20);
    dev.reattach(&other);
    let before = sha(&dev);
    let msgs = run_order(chosen, &history, None);
    let [TrimMsg::Failed(why)] = msgs.as_slice() else {
        panic!("the check ran on another device: {msgs:?}")
    };
    assert!(why.contains("no longer the device you chose"), "{why}");
    assert_eq!(sha(&dev), before, "the other device was written");
    assert!(!journal.exists());
    assert!(trim_verdicts(&history).is_empty(), "a refusal is recorded");
}

/// Stopped once the pattern is being written (the screen's `x`, leaving it, quitting): what
/// was written is put back, the journal goes, and the stopped check is not in the history;
/// the same order run to its end is.
#[test]
fn root_a_stopped_screen_check_puts_back_and_is_not_recorded() {
    if !common::root_or_skip("trimcheck_tui::root_a_stopped_screen_check") {
        return;
    }
    let dir = common::scratch();
    let ram = ram_dir();
    let history = ram.path().join("history");
    let journal = ram.path().join("trim.journal");
    let dev = LoopDev::new(dir.path(), 64 << 20, 512);
    fill_random(&dev, 64);
    let before = sha(&dev);
    let second_mib = TrimStep::SaveAndWrite {
        done: 1 << 20,
        of: 4 << 20,
    };
    let msgs = run_order(order(&dev, &dev.name, &journal), &history, Some(second_mib));
    let Some(TrimMsg::Done(run)) = msgs.last() else {
        panic!("{msgs:?}")
    };
    assert_eq!(run.end, disktriage::trim::TrimEnd::Stopped, "{msgs:?}");
    let back = run.put_back.as_ref().expect("what was written is put back");
    assert!(back.sectors >= 2048, "{back:?}");
    assert_eq!(back.as_saved, back.sectors, "{back:?}");
    assert!(
        msgs.iter()
            .any(|m| matches!(m, TrimMsg::Step(TrimStep::PutBack)))
    );
    assert_eq!(sha(&dev), before, "every byte is back");
    assert!(!journal.exists());
    assert!(
        trim_verdicts(&history).is_empty(),
        "a stopped check is recorded"
    );

    let msgs = run_order(order(&dev, &dev.name, &journal), &history, None);
    let steps: Vec<&TrimStep> = msgs
        .iter()
        .filter_map(|m| match m {
            TrimMsg::Step(s) => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(
        steps.iter().skip(4).collect::<Vec<_>>(),
        [
            &&TrimStep::ReadPattern,
            &&TrimStep::Discard,
            &&TrimStep::ReadBack,
            &&TrimStep::PutBack
        ],
        "{steps:?}"
    );
    assert_eq!(sha(&dev), before);
    assert_eq!(trim_verdicts(&history).len(), 1, "{msgs:?}");
}
