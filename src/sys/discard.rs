//! The device side of `disktriage trimcheck`: the discard limits the kernel publishes for a
//! device (`queue/discard_*`), the drive's own claim about a discarded block (ATA IDENTIFY
//! word 69, SCSI READ CAPACITY(16)'s LBPRZ, NVMe Identify Namespace's DLFEAT), and
//! BLKDISCARD on the opened device. The judging is `crate::trim`'s.

use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::flush::{FlushDevice, dev_dir};
use super::passthru::sgio::{self, Transfer};
use super::passthru::{ata, nvme};
use crate::model::DevNum;
use crate::smart::ata::AtaCommand;
use crate::smart::nvme::{AdminCommand, IDENTIFY_LEN};
use crate::trim::{Claim, DiscardLimits};

/// Reads the limits of device `dev` from sysfs; an attribute missing counts as 0.
pub fn limits(dev: DevNum) -> io::Result<DiscardLimits> {
    let dir = dev_dir(dev);
    let read = |rel: &str| -> io::Result<u64> {
        match super::sysfs::read_attr_text(&dir.join(rel)) {
            Ok(text) => super::parse::parse_number(&text).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: not a number", dir.join(rel).display()),
                )
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(e),
        }
    };
    Ok(DiscardLimits {
        max_bytes: read("queue/discard_max_bytes")?,
        granularity: read("queue/discard_granularity")?,
        alignment: read("discard_alignment")?,
        write_zeroes_max: read("queue/write_zeroes_max_bytes")?,
    })
}

