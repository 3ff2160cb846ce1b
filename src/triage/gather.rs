//! Gathers the facts of the chosen disks, read-only and within a time bound: SMART and logs,
//! the link, the surface sample, sequential and QD1 random reads, the temperature throughout.
//! A pool of at most `WORKERS` threads gives each disk a fair share of the time left when it
//! is taken, with progress per disk. A disk no worker reached by the bound says so.
//!
//! The bound holds when a disk hangs: a read stuck in the kernel cannot be abandoned, so each
//! thread fills a shared slot as it goes and `gather` returns at the bound (plus `MARGIN`) with
//! what the slots hold. A busy disk is left to its thread (it only reads); its facts say where
//! it stopped.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::facts::{DiskFacts, DiskIdentityFacts, FitnessFacts, NOT_REACHED, SeqPosition};
use super::link::link_state;
use super::measure::{self, Limit, Sizes};
use super::plan::{self, Spread};
use crate::drive_state;
use crate::model::{BlockDevice, DriveFitness, HolderKind, Transport};
use crate::sys::scan::ScanDevice;
use crate::sys::{DriveControl, DriveError, LinuxDrives, SysRoot, links};

/// How long and how much.
#[derive(Debug, Clone, PartialEq)]
pub struct GatherOptions {
    /// The whole triage ends within this (default 60 s; `--quick` about 10 s).
    pub bound: Duration,
    pub quick: bool,
    /// When the bound began (the command's start, before listing disks); `None`: now.
    pub since: Option<Instant>,
}

impl Default for GatherOptions {
    fn default() -> Self {
        GatherOptions {
            bound: Duration::from_secs(60),
            quick: false,
            since: None,
        }
    }
}

/// How long after the bound `gather` waits for the last facts before it returns without them.
pub const MARGIN: Duration = Duration::from_millis(1500);

/// Kept back from each disk's measurements for the closing temperature (at most a quarter of
/// its share).
const CLOSING: Duration = Duration::from_millis(1000);

/// The most disks gathered at once (each a thread, its drive commands and at most one
/// `smartctl` child): a thousand at once took longer to start than the bound.
pub const WORKERS: usize = 32;

/// The step of a disk no worker has taken yet.
const NOT_TAKEN: &str = "waiting for a worker";

/// One disk's progress, as the TUI's per-disk line and the CLI's stderr show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Index in the order asked for.
    pub disk: usize,
    pub device: String,
    /// What it is doing now: "SMART", "surface 1200/4000", "seq read middle", "done".
    pub step: String,
    /// 0.0 ..= 1.0.
    pub fraction: f64,
    /// Set once, with the disk's facts, when it is done.
    pub done: Option<Box<DiskFacts>>,
}

/// A disk's facts as far as its thread got, and what it was doing.
struct Slot {
    facts: DiskFacts,
    step: String,
    finished: bool,
}

/// A disk thread's way to report.
struct Reporter {
    disk: usize,
    device: String,
    slot: Arc<Mutex<Slot>>,
    progress: Option<Sender<Progress>>,
    started: Instant,
}

impl Reporter {
    /// Changes the slot's facts (the lock is held only for this, never across a read).
    fn update(&self, change: impl FnOnce(&mut DiskFacts)) {
        if let Ok(mut slot) = self.slot.lock() {
            change(&mut slot.facts);
            slot.facts.seconds = self.started.elapsed().as_secs_f64();
        }
    }

    fn problem(&self, sentence: String) {
        self.update(|f| f.problems.push(sentence));
    }

    fn step(&self, step: &str, fraction: f64) {
        if let Ok(mut slot) = self.slot.lock() {
            slot.step = step.to_string();
        }
        if let Some(tx) = &self.progress {
            let _ = tx.send(Progress {
                disk: self.disk,
                device: self.device.clone(),
                step: step.to_string(),
                fraction: fraction.clamp(0.0, 1.0),
                done: None,
            });
        }
    }
}

