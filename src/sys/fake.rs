//! `FakeDrives`: a hand-written `DriveControl` that touches nothing. Tests give it devices with
//! canned states, make it fail on purpose, and read back the commands it received.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use super::drive_control::{Applied, DriveControl, ResolvedDisk};
use super::error::DriveError;
use crate::model::{
    BlockDevice, DevNum, DeviceIdentity, DriveCache, DriveLogs, KernelWriteCache, SchedulerSet,
    SelfTestKind, SelfTestProgress, SelfTestStatus, SmartReading, Transport,
};

/// One fake device and how it behaves.
#[derive(Debug, Clone)]
pub struct FakeDevice {
    pub device: BlockDevice,
    /// What `DriveControl::identity` reports (a diskseq of 1 unless a test changes it).
    pub identity: DeviceIdentity,
    pub cache: Result<DriveCache, DriveError>,
    pub scheduler: Result<SchedulerSet, DriveError>,
    pub smart: Result<SmartReading, DriveError>,
    pub temperature: Result<Option<i64>, DriveError>,
    /// What `drive_logs` answers (its `self_test` is replaced by `self_test` below).
    pub logs: Result<DriveLogs, DriveError>,
    /// The self-test state `self_test_status` answers when `self_test_polls` is empty.
    pub self_test: Result<SelfTestStatus, DriveError>,
    /// States the next polls answer, one each, each becoming `self_test` (a test that runs
    /// and ends).
    pub self_test_polls: VecDeque<SelfTestStatus>,
    /// Partitions that resolve to this disk.
    pub partitions: Vec<String>,
    /// The kernel's flush policy follows cache changes (libata, sd after a rescan, virtio),
    /// unlike NVMe's.
    pub kernel_follows_cache: bool,
    /// The drive acknowledges cache changes but keeps its state (a bridge that lies).
    pub cache_ignores_set: bool,
    /// The next set (cache or scheduler) fails with this error, once, changing nothing.
    pub fail_next_set: Option<DriveError>,
    /// The next set changes the setting, then reports this error, once (failed half-way).
    pub fail_next_set_after_change: Option<DriveError>,
}

impl FakeDevice {
    /// A device with its cache on, mq-deadline active and SMART unavailable.
    pub fn new(name: &str, transport: Transport) -> Self {
        let mut device = BlockDevice::unknown(name, PathBuf::from("/dev").join(name));
        device.transport = transport;
        device.dev = Some(DevNum { major: 8, minor: 0 });
        device.serial = Some(format!("FAKE-{name}"));
        device.kernel_write_cache = Some(KernelWriteCache::WriteBack);
        let scheduler: SchedulerSet = "none [mq-deadline] kyber bfq".parse().unwrap_or_default();
        device.scheduler = Some(scheduler.clone());
        FakeDevice {
            device,
            identity: DeviceIdentity {
                diskseq: Some(1),
                ..DeviceIdentity::default()
            },
            cache: Ok(DriveCache {
                enabled: Some(true),
                changeable: true,
                fixed_reason: None,
                source: "fake".into(),
            }),
            scheduler: Ok(scheduler),
            smart: Ok(SmartReading::Unavailable {
                reason: format!("SMART not available on {transport}"),
            }),
            temperature: Ok(None),
            logs: Ok(DriveLogs::unavailable(
                name,
                transport,
                &format!("no drive logs on {transport}"),
            )),
            self_test: Ok(SelfTestStatus::unsupported(format!(
                "self-tests not supported on {transport}"
            ))),
            self_test_polls: VecDeque::new(),
            partitions: Vec::new(),
            kernel_follows_cache: transport != Transport::Nvme,
            cache_ignores_set: false,
            fail_next_set: None,
            fail_next_set_after_change: None,
        }
    }

    /// A device without any cache control (loop, zram, ...).
    pub fn without_cache_control(mut self) -> Self {
        self.cache = Err(DriveError::not_supported(
            "drive write cache control",
            self.device.transport,
        ));
        self
    }
}

/// The fake platform.
#[derive(Debug, Default)]
pub struct FakeDrives {
    devices: Mutex<BTreeMap<String, FakeDevice>>,
    calls: Mutex<Vec<String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl FakeDrives {
    pub fn new() -> Self {
        FakeDrives::default()
    }

    /// Adds (or replaces) a device.
    pub fn add(&self, dev: FakeDevice) {
        lock(&self.devices).insert(dev.device.name.clone(), dev);
    }

    /// Builder form of `add`.
    pub fn with(self, dev: FakeDevice) -> Self {
        self.add(dev);
        self
    }

    /// Changes a device in place (to simulate an outside change, a failure, a replug).
    pub fn update(&self, name: &str, f: impl FnOnce(&mut FakeDevice)) {
        if let Some(d) = lock(&self.devices).get_mut(name) {
            f(d);
        }
    }

    /// Removes a device (an unplug).
    pub fn remove(&self, name: &str) {
        lock(&self.devices).remove(name);
    }

    /// The commands received so far, e.g. `set_drive_cache sda off`.
    pub fn calls(&self) -> Vec<String> {
        lock(&self.calls).clone()
    }

    /// Only the calls that change something.
    pub fn set_calls(&self) -> Vec<String> {
        self.calls()
            .into_iter()
            .filter(|c| c.starts_with("set_"))
            .collect()
    }

    fn log(&self, call: String) {
        lock(&self.calls).push(call);
    }

    fn with_device<T>(
        &self,
        name: &str,
        f: impl FnOnce(&mut FakeDevice) -> Result<T, DriveError>,
    ) -> Result<T, DriveError> {
        let mut devices = lock(&self.devices);
        match devices.get_mut(name) {
            Some(d) => f(d),
            None => Err(DriveError::NoDevice(format!("no block device {name:?}"))),
        }
    }
}

impl DriveControl for FakeDrives {
    fn resolve(&self, arg: &str) -> Result<ResolvedDisk, DriveError> {
        let name = arg.strip_prefix("/dev/").unwrap_or(arg);
        let devices = lock(&self.devices);
        if let Some(d) = devices.get(name) {
            return Ok(ResolvedDisk {
                device: d.device.clone(),
                partition: None,
            });
        }
        devices
            .values()
            .find(|d| d.partitions.iter().any(|p| p == name))
            .map(|d| ResolvedDisk {
                device: d.device.clone(),
                partition: Some(name.to_string()),
            })
            .ok_or_else(|| DriveError::NoDevice(format!("no block device {arg:?}")))
    }

