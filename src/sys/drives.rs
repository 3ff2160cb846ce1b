//! `LinuxDrives`: the `DriveControl` implementation on a Linux system (or a captured sysfs tree,
//! for the sysfs parts), choosing per transport how to reach the drive:
//!
//! | transport | write cache                           | SMART                          |
//! |-----------|---------------------------------------|--------------------------------|
//! | sata      | ATA IDENTIFY + SET FEATURES (SG_IO)   | ATA SMART (SG_IO)              |
//! | usb       | ATA via SAT, else SCSI caching page   | ATA via SAT, else smartctl     |
//! | scsi      | SCSI caching page (MODE SENSE/SELECT) | smartctl                       |
//! | nvme      | Identify VWC + Get/Set Features 0x06  | SMART/Health log               |
//! | virtio    | `/sys/block/vdX/cache_type`           | none                           |
//! | others    | not supported                         | none (smartctl for unknown)    |

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::ata::{self, AtaAnswer};
use super::error::DriveError;
use super::nvme;
use super::platform::{Applied, DriveControl, Target};
use super::scsi;
use super::sgio::{self, TIMEOUT_MS, Transfer};
use super::smartctl;
use super::sysfs::SysRoot;
use crate::model::{
    AtaSmart, AtaSmartStatus, BlockDevice, DriveCache, KernelWriteCache, SchedulerSet,
    SmartReading, Transport,
};
use crate::smart::PageError;
use crate::smart::ata::{
    AtaCommand, AtaIdentity, attribute_table, parse_identify, parse_smart_data,
    parse_smart_thresholds, raw_temperature, smart_status,
};
use crate::smart::nvme::{
    AdminCommand, HEALTH_LOG_LEN, IDENTIFY_LEN, NvmeController, Select, parse_health_log,
    parse_identify_controller,
};
use crate::smart::scsi::PageControl;
use crate::smart::sense::Sense;
use crate::smart::smartctl::parse_smartctl_json;

const CACHE: &str = "drive write cache control";
/// How long libata's asynchronous revalidation after SET FEATURES may take to update the
/// kernel's flush policy.
const KERNEL_FOLLOW_TIMEOUT: Duration = Duration::from_secs(3);

/// The Linux implementation of `DriveControl`.
#[derive(Debug, Clone)]
pub struct LinuxDrives {
    root: SysRoot,
}

/// One raw page for `disktriage debug pages` (fixture capture).
#[derive(Debug, Clone)]
pub struct RawPage {
    pub name: String,
    pub bytes: Result<Vec<u8>, String>,
}

impl LinuxDrives {
    pub fn new(root: SysRoot) -> Self {
        LinuxDrives { root }
    }

    pub fn host() -> Self {
        LinuxDrives::new(SysRoot::host())
    }

    /// The device node below the root (`/dev/sda` on a live system).
    fn node(&self, dev: &BlockDevice) -> PathBuf {
        let rel = dev.path.strip_prefix("/").unwrap_or(&dev.path);
        self.root.root().join(rel)
    }

