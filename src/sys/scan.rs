//! The device side of the surface scan: the target opened read-only with O_DIRECT (never
//! exclusively: a scan only reads, so a mounted or held device is allowed), its geometry, the
//! timed reads `scan::engine` asks for, and whether it is still the device the scan started on.
//! The scan's output files are `output_file`'s.
//!
//! A plain O_DIRECT read cannot be abandoned: the kernel retries a weak sector
//! (`/sys/block/X/device/timeout`, 30 s by default) and the block is then classified TIME. On
//! an sd disk (SATA, SAS, USB, virtio-scsi) `enforce_timeout` sends SCSI READs instead, each
//! with `--timeout` as its command timeout: the SCSI layer aborts it without retries
//! (`ReadOutcome::TimedOut`). They go through the disk's sg node (`passthru::sg_queue`), the
//! pieces of a block larger than `queue/max_sectors_kb` together; without one, through SG_IO on
//! the block device, one after another, never sooner than `SG_MIN_TIMEOUT`. The Timeout line
//! says which. These reads bypass the block layer, so `/sys/block/X/stat` does not count them.

use std::io;
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::direct::{self, AlignedBuf, OpenSpec, Opened, SyncMode};
use super::passthru::sg_queue::{self, SgQueue};
use super::passthru::sgio::{self, DID_TIME_OUT, DRIVER_SENSE, SgError, SgRawReply, Transfer};
use super::sysfs::read_attr_text;
use crate::model::{Bytes, DevNum};
use crate::scan::Span;
use crate::scan::engine::{BlockReader, ReadOutcome, TimedRead};
use crate::scan::repair::SectorWriter;
use crate::smart::sense::parse_sense;

/// The largest read of a scan whatever the device says (the kernel splits larger requests).
pub const MAX_BLOCK: u64 = 64 << 20;

/// A block device opened for the scan.
pub struct ScanDevice {
    fd: OwnedFd,
    /// What the path named when the scan started (O_PATH): a repair's writer opens this object.
    pinned: OwnedFd,
    pub dev: DevNum,
    /// The kernel name (`sdb`, `loop0`), when sysfs knows the number.
    pub name: Option<String>,
    pub size: u64,
    pub logical: u32,
    pub physical: u32,
    /// `queue/max_sectors_kb` in bytes: the largest request the kernel sends the device.
    pub max_transfer: Option<u64>,
    /// For a partition: where it starts on its disk, in bytes (sysfs `start`, 512-byte units).
    pub partition_start: Option<u64>,
    /// `diskseq` at open: another device under the same number has another one.
    diskseq: Option<u64>,
    buf: Option<AlignedBuf>,
    /// Set by `enforce_timeout`.
    sg: Option<SgReads>,
    /// The disk's sg node (`open_queue`); without it, SG_IO on the block device.
    queue: Option<SgQueue>,
}

/// How SG_IO reads are addressed and timed.
#[derive(Debug, Clone, Copy)]
struct SgReads {
    /// --timeout through the sg node, at least `SG_MIN_TIMEOUT` through the block device.
    timeout: Duration,
    /// A partition's start on its disk (0 for a whole disk): the commands address the disk.
    first_lba: u64,
    logical: u64,
    /// The largest read of one command (the disk's largest transfer, in whole logical blocks).
    piece: u64,
}

fn dev_dir(dev: DevNum) -> PathBuf {
    PathBuf::from(format!("/sys/dev/block/{dev}"))
}

