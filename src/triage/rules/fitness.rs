//! The rules on a disk's fitness for an array (issue 38): error recovery time against the
//! kernel's command timeout, shingled or zoned media, and a SMART hour counter FARM
//! contradicts. The first two are findings on an md array member of this host; on a disk in
//! no array, or a saved report, they are notes.

use super::{Finding, dev, hit, number, smart};
use crate::model::{Erc, ZoneModel};
use crate::triage::facts::DiskFacts;

/// Without ERC a desktop drive may retry one sector for a minute or two; a kernel waiting
/// longer than this sees it answer (Linux RAID wiki, "Timeout Mismatch").
pub const NO_ERC_TIMEOUT_S: u32 = 120;

/// SMART's hours below FARM's by more than these hours and this share are a reset counter,
/// not FARM's lag (it is saved every few hours).
pub const HOURS_GAP: u64 = 48;
pub const HOURS_SHARE: f64 = 0.05;

/// For a drive that may retry longer than the kernel waits: set its ERC, else wait longer.
fn erc_next_step(disk: &DiskFacts) -> String {
    let name = if disk.identity.from_saved_report {
        "sdX".to_string()
    } else {
        disk.identity.device.clone()
    };
    let timeout = format!(
        "the kernel timeout above {NO_ERC_TIMEOUT_S} s (`echo 180 > /sys/block/{name}/device/timeout`)"
    );
    if disk.fitness.drive.erc == Some(Erc::NotSupported) {
        return format!("set {timeout}, or use a drive with ERC");
    }
    format!(
        "set ERC to 7 s (`smartctl -l scterc,70,70 {}`, again after every power cycle), or {timeout}",
        dev(disk)
    )
}

/// The kernel timeout judged against: the disk's own, else the default 30 s (saved report).
fn timeout_of(disk: &DiskFacts) -> (u32, bool) {
    match disk.fitness.timeout_s {
        Some(t) => (t, true),
        None => (30, false),
    }
}

/// Why the drive may retry longer than the kernel waits; `None` if not, or ERC is unknown.
fn erc_mismatch(disk: &DiskFacts) -> Option<(String, Option<f64>, u32)> {
    let erc = disk.fitness.drive.erc?;
    let (timeout, known) = timeout_of(disk);
    let kernel = if known {
        format!("the kernel waits {timeout} s")
    } else {
        format!("the kernel's default timeout is {timeout} s")
    };
    match erc.longest_seconds() {
        Some(s) if s > f64::from(timeout) => Some((
            format!(
                "SCT Error Recovery Control lets the drive retry a sector for {} s ({}), \
                 longer than {kernel}",
                number(s),
                erc.words()
            ),
            Some(s),
            timeout,
        )),
        Some(_) => None,
        None if timeout > NO_ERC_TIMEOUT_S => None,
        None => {
            let what = match erc {
                Erc::NotSupported => "the drive has no SCT Error Recovery Control".to_string(),
                Erc::Timers { read: 0, write: 0 } => {
                    "SCT Error Recovery Control is disabled".to_string()
                }
                partly => format!(
                    "SCT Error Recovery Control is partly disabled ({})",
                    partly.words()
                ),
            };
            Some((
                format!("{what}: it may retry a sector for minutes, {kernel}"),
                None,
                timeout,
            ))
        }
    }
}

/// An md member that may retry longer than the kernel waits: the kernel resets the link and
/// md fails the whole disk out instead of rewriting the one sector from the other copies.
pub(super) fn erc_longer_than_timeout(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let arrays = &disk.fitness.arrays;
    if arrays.is_empty() {
        return Vec::new();
    }
    match erc_mismatch(disk) {
        Some((why, value, timeout)) => hit(
            format!(
                "{why}: md may fail it out of {} at a bad sector instead of rewriting the \
                 sector",
                arrays.join(", ")
            ),
            erc_next_step(disk),
            value,
            Some(f64::from(timeout)),
        ),
        None => Vec::new(),
    }
}

