//! `Changer` and `RestoreGuard` on `FakeDrives` with a journal in a temporary directory.
//! Test code only: `changes.rs` declares this module under #[cfg(test)].

use std::sync::Arc;

use super::*;
use crate::model::{DevNum, Owner};
use crate::sys::{FakeDevice, FakeDrives, process};

struct Lab {
    drives: Arc<FakeDrives>,
    dir: tempfile::TempDir,
}

impl Lab {
    fn new() -> Self {
        let drives = FakeDrives::new()
            .with(FakeDevice::new("sda", Transport::Sata))
            .with(FakeDevice::new("nvme0n1", Transport::Nvme))
            .with(FakeDevice::new("loop0", Transport::Loop).without_cache_control());
        Lab {
            drives: Arc::new(drives),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// A changer acting as `pid` (a pid above pid_max is never alive).
    fn changer_as(&self, pid: u32, lifetime: Lifetime) -> Changer {
        let owner = if pid == 0 {
            process::current_owner()
        } else {
            Owner { pid, start_time: 1 }
        };
        Changer::new(
            self.drives.clone(),
            Journal::open_as(self.dir.path(), owner).unwrap(),
            lifetime,
        )
    }

    /// A single-shot command (gone by the time anyone restores).
    fn cli(&self) -> Changer {
        self.changer_as(99_999_001, Lifetime::Persisted)
    }

    fn dev(&self, name: &str) -> BlockDevice {
        self.drives.device(name).unwrap()
    }

    fn cache(&self, name: &str) -> Option<bool> {
        self.drives.drive_cache(&self.dev(name)).unwrap().enabled
    }

    fn sched(&self, name: &str) -> String {
        self.drives
            .scheduler(&self.dev(name))
            .unwrap()
            .active
            .unwrap()
    }

    fn entries(&self) -> Vec<JournalEntry> {
        Journal::open_as(self.dir.path(), process::current_owner())
            .unwrap()
            .entries()
            .unwrap()
    }
}

#[test]
fn cache_off_is_journaled_first_and_read_back() {
    let lab = Lab::new();
    let c = lab.cli();
    let change = c.set_write_cache(&lab.dev("sda"), false, false).unwrap();
    assert!(change.took_effect());
    assert_eq!(change.before.enabled, Some(true));
    assert_eq!(change.after.enabled, Some(false));
    assert_eq!(change.kernel_after, Some(KernelWriteCache::WriteThrough));
    assert!(matches!(
        change.journal,
        JournalNote::Recorded {
            earlier: false,
            lifetime: Lifetime::Persisted,
            ..
        }
    ));
    let e = lab.entries();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].original, Setting::DriveWriteCache { enabled: true });
    assert_eq!(e[0].device.name, "sda");
    assert_eq!(
        lab.drives.set_calls(),
        ["set_drive_cache sda off"],
        "one command, after the journal entry"
    );

    // Back on: the recorded original, nothing left to restore.
    let change = c.set_write_cache(&lab.dev("sda"), true, false).unwrap();
    assert_eq!(change.journal, JournalNote::BackToOriginal);
    assert!(lab.entries().is_empty());
}

#[test]
fn the_first_original_survives_repeated_changes() {
    let lab = Lab::new();
    let c = lab.cli();
    c.set_scheduler(&lab.dev("sda"), "bfq", false).unwrap();
    let second = c.set_scheduler(&lab.dev("sda"), "kyber", false).unwrap();
    assert!(matches!(
        second.journal,
        JournalNote::Recorded { earlier: true, .. }
    ));
    let e = lab.entries();
    assert_eq!(e.len(), 1);
    assert_eq!(
        e[0].original,
        Setting::Scheduler {
            name: "mq-deadline".into()
        }
    );
    let outcomes = lab
        .cli()
        .restore(RestoreScope::All { force: false })
        .unwrap();
    assert_eq!(outcomes.len(), 1);
    assert_eq!(
        outcomes[0].result,
        RestoreResult::Restored {
            was: "kyber".into(),
            now: "mq-deadline".into()
        }
    );
    assert_eq!(lab.sched("sda"), "mq-deadline");
    assert!(lab.entries().is_empty());
}