/// The whole disk a device is part of: itself, or for a partition its parent.
pub fn whole_disk(dev: DevNum) -> DevNum {
    let dir = dev_dir(dev);
    if !dir.join("partition").exists() {
        return dev;
    }
    read_attr_text(&dir.join("../dev"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(dev)
}

fn number(path: &Path) -> Option<u64> {
    read_attr_text(path).ok()?.trim().parse().ok()
}

impl ScanDevice {
    /// Opens `path` read-only with O_DIRECT, through the descriptor that checked it is a block
    /// device (resolved once).
    pub fn open(path: &Path) -> io::Result<ScanDevice> {
        let pinned = direct::pin(path)?;
        let Opened::Block { dev, name } = direct::describe_fd(&pinned)? else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a block device (a scan reads a disk or a partition)",
            ));
        };
        let fd = direct::reopen(
            &pinned,
            OpenSpec {
                write: false,
                direct: true,
                exclusive: false,
                sync: SyncMode::None,
            },
        )?;
        let (size, logical, physical) = direct::block_geometry(&fd)?;
        let disk_dir = dev_dir(whole_disk(dev));
        let max_transfer =
            number(&disk_dir.join("queue/max_sectors_kb")).map(|kb| kb.saturating_mul(1024));
        Ok(ScanDevice {
            fd,
            pinned,
            dev,
            name,
            size,
            logical,
            physical,
            max_transfer,
            diskseq: number(&disk_dir.join("diskseq")),
            partition_start: number(&dev_dir(dev).join("partition"))
                .and_then(|_| number(&dev_dir(dev).join("start")))
                .map(|sectors| sectors.saturating_mul(512)),
            buf: None,
            sg: None,
            queue: None,
        })
    }

    /// Whether the opened device is still the one the admin chose: the refusal's sentence if not.
    pub fn refuse_unless_chosen(
        &self,
        chosen: &crate::model::ChosenDevice,
    ) -> io::Result<Result<(), String>> {
        direct::refuse_unless_chosen(&self.fd, chosen)
    }

    /// Opens for `--repair`'s writes the very object the scan opened (not the path again):
    /// O_DIRECT, write-only, O_EXCL (EBUSY while mounted or held). The caller checks its identity
    /// (`ZeroWriter::refuse_unless_chosen`) before any write.
    pub fn open_writer(&self) -> io::Result<ZeroWriter> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT | libc::O_EXCL | libc::O_CLOEXEC)
            .open(format!("/proc/self/fd/{}", self.pinned.as_raw_fd()))?;
        let meta = file.metadata()?;
        if !std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type())
            || direct::devnum(meta.rdev()) != self.dev
        {
            return Err(io::Error::other(
                "the device changed while it was being opened for writing",
            ));
        }
        let fd = OwnedFd::from(file);
        Ok(ZeroWriter {
            fd,
            buf: None,
            logical: u64::from(self.logical.max(512)),
        })
    }

    /// The kernel's read-only flag of the device (BLKROGET).
    pub fn read_only(&self) -> io::Result<bool> {
        direct::read_only_fd(&self.fd)
    }

    /// Switches the reads to SG_IO with `timeout` per command on an sd disk that accepts it (a
    /// one-sector read checks): `Ok` says how, `Err` why not (reads stay plain O_DIRECT).
    pub fn enforce_timeout(&mut self, timeout: Duration) -> Result<(String, Duration), String> {
        let disk = whole_disk(self.dev);
        let disk_name = direct::block_name(disk).unwrap_or_else(|| disk.to_string());
        if !dev_dir(disk).join("device/scsi_disk").is_dir() {
            return Err(format!(
                "{disk_name} is not a SCSI or SATA disk (sd): plain O_DIRECT reads"
            ));
        }
        let logical = u64::from(self.logical.max(512));
        let block = self.buf.as_ref().map_or(logical, |b| b.len() as u64);
        let piece = self
            .max_transfer
            .map(|m| m / logical * logical)
            .filter(|&p| p >= logical)
            .unwrap_or(block)
            .min(block.max(logical));
        let sg = SgReads {
            timeout: timeout.max(SG_MIN_TIMEOUT),
            first_lba: self.partition_start.unwrap_or(0) / logical,
            logical,
            piece,
        };
        let mut probe = AlignedBuf::for_requests(self.logical.max(512) as usize, false)
            .map_err(|e| format!("no buffer for the SG_IO check: {e}"))?;
        let slice = probe.as_mut_slice();
        let reply = sg_read(&self.fd, sg, 0, slice).map_err(|e| match e {
            SgError::Errno(errno) => {
                format!("SG_IO on {disk_name} failed ({errno})")
            }
            SgError::Invalid(what) => format!("SG_IO on {disk_name}: {what}"),
        })?;
        // A medium error or a slow answer at the first sector still shows SG_IO reads work.
        if ![0, DID_TIME_OUT, DID_MEDIUM_ERROR].contains(&reply.host_status) {
            return Err(format!(
                "SG_IO READ on {disk_name} failed (host status 0x{:02x})",
                reply.host_status
            ));
        }
        if reply.status == CHECK_CONDITION
            && parse_sense(&reply.sense).is_ok_and(|s| s.key == ILLEGAL_REQUEST)
        {
            return Err(format!(
                "{disk_name} refused READ through SG_IO (ILLEGAL REQUEST)"
            ));
        }
        let (how, sg) = self.open_queue(disk, &disk_name, block, sg, timeout);
        self.sg = Some(sg);
        Ok((how, sg.timeout))
    }

    /// Opens the disk's sg node (`sg_queue`), where each command carries `timeout` itself and a
    /// block's pieces go together; without one, SG_IO on the block device. Says how.
    fn open_queue(
        &mut self,
        disk: DevNum,
        disk_name: &str,
        block: u64,
        mut sg: SgReads,
        timeout: Duration,
    ) -> (String, SgReads) {
        let pieces = block.div_ceil(sg.piece.max(1));
        let in_flight = usize::try_from(pieces)
            .unwrap_or(sg_queue::MAX_IN_FLIGHT)
            .clamp(1, sg_queue::MAX_IN_FLIGHT);
        let piece_len = usize::try_from(sg.piece).unwrap_or(usize::MAX);
        let split = |together: &str| {
            if pieces > 1 {
                format!(
                    "; a {} block is {pieces} commands of {}, {together}",
                    Bytes(block),
                    Bytes(sg.piece)
                )
            } else {
                String::new()
            }
        };
        match SgQueue::open(&dev_dir(disk), in_flight, piece_len) {
            Ok(q) => {
                sg.timeout = timeout.max(Duration::from_millis(1));
                let how = format!(
                    "SG_IO READ through {}, the sg node of the SCSI disk {disk_name}, each \
                     command with a {} ms timeout{}",
                    q.node,
                    sg.timeout.as_millis(),
                    split("sent together")
                );
                self.queue = Some(q);
                (how, sg)
            }
            Err(why) => {
                let floor = if timeout < SG_MIN_TIMEOUT {
                    ", the kernel's shortest for SG_IO on a block device"
                } else {
                    ""
                };
                let split = split("one after another");
                // Why not the sg node, when it would have made a difference.
                let why = if floor.is_empty() && split.is_empty() {
                    String::new()
                } else {
                    format!("; {why}")
                };
                let how = format!(
                    "SG_IO READ on the SCSI disk {disk_name}, each command with a {} ms \
                     timeout{floor}{split}{why}",
                    sg.timeout.as_millis(),
                );
                (how, sg)
            }
        }
    }

    /// Prepares the read buffer for blocks of `block` bytes.
    pub fn set_block(&mut self, block: u64) -> io::Result<()> {
        let len = usize::try_from(block)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "block too large"))?;
        self.buf = Some(AlignedBuf::for_requests(len, false)?);
        Ok(())
    }
}