/// Gathers the facts of `devices` (kernel names) in parallel, progress to `progress` (dropped
/// if the receiver is gone). Facts in the order asked, unread disks with reasons in
/// `problems`; returns by the bound plus `MARGIN` whatever the disks do.
pub fn gather(
    root: &SysRoot,
    devices: &[String],
    options: &GatherOptions,
    progress: Option<Sender<Progress>>,
) -> Vec<DiskFacts> {
    gather_until(root, devices, options, progress, &AtomicBool::new(false))
}

/// `gather`, ending early with what it has when `stop` turns true (Ctrl-C).
pub fn gather_until(
    root: &SysRoot,
    devices: &[String],
    options: &GatherOptions,
    progress: Option<Sender<Progress>>,
    stop: &AtomicBool,
) -> Vec<DiskFacts> {
    let started = options.since.unwrap_or_else(Instant::now);
    let deadline = started + options.bound;
    let sizes = Sizes::of(options.quick);
    // Set at the deadline, on a stop and on return, so no thread reads on for nobody.
    let halt = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = mpsc::channel::<usize>();
    let slots = untaken_slots(devices);
    let pool = Pool {
        root: root.clone(),
        // A disk taken after the deadline or a stop is not read: "not reached".
        next: Arc::new(AtomicUsize::new(0)),
        devices: Arc::new(devices.to_vec()),
        slots: Arc::new(slots),
        workers: devices.len().min(WORKERS),
        halt,
        progress,
        started,
        deadline,
        bound: options.bound,
        sizes,
    };
    let running = pool.spawn_workers(&done_tx);
    // Every disk sends one message when it is done or passed over.
    let waiting = if running == 0 { 0 } else { pool.devices.len() };
    drop(done_tx);
    pool.wait_for_disks(&done_rx, waiting, stop);
    pool.halt.store(true, Ordering::Relaxed);
    let stopped = stop.load(Ordering::Relaxed);
    pool.slots
        .iter()
        .enumerate()
        .map(|(disk, slot)| pool.hand_in(disk, slot, stopped))
        .collect()
}

/// A slot for each disk, none taken yet.
fn untaken_slots(devices: &[String]) -> Vec<Arc<Mutex<Slot>>> {
    devices
        .iter()
        .map(|device| {
            Arc::new(Mutex::new(Slot {
                facts: DiskFacts {
                    identity: DiskIdentityFacts {
                        device: device.clone(),
                        ..DiskIdentityFacts::default()
                    },
                    ..DiskFacts::default()
                },
                step: NOT_TAKEN.into(),
                finished: false,
            }))
        })
        .collect()
}

/// What the gathering threads share: the disks and their slots, the next disk to take, the
/// time bound and the halt. Each worker thread has its own copy.
#[derive(Clone)]
struct Pool {
    root: SysRoot,
    devices: Arc<Vec<String>>,
    slots: Arc<Vec<Arc<Mutex<Slot>>>>,
    next: Arc<AtomicUsize>,
    /// How many threads are started (at most `WORKERS`).
    workers: usize,
    halt: Arc<AtomicBool>,
    progress: Option<Sender<Progress>>,
    /// When the bound began, and when it ends.
    started: Instant,
    deadline: Instant,
    bound: Duration,
    sizes: Sizes,
}

impl Pool {
    /// Starts the worker threads, each sending a disk's index on `done_tx` when the disk is
    /// done or passed over; returns how many started. If none could, every disk says why.
    fn spawn_workers(&self, done_tx: &Sender<usize>) -> usize {
        let mut running = 0usize;
        for worker in 0..self.workers {
            let (pool, done_tx) = (self.clone(), done_tx.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("triage-{worker}"))
                .spawn(move || pool.work(&done_tx));
            match spawned {
                Ok(_) => running += 1,
                Err(e) => {
                    if running == 0 && worker == 0 {
                        for slot in self.slots.iter() {
                            if let Ok(mut slot) = slot.lock() {
                                slot.facts
                                    .problems
                                    .push(format!("could not start a thread: {e}"));
                                slot.finished = true;
                            }
                        }
                    }
                    break;
                }
            }
        }
        running
    }