    /// Opens the node read-only and non-blocking, as hdparm does: SG_IO and the NVMe admin
    /// ioctl need no write access (root's CAP_SYS_RAWIO / CAP_SYS_ADMIN decide).
    fn open(&self, dev: &BlockDevice) -> Result<(File, PathBuf), DriveError> {
        let path = self.node(dev);
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| DriveError::from_io("open", &path, &e))?;
        Ok((file, path))
    }

    fn attr_path(&self, dev: &BlockDevice, rel: &str) -> PathBuf {
        self.root.block_dir(&dev.name).join(rel)
    }

    fn read_attr(&self, dev: &BlockDevice, rel: &str) -> Result<String, DriveError> {
        let path = self.attr_path(dev, rel);
        super::sysfs::read_attr_text(&path)
            .map(|s| s.trim().to_string())
            .map_err(|e| DriveError::from_io("read", &path, &e))
    }

    fn write_attr(&self, dev: &BlockDevice, rel: &str, value: &str) -> Result<(), DriveError> {
        let path = self.attr_path(dev, rel);
        super::sysfs::write_attr(&path, value).map_err(|e| DriveError::from_io("write", &path, &e))
    }

    /// Asks `sd` to re-read the device (caching page included): after a raw MODE SELECT it
    /// keeps a stale `cache_type` and flush policy until then.
    fn rescan(&self, dev: &BlockDevice, applied: &mut Applied) {
        match self.write_attr(dev, "device/rescan", "1") {
            Ok(()) => applied
                .notes
                .push("the kernel's view was refreshed with a SCSI rescan".into()),
            Err(e) => applied.notes.push(format!(
                "could not refresh the kernel's view, its flush policy may be stale: {e}"
            )),
        }
    }

    /// Waits until the kernel's flush policy follows the drive (libata revalidates the
    /// device asynchronously after SET FEATURES).
    fn wait_for_kernel_view(&self, dev: &BlockDevice, enabled: bool, applied: &mut Applied) {
        let want = if enabled {
            KernelWriteCache::WriteBack
        } else {
            KernelWriteCache::WriteThrough
        };
        let start = Instant::now();
        while start.elapsed() < KERNEL_FOLLOW_TIMEOUT {
            let now = self
                .read_attr(dev, "queue/write_cache")
                .ok()
                .and_then(|s| s.parse::<KernelWriteCache>().ok());
            if now == Some(want) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        applied.notes.push(format!(
            "the kernel's flush policy did not follow within {} s",
            KERNEL_FOLLOW_TIMEOUT.as_secs()
        ));
    }

    fn ata_identify(
        &self,
        file: &File,
        path: &Path,
    ) -> Result<Result<AtaIdentity, Sense>, DriveError> {
        match ata::read_sector(file, path, &AtaCommand::identify())? {
            Ok(page) => parse_identify(&page)
                .map(Ok)
                .map_err(|e| bad_answer("ATA IDENTIFY DEVICE", path, &e)),
            Err(sense) => Ok(Err(sense)),
        }
    }

    fn ata_cache(&self, file: &File, path: &Path) -> Result<Result<DriveCache, Sense>, DriveError> {
        Ok(self.ata_identify(file, path)?.map(|id| DriveCache {
            enabled: id.write_cache_supported.then_some(id.write_cache_enabled),
            changeable: id.write_cache_supported,
            fixed_reason: (!id.write_cache_supported)
                .then(|| "IDENTIFY word 82: no write cache the host can control".into()),
            source: "ATA IDENTIFY words 82/85".into(),
        }))
    }

    /// hdparm -W: flush before and after turning the cache off, SET FEATURES in between.
    fn ata_set_cache(
        &self,
        dev: &BlockDevice,
        file: &File,
        path: &Path,
        enabled: bool,
    ) -> Result<Applied, DriveError> {
        let id = match self.ata_identify(file, path)? {
            Ok(id) => id,
            Err(sense) => {
                return Err(DriveError::not_supported_because(
                    CACHE,
                    dev.transport,
                    format!("ATA pass-through refused: {sense}"),
                ));
            }
        };
        if !id.write_cache_supported {
            return Err(DriveError::not_supported_because(
                CACHE,
                dev.transport,
                "the drive reports no volatile write cache",
            ));
        }
        let flush = if id.flush_ext_supported {
            AtaCommand::flush_cache_ext()
        } else {
            AtaCommand::flush_cache()
        };
        if !enabled {
            ata::run(file, path, &flush, None)?;
        }
        if let AtaAnswer::Refused(sense) =
            ata::run(file, path, &AtaCommand::set_write_cache(enabled), None)?
        {
            return Err(DriveError::not_supported_because(
                CACHE,
                dev.transport,
                format!("SET FEATURES refused: {sense}"),
            ));
        }
        if !enabled {
            ata::run(file, path, &flush, None)?;
        }
        let mut applied = Applied::default();
        if dev.transport == Transport::Sata {
            self.wait_for_kernel_view(dev, enabled, &mut applied);
        } else {
            self.rescan(dev, &mut applied);
        }
        Ok(applied)
    }

    fn scsi_cache(
        &self,
        file: &File,
        path: &Path,
    ) -> Result<Result<DriveCache, Sense>, DriveError> {
        let current = match scsi::sense_caching(file, path, PageControl::Current)? {
            Ok((page, _)) => page,
            Err(sense) => return Ok(Err(sense)),
        };
        // A device that will not show its changeable mask is treated as not changeable.
        let changeable = matches!(
            scsi::sense_caching(file, path, PageControl::Changeable),
            Ok(Ok((mask, _))) if mask.wce
        );
        Ok(Ok(DriveCache {
            enabled: Some(current.wce),
            changeable,
            fixed_reason: (!changeable)
                .then(|| "WCE is not in the caching page's changeable mask".into()),
            source: "SCSI caching mode page (WCE)".into(),
        }))
    }

    fn scsi_set_cache(
        &self,
        dev: &BlockDevice,
        file: &File,
        path: &Path,
        enabled: bool,
    ) -> Result<Applied, DriveError> {
        let current = match scsi::sense_caching(file, path, PageControl::Current)? {
            Ok((page, _)) => page,
            Err(sense) => {
                return Err(DriveError::not_supported_because(
                    CACHE,
                    dev.transport,
                    format!("no caching mode page: {sense}"),
                ));
            }
        };
        match scsi::sense_caching(file, path, PageControl::Changeable)? {
            Ok((mask, _)) if mask.wce => {}
            _ => {
                return Err(DriveError::not_supported_because(
                    CACHE,
                    dev.transport,
                    "the drive does not report WCE as changeable",
                ));
            }
        }
        scsi::select_caching(file, path, &current, enabled)?;
        let mut applied = Applied::default();
        self.rescan(dev, &mut applied);
        Ok(applied)
    }

    fn nvme_controller(&self, file: &File, path: &Path) -> Result<NvmeController, DriveError> {
        let mut page = vec![0u8; IDENTIFY_LEN];
        nvme::admin(
            file,
            path,
            &AdminCommand::identify_controller(),
            Some(&mut page),
        )?;
        parse_identify_controller(&page).map_err(|e| bad_answer("NVMe Identify", path, &e))
    }

    fn nvme_cache(&self, file: &File, path: &Path) -> Result<DriveCache, DriveError> {
        let ctrl = self.nvme_controller(file, path)?;
        if !ctrl.vwc_present {
            return Ok(DriveCache {
                enabled: None,
                changeable: false,
                fixed_reason: Some("Identify Controller: no volatile write cache (VWC)".into()),
                source: "NVMe Identify Controller VWC".into(),
            });
        }
        let current = nvme::admin(
            file,
            path,
            &AdminCommand::get_write_cache(Select::Current),
            None,
        )?;
        // Capabilities bit 2: changeable. Without SEL support assume so: VWC present means
        // Set Features 0x06 is mandatory.
        let changeable = if ctrl.supports_select() {
            nvme::admin(
                file,
                path,
                &AdminCommand::get_write_cache(Select::Capabilities),
                None,
            )
            .map(|caps| caps & 0x4 != 0)
            .unwrap_or(true)
        } else {
            true
        };
        Ok(DriveCache {
            enabled: Some(current & 1 != 0),
            changeable,
            fixed_reason: (!changeable)
                .then(|| "Get Features capabilities: feature 0x06 not changeable".into()),
            source: "NVMe Get Features 0x06 (Volatile Write Cache)".into(),
        })
    }

    fn virtio_cache(&self, dev: &BlockDevice) -> Result<DriveCache, DriveError> {
        let path = self.attr_path(dev, "cache_type");
        let meta = match fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(DriveError::not_supported_because(
                    CACHE,
                    dev.transport,
                    "no cache_type attribute",
                ));
            }
            Err(e) => return Err(DriveError::from_io("stat", &path, &e)),
        };
        let text = self.read_attr(dev, "cache_type")?;
        let enabled = match text.as_str() {
            "write back" => true,
            "write through" => false,
            other => {
                return Err(DriveError::BadAnswer {
                    op: "read".into(),
                    path,
                    detail: format!("cache_type {other:?}"),
                });
            }
        };
        // Writable only when VIRTIO_BLK_F_CONFIG_WCE was negotiated.
        let changeable = meta.permissions().mode() & 0o200 != 0;
        Ok(DriveCache {
            enabled: Some(enabled),
            changeable,
            fixed_reason: (!changeable).then(|| {
                "cache_type is read-only: the device did not offer VIRTIO_BLK_F_CONFIG_WCE".into()
            }),
            source: "virtio cache_type".into(),
        })
    }

    fn ata_smart(&self, file: &File, path: &Path) -> Result<Result<AtaSmart, Sense>, DriveError> {
        let id = match self.ata_identify(file, path)? {
            Ok(id) => id,
            Err(sense) => return Ok(Err(sense)),
        };
        let mut smart = AtaSmart {
            smart_supported: id.smart_supported,
            smart_enabled: id.smart_enabled,
            status: AtaSmartStatus::Unknown,
            status_note: None,
            attributes: Vec::new(),
            attribute_problem: None,
        };
        if !(id.smart_supported && id.smart_enabled) {
            return Ok(Ok(smart));
        }
        match ata::smart_return_status(file, path) {
            Ok((AtaAnswer::Done(Some(regs)), _)) => {
                (smart.status, smart.status_note) = smart_status(regs.lba_mid, regs.lba_high);
            }
            Ok((AtaAnswer::Done(None), _)) => {
                smart.status_note =
                    Some("the transport returned no registers for SMART RETURN STATUS".into());
            }
            Ok((AtaAnswer::Refused(sense), _)) => {
                smart.status_note = Some(format!("SMART RETURN STATUS refused: {sense}"));
            }
            Err(e) => smart.status_note = Some(format!("SMART RETURN STATUS failed: {e}")),
        }
        let data = read_page(file, path, &AtaCommand::smart_read_data())
            .and_then(|p| parse_smart_data(&p).map_err(|e| e.to_string()));
        let thresholds = read_page(file, path, &AtaCommand::smart_read_thresholds())
            .and_then(|p| parse_smart_thresholds(&p).map_err(|e| e.to_string()));
        match (&data, &thresholds) {
            (Ok(d), Ok(t)) => smart.attributes = attribute_table(d, Some(t)),
            (Ok(d), Err(e)) => {
                smart.attributes = attribute_table(d, None);
                smart.attribute_problem = Some(format!("thresholds unreadable: {e}"));
            }
            (Err(e), _) => smart.attribute_problem = Some(e.clone()),
        }
        Ok(Ok(smart))
    }

    fn nvme_health(
        &self,
        file: &File,
        path: &Path,
    ) -> Result<crate::model::NvmeHealth, DriveError> {
        let mut page = vec![0u8; HEALTH_LOG_LEN];
        nvme::admin(file, path, &AdminCommand::smart_log(), Some(&mut page))?;
        parse_health_log(&page).map_err(|e| bad_answer("NVMe SMART log", path, &e))
    }

    fn smartctl_reading(&self, dev: &BlockDevice) -> Result<SmartReading, DriveError> {
        let node = self.node(dev);
        match smartctl::run(&node)? {
            None => Ok(SmartReading::Unavailable {
                reason: format!(
                    "SMART not available on {} (disktriage reads SMART natively from ATA and \
                     NVMe drives only; smartctl, which could try, is not installed)",
                    dev.transport
                ),
            }),
            Some((json, code)) => match parse_smartctl_json(&json, code) {
                Ok(report) => Ok(SmartReading::Smartctl(Box::new(report))),
                Err(e) => Ok(SmartReading::Unavailable {
                    reason: format!(
                        "SMART not available on {}: smartctl's answer was unreadable ({e})",
                        dev.transport
                    ),
                }),
            },
        }
    }

    /// Raw pages for fixture capture (`disktriage debug pages`), named by what they are.
    pub fn raw_pages(&self, dev: &BlockDevice) -> Vec<RawPage> {
        let mut pages = Vec::new();
        let (file, path) = match self.open(dev) {
            Ok(f) => f,
            Err(e) => {
                pages.push(RawPage {
                    name: "open".into(),
                    bytes: Err(e.to_string()),
                });
                return pages;
            }
        };
        let mut push = |name: &str, bytes: Result<Vec<u8>, String>| {
            pages.push(RawPage {
                name: name.to_string(),
                bytes,
            });
        };
        match dev.transport {
            Transport::Nvme => {
                for (name, cmd, len) in [
                    (
                        "nvme-identify-controller",
                        AdminCommand::identify_controller(),
                        IDENTIFY_LEN,
                    ),
                    ("nvme-smart-log", AdminCommand::smart_log(), HEALTH_LOG_LEN),
                ] {
                    let mut page = vec![0u8; len];
                    let r = nvme::admin(&file, &path, &cmd, Some(&mut page));
                    push(name, r.map(|_| page).map_err(|e| e.to_string()));
                }
                let r = nvme::admin(
                    &file,
                    &path,
                    &AdminCommand::get_write_cache(Select::Current),
                    None,
                );
                push(
                    "nvme-get-features-vwc-result",
                    r.map(|v| v.to_le_bytes().to_vec())
                        .map_err(|e| e.to_string()),
                );
            }
            Transport::Sata | Transport::Scsi | Transport::Usb | Transport::Unknown => {
                for (name, cmd) in [
                    ("ata-identify", AtaCommand::identify()),
                    ("ata-smart-data", AtaCommand::smart_read_data()),
                    ("ata-smart-thresholds", AtaCommand::smart_read_thresholds()),
                    ("ata-smart-status", AtaCommand::smart_return_status()),
                ] {
                    let mut buf = [0u8; 512];
                    let transfer = if cmd.reads_sector() {
                        Transfer::FromDevice(&mut buf)
                    } else {
                        Transfer::None
                    };
                    let r = sgio::execute(&file, &path, cmd.name, &cmd.cdb(), transfer, TIMEOUT_MS);
                    match r {
                        Ok(reply) => {
                            push(
                                &format!("{name}-sense"),
                                Ok(std::iter::once(reply.status)
                                    .chain(reply.sense.iter().copied())
                                    .collect()),
                            );
                            if cmd.reads_sector() && reply.status == 0 {
                                push(name, Ok(buf.to_vec()));
                            }
                        }
                        Err(e) => push(name, Err(e.to_string())),
                    }
                }
                for (name, pc) in [
                    ("scsi-caching-current", PageControl::Current),
                    ("scsi-caching-changeable", PageControl::Changeable),
                ] {
                    let r = scsi::sense_caching(&file, &path, pc);
                    push(
                        name,
                        match r {
                            Ok(Ok((_, raw))) => Ok(raw),
                            Ok(Err(sense)) => Err(format!("refused: {sense}")),
                            Err(e) => Err(e.to_string()),
                        },
                    );
                }
            }
            _ => push("none", Err(format!("no raw pages on {}", dev.transport))),
        }
        pages
    }
}

