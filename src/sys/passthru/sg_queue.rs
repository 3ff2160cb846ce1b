//! The surface scan's SCSI READs on an sd disk, through its sg node: each command carries the
//! scan's own timeout (no floor: see `sys::scan::SG_MIN_TIMEOUT`), and several are in flight
//! from one thread (a `sg_io_hdr` written to `/dev/sgN` queues one, a read() returns its
//! reply). So a block larger than the disk's largest transfer (QEMU's AHCI disk: 128 KiB, the
//! scan's block 1 MiB) goes to the disk in pieces at once, as the block layer sends dd's.
//!
//! One descriptor per command in flight, its reserved buffer mapped (`SG_FLAG_MMAP_IO`):
//! nothing is copied, as the scan only needs whether and how fast a block reads. sg's default
//! copy cost more than the reads in the QEMU lab (105-148 MB/s against 1,370-1,680 MB/s
//! mapped; SATA disk, 128 KiB commands, 2 to 8 in flight).
//!
//! The node is the disk's own: named by the disk's sysfs device directory, checked to be that
//! character device once open, and to answer for the disk's SCSI address (SG_GET_SCSI_ID).

use std::ffi::{c_int, c_void};
use std::fs::OpenOptions;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::ptr::NonNull;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::sgio::{SENSE_LEN, SG_DXFER_FROM_DEV, SgError, SgIoHdr, SgRawReply};

/// Ioctls from `<scsi/sg.h>`.
const SG_SET_RESERVED_SIZE: libc::Ioctl = 0x2275;
const SG_GET_RESERVED_SIZE: libc::Ioctl = 0x2272;
const SG_GET_SCSI_ID: libc::Ioctl = 0x2276;
/// Data to the descriptor's reserved buffer, mapped by the caller.
const SG_FLAG_MMAP_IO: u32 = 4;
/// Commands in flight at most (sg queues 16 a descriptor; one each here).
pub const MAX_IN_FLIGHT: usize = 16;

/// `struct sg_scsi_id` from `<scsi/sg.h>`.
#[repr(C)]
#[derive(Default)]
struct SgScsiId {
    host_no: c_int,
    channel: c_int,
    scsi_id: c_int,
    lun: c_int,
    scsi_type: c_int,
    h_cmd_per_lun: i16,
    d_queue_depth: i16,
    unused: [c_int; 2],
}

const _: () = assert!(size_of::<SgScsiId>() == 32);

/// One sg descriptor, its mapped buffer and its command's sense bytes.
struct Slot {
    fd: OwnedFd,
    map: NonNull<c_void>,
    map_len: usize,
    sense: Box<[u8; SENSE_LEN]>,
    /// The index of the command in flight on it.
    busy: Option<usize>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        // SAFETY: `map` and `map_len` are what mmap returned and asked for in `Slot::open`;
        // the mapping is not referenced anywhere else (no slice of it is ever made).
        unsafe {
            libc::munmap(self.map.as_ptr(), self.map_len);
        }
    }
}

/// Descriptors of one disk's sg node, each for one READ of `piece` bytes.
pub struct SgQueue {
    slots: Vec<Slot>,
    /// `/dev/sgN`, for messages.
    pub node: String,
    /// The largest transfer of one command.
    pub piece: usize,
}

// SAFETY: only a `Slot`'s own `Drop` unmaps its mapping, no reference into it is handed out,
// and the descriptors are plain handles: a move (to the TUI's scan worker) moves sole ownership.
unsafe impl Send for SgQueue {}

impl SgQueue {
    /// Opens `slots` descriptors of the disk's sg node; `Err` says why not.
    pub fn open(disk_dir: &Path, slots: usize, piece: usize) -> Result<SgQueue, String> {
        let generic = disk_dir.join("device/scsi_generic");
        let entry = std::fs::read_dir(&generic)
            .ok()
            .and_then(|mut d| d.find_map(|e| e.ok()))
            .ok_or("the disk has no SCSI generic node (`modprobe sg` makes one)")?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let node = format!("/dev/{name}");
        let want_rdev = std::fs::read_to_string(entry.path().join("dev"))
            .ok()
            .and_then(|t| {
                let (major, minor) = t.trim().split_once(':')?;
                Some(libc::makedev(major.parse().ok()?, minor.parse().ok()?))
            })
            .ok_or_else(|| format!("cannot read the device number of {name}"))?;
        let address = std::fs::canonicalize(disk_dir.join("device"))
            .ok()
            .and_then(|p| Some(p.file_name()?.to_string_lossy().into_owned()))
            .ok_or("cannot read the disk's SCSI address")?;
        let mut queue = SgQueue {
            slots: Vec::new(),
            node,
            piece,
        };
        for _ in 0..slots.clamp(1, MAX_IN_FLIGHT) {
            let slot = Slot::open(&queue.node, want_rdev, &address, piece)?;
            queue.slots.push(slot);
        }
        Ok(queue)
    }