#[test]
fn keep_records_nothing_and_drops_older_originals() {
    let lab = Lab::new();
    let c = lab.cli();
    c.set_scheduler(&lab.dev("sda"), "bfq", false).unwrap();
    let kept = c.set_scheduler(&lab.dev("sda"), "none", true).unwrap();
    assert_eq!(
        kept.journal,
        JournalNote::Kept {
            dropped: vec!["mq-deadline".into()]
        }
    );
    assert!(lab.entries().is_empty());
    assert_eq!(lab.sched("sda"), "none");
    // --keep of the value already active also drops the old original.
    c.set_write_cache(&lab.dev("sda"), false, false).unwrap();
    let kept = c.set_write_cache(&lab.dev("sda"), false, true).unwrap();
    assert_eq!(
        kept.journal,
        JournalNote::Kept {
            dropped: vec!["on".into()]
        }
    );
    assert!(lab.entries().is_empty());
}

#[test]
fn already_in_that_state_changes_nothing() {
    let lab = Lab::new();
    let change = lab
        .cli()
        .set_write_cache(&lab.dev("sda"), true, false)
        .unwrap();
    assert_eq!(change.journal, JournalNote::Unchanged);
    assert!(lab.drives.set_calls().is_empty());
    assert!(lab.entries().is_empty());
}

#[test]
fn unsupported_transport_is_an_error_without_a_journal_entry() {
    let lab = Lab::new();
    let e = lab
        .cli()
        .set_write_cache(&lab.dev("loop0"), false, false)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "drive write cache control not supported on loop"
    );
    assert!(lab.entries().is_empty());
    assert!(lab.drives.set_calls().is_empty());
}

#[test]
fn unknown_scheduler_lists_the_available_ones() {
    let lab = Lab::new();
    let e = lab
        .cli()
        .set_scheduler(&lab.dev("sda"), "cfq", false)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown I/O scheduler \"cfq\" for sda; available: none, mq-deadline, kyber, bfq"
    );
    assert!(lab.entries().is_empty(), "a refused change leaves no entry");
    assert_eq!(lab.sched("sda"), "mq-deadline");
}

#[test]
fn a_failed_change_leaves_no_entry_a_half_done_one_keeps_it() {
    let lab = Lab::new();
    lab.drives.update("sda", |d| {
        d.fail_next_set = Some(DriveError::Device {
            op: "ATA SET FEATURES".into(),
            path: "/dev/sda".into(),
            detail: "aborted".into(),
        })
    });
    let e = lab
        .cli()
        .set_write_cache(&lab.dev("sda"), false, false)
        .unwrap_err();
    assert!(matches!(e, ChangeError::Drive(_)), "{e}");
    assert!(lab.entries().is_empty());

    lab.drives.update("sda", |d| {
        d.fail_next_set_after_change = Some(DriveError::Device {
            op: "ATA FLUSH CACHE EXT".into(),
            path: "/dev/sda".into(),
            detail: "timeout".into(),
        })
    });
    let e = lab
        .cli()
        .set_write_cache(&lab.dev("sda"), false, false)
        .unwrap_err();
    assert!(matches!(e, ChangeError::Partial { .. }), "{e}");
    assert!(e.to_string().contains("disktriage restore"), "{e}");
    assert_eq!(lab.entries().len(), 1);
    assert_eq!(lab.cache("sda"), Some(false));
}

#[test]
fn a_drive_that_ignores_the_command_is_reported_as_it_is() {
    let lab = Lab::new();
    lab.drives.update("sda", |d| d.cache_ignores_set = true);
    let change = lab
        .cli()
        .set_write_cache(&lab.dev("sda"), false, false)
        .unwrap();
    assert!(!change.took_effect());
    assert_eq!(change.after.enabled, Some(true), "what the drive says");
    assert_eq!(change.journal, JournalNote::NotApplied);
    assert!(lab.entries().is_empty());
}