impl BlockReader for ScanDevice {
    fn read(&mut self, span: Span) -> TimedRead {
        let start = Instant::now();
        let outcome = match self.buf.as_mut() {
            None => ReadOutcome::Failed(libc::ENOMEM),
            Some(buf) => {
                let len = usize::try_from(span.length).unwrap_or(usize::MAX);
                match (buf.as_mut_slice().get_mut(..len), self.sg) {
                    (None, _) => ReadOutcome::Failed(libc::EINVAL),
                    (Some(slice), None) => read_full(&self.fd, slice, span.offset),
                    (Some(slice), Some(sg)) => {
                        sg_read_block(&self.fd, self.queue.as_mut(), sg, span.offset, slice)
                    }
                }
            }
        };
        TimedRead {
            outcome,
            elapsed: start.elapsed(),
        }
    }

    fn gone(&mut self) -> Option<String> {
        let dir = dev_dir(self.dev);
        if !dir.exists() {
            return Some(format!("the device {} was removed", self.dev));
        }
        let disk_dir = dev_dir(whole_disk(self.dev));
        let seq = number(&disk_dir.join("diskseq"));
        // Its attributes gone: the disk is being removed, not replaced (seen in the QEMU lab).
        if self.diskseq.is_some() && seq.is_none() {
            return Some(format!("the device {} was removed", self.dev));
        }
        if self.diskseq.is_some() && seq != self.diskseq {
            return Some(format!(
                "the device {} is another disk now (diskseq {} -> {})",
                self.dev,
                self.diskseq.unwrap_or(0),
                seq.map_or("none".into(), |s| s.to_string())
            ));
        }
        match direct::block_geometry(&self.fd) {
            // The kernel sets a disk's capacity to 0 as it deletes it.
            Ok((0, _, _)) if self.size > 0 => Some(format!(
                "the device {} was removed (its size is 0 now)",
                self.dev
            )),
            Ok((size, _, _)) if size != self.size => Some(format!(
                "the device's size changed from {} to {size} bytes",
                self.size
            )),
            Ok(_) => None,
            Err(e) => Some(format!(
                "the device cannot be asked its size any more: {}",
                super::error::describe_io(&e)
            )),
        }
    }
}

