//! The drive reads the screens ask for, each on a short thread of its own (SMART on a failing
//! drive can take seconds, never on the UI thread): its state and health, then its logs; a
//! self-test started; a self-test polled. Not jobs: nothing stops them, and a second read
//! never waits for the first.

use std::sync::Arc;
use std::sync::mpsc::Sender;

use crate::event::{Msg, TaskError};
use crate::model::{ChosenDevice, SelfTestKind};
use crate::sys::DriveControl;

/// Reads `device`'s write cache and, with `health`, its SMART health and then its logs.
pub fn read_status(drives: &Arc<dyn DriveControl>, tx: &Sender<Msg>, device: String, health: bool) {
    let drives = Arc::clone(drives);
    let tx = tx.clone();
    let _ = std::thread::Builder::new()
        .name(format!("drive-{device}"))
        .spawn(move || {
            let dev = drives.device(&device).map_err(TaskError::from);
            let cache = dev
                .clone()
                .and_then(|d| Ok(crate::drive_state::cache_status(drives.as_ref(), &d)?));
            let health = health.then(|| {
                dev.and_then(|d| {
                    Ok(Box::new(crate::drive_state::smart_health(
                        drives.as_ref(),
                        &d,
                    )?))
                })
            });
            let read_logs = health.is_some();
            let _ = tx.send(Msg::DriveStatus {
                device: device.clone(),
                cache,
                health,
            });
            // The logs after the verdict: the badge shows first, the logs judge
            // it when they come.
            if read_logs {
                let result = drives
                    .device(&device)
                    .and_then(|d| drives.drive_logs(&d))
                    .map(Box::new)
                    .map_err(TaskError::from);
                let _ = tx.send(Msg::DriveLogs { device, result });
            }
        });
}

/// Starts a self-test of `kind` on `device`, refused when the name holds another device.
pub fn start_self_test(
    drives: &Arc<dyn DriveControl>,
    tx: &Sender<Msg>,
    device: String,
    kind: SelfTestKind,
    chosen: Option<ChosenDevice>,
) {
    let drives = Arc::clone(drives);
    let tx = tx.clone();
    let _ = std::thread::Builder::new()
        .name(format!("selftest-{device}"))
        .spawn(move || {
            let result = drives
                .chosen_device(&device, chosen.as_ref())
                .and_then(|d| drives.start_self_test(&d, kind))
                .map_err(TaskError::from);
            let _ = tx.send(Msg::SelfTestStarted {
                device,
                kind,
                result,
            });
        });
}

/// Reads the state of `device`'s self-test.
pub fn poll_self_test(drives: &Arc<dyn DriveControl>, tx: &Sender<Msg>, device: String) {
    let drives = Arc::clone(drives);
    let tx = tx.clone();
    let _ = std::thread::Builder::new()
        .name(format!("selftest-{device}"))
        .spawn(move || {
            let result = drives
                .device(&device)
                .and_then(|d| drives.self_test_status(&d))
                .map_err(TaskError::from);
            let _ = tx.send(Msg::SelfTestStatus { device, result });
        });
}