#[test]
fn restore_all_reverses_in_order_and_reports_each() {
    let lab = Lab::new();
    // A single-shot change, then a session (that died) changing it again.
    lab.cli()
        .set_scheduler(&lab.dev("sda"), "bfq", false)
        .unwrap();
    let dead_session = lab.changer_as(99_999_002, Lifetime::Session);
    dead_session
        .set_scheduler(&lab.dev("sda"), "none", false)
        .unwrap();
    dead_session
        .set_write_cache(&lab.dev("nvme0n1"), false, false)
        .unwrap();
    assert_eq!(lab.entries().len(), 3);

    // `restore` goes straight to the first original (not the session's bfq), one write per
    // setting, newest setting first.
    let outcomes = lab
        .cli()
        .restore(RestoreScope::All { force: false })
        .unwrap();
    let results: Vec<&RestoreResult> = outcomes.iter().map(|o| &o.result).collect();
    assert_eq!(
        results,
        [
            &RestoreResult::Restored {
                was: "off".into(),
                now: "on".into()
            },
            &RestoreResult::Restored {
                was: "none".into(),
                now: "mq-deadline".into()
            },
        ]
    );
    assert_eq!(
        lab.drives.set_calls()[3..],
        [
            "set_drive_cache nvme0n1 on",
            "set_scheduler sda mq-deadline"
        ]
    );
    assert_eq!(lab.sched("sda"), "mq-deadline");
    assert_eq!(lab.cache("nvme0n1"), Some(true));
    assert!(lab.entries().is_empty());
    // Nothing left: a second restore does nothing.
    assert!(
        lab.cli()
            .restore(RestoreScope::All { force: false })
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_session_restores_only_its_own_changes() {
    let lab = Lab::new();
    lab.cli()
        .set_scheduler(&lab.dev("sda"), "bfq", false)
        .unwrap();
    let session = lab.changer_as(0, Lifetime::Session);
    session
        .set_scheduler(&lab.dev("sda"), "kyber", false)
        .unwrap();
    session
        .set_write_cache(&lab.dev("sda"), false, false)
        .unwrap();
    let outcomes = session.restore(RestoreScope::Mine).unwrap();
    assert_eq!(outcomes.len(), 2);
    assert_eq!(lab.sched("sda"), "bfq", "what the session found");
    assert_eq!(lab.cache("sda"), Some(true));
    let left = lab.entries();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].lifetime, Lifetime::Persisted);
}

#[test]
fn restore_skips_a_live_session_unless_forced() {
    let lab = Lab::new();
    // This test process is alive: its session's entry must be left to it.
    let live = lab.changer_as(0, Lifetime::Session);
    live.set_scheduler(&lab.dev("sda"), "none", false).unwrap();
    let outcomes = lab
        .cli()
        .restore(RestoreScope::All { force: false })
        .unwrap();
    assert!(matches!(
        &outcomes[0].result,
        RestoreResult::Skipped { reason } if reason.contains("still running")
    ));
    assert_eq!(lab.entries().len(), 1);
    assert_eq!(lab.sched("sda"), "none");
    let outcomes = lab
        .cli()
        .restore(RestoreScope::All { force: true })
        .unwrap();
    assert!(matches!(outcomes[0].result, RestoreResult::Restored { .. }));
    assert_eq!(lab.sched("sda"), "mq-deadline");
}

#[test]
fn gone_or_replaced_devices_are_dropped_not_written() {
    let lab = Lab::new();
    let c = lab.cli();
    c.set_scheduler(&lab.dev("sda"), "bfq", false).unwrap();
    c.set_write_cache(&lab.dev("nvme0n1"), false, false)
        .unwrap();
    lab.drives.remove("nvme0n1");
    // sda is now another disk (replugged as another device number).
    lab.drives.update("sda", |d| {
        d.device.dev = Some(DevNum {
            major: 8,
            minor: 16,
        })
    });
    let outcomes = lab
        .cli()
        .restore(RestoreScope::All { force: false })
        .unwrap();
    assert_eq!(outcomes.len(), 2);
    for o in &outcomes {
        assert!(matches!(o.result, RestoreResult::Dropped { .. }), "{o:?}");
    }
    assert_eq!(lab.sched("sda"), "bfq", "never written to another device");
    assert!(lab.entries().is_empty());
}