    /// A worker thread: takes the next disk until none is left, gathers it within its fair
    /// share of the time left, and passes over a disk taken after the deadline or a halt.
    fn work(&self, done_tx: &Sender<usize>) {
        let drives = LinuxDrives::new(self.root.clone());
        loop {
            let disk = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(device) = self.devices.get(disk) else {
                break;
            };
            let reporter = Reporter {
                disk,
                device: device.clone(),
                slot: Arc::clone(&self.slots[disk]),
                progress: self.progress.clone(),
                started: self.started,
            };
            let now = Instant::now();
            if self.halt.load(Ordering::Relaxed) || now >= self.deadline {
                let _ = done_tx.send(disk);
                continue;
            }
            // Time left x workers / disks not yet taken (this one included).
            let left = self.devices.len() - disk;
            let share = (self.deadline - now).mul_f64(self.workers as f64 / left.max(1) as f64);
            let own = (now + share).min(self.deadline);
            gather_one(&self.root, &drives, &reporter, self.sizes, own, &self.halt);
            if let Ok(mut slot) = reporter.slot.lock() {
                slot.finished = true;
                slot.step = "done".into();
            }
            let _ = done_tx.send(disk);
        }
    }

    /// Waits for `waiting` disks' messages until the deadline plus `MARGIN`, or the margin
    /// after a stop; halts the threads at the deadline or the stop.
    fn wait_for_disks(&self, done_rx: &Receiver<usize>, mut waiting: usize, stop: &AtomicBool) {
        let mut give_up = self.deadline + MARGIN;
        let mut stop_seen = false;
        while waiting > 0 {
            if stop.load(Ordering::Relaxed) && !stop_seen {
                // After a stop, the disks get the margin to hand in what they have.
                stop_seen = true;
                self.halt.store(true, Ordering::Relaxed);
                give_up = give_up.min(Instant::now() + MARGIN);
            }
            let now = Instant::now();
            if now >= self.deadline {
                self.halt.store(true, Ordering::Relaxed);
            }
            if now >= give_up {
                break;
            }
            // Wakes every 100 ms to see a stop.
            match done_rx.recv_timeout((give_up - now).min(Duration::from_millis(100))) {
                Ok(_) => waiting -= 1,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
    }

    /// A disk's facts as its slot holds them at the return, with why it is not finished if it
    /// is not; sent as its last progress.
    fn hand_in(&self, disk: usize, slot: &Mutex<Slot>, stopped: bool) -> DiskFacts {
        // Never held across a read (`Reporter::update`): a hung disk does not block this.
        let (mut facts, step, finished) = match slot.lock() {
            Ok(s) => (s.facts.clone(), s.step.clone(), s.finished),
            Err(poisoned) => {
                let s = poisoned.into_inner();
                (s.facts.clone(), s.step.clone(), s.finished)
            }
        };
        let workers = self.workers;
        if !finished && step == NOT_TAKEN {
            facts.problems.push(format!(
                "{NOT_REACHED} {} s bound ({} disks, {workers} at a time): give a longer \
                 --bound or fewer disks",
                self.bound.as_secs(),
                self.devices.len()
            ));
        } else if !finished {
            facts.seconds = self.started.elapsed().as_secs_f64();
            facts.problems.push(if stopped {
                format!("stopped by the admin during {step}: what was gathered until then")
            } else {
                format!(
                    "did not finish within the {} s bound: still waiting for {step} \
                     (a read or a drive command hangs)",
                    self.bound.as_secs()
                )
            });
        }
        if let Some(tx) = &self.progress {
            let _ = tx.send(Progress {
                disk,
                device: facts.identity.device.clone(),
                step: "done".into(),
                fraction: 1.0,
                done: Some(Box::new(facts.clone())),
            });
        }
        facts
    }
}

/// The disk's identity from the inventory's reader.
fn identity_of(root: &SysRoot, dev: &BlockDevice) -> DiskIdentityFacts {
    DiskIdentityFacts {
        device: dev.name.clone(),
        model: dev.model.clone(),
        serial: dev.serial.clone(),
        wwn: root.device_identity(&dev.name).wwid,
        firmware: dev.firmware.clone(),
        capacity_bytes: dev.size_bytes.map_or(0, |b| b.0),
        logical_block_size: dev.logical_block_size.unwrap_or(512),
        transport: Some(dev.transport),
        // sysfs says only rotating or not; `gather_one` reads the rpm from IDENTIFY.
        rotation_rpm: match dev.rotational {
            Some(false) => Some(0),
            _ => None,
        },
        from_saved_report: false,
    }
}

/// A temperature reading; `None` without a sensor. A transport without one is no problem.
fn temperature(drives: &dyn DriveControl, dev: &BlockDevice) -> Result<Option<i64>, String> {
    match drives.temperature(dev) {
        Ok(t) => Ok(t),
        Err(DriveError::NotSupported { .. }) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Everything about one disk, cheapest first; the surface last (it takes the time left).
fn gather_one(
    root: &SysRoot,
    drives: &LinuxDrives,
    r: &Reporter,
    sizes: Sizes,
    deadline: Instant,
    halt: &AtomicBool,
) {
    r.step("identity", 0.0);
    let dev = match drives.device(&r.device) {
        Ok(dev) => dev,
        Err(e) => {
            r.problem(format!("cannot read the device: {e}"));
            return;
        }
    };
    r.update(|f| f.identity = identity_of(root, &dev));

    r.step("link", 0.02);
    let facts = links::link_facts(root, &dev.name);
    let ata = drives.sata_identity(&dev);
    let link = link_state(
        dev.transport,
        &facts,
        ata.as_ref().and_then(|a| a.sata_generation),
    );
    // The rpm is the drive's own word (IDENTIFY word 217).
    if let Some(rpm) = ata.as_ref().and_then(|a| a.rotation_rpm) {
        r.update(|f| f.identity.rotation_rpm = Some(rpm));
    }
    r.update(|f| f.link = link);

    r.step("fitness", 0.04);
    let fitness = fitness_of(root, drives, &dev, ata.as_ref());
    r.update(|f| f.fitness = fitness.0);
    if let Some(problem) = fitness.1 {
        r.problem(problem);
    }

    r.step("SMART", 0.05);
    let warning = drives.nvme_warning_temperature(&dev);
    r.update(|f| f.temperature_warning_c = warning);
    let mut temps: Vec<i64> = Vec::new();
    let mut crc_at_start = false;
    match drive_state::smart_report(drives, &dev) {
        Ok((health, logs)) => {
            let logs = match logs {
                Ok(logs) => Some(logs),
                Err(DriveError::NotSupported { .. }) => None,
                Err(e) => {
                    r.problem(format!("drive logs: {e}"));
                    None
                }
            };
            temps.extend(health.temperature_c);
            crc_at_start = crc_count(&health).is_some();
            r.update(|f| {
                f.smart = Some(health);
                f.logs = logs;
            });
        }
        Err(e) => r.problem(format!("SMART: {e}")),
    }
    if temps.is_empty() {
        match temperature(drives, &dev) {
            Ok(t) => temps.extend(t),
            Err(e) => r.problem(format!("temperature: {e}")),
        }
    }
    record_temperatures(r, &temps);
    if halt.load(Ordering::Relaxed) {
        return;
    }

    measure_disk(root, &dev, r, sizes, deadline, halt);

    // A CRC count that grew during the reads is the link failing now (`crc-errors-grew`).
    // The same read gives the closing temperature.
    if crc_at_start {
        match drive_state::smart_health(drives, &dev) {
            Ok(health) => {
                temps.extend(health.temperature_c);
                record_temperatures(r, &temps);
                let after = crc_count(&health);
                r.update(|f| f.measurements.crc_errors_after = after);
            }
            Err(e) => r.problem(format!("SMART at the end: {e}")),
        }
    } else if let Ok(Some(t)) = temperature(drives, &dev) {
        temps.push(t);
        record_temperatures(r, &temps);
    }
}

/// The disk's fitness for an array: md arrays holding it or a partition, the kernel's zones
/// and command timeout, and on SATA the drive's ERC, TRIM and zoned capabilities (IDENTIFY).
/// Unreadable ERC is a problem only on an array member, where a rule needs it.
fn fitness_of(
    root: &SysRoot,
    drives: &LinuxDrives,
    dev: &BlockDevice,
    ata: Option<&crate::smart::ata::AtaIdentity>,
) -> (FitnessFacts, Option<String>) {
    let mut arrays: Vec<String> = dev
        .holders
        .iter()
        .chain(dev.partitions.iter().flat_map(|p| p.holders.iter()))
        .filter(|h| h.kind == HolderKind::Md)
        .map(|h| h.name.clone())
        .collect();
    arrays.sort();
    arrays.dedup();
    let (kernel_zoned, nr_zones, timeout_s) = root.zones_and_timeout(&dev.name);
    let mut problem = None;
    let erc = match drives.sct_erc(dev) {
        Some(Ok(erc)) => Some(erc),
        Some(Err(why)) => {
            if !arrays.is_empty() {
                problem = Some(format!("SCT Error Recovery Control: {why}"));
            }
            None
        }
        None => None,
    };
    // The drive's own answer (`DriveControl::drive_cache`); none when no drive answers.
    let write_cache = drives
        .drive_cache(dev)
        .ok()
        .map(|c| crate::model::WriteCache::from_enabled(c.enabled));
    let facts = FitnessFacts {
        drive: DriveFitness {
            erc,
            zoned: ata.and_then(|a| a.zoned),
            trim: ata.map(|a| a.trim_supported),
            write_cache,
            ..DriveFitness::default()
        },
        kernel_zoned,
        nr_zones,
        timeout_s,
        arrays,
    };
    (facts, problem)
}

/// The interface CRC count of a SMART reading, read by its meaning on the drive.
fn crc_count(health: &crate::model::SmartHealth) -> Option<u64> {
    let ata = health.ata.as_ref()?;
    crate::smart::meaning::count_of(
        &ata.attributes,
        &ata.drive,
        crate::smart::meaning::Meaning::CrcErrors,
    )
}

fn record_temperatures(r: &Reporter, temps: &[i64]) {
    let (min, max) = (temps.iter().min().copied(), temps.iter().max().copied());
    r.update(|f| {
        f.measurements.temperature_min_c = min;
        f.measurements.temperature_max_c = max;
    });
}

/// The reads: sequential, random, then the sampled surface until the deadline.
fn measure_disk(
    root: &SysRoot,
    dev: &BlockDevice,
    r: &Reporter,
    sizes: Sizes,
    deadline: Instant,
    halt: &AtomicBool,
) {
    r.step("opening", 0.1);
    let node = root
        .root()
        .join(dev.path.strip_prefix("/").unwrap_or(&dev.path));
    let mut device = match ScanDevice::open(&node) {
        Ok(d) => d,
        Err(e) => {
            r.problem(format!(
                "cannot open {} for reading: {}",
                node.display(),
                crate::sys::error::describe_io(&e)
            ));
            return;
        }
    };
    let align = u64::from(device.logical.max(512));
    let capacity = device.size;
    // 1 MiB reads as `dd bs=1M iflag=direct`, whatever the largest transfer: the kernel
    // sends the pieces together (an NVMe disk read 128 KiB at a time shows a fraction of dd).
    let chunk = plan::read_len(1 << 20, capacity, align).unwrap_or(align);
    let buffer = chunk.max(measure::SURFACE_READ).max(align);
    if let Err(e) = device.set_block(buffer) {
        r.problem(format!("no read buffer: {e}"));
        return;
    }
    let closing = CLOSING.min(deadline.saturating_duration_since(Instant::now()) / 4);
    let end = deadline.checked_sub(closing).unwrap_or(deadline);
    let mut spread = Spread::from_clock(&dev.name);

    match plan::seq_offsets(capacity, align, sizes.seq_bytes) {
        Some((len, offsets)) => {
            let positions = [SeqPosition::Start, SeqPosition::Middle, SeqPosition::End];
            for (i, (position, offset)) in positions.into_iter().zip(offsets).enumerate() {
                let word = ["start", "middle", "end"][i];
                r.step(&format!("seq read {word}"), 0.1 + 0.05 * i as f64);
                let limit = Limit {
                    until: (Instant::now() + sizes.seq_time).min(end),
                    stop: halt,
                };
                match measure::seq_read(&mut device, position, offset, len, chunk, &limit) {
                    Ok(seq) => r.update(|f| f.measurements.seq.push(seq)),
                    Err(e) => r.problem(e),
                }
                if halt.load(Ordering::Relaxed) {
                    return;
                }
            }
        }
        None => r.problem("the device is too small to read".into()),
    }

    r.step("random 4k reads", 0.25);
    let limit = Limit {
        until: (Instant::now() + sizes.random_time).min(end),
        stop: halt,
    };
    let (latencies, failed) = measure::random_qd1(
        &mut device,
        capacity,
        align,
        sizes.random_reads,
        &limit,
        &mut spread,
    );
    if failed > 0 {
        r.problem(format!("random reads: {failed} of them failed"));
    }
    let (p50, p99) = (
        plan::percentile(&latencies, 50.0),
        plan::percentile(&latencies, 99.0),
    );
    r.update(|f| {
        f.measurements.random_read_p50_ms = p50;
        f.measurements.random_read_p99_ms = p99;
    });
    if halt.load(Ordering::Relaxed) {
        return;
    }

    let surface_plan = plan::surface_plan(
        capacity,
        align,
        measure::SURFACE_READ,
        sizes.surface_reads,
        &mut spread,
    );
    let total = surface_plan.len();
    r.step(&format!("surface 0/{total}"), 0.3);
    let limit = Limit {
        until: end,
        stop: halt,
    };
    let (sample, problem) =
        measure::surface(&mut device, &surface_plan, align, &limit, &mut |done| {
            r.step(
                &format!("surface {done}/{total}"),
                0.3 + 0.7 * done as f64 / total.max(1) as f64,
            );
        });
    r.update(|f| {
        f.measurements.surface = Some(sample);
        f.problems.extend(problem);
    });
}

/// The disks a triage with no DEV looks at: every whole disk with a size (an unattached loop
/// device has none), not RAM disks.
pub fn every_disk(root: &SysRoot) -> anyhow::Result<Vec<String>> {
    let inventory = root.inventory()?;
    Ok(inventory
        .devices
        .iter()
        .filter(|d| d.transport != Transport::Ram && !d.name.starts_with("ram"))
        .filter(|d| d.size_bytes.is_some_and(|s| s.0 > 0))
        .map(|d| d.name.clone())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_disk_of_a_captured_tree_without_partitions_and_empty_devices() {
        let root = SysRoot::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sysfs/host-loop-zram"
        ));
        let disks = every_disk(&root).unwrap();
        assert!(!disks.is_empty());
        let inventory = root.inventory().unwrap();
        for name in &disks {
            let d = inventory.find(name).unwrap();
            assert!(d.size_bytes.is_some_and(|s| s.0 > 0), "{name}");
            assert!(!name.starts_with("ram"));
        }
        // No partition is listed as a disk.
        for d in &inventory.devices {
            for p in &d.partitions {
                assert!(!disks.contains(&p.name), "{}", p.name);
            }
        }
    }

    #[test]
    fn a_missing_disk_is_said_and_the_bound_holds() {
        let root = SysRoot::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sysfs/qemu-lab"
        ));
        let started = Instant::now();
        let (tx, rx) = mpsc::channel();
        let facts = gather(
            &root,
            &["nope".to_string()],
            &GatherOptions {
                bound: Duration::from_secs(5),
                quick: true,
                since: None,
            },
            Some(tx),
        );
        assert!(started.elapsed() < Duration::from_secs(5) + MARGIN);
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].identity.device, "nope");
        assert!(
            facts[0].problems[0].starts_with("cannot read the device"),
            "{:?}",
            facts[0].problems
        );
        let last = rx.try_iter().last().unwrap();
        assert!(last.done.is_some());
        assert_eq!(last.fraction, 1.0);
    }
}
