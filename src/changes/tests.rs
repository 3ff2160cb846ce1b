//! `Changer` and `RestoreGuard` on `FakeDrives` with a journal in a temporary directory.
//! Test code only: `changes.rs` declares this module under #[cfg(test)].

use std::sync::Arc;

use super::*;
use crate::model::{DevNum, Owner};
use crate::sys::{FakeDevice, FakeDrives};

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

    /// A single-shot command (a process that is gone by the time anyone restores).
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

    // Turning it on again brings back the recorded original: nothing left to restore.
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
    // A single-shot change, then a session (that died) changing the same setting again.
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

    // The session's restore would put back what it found (bfq); `restore` goes all the way.
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
                now: "bfq".into()
            },
            &RestoreResult::Restored {
                was: "bfq".into(),
                now: "mq-deadline".into()
            },
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

#[test]
fn the_guard_restores_on_drop() {
    let lab = Lab::new();
    {
        let guard = guard::RestoreGuard::new(lab.changer_as(0, Lifetime::Session));
        guard
            .changer()
            .set_scheduler(&lab.dev("sda"), "none", false)
            .unwrap();
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

#[test]
fn keep_removes_a_session_entry() {
    let lab = Lab::new();
    let guard = guard::RestoreGuard::new(lab.changer_as(0, Lifetime::Session));
    let change = guard
        .changer()
        .set_scheduler(&lab.dev("sda"), "none", false)
        .unwrap();
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