#[test]
fn a_failing_restore_keeps_the_entry() {
    let lab = Lab::new();
    lab.cli()
        .set_scheduler(&lab.dev("sda"), "bfq", false)
        .unwrap();
    lab.drives.update("sda", |d| {
        d.fail_next_set = Some(DriveError::PermissionDenied {
            op: "write".into(),
            path: "/sys/block/sda/queue/scheduler".into(),
        })
    });
    let outcomes = lab
        .cli()
        .restore(RestoreScope::All { force: false })
        .unwrap();
    assert!(outcomes[0].failed());
    assert_eq!(lab.entries().len(), 1);
    // And the next attempt succeeds.
    let outcomes = lab
        .cli()
        .restore(RestoreScope::All { force: false })
        .unwrap();
    assert!(matches!(outcomes[0].result, RestoreResult::Restored { .. }));
}

#[test]
fn an_outside_change_back_to_the_original_is_already_original() {
    let lab = Lab::new();
    lab.cli()
        .set_scheduler(&lab.dev("sda"), "bfq", false)
        .unwrap();
    lab.drives
        .set_scheduler(&lab.dev("sda"), "mq-deadline")
        .unwrap();
    let outcomes = lab
        .cli()
        .restore(RestoreScope::All { force: false })
        .unwrap();
    assert_eq!(outcomes[0].result, RestoreResult::AlreadyOriginal);
    assert!(lab.entries().is_empty());
}

/// A session guard that switched sda from mq-deadline to none.
fn session_with_sda_on_none(lab: &Lab) -> (guard::RestoreGuard, SchedChange) {
    let guard = guard::RestoreGuard::new(lab.changer_as(0, Lifetime::Session), |_| {});
    let change = guard
        .changer()
        .set_scheduler(&lab.dev("sda"), "none", false)
        .unwrap();
    (guard, change)
}

#[test]
fn the_guard_restores_on_drop() {
    let lab = Lab::new();
    {
        let (guard, _) = session_with_sda_on_none(&lab);
        guard
            .changer()
            .set_write_cache(&lab.dev("sda"), false, false)
            .unwrap();
        assert_eq!(lab.entries().len(), 2);
    }
    assert_eq!(lab.sched("sda"), "mq-deadline");
    assert_eq!(lab.cache("sda"), Some(true));
    assert!(lab.entries().is_empty());
}

/// A panic hook is global: only the session thread's panic puts the settings back; another
/// thread's (the test runner's) does not.
#[test]
fn only_a_panic_of_the_sessions_own_thread_puts_settings_back() {
    let lab = Lab::new();
    let (guard, _) = session_with_sda_on_none(&lab);
    guard.install_panic_hook();
    assert!(
        std::thread::spawn(|| panic!("a worker's bug"))
            .join()
            .is_err()
    );
    assert_eq!(lab.sched("sda"), "none");
    assert!(std::panic::catch_unwind(|| panic!("the session's bug")).is_err());
    drop(std::panic::take_hook());
    assert_eq!(lab.sched("sda"), "mq-deadline");
}

#[test]
fn keep_removes_a_session_entry() {
    let lab = Lab::new();
    let (guard, change) = session_with_sda_on_none(&lab);
    let JournalNote::Recorded { id, .. } = change.journal else {
        panic!("{:?}", change.journal)
    };
    guard.changer().keep(id).unwrap();
    assert!(guard.restore_now().unwrap().is_empty());
    drop(guard);
    assert_eq!(lab.sched("sda"), "none", "kept");
}