/// Reads one SMART sector; refusals and errors in words.
fn read_page(file: &File, path: &Path, cmd: &AtaCommand) -> Result<Vec<u8>, String> {
    match ata::read_sector(file, path, cmd) {
        Ok(Ok(page)) => Ok(page),
        Ok(Err(sense)) => Err(format!("{} refused: {sense}", cmd.name)),
        Err(e) => Err(e.to_string()),
    }
}

fn bad_answer(op: &str, path: &Path, e: &PageError) -> DriveError {
    DriveError::BadAnswer {
        op: op.to_string(),
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// A scheduler name as the kernel spells them; anything else is refused before it reaches
/// sysfs.
fn valid_scheduler_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl DriveControl for LinuxDrives {
    fn resolve(&self, arg: &str) -> Result<Target, DriveError> {
        let (disk, partition) = self.root.resolve_disk(arg)?;
        Ok(Target {
            device: self.root.read_device(&disk),
            partition,
        })
    }

    fn device(&self, name: &str) -> Result<BlockDevice, DriveError> {
        if !crate::model::is_kernel_name(name) {
            return Err(DriveError::Invalid(format!(
                "{:?} is not a kernel device name",
                crate::model::text::neutralize_controls(name)
            )));
        }
        if !self.root.block_dir(name).is_dir() {
            return Err(DriveError::NoDevice(format!(
                "no block device {name:?} (removed?)"
            )));
        }
        Ok(self.root.read_device(name))
    }

    fn identity(&self, dev: &BlockDevice) -> crate::model::DeviceIdentity {
        self.root.device_identity(&dev.name)
    }

    fn drive_cache(&self, dev: &BlockDevice) -> Result<DriveCache, DriveError> {
        match dev.transport {
            Transport::Virtio => self.virtio_cache(dev),
            Transport::Nvme => {
                let (file, path) = self.open(dev)?;
                self.nvme_cache(&file, &path)
            }
            Transport::Sata => {
                let (file, path) = self.open(dev)?;
                self.ata_cache(&file, &path)?.map_err(|sense| {
                    DriveError::not_supported_because(
                        CACHE,
                        dev.transport,
                        format!("ATA pass-through refused: {sense}"),
                    )
                })
            }
            Transport::Scsi => {
                let (file, path) = self.open(dev)?;
                self.scsi_cache(&file, &path)?.map_err(|sense| {
                    DriveError::not_supported_because(
                        CACHE,
                        dev.transport,
                        format!("no caching mode page: {sense}"),
                    )
                })
            }
            Transport::Usb => {
                let (file, path) = self.open(dev)?;
                if let Ok(cache) = self.ata_cache(&file, &path)? {
                    return Ok(cache);
                }
                self.scsi_cache(&file, &path)?.map_err(|_| {
                    DriveError::not_supported_because(
                        CACHE,
                        dev.transport,
                        "the bridge refuses ATA pass-through and has no caching mode page",
                    )
                })
            }
            other => Err(DriveError::not_supported(CACHE, other)),
        }
    }

    fn set_drive_cache(&self, dev: &BlockDevice, enabled: bool) -> Result<Applied, DriveError> {
        match dev.transport {
            Transport::Virtio => {
                let cache = self.virtio_cache(dev)?;
                if !cache.changeable {
                    return Err(DriveError::not_supported_because(
                        CACHE,
                        dev.transport,
                        cache.fixed_reason.unwrap_or_default(),
                    ));
                }
                let value = if enabled {
                    "write back"
                } else {
                    "write through"
                };
                self.write_attr(dev, "cache_type", value)?;
                Ok(Applied::default())
            }
            Transport::Nvme => {
                let (file, path) = self.open(dev)?;
                nvme::admin(&file, &path, &AdminCommand::set_write_cache(enabled), None)?;
                Ok(Applied {
                    notes: vec![
                        "the NVMe driver does not update the kernel's flush policy after Set \
                         Features; it set it once, from VWC presence, at probe"
                            .into(),
                    ],
                })
            }
            Transport::Sata => {
                let (file, path) = self.open(dev)?;
                self.ata_set_cache(dev, &file, &path, enabled)
            }
            Transport::Scsi => {
                let (file, path) = self.open(dev)?;
                self.scsi_set_cache(dev, &file, &path, enabled)
            }
            Transport::Usb => {
                let (file, path) = self.open(dev)?;
                if self.ata_cache(&file, &path)?.is_ok() {
                    self.ata_set_cache(dev, &file, &path, enabled)
                } else {
                    self.scsi_set_cache(dev, &file, &path, enabled)
                }
            }
            other => Err(DriveError::not_supported(CACHE, other)),
        }
    }

    fn scheduler(&self, dev: &BlockDevice) -> Result<SchedulerSet, DriveError> {
        let path = self.attr_path(dev, "queue/scheduler");
        match super::sysfs::read_attr_text(&path) {
            Ok(text) => text.parse().map_err(|e| DriveError::BadAnswer {
                op: "read".into(),
                path,
                detail: format!("{e}"),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(DriveError::not_supported_because(
                    "I/O scheduler",
                    dev.transport,
                    "a bio-based device: no queue/scheduler",
                ))
            }
            Err(e) => Err(DriveError::from_io("read", &path, &e)),
        }
    }

    fn set_scheduler(&self, dev: &BlockDevice, name: &str) -> Result<Applied, DriveError> {
        let offered = self.scheduler(dev)?;
        let available = || offered.available.join(", ");
        if offered.is_empty() {
            return Err(DriveError::not_supported_because(
                "I/O scheduler",
                dev.transport,
                "the kernel offers no scheduler for this queue",
            ));
        }
        let unknown = || {
            DriveError::Invalid(format!(
                "unknown I/O scheduler {:?} for {}; available: {}",
                crate::model::text::neutralize_controls(name),
                dev.name,
                available()
            ))
        };
        if !valid_scheduler_name(name) {
            return Err(unknown());
        }
        // A name not listed may still work: the kernel loads `<name>-iosched` on demand. It
        // answers EINVAL when there is no such scheduler.
        let path = self.attr_path(dev, "queue/scheduler");
        match super::sysfs::write_attr(&path, name) {
            Ok(()) => Ok(Applied::default()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Err(unknown()),
            Err(e) => Err(DriveError::from_io("write", &path, &e)),
        }
    }

    fn smart(&self, dev: &BlockDevice) -> Result<SmartReading, DriveError> {
        let unavailable = || SmartReading::Unavailable {
            reason: format!("SMART not available on {}", dev.transport),
        };
        match dev.transport {
            Transport::Nvme => {
                let (file, path) = self.open(dev)?;
                Ok(SmartReading::Nvme(self.nvme_health(&file, &path)?))
            }
            Transport::Sata => {
                let (file, path) = self.open(dev)?;
                match self.ata_smart(&file, &path)? {
                    Ok(smart) => Ok(SmartReading::Ata(smart)),
                    Err(sense) => Ok(SmartReading::Unavailable {
                        reason: format!(
                            "SMART not available on sata: ATA pass-through refused ({sense})"
                        ),
                    }),
                }
            }
            Transport::Usb => {
                let (file, path) = self.open(dev)?;
                match self.ata_smart(&file, &path) {
                    Ok(Ok(smart)) => Ok(SmartReading::Ata(smart)),
                    // The bridge does not do SAT: smartctl may know its vendor pass-through.
                    Ok(Err(_)) | Err(DriveError::Device { .. }) => self.smartctl_reading(dev),
                    Err(e) => Err(e),
                }
            }
            Transport::Scsi | Transport::Unknown => self.smartctl_reading(dev),
            _ => Ok(unavailable()),
        }
    }

    fn temperature(&self, dev: &BlockDevice) -> Result<Option<i64>, DriveError> {
        match dev.transport {
            Transport::Nvme => {
                let (file, path) = self.open(dev)?;
                Ok(self.nvme_health(&file, &path)?.temperature_c())
            }
            Transport::Sata | Transport::Usb => {
                let (file, path) = self.open(dev)?;
                let page = match read_page(&file, &path, &AtaCommand::smart_read_data()) {
                    Ok(page) => page,
                    Err(_) if dev.transport == Transport::Usb => return Ok(None),
                    Err(e) => {
                        return Err(DriveError::Device {
                            op: "ATA SMART READ DATA".into(),
                            path,
                            detail: e,
                        });
                    }
                };
                let data = parse_smart_data(&page)
                    .map_err(|e| bad_answer("SMART READ DATA", &path, &e))?;
                Ok([194u8, 190].iter().find_map(|id| {
                    data.attributes
                        .iter()
                        .find(|a| a.id == *id)
                        .and_then(|a| raw_temperature(&a.raw))
                }))
            }
            _ => Ok(None),
        }
    }
}