/// The descriptor `scan --repair` writes zeros through (O_DIRECT, O_WRONLY, O_EXCL).
pub struct ZeroWriter {
    fd: OwnedFd,
    /// Zeros, aligned for O_DIRECT, as large as the largest write asked so far.
    buf: Option<AlignedBuf>,
    logical: u64,
}

impl ZeroWriter {
    /// Refuses the written device unless it is `chosen`, checked on this descriptor.
    pub fn refuse_unless_chosen(
        &self,
        chosen: &crate::model::ChosenDevice,
    ) -> io::Result<Result<(), String>> {
        direct::refuse_unless_chosen(&self.fd, chosen)
    }

    /// A second descriptor of the same open device (dup), to check its identity between writes.
    pub fn probe(&self) -> io::Result<WrittenDevice> {
        Ok(WrittenDevice {
            fd: self.fd.try_clone()?,
        })
    }

    /// Prepares the zeros for writes of up to `len` bytes (allocated once, before any write).
    pub fn set_max_write(&mut self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "write too large"))?;
        self.buf = Some(AlignedBuf::zeroed(len.max(1), 4096)?);
        Ok(())
    }
}

/// The device a `ZeroWriter` writes, held through a duplicate of its descriptor.
pub struct WrittenDevice {
    fd: OwnedFd,
}

impl WrittenDevice {
    /// Refuses the written device unless it is `chosen`, checked on the writer's descriptor.
    pub fn refuse_unless_chosen(
        &self,
        chosen: &crate::model::ChosenDevice,
    ) -> io::Result<Result<(), String>> {
        direct::refuse_unless_chosen(&self.fd, chosen)
    }
}

impl SectorWriter for ZeroWriter {
    fn write_zeros(&mut self, span: Span) -> Result<(), i32> {
        if !span.offset.is_multiple_of(self.logical) || !span.length.is_multiple_of(self.logical) {
            return Err(libc::EINVAL);
        }
        let Some(buf) = self.buf.as_ref() else {
            return Err(libc::ENOMEM);
        };
        let len = usize::try_from(span.length).unwrap_or(usize::MAX);
        let Some(zeros) = buf.as_slice().get(..len) else {
            return Err(libc::EINVAL);
        };
        let mut done = 0usize;
        while done < zeros.len() {
            match direct::write_at(&self.fd, &zeros[done..], span.offset + done as u64) {
                Ok(0) => return Err(libc::EIO),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.raw_os_error().unwrap_or(libc::EIO)),
            }
        }
        Ok(())
    }
}

/// The shortest command timeout the kernel gives SG_IO on a block device
/// (`BLK_MIN_SG_TIMEOUT`): a shorter one is raised to it, so a scan counts TIME from
/// --timeout but abandons at 7 s (a 1 s timeout aborted at 7.1 s in the QEMU lab). The sg node
/// has no floor: there it aborted at 2.1 s, the block layer rounding its timer up to a second.
/// This is the one place the floor is explained; the Timeout line says which applies.
pub const SG_MIN_TIMEOUT: Duration = Duration::from_secs(7);

/// `host_status` of an unrecovered medium error (the SCSI layer's `DID_MEDIUM_ERROR`).
const DID_MEDIUM_ERROR: u16 = 0x13;
const CHECK_CONDITION: u8 = 0x02;
const MEDIUM_ERROR: u8 = 0x03;
const ILLEGAL_REQUEST: u8 = 0x05;

/// The read CDB for `count` blocks at `lba`: READ(10) when it can address them (what sd sends,
/// and all some USB bridges know), else READ(16).
fn read_cdb(lba: u64, count: u32) -> Vec<u8> {
    match (u32::try_from(lba), u16::try_from(count)) {
        (Ok(lba32), Ok(count16)) if lba32.checked_add(u32::from(count16)).is_some() => {
            let mut cdb = vec![0x28, 0];
            cdb.extend_from_slice(&lba32.to_be_bytes());
            cdb.push(0);
            cdb.extend_from_slice(&count16.to_be_bytes());
            cdb.push(0);
            cdb
        }
        _ => {
            let mut cdb = vec![0x88, 0];
            cdb.extend_from_slice(&lba.to_be_bytes());
            cdb.extend_from_slice(&count.to_be_bytes());
            cdb.extend_from_slice(&[0, 0]);
            cdb
        }
    }
}