#[test]
fn a_new_session_finds_and_restores_only_orphans() {
    let lab = Lab::new();
    // A single-shot command persisted a change: not an orphan, restore leaves it.
    lab.cli()
        .set_scheduler(&lab.dev("sda"), "bfq", false)
        .unwrap();
    // A session killed with SIGKILL (its pid is gone) left two changes.
    let killed = lab.changer_as(99_999_002, Lifetime::Session);
    killed
        .set_scheduler(&lab.dev("sda"), "kyber", false)
        .unwrap();
    killed
        .set_write_cache(&lab.dev("sda"), false, false)
        .unwrap();
    // A session that is alive (this process) changed another device.
    let live = lab.changer_as(0, Lifetime::Session);
    live.set_scheduler(&lab.dev("nvme0n1"), "none", false)
        .unwrap();

    let fresh = lab.changer_as(99_999_003, Lifetime::Session);
    let orphans = fresh.orphans().unwrap();
    assert_eq!(orphans.len(), 2, "{orphans:?}");
    assert!(orphans.iter().all(|e| e.owner.pid == 99_999_002));
    let outcomes = fresh.restore(RestoreScope::Orphans).unwrap();
    assert_eq!(outcomes.len(), 2);
    assert!(outcomes.iter().all(|o| !o.failed()));
    assert_eq!(
        lab.sched("sda"),
        "bfq",
        "back to what the killed session found"
    );
    assert_eq!(lab.cache("sda"), Some(true));
    // The persisted change and the live session's change are still recorded.
    assert_eq!(lab.entries().len(), 2);
    assert!(fresh.orphans().unwrap().is_empty());
}

/// Restore racing a single-shot change of the same setting: a change that stays is recorded.
#[test]
fn restore_racing_a_single_shot_change_loses_no_entry() {
    for round in 0..RACE_ROUNDS {
        let lab = Lab::new();
        lab.cli()
            .set_scheduler(&lab.dev("sda"), "bfq", false)
            .unwrap();
        let barrier = std::sync::Barrier::new(2);
        std::thread::scope(|s| {
            s.spawn(|| {
                let c = lab.cli();
                let dev = lab.dev("sda");
                barrier.wait();
                c.set_scheduler(&dev, "kyber", false).unwrap();
            });
            s.spawn(|| {
                let c = lab.cli();
                barrier.wait();
                c.restore(RestoreScope::All { force: false }).unwrap();
            });
        });
        let now = lab.sched("sda");
        let entries = lab.entries();
        if now == "mq-deadline" {
            assert!(entries.is_empty(), "round {round}: {entries:?}");
        } else {
            assert_eq!(now, "kyber", "round {round}");
            assert_eq!(
                entries
                    .iter()
                    .map(|e| e.original.value())
                    .collect::<Vec<_>>(),
                ["mq-deadline"],
                "round {round}: the scheduler stayed kyber and its original is lost"
            );
        }
    }
}

/// Enough rounds to catch a restore that is not locked across the change: before the fix the
/// entry was lost in 69 of 1,000 rounds (measured), so 200 rounds miss it with a probability
/// below 1e-6. 200 rounds take about 6 s in a debug build.
const RACE_ROUNDS: usize = 200;

/// The issue's case: a session switches none -> mq-deadline, a single-shot `sched kyber`
/// follows, the session ends, then `disktriage restore`: the device ends where it started.
#[test]
fn a_session_leaves_a_later_change_and_restore_puts_back_the_first_original() {
    let lab = Lab::new();
    lab.drives.set_scheduler(&lab.dev("loop0"), "none").unwrap();
    let session = lab.changer_as(0, Lifetime::Session);
    session
        .set_scheduler(&lab.dev("loop0"), "mq-deadline", false)
        .unwrap();
    let single = lab
        .cli()
        .set_scheduler(&lab.dev("loop0"), "kyber", false)
        .unwrap();
    match &single.journal {
        JournalNote::Recorded {
            original, earlier, ..
        } => {
            assert_eq!(original, "none", "the first original is kept");
            assert!(earlier);
        }
        other => panic!("{other:?}"),
    }
    // The session ends: kyber is not what it set, so it leaves it.
    let outcomes = session.restore(RestoreScope::Mine).unwrap();
    assert_eq!(outcomes.len(), 1);
    let RestoreResult::Skipped { reason } = &outcomes[0].result else {
        panic!("{:?}", outcomes[0].result)
    };
    assert_eq!(
        reason,
        "it is kyber now, set after this session by someone else (this session set \
         mq-deadline); the original (none) stays recorded for `disktriage restore`"
    );
    assert_eq!(lab.sched("loop0"), "kyber");
    assert!(
        lab.entries()
            .iter()
            .all(|e| e.lifetime == Lifetime::Persisted && e.original.value() == "none"),
        "{:?}",
        lab.entries()
    );
    // `restore` puts back the first original in one step.
    let outcomes = lab
        .cli()
        .restore(RestoreScope::All { force: false })
        .unwrap();
    assert_eq!(
        outcomes.iter().map(|o| &o.result).collect::<Vec<_>>(),
        [&RestoreResult::Restored {
            was: "kyber".into(),
            now: "none".into()
        }]
    );
    assert_eq!(lab.sched("loop0"), "none");
    assert!(lab.entries().is_empty());
}