    fn device(&self, name: &str) -> Result<BlockDevice, DriveError> {
        self.with_device(name, |d| Ok(d.device.clone()))
    }

    fn identity(&self, dev: &BlockDevice) -> DeviceIdentity {
        self.with_device(&dev.name, |d| Ok(d.identity.clone()))
            .unwrap_or_default()
    }

    fn drive_cache(&self, dev: &BlockDevice) -> Result<DriveCache, DriveError> {
        self.log(format!("drive_cache {}", dev.name));
        self.with_device(&dev.name, |d| d.cache.clone())
    }

    fn set_drive_cache(&self, dev: &BlockDevice, enabled: bool) -> Result<Applied, DriveError> {
        self.log(format!(
            "set_drive_cache {} {}",
            dev.name,
            crate::model::cache::on_off(enabled)
        ));
        self.with_device(&dev.name, |d| {
            if let Some(e) = d.fail_next_set.take() {
                return Err(e);
            }
            let cache = d.cache.as_mut().map_err(|e| e.clone())?;
            if !d.cache_ignores_set {
                cache.enabled = Some(enabled);
                if d.kernel_follows_cache {
                    d.device.kernel_write_cache = Some(KernelWriteCache::from_enabled(enabled));
                }
            }
            if let Some(e) = d.fail_next_set_after_change.take() {
                return Err(e);
            }
            Ok(Applied::default())
        })
    }

    fn scheduler(&self, dev: &BlockDevice) -> Result<SchedulerSet, DriveError> {
        self.with_device(&dev.name, |d| d.scheduler.clone())
    }

    fn set_scheduler(&self, dev: &BlockDevice, name: &str) -> Result<Applied, DriveError> {
        self.log(format!("set_scheduler {} {name}", dev.name));
        self.with_device(&dev.name, |d| {
            if let Some(e) = d.fail_next_set.take() {
                return Err(e);
            }
            let set = d.scheduler.as_mut().map_err(|e| e.clone())?;
            if !set.offers(name) {
                return Err(DriveError::Invalid(format!(
                    "unknown I/O scheduler {name:?} for {}; available: {}",
                    dev.name,
                    set.available.join(", ")
                )));
            }
            set.active = Some(name.to_string());
            d.device.scheduler = Some(set.clone());
            if let Some(e) = d.fail_next_set_after_change.take() {
                return Err(e);
            }
            Ok(Applied::default())
        })
    }

    fn smart(&self, dev: &BlockDevice) -> Result<SmartReading, DriveError> {
        self.with_device(&dev.name, |d| d.smart.clone())
    }

    fn temperature(&self, dev: &BlockDevice) -> Result<Option<i64>, DriveError> {
        self.log(format!("temperature {}", dev.name));
        self.with_device(&dev.name, |d| d.temperature.clone())
    }

    fn drive_logs(&self, dev: &BlockDevice) -> Result<DriveLogs, DriveError> {
        self.log(format!("drive_logs {}", dev.name));
        self.with_device(&dev.name, |d| {
            let mut logs = d.logs.clone()?;
            logs.self_test = d.self_test.clone()?;
            Ok(logs)
        })
    }

    fn self_test_status(&self, dev: &BlockDevice) -> Result<SelfTestStatus, DriveError> {
        self.log(format!("self_test_status {}", dev.name));
        self.with_device(&dev.name, |d| {
            if let Some(next) = d.self_test_polls.pop_front() {
                d.self_test = Ok(next);
            }
            d.self_test.clone()
        })
    }

    fn start_self_test(&self, dev: &BlockDevice, kind: SelfTestKind) -> Result<(), DriveError> {
        self.log(format!("start_self_test {} {kind}", dev.name));
        self.with_device(&dev.name, |d| {
            let status = d.self_test.as_mut().map_err(|e| e.clone())?;
            if !status.supported {
                return Err(DriveError::not_supported_because(
                    "self-test",
                    d.device.transport,
                    status.unsupported_reason.clone().unwrap_or_default(),
                ));
            }
            status.running = match kind {
                SelfTestKind::Abort => None,
                kind => Some(SelfTestProgress {
                    kind: Some(kind.to_string()),
                    percent_done: 0,
                }),
            };
            Ok(())
        })
    }
}