    /// Commands in flight at most.
    pub fn depth(&self) -> usize {
        self.slots.len()
    }

    /// Sends every READ of `cdbs` at once (one a descriptor); the replies, in order.
    pub fn run(
        &mut self,
        cdbs: &[(Vec<u8>, usize)],
        timeout_ms: u32,
    ) -> Vec<Result<SgRawReply, SgError>> {
        let mut replies: Vec<Option<Result<SgRawReply, SgError>>> = vec![None; cdbs.len()];
        let mut next = 0;
        loop {
            for slot in self.slots.iter_mut().filter(|s| s.busy.is_none()) {
                let Some((cdb, len)) = cdbs.get(next) else {
                    break;
                };
                match slot.submit(cdb, *len, self.piece, timeout_ms) {
                    Ok(()) => slot.busy = Some(next),
                    Err(e) => replies[next] = Some(Err(e)),
                }
                next += 1;
            }
            if self.slots.iter().all(|s| s.busy.is_none()) {
                if next >= cdbs.len() {
                    break;
                }
                continue;
            }
            let ready = self.wait();
            for i in ready {
                let slot = &mut self.slots[i];
                if let Some(index) = slot.busy.take() {
                    replies[index] = Some(slot.reply());
                }
            }
        }
        replies
            .into_iter()
            .map(|r| r.unwrap_or(Err(SgError::Errno(Errno::EIO))))
            .collect()
    }

    /// Waits until a busy descriptor has a reply: their indices.
    fn wait(&self) -> Vec<usize> {
        let busy: Vec<usize> = (0..self.slots.len())
            .filter(|&i| self.slots[i].busy.is_some())
            .collect();
        loop {
            let mut fds: Vec<PollFd> = busy
                .iter()
                .map(|&i| PollFd::new(self.slots[i].fd.as_fd(), PollFlags::POLLIN))
                .collect();
            match poll(&mut fds, PollTimeout::NONE) {
                Ok(_) => {
                    let ready: Vec<usize> = fds
                        .iter()
                        .zip(&busy)
                        .filter(|(f, _)| f.revents().is_some_and(|r| !r.is_empty()))
                        .map(|(_, &i)| i)
                        .collect();
                    if !ready.is_empty() {
                        return ready;
                    }
                }
                Err(Errno::EINTR) => {}
                // poll itself failed (never for valid descriptors): each read says why.
                Err(_) => return busy,
            }
        }
    }
}