fn sg_read(fd: &OwnedFd, sg: SgReads, offset: u64, buf: &mut [u8]) -> Result<SgRawReply, SgError> {
    let count = u32::try_from(buf.len() as u64 / sg.logical)
        .map_err(|_| SgError::Invalid(format!("a read of {} bytes", buf.len())))?;
    let lba = sg.first_lba + offset / sg.logical;
    let timeout_ms = command_timeout_ms(sg);
    sgio::execute_fd(
        fd.as_raw_fd(),
        &read_cdb(lba, count),
        Transfer::FromDevice(buf),
        timeout_ms,
    )
}

/// Reads `buf` at `offset` in SCSI READs of at most `sg.piece`: together through the sg node (as
/// the block layer sends a large read), else one by one. The worst piece's outcome is the block's.
fn sg_read_block(
    fd: &OwnedFd,
    queue: Option<&mut SgQueue>,
    sg: SgReads,
    offset: u64,
    buf: &mut [u8],
) -> ReadOutcome {
    let piece = usize::try_from(sg.piece).unwrap_or(usize::MAX).max(1);
    let mut outcomes = Vec::new();
    match queue {
        Some(q) => {
            let start = Instant::now();
            let cdbs: Vec<(Vec<u8>, usize)> = (0..buf.len())
                .step_by(piece)
                .map(|at| {
                    let len = piece.min(buf.len() - at);
                    let lba = sg.first_lba + (offset + at as u64) / sg.logical;
                    let count = u32::try_from(len as u64 / sg.logical).unwrap_or(u32::MAX);
                    (read_cdb(lba, count), len)
                })
                .collect();
            let replies = q.run(&cdbs, command_timeout_ms(sg));
            let late = start.elapsed() >= sg.timeout;
            outcomes.extend(replies.into_iter().map(|r| sg_outcome(r, late)));
        }
        _ => {
            for (i, chunk) in buf.chunks_mut(piece).enumerate() {
                let began = Instant::now();
                let reply = sg_read(fd, sg, offset + (i * piece) as u64, chunk);
                outcomes.push(sg_outcome(reply, began.elapsed() >= sg.timeout));
            }
        }
    }
    worst_outcome(&outcomes)
}

/// Abandoned if any piece was (the block is left for the next run), else the first failure (the
/// engine bisects the block), else read.
fn worst_outcome(pieces: &[ReadOutcome]) -> ReadOutcome {
    if pieces.contains(&ReadOutcome::TimedOut) {
        return ReadOutcome::TimedOut;
    }
    pieces
        .iter()
        .find(|o| **o != ReadOutcome::Read)
        .copied()
        .unwrap_or(ReadOutcome::Read)
}

/// The command timeout in milliseconds, as the SCSI layer takes it (0 would mean its default).
fn command_timeout_ms(sg: SgReads) -> u32 {
    u32::try_from(sg.timeout.as_millis())
        .unwrap_or(u32::MAX)
        .max(1)
}

/// What an SG_IO reply means for the scan. `late` (at or after the timeout): a failure is the
/// abort's (libata may answer a timed-out command with sense, not `DID_TIME_OUT`). Errnos match
/// a plain read's: ENODATA for an unrecovered medium error, EIO otherwise.
fn sg_outcome(reply: Result<SgRawReply, SgError>, late: bool) -> ReadOutcome {
    let reply = match reply {
        Ok(r) => r,
        Err(SgError::Errno(errno)) => return ReadOutcome::Failed(errno as i32),
        Err(SgError::Invalid(_)) => return ReadOutcome::Failed(libc::EINVAL),
    };
    let transport_ok =
        reply.host_status == 0 && (reply.driver_status == 0 || reply.driver_status == DRIVER_SENSE);
    if reply.host_status == DID_TIME_OUT {
        return ReadOutcome::TimedOut;
    }
    if transport_ok && reply.status == 0 {
        // GOOD with bytes missing: not a read of the block.
        return if reply.resid > 0 {
            ReadOutcome::Failed(libc::EIO)
        } else {
            ReadOutcome::Read
        };
    }
    if late {
        return ReadOutcome::TimedOut;
    }
    if reply.status == CHECK_CONDITION
        && let Ok(sense) = parse_sense(&reply.sense)
        && sense.key == MEDIUM_ERROR
        && matches!(sense.asc, 0x11 | 0x13 | 0x14)
    {
        return ReadOutcome::Failed(libc::ENODATA);
    }
    ReadOutcome::Failed(libc::EIO)
}