/// A session after a single-shot change puts back what it found; `restore`, the original.
#[test]
fn a_session_after_a_single_shot_change_puts_back_what_it_found() {
    let lab = Lab::new();
    lab.cli()
        .set_scheduler(&lab.dev("sda"), "bfq", false)
        .unwrap();
    let session = lab.changer_as(0, Lifetime::Session);
    let change = session
        .set_scheduler(&lab.dev("sda"), "kyber", false)
        .unwrap();
    assert!(matches!(
        &change.journal,
        JournalNote::Recorded { original, lifetime: Lifetime::Session, .. } if original == "mq-deadline"
    ));
    assert_eq!(
        describe_note(&change.journal, lab.dir.path()),
        "what this session found (bfq) is put back when it ends; the first original \
         (mq-deadline) stays recorded for `disktriage restore`"
    );
    let outcomes = session.restore(RestoreScope::Mine).unwrap();
    assert_eq!(
        outcomes[0].result,
        RestoreResult::Restored {
            was: "kyber".into(),
            now: "bfq".into()
        }
    );
    let outcomes = lab
        .cli()
        .restore(RestoreScope::All { force: false })
        .unwrap();
    assert_eq!(outcomes.len(), 1);
    assert_eq!(lab.sched("sda"), "mq-deadline");
}