/// Why the disk is shingled or zoned, from the kernel's or the drive's own word.
fn shingled(disk: &DiskFacts) -> Option<String> {
    let f = &disk.fitness;
    if let Some(model) = f.kernel_zoned {
        let zones = f
            .nr_zones
            .map(|n| format!(", {n} zones"))
            .unwrap_or_default();
        return Some(format!(
            "a zoned disk ({}{zones}, as the kernel says)",
            model.as_str()
        ));
    }
    if let Some(model) = f.drive.zoned {
        return Some(match model {
            ZoneModel::DriveManaged => {
                "a drive-managed shingled (SMR) disk, as its zoned capabilities say".to_string()
            }
            other => format!("a zoned disk ({}, as the drive says)", other.as_str()),
        });
    }
    if f.drive.farm_recording.as_deref() == Some("SMR") {
        return Some("a shingled (SMR) disk, as its FARM log's recording type says".to_string());
    }
    // Unless the device does not rotate (an SSD's cache makes a cliff too).
    if let Some(s) = &disk.smr
        && s.verdict == "cliff"
        && s.medium != "solid-state"
        && disk.identity.rotation_rpm != Some(0)
    {
        return Some(format!(
            "a disk whose random writes fell off a cliff (disktriage smrcheck, {}): \
             drive-managed SMR behaviour",
            s.when
        ));
    }
    let rotating = disk.identity.rotation_rpm.is_some_and(|r| r > 0);
    (rotating && f.drive.trim == Some(true)).then(|| {
        "most likely a drive-managed shingled (SMR) disk (it rotates and supports TRIM)".to_string()
    })
}

/// A shingled or zoned md member: a rebuild writes the whole disk, and drive-managed SMR falls
/// to a few MB/s once its cache fills, even past the timeout (WD Red SMR rebuilds, 2020).
pub(super) fn smr_in_array(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let arrays = &disk.fitness.arrays;
    if arrays.is_empty() {
        return Vec::new();
    }
    match shingled(disk) {
        Some(what) => hit(
            format!(
                "{what}, in {}: a rebuild's long writes can slow it to a crawl or time out",
                arrays.join(", ")
            ),
            "replace it with a conventional (CMR) disk before the array needs a rebuild",
            None,
            None,
        ),
        None => Vec::new(),
    }
}

/// SMART's power-on hours far below the FARM log's (Seagate), which resellers' tools do not
/// reset: a used drive sold as new (2025 reports: tens of thousands of FARM hours, a handful
/// in SMART).
pub(super) fn smart_hours_reset(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let (Some(farm), Some(smart)) = (
        disk.fitness.drive.farm_power_on_hours,
        smart(disk).and_then(|h| h.power_on_hours),
    ) else {
        return Vec::new();
    };
    let gap = farm.saturating_sub(smart);
    if gap <= HOURS_GAP || (gap as f64) <= farm as f64 * HOURS_SHARE {
        return Vec::new();
    }
    hit(
        format!(
            "SMART counts {smart} power-on hours, the drive's FARM log {farm}: its SMART hour \
             counter was reset (sold as new?)"
        ),
        format!("ask the seller: the drive has run {farm} hours"),
        Some(smart as f64),
        Some(farm as f64),
    )
}

/// On a disk in no known array, what the array rules would judge, as notes.
pub(super) fn notes(disk: &DiskFacts) -> Vec<String> {
    let mut notes = Vec::new();
    if !disk.fitness.arrays.is_empty() {
        return notes;
    }
    if let Some((why, _, _)) = erc_mismatch(disk) {
        notes.push(format!("{why}; as a RAID member, {}", erc_next_step(disk)));
    }
    if let Some(what) = shingled(disk) {
        notes.push(format!(
            "{what}: unfit for a RAID array (a rebuild's long writes can slow it to a crawl)"
        ));
    }
    notes
}