/// Reads all of `buf` at `offset`: the errno of a failed read, or how much came before the
/// device's end.
fn read_full(fd: &OwnedFd, buf: &mut [u8], offset: u64) -> ReadOutcome {
    let mut got = 0usize;
    while got < buf.len() {
        match direct::read_at(fd, &mut buf[got..], offset + got as u64) {
            Ok(0) => return ReadOutcome::Short(got as u64),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return ReadOutcome::Failed(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    }
    ReadOutcome::Read
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u8, host_status: u16, sense: &[u8]) -> Result<SgRawReply, SgError> {
        Ok(SgRawReply {
            status,
            host_status,
            driver_status: if sense.is_empty() { 0 } else { DRIVER_SENSE },
            sense: sense.to_vec(),
            resid: 0,
        })
    }

    /// Fixed-format sense data with a key, ASC and ASCQ.
    fn sense(key: u8, asc: u8, ascq: u8) -> Vec<u8> {
        let mut s = vec![0u8; 18];
        s[0] = 0x70;
        s[2] = key;
        s[7] = 10;
        s[12] = asc;
        s[13] = ascq;
        s
    }

    #[test]
    fn read10_while_it_can_address_the_blocks_then_read16() {
        assert_eq!(
            read_cdb(8192, 2048),
            vec![0x28, 0, 0, 0, 0x20, 0, 0, 0x08, 0, 0]
        );
        let past_2tib = read_cdb(u64::from(u32::MAX), 8);
        assert_eq!(past_2tib.len(), 16);
        assert_eq!(past_2tib[0], 0x88);
        assert_eq!(&past_2tib[2..10], &u64::from(u32::MAX).to_be_bytes());
        assert_eq!(&past_2tib[10..14], &8u32.to_be_bytes());
        // More blocks than READ(10) counts.
        assert_eq!(read_cdb(0, 65536)[0], 0x88);
    }

    #[test]
    fn a_block_read_in_pieces_is_as_bad_as_its_worst_piece() {
        use ReadOutcome::{Failed, Read, TimedOut};
        assert_eq!(worst_outcome(&[Read, Read, Read]), Read);
        // A medium error in one piece fails the block (the engine bisects it to the sector).
        assert_eq!(
            worst_outcome(&[Read, Failed(libc::ENODATA), Failed(libc::EIO)]),
            Failed(libc::ENODATA)
        );
        // One piece abandoned at the timeout leaves the whole block for the next run.
        assert_eq!(
            worst_outcome(&[Failed(libc::EIO), Read, TimedOut]),
            TimedOut
        );
    }

    #[test]
    fn replies_are_classified_as_a_plain_read_would_be() {
        assert_eq!(sg_outcome(reply(0, 0, &[]), false), ReadOutcome::Read);
        assert_eq!(
            sg_outcome(reply(0, DID_TIME_OUT, &[]), false),
            ReadOutcome::TimedOut
        );
        // Unrecovered read error: what the block layer reports as ENODATA.
        assert_eq!(
            sg_outcome(reply(CHECK_CONDITION, 0, &sense(3, 0x11, 0)), false),
            ReadOutcome::Failed(libc::ENODATA)
        );
        // As the SCSI layer returns it: with DID_MEDIUM_ERROR in the host status.
        assert_eq!(
            sg_outcome(
                reply(CHECK_CONDITION, DID_MEDIUM_ERROR, &sense(3, 0x11, 0)),
                false
            ),
            ReadOutcome::Failed(libc::ENODATA)
        );
        assert_eq!(
            sg_outcome(reply(CHECK_CONDITION, 0, &sense(4, 0x44, 0)), false),
            ReadOutcome::Failed(libc::EIO)
        );
        // A failure that came after the timeout is the abort's.
        assert_eq!(
            sg_outcome(reply(CHECK_CONDITION, 0, &sense(0xb, 0, 0)), true),
            ReadOutcome::TimedOut
        );
        // A good read is good even when late (it is then counted TIME by its time).
        assert_eq!(sg_outcome(reply(0, 0, &[]), true), ReadOutcome::Read);
        let mut short = reply(0, 0, &[]).unwrap();
        short.resid = 512;
        assert_eq!(sg_outcome(Ok(short), false), ReadOutcome::Failed(libc::EIO));
        assert_eq!(
            sg_outcome(Err(SgError::Errno(nix::errno::Errno::ENODEV)), false),
            ReadOutcome::Failed(libc::ENODEV)
        );
        // Transport failures other than the timeout (the disk went away).
        assert_eq!(
            sg_outcome(reply(0, 0x01, &[]), false),
            ReadOutcome::Failed(libc::EIO)
        );
    }
}