/// A large journal (200,000 entries on 1,000 devices) restores in one pass. The 20 s limit only
/// guards against a restore that stops scaling; `cargo bench --bench journal_restore` measures.
#[test]
fn restore_of_a_large_journal_is_linear() {
    const DEVICES: usize = 1_000;
    const PER_DEVICE: usize = 200;
    let drives = FakeDrives::new();
    for d in 0..DEVICES {
        drives.add(FakeDevice::new(&format!("sd{d}"), Transport::Sata));
    }
    let drives = Arc::new(drives);
    let mut entries = Vec::with_capacity(DEVICES * PER_DEVICE);
    for i in 0..DEVICES * PER_DEVICE {
        let name = format!("sd{}", i % DEVICES);
        entries.push(serde_json::json!({
            "id": i + 1,
            "device": {"name": name, "dev": {"major": 8, "minor": 0}, "serial": format!("FAKE-{name}")},
            "original": {"setting": "scheduler", "name": "mq-deadline"},
            "lifetime": if i % 2 == 0 { "persisted" } else { "session" },
            "owner": {"pid": 99_999_000 + (i % 7) as u32, "start_time": 1},
            "recorded_at": 0,
        }));
    }
    for d in 0..DEVICES {
        let dev = drives.device(&format!("sd{d}")).unwrap();
        drives.set_scheduler(&dev, "bfq").unwrap();
    }
    let doc = serde_json::json!({
        "format": "disktriage-journal",
        "version": 1,
        "next_id": DEVICES * PER_DEVICE + 1,
        "entries": entries,
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("journal.json"), doc.to_string()).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let path = dir.path().to_path_buf();
    let worker_drives = Arc::clone(&drives);
    let started = std::time::Instant::now();
    std::thread::spawn(move || {
        let owner = Owner {
            pid: 99_999_100,
            start_time: 1,
        };
        let c = Changer::new(
            worker_drives,
            Journal::open_as(path, owner).unwrap(),
            Lifetime::Persisted,
        );
        let _ = tx.send(c.restore(RestoreScope::All { force: false }));
    });
    let outcomes = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("restore of 200,000 entries not done after 20 s")
        .unwrap();
    eprintln!("restored 200,000 entries in {:?}", started.elapsed());
    assert_eq!(
        outcomes.len(),
        DEVICES,
        "one outcome per device and setting"
    );
    assert!(outcomes.iter().all(|o| !o.failed()));
    for d in [0, DEVICES / 2, DEVICES - 1] {
        let dev = drives.device(&format!("sd{d}")).unwrap();
        assert_eq!(
            drives.scheduler(&dev).unwrap().active.as_deref(),
            Some("mq-deadline")
        );
    }
    assert!(!dir.path().join("journal.json").exists());
}

/// A journal entry naming `../../tmp/x` must not make restore write outside /sys/block.
#[test]
fn a_crafted_device_name_is_refused_and_nothing_outside_sys_is_written() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("sys/block")).unwrap();
    let outside = root.path().join("tmp/x");
    std::fs::create_dir_all(outside.join("queue")).unwrap();
    std::fs::write(outside.join("dev"), "8:0\n").unwrap();
    std::fs::write(outside.join("queue/scheduler"), "none [bfq] mq-deadline\n").unwrap();
    let journal = tempfile::tempdir().unwrap();
    std::fs::write(
        journal.path().join("journal.json"),
        r#"{"format":"disktriage-journal","version":1,"next_id":2,"entries":[
            {"id":1,"device":{"name":"../../tmp/x","dev":null,"serial":null},
             "original":{"setting":"scheduler","name":"mq-deadline"},"lifetime":"persisted",
             "owner":{"pid":99999001,"start_time":1},"recorded_at":0}]}"#,
    )
    .unwrap();
    let drives = Arc::new(crate::sys::LinuxDrives::new(crate::sys::SysRoot::new(
        root.path(),
    )));
    let c = Changer::new(
        drives,
        Journal::open_as(journal.path(), process::current_owner()).unwrap(),
        Lifetime::Persisted,
    );
    let outcomes = c.restore(RestoreScope::All { force: false }).unwrap();
    assert_eq!(
        std::fs::read_to_string(outside.join("queue/scheduler")).unwrap(),
        "none [bfq] mq-deadline\n",
        "written outside /sys/block"
    );
    assert_eq!(outcomes.len(), 1);
    assert_eq!(
        outcomes[0].result,
        RestoreResult::Failed {
            error: "refused: \"../../tmp/x\" is not a kernel device name (no '/', no \
                    '..', no control characters); remove the entry from the journal by hand"
                .into()
        }
    );
}

/// A device whose identity changed is another device: dropped with the reason, not written.
#[test]
fn a_reattached_loop_device_is_a_different_device() {
    let lab = Lab::new();
    lab.drives.update("loop0", |d| {
        d.identity.diskseq = Some(9);
        d.identity.backing_file = Some("/tmp/a.img".into());
    });
    lab.cli()
        .set_scheduler(&lab.dev("loop0"), "bfq", false)
        .unwrap();
    assert_eq!(lab.entries()[0].device.identity.diskseq, Some(9));
    lab.drives.update("loop0", |d| {
        d.identity.diskseq = Some(12);
        d.identity.backing_file = Some("/tmp/b.img".into());
    });
    let outcomes = lab
        .cli()
        .restore(RestoreScope::All { force: false })
        .unwrap();
    assert_eq!(
        outcomes[0].result,
        RestoreResult::Dropped {
            reason: "loop0 is a different device now (diskseq 12, was 9; backing file \
                     /tmp/b.img, was /tmp/a.img): not the device that was changed"
                .into()
        }
    );
    assert_eq!(lab.sched("loop0"), "bfq", "never written to another device");
}