impl Slot {
    fn open(node: &str, want_rdev: u64, address: &str, piece: usize) -> Result<Slot, String> {
        // Read-write: sg takes commands through write(); only READ is sent.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(node)
            .map_err(|e| format!("cannot open {node}: {e}"))?;
        let meta = file
            .metadata()
            .map_err(|e| format!("cannot stat {node}: {e}"))?;
        if !meta.file_type().is_char_device() || meta.rdev() != want_rdev {
            return Err(format!("{node} is not the disk's SCSI generic node"));
        }
        let fd = OwnedFd::from(file);
        let mut id = SgScsiId::default();
        // SAFETY: SG_GET_SCSI_ID writes one `struct sg_scsi_id` (32 bytes, the layout asserted
        // above) to the pointer, which refers to `id`, alive across the call.
        let rc = unsafe { libc::ioctl(fd.as_raw_fd(), SG_GET_SCSI_ID, &mut id as *mut SgScsiId) };
        Errno::result(rc).map_err(|e| format!("SG_GET_SCSI_ID on {node} failed ({e})"))?;
        let answered = format!("{}:{}:{}:{}", id.host_no, id.channel, id.scsi_id, id.lun);
        if answered != address {
            return Err(format!(
                "{node} answers for {answered}, not the disk's {address}"
            ));
        }
        let want = c_int::try_from(piece).map_err(|_| format!("a piece of {piece} bytes"))?;
        let mut size = want;
        // SAFETY: both ioctls read or write one `int` at the pointer, which refers to `size`.
        let rc =
            unsafe { libc::ioctl(fd.as_raw_fd(), SG_SET_RESERVED_SIZE, &size as *const c_int) };
        Errno::result(rc).map_err(|e| format!("{node} refused a reserved buffer ({e})"))?;
        // SAFETY: as above.
        let rc = unsafe {
            libc::ioctl(
                fd.as_raw_fd(),
                SG_GET_RESERVED_SIZE,
                &mut size as *mut c_int,
            )
        };
        Errno::result(rc).map_err(|e| format!("{node}: SG_GET_RESERVED_SIZE failed ({e})"))?;
        if size < want {
            return Err(format!(
                "{node} gives a reserved buffer of {size} bytes, not {want}"
            ));
        }
        // SAFETY: a new shared read-only mapping of the descriptor's reserved buffer (sg's
        // mmap), `piece` bytes, no more than the buffer's size checked above; the result is
        // checked before use and unmapped by `Slot::drop`.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                piece,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(format!(
                "cannot map the reserved buffer of {node} ({})",
                Errno::last()
            ));
        }
        let map = NonNull::new(map).ok_or_else(|| format!("{node}: mmap returned null"))?;
        Ok(Slot {
            fd,
            map,
            map_len: piece,
            sense: Box::new([0; SENSE_LEN]),
            busy: None,
        })
    }

    /// A READ's header: data to the mapped buffer, sense to this slot's.
    fn header(&mut self, cdb: &[u8], len: usize, timeout_ms: u32) -> Result<SgIoHdr, SgError> {
        let mut hdr = SgIoHdr::for_cdb(
            cdb,
            self.sense.as_mut_ptr(),
            SG_DXFER_FROM_DEV,
            len,
            timeout_ms,
        )?;
        hdr.flags = SG_FLAG_MMAP_IO;
        Ok(hdr)
    }

    /// Queues one READ on this descriptor.
    fn submit(
        &mut self,
        cdb: &[u8],
        len: usize,
        piece: usize,
        timeout_ms: u32,
    ) -> Result<(), SgError> {
        if len > piece {
            return Err(SgError::Invalid(format!(
                "a read of {len} bytes on a {piece}-byte buffer"
            )));
        }
        let hdr = self.header(cdb, len, timeout_ms)?;
        loop {
            // SAFETY: sg copies the valid `hdr` (88 bytes) and its CDB in during the call; its
            // sense buffer is the boxed `self.sense`, in place until the reply is read.
            let rc = unsafe {
                libc::write(
                    self.fd.as_raw_fd(),
                    (&hdr as *const SgIoHdr).cast::<c_void>(),
                    size_of::<SgIoHdr>(),
                )
            };
            match Errno::result(rc) {
                Ok(_) => return Ok(()),
                Err(Errno::EINTR) => continue,
                Err(errno) => return Err(SgError::Errno(errno)),
            }
        }
    }

    /// Reads the reply of the command in flight (poll said it is back).
    fn reply(&mut self) -> Result<SgRawReply, SgError> {
        let mut hdr = self.header(&[], 0, 0)?;
        loop {
            // SAFETY: sg writes one `sg_io_hdr` (88 bytes) into `hdr`, alive across the call,
            // and the command's sense bytes into `self.sense` (named when it was queued).
            let rc = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    (&mut hdr as *mut SgIoHdr).cast::<c_void>(),
                    size_of::<SgIoHdr>(),
                )
            };
            match Errno::result(rc) {
                Ok(_) => break,
                Err(Errno::EINTR) => continue,
                Err(errno) => return Err(SgError::Errno(errno)),
            }
        }
        Ok(hdr.reply(&self.sense[..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disk_without_an_sg_node_says_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("device")).unwrap();
        let e = SgQueue::open(dir.path(), 8, 128 << 10).err().unwrap();
        assert!(e.contains("modprobe sg"), "{e}");
    }

    #[test]
    fn a_node_that_is_not_the_disks_is_refused() {
        // A sysfs tree naming an sg node other than /dev/null's number: the open node is checked.
        let dir = tempfile::tempdir().unwrap();
        let generic = dir.path().join("device/scsi_generic/null");
        std::fs::create_dir_all(&generic).unwrap();
        std::fs::write(generic.join("dev"), "21:0\n").unwrap();
        let e = SgQueue::open(dir.path(), 8, 128 << 10).err().unwrap();
        assert!(e.contains("not the disk's SCSI generic node"), "{e}");
    }

    #[test]
    fn layout_matches_sg_h() {
        assert_eq!(std::mem::offset_of!(SgScsiId, h_cmd_per_lun), 20);
        assert_eq!(size_of::<SgScsiId>(), 32);
        assert_eq!(SG_GET_SCSI_ID, 0x2276);
    }
}