/// Discards `len` bytes at `offset` (BLKDISCARD, which drops the page cache of the range
/// first); returns how long the kernel took.
pub fn discard(device: &FlushDevice, offset: u64, len: u64) -> io::Result<Duration> {
    // `_IO(0x12, 119)`: the argument is `uint64_t range[2]` = {start, length}.
    const BLKDISCARD: libc::Ioctl = 0x1277;
    let range: [u64; 2] = [offset, len];
    let started = Instant::now();
    // SAFETY: BLKDISCARD reads two u64 from the local array, alive for the whole synchronous
    // call; the descriptor is open while `device` lives.
    let rc = unsafe { libc::ioctl(device.fd().as_raw_fd(), BLKDISCARD, range.as_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(started.elapsed())
}

/// What the drive says a discarded block reads as: an sd disk (IDENTIFY through SAT, else READ
/// CAPACITY(16)) or NVMe namespace; none without a drive or answer (`notes` say why).
pub fn claim(device: &FlushDevice, notes: &mut Vec<String>) -> Claim {
    let Some(name) = device.name.clone() else {
        return Claim::none("not asked: the device has no kernel name");
    };
    let path = PathBuf::from("/dev").join(&name);
    let file = match device.command_file() {
        Ok(f) => f,
        Err(e) => {
            notes.push(format!("the drive's claim was not asked: {e}"));
            return Claim::none("not asked: no second handle on the device");
        }
    };
    if name.starts_with("nvme") {
        return nvme_claim(&file, &path, device.dev, notes);
    }
    if name.starts_with("sd") {
        return scsi_claim(&file, &path, notes);
    }
    Claim::none(&format!(
        "no drive to ask: {}",
        without_drive(block_driver(device.dev.major).as_deref(), &name)
    ))
}

/// The name block major `major`'s driver registered (`/proc/devices`: `loop`, `nullb`,
/// `virtblk`); a configfs null_blk device may carry any name.
fn block_driver(major: u32) -> Option<String> {
    let text = std::fs::read_to_string("/proc/devices").ok()?;
    text.lines()
        .skip_while(|l| !l.starts_with("Block devices:"))
        .filter_map(|l| l.trim().split_once(' '))
        .find(|(m, _)| super::parse::parse_number::<u32>(m) == Some(major))
        .map(|(_, name)| name.trim().to_string())
}

/// What a device with no drive of its own is, in words: by its driver, else its name.
fn without_drive(driver: Option<&str>, name: &str) -> &'static str {
    const KINDS: [(&str, &str); 8] = [
        ("loop", "a loop device"),
        ("nullb", "null_blk"),
        ("zram", "zram"),
        ("virtblk", "a virtio disk"),
        ("ramdisk", "a RAM disk"),
        ("md", "an md array"),
        ("device-mapper", "a device-mapper device"),
        ("mmc", "an MMC/SD card"),
    ];
    let by_name = [
        ("loop", "loop"),
        ("nullb", "nullb"),
        ("zram", "zram"),
        ("vd", "virtblk"),
        ("ram", "ramdisk"),
        ("md", "md"),
        ("dm-", "device-mapper"),
        ("mmcblk", "mmc"),
    ]
    .into_iter()
    .find(|(prefix, _)| name.starts_with(prefix))
    .map(|(_, driver)| driver);
    driver
        .and_then(|d| KINDS.iter().find(|(k, _)| *k == d))
        .or_else(|| by_name.and_then(|d| KINDS.iter().find(|(k, _)| *k == d)))
        .map_or("the device", |(_, words)| words)
}

/// IDENTIFY word 69 where the disk answers ATA PASS-THROUGH (a SATA disk behind libata or a
/// SAT bridge), else LBPRZ from READ CAPACITY(16).
fn scsi_claim(file: &std::fs::File, path: &Path, notes: &mut Vec<String>) -> Claim {
    match ata::read_sector(file, path, &AtaCommand::identify()) {
        Ok(Ok(page)) if page.len() >= 140 => {
            return Claim::from_ata_word69(u16::from_le_bytes([page[138], page[139]]));
        }
        Ok(_) => {}
        Err(e) => notes.push(format!("ATA IDENTIFY: {e}")),
    }
    // READ CAPACITY(16): SERVICE ACTION IN(16) 0x9e, service action 0x10, 32 bytes.
    let mut data = [0u8; 32];
    let cdb = [0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0];
    match sgio::execute(
        file,
        path,
        "READ CAPACITY(16)",
        &cdb,
        Transfer::FromDevice(&mut data),
        10_000,
    ) {
        Ok(reply) if reply.status == 0 => Claim::from_scsi_lbprz(data[14] & 0x40 != 0),
        Ok(reply) => {
            notes.push(format!(
                "READ CAPACITY(16) refused (SCSI status 0x{:02x})",
                reply.status
            ));
            Claim::none("not said: READ CAPACITY(16) refused")
        }
        Err(e) => {
            notes.push(format!("READ CAPACITY(16): {e}"));
            Claim::none("not said: READ CAPACITY(16) failed")
        }
    }
}

/// DLFEAT from Identify Namespace, the namespace's id from sysfs.
fn nvme_claim(file: &std::fs::File, path: &Path, dev: DevNum, notes: &mut Vec<String>) -> Claim {
    let nsid = super::sysfs::read_attr_text(&dev_dir(dev).join("nsid"))
        .ok()
        .and_then(|t| super::parse::parse_number::<u32>(&t));
    let Some(nsid) = nsid else {
        notes.push("the namespace's id (sysfs nsid) could not be read".into());
        return Claim::none("not asked: the NVMe namespace id is unknown");
    };
    let mut page = vec![0u8; IDENTIFY_LEN];
    match nvme::admin(
        file,
        path,
        &AdminCommand::identify_namespace(nsid),
        Some(&mut page),
    ) {
        Ok(_) => Claim::from_nvme_dlfeat(page[33]),
        Err(e) => {
            notes.push(format!("NVMe Identify Namespace: {e}"));
            Claim::none("not said: NVMe Identify Namespace failed")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::without_drive;

    #[test]
    fn a_device_without_a_drive_is_named_by_its_driver_then_its_name() {
        assert_eq!(without_drive(Some("nullb"), "dt1"), "null_blk");
        assert_eq!(without_drive(None, "nullb0"), "null_blk");
        assert_eq!(without_drive(Some("loop"), "loop3"), "a loop device");
        assert_eq!(without_drive(Some("blkext"), "vda"), "a virtio disk");
        assert_eq!(without_drive(None, "weird"), "the device");
    }
}