/// A journal without identities is still read, restored with a note.
#[test]
fn an_old_entry_without_identity_is_restored_with_a_note() {
    let lab = Lab::new();
    lab.drives.set_scheduler(&lab.dev("sda"), "bfq").unwrap();
    std::fs::write(
        lab.dir.path().join("journal.json"),
        r#"{"format":"disktriage-journal","version":1,"next_id":2,"entries":[
            {"id":1,"device":{"name":"sda","dev":{"major":8,"minor":0},"serial":"FAKE-sda"},
             "original":{"setting":"scheduler","name":"mq-deadline"},"lifetime":"persisted",
             "owner":{"pid":99999001,"start_time":1},"recorded_at":0}]}"#,
    )
    .unwrap();
    let outcomes = lab
        .cli()
        .restore(RestoreScope::All { force: false })
        .unwrap();
    assert_eq!(
        outcomes[0].result,
        RestoreResult::Restored {
            was: "bfq".into(),
            now: "mq-deadline".into()
        }
    );
    assert_eq!(
        outcomes[0].note.as_deref(),
        Some(
            "recorded without a device identity (an older journal, or a kernel without \
             diskseq): restored on the name, device number and serial alone"
        )
    );
    assert_eq!(lab.sched("sda"), "mq-deadline");
}

#[test]
fn a_claimed_device_is_changed_only_by_its_claimant_until_released() {
    let lab = Lab::new();
    let sweep = lab.changer_as(0, Lifetime::Session);
    let other = lab.changer_as(0, Lifetime::Session);
    let cli = lab.cli();
    let sda = lab.dev("sda");
    sweep.claim(&sda, "scheduler sweep of sda").unwrap();
    // Claiming again is the same claim.
    sweep.claim(&sda, "scheduler sweep of sda").unwrap();
    let me = std::process::id();
    let refused = |e: ChangeError| {
        let text = e.to_string();
        assert!(
            matches!(e, ChangeError::Journal(JournalError::Claimed { .. })),
            "{text}"
        );
        assert!(
            text.starts_with(&format!(
                "sda's settings are held by another disktriage (pid {me}: scheduler sweep of \
                 sda)"
            )),
            "{text}"
        );
    };
    refused(other.claim(&sda, "scheduler sweep of sda").unwrap_err());
    refused(other.set_scheduler(&sda, "bfq", false).unwrap_err());
    refused(cli.set_scheduler(&sda, "none", false).unwrap_err());
    refused(cli.set_write_cache(&sda, false, false).unwrap_err());
    assert!(lab.drives.set_calls().is_empty(), "nothing was switched");
    assert!(
        !lab.dir.path().join("journal.json").exists(),
        "nothing journaled"
    );
    // The claimant switches, other devices are free.
    sweep.set_scheduler(&sda, "bfq", false).unwrap();
    other
        .set_scheduler(&lab.dev("nvme0n1"), "none", false)
        .unwrap();
    sweep.restore(RestoreScope::Mine).unwrap();
    assert_eq!(lab.sched("sda"), "mq-deadline");
    let claim_file = lab.dir.path().join("claim.sda.lock");
    assert!(claim_file.exists());
    sweep.release("sda");
    assert!(
        !claim_file.exists(),
        "a released claim leaves nothing behind"
    );
    other.claim(&sda, "write cache sweep of sda").unwrap();
    drop(other);
    assert!(!claim_file.exists());
    cli.set_scheduler(&sda, "none", false).unwrap();
    assert_eq!(lab.sched("sda"), "none");
    // A change outside any claim only looks: it creates no claim file.
    assert!(!claim_file.exists());
    assert!(!lab.dir.path().join("claim.nvme0n1.lock").exists());
}

#[test]
fn a_claim_file_that_is_not_a_plain_file_is_refused_without_waiting() {
    let lab = Lab::new();
    let c = lab.changer_as(0, Lifetime::Session);
    let fifo = lab.dir.path().join("claim.sda.lock");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let e = c
        .claim(&lab.dev("sda"), "scheduler sweep of sda")
        .unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    std::fs::remove_file(&fifo).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &fifo).unwrap();
    let e = c.set_scheduler(&lab.dev("sda"), "bfq", false).unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert!(lab.drives.set_calls().is_empty());
}
