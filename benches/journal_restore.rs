//! How long `disktriage restore` takes on a large settings journal, and that it grows
//! linearly with the journal (no root: a fake drive set and a journal in a scratch directory).
//!
//!     cargo bench --bench journal_restore              # 5 rounds at 50,000, 100,000, 200,000
//!     cargo bench --bench journal_restore -- 7 400000  # 7 rounds, sizes up to 400,000
//!
//! Each size's journal holds that many scheduler entries spread over one device per 200
//! entries (sessions of 7 owners, half persisted), as the unit test
//! `restore_of_a_large_journal_is_linear` builds it. A round writes the journal, sets every
//! device to another scheduler and times `Changer::restore(All)` alone (reading, grouping,
//! one write per device, the journal removed). Prints the median and range per size and the
//! median per entry: a linear restore keeps the per-entry figure level as the size doubles.

#![allow(clippy::unwrap_used)] // a benchmark harness: a panic is the failure report

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use disktriage::changes::{Changer, Journal, RestoreScope};
use disktriage::model::{Lifetime, Owner, Transport};
use disktriage::sys::{DriveControl, FakeDevice, FakeDrives};

const PER_DEVICE: usize = 200;

/// Writes a journal of `entries` entries over `entries / PER_DEVICE` fake devices into `dir`
/// and switches every device away from the recorded original; returns the drives.
fn prepare(dir: &Path, entries: usize) -> Arc<FakeDrives> {
    let devices = (entries / PER_DEVICE).max(1);
    let drives = FakeDrives::new();
    for d in 0..devices {
        drives.add(FakeDevice::new(&format!("sd{d}"), Transport::Sata));
    }
    for d in 0..devices {
        let dev = drives.device(&format!("sd{d}")).unwrap();
        drives.set_scheduler(&dev, "bfq").unwrap();
    }
    let list: Vec<serde_json::Value> = (0..entries)
        .map(|i| {
            let name = format!("sd{}", i % devices);
            serde_json::json!({
                "id": i + 1,
                "device": {"name": name, "dev": {"major": 8, "minor": 0}, "serial": format!("FAKE-{name}")},
                "original": {"setting": "scheduler", "name": "mq-deadline"},
                "lifetime": if i % 2 == 0 { "persisted" } else { "session" },
                "owner": {"pid": 99_999_000 + (i % 7) as u32, "start_time": 1},
                "recorded_at": 0,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "format": "disktriage-journal",
        "version": 1,
        "next_id": entries + 1,
        "entries": list,
    });
    std::fs::write(dir.join("journal.json"), doc.to_string()).unwrap();
    Arc::new(drives)
}

/// One timed restore of a journal of `entries` entries.
fn round(entries: usize) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let drives = prepare(dir.path(), entries);
    let owner = Owner {
        pid: 99_999_100,
        start_time: 1,
    };
    let started = Instant::now();
    let journal = Journal::open_as(dir.path(), owner).unwrap();
    let changer = Changer::new(drives.clone(), journal, Lifetime::Persisted);
    let outcomes = changer.restore(RestoreScope::All { force: false }).unwrap();
    let took = started.elapsed();
    assert_eq!(outcomes.len(), (entries / PER_DEVICE).max(1));
    assert!(outcomes.iter().all(|o| !o.failed()), "a restore failed");
    assert!(!dir.path().join("journal.json").exists());
    took
}

fn main() {
    // `cargo bench` passes `--bench`; the numbers are ours.
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let rounds = numbers.first().copied().unwrap_or(5).max(1);
    let largest = numbers
        .get(1)
        .copied()
        .unwrap_or(200_000)
        .max(PER_DEVICE * 4);
    println!("restore of a settings journal, {rounds} rounds per size (median, range)");
    for entries in [largest / 4, largest / 2, largest] {
        let mut times: Vec<Duration> = (0..rounds).map(|_| round(entries)).collect();
        times.sort();
        let median = times[times.len() / 2];
        println!(
            "{entries:>9} entries on {:>5} devices: {:>6.2} s ({:.2} to {:.2} s), {:.2} µs per entry",
            entries / PER_DEVICE,
            median.as_secs_f64(),
            times[0].as_secs_f64(),
            times[times.len() - 1].as_secs_f64(),
            median.as_secs_f64() * 1e6 / entries as f64,
        );
    }
}
