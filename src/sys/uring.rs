//! A safe io_uring queue for the I/O engine: one ring per worker, one slot buffer per
//! outstanding I/O, and an optional shared write pattern. The engine's `unsafe` lives here: the
//! kernel uses a submitted I/O's buffer until its completion is reaped, so the queue owns the
//! buffers, never reuses a slot in flight, and never frees memory the kernel may still touch.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use io_uring::{IoUring, opcode, squeue, types};

use super::direct::{AlignedBuf, SyncMode};

/// Whether io_uring is usable (it may be missing, or disabled by `kernel.io_uring_disabled`
/// or a seccomp filter).
pub fn probe() -> io::Result<()> {
    IoUring::new(2).map(drop)
}

/// One reaped completion: which slot, and the kernel's result (bytes, or -errno).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    pub result: i32,
}

/// Where a write takes its data from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteSource {
    /// The slot's own buffer: for a `--preserve` rewrite, the bytes the slot's read of the
    /// same block just returned (the slot stays busy from that read to this write).
    Slot,
    /// The shared pattern buffer, starting at this byte offset.
    Pattern(usize),
}

/// A worker's io_uring with its buffers.
pub struct UringQueue {
    ring: IoUring,
    // Keeps the fd open while I/O is in flight.
    fd: Arc<OwnedFd>,
    slots: Vec<AlignedBuf>,
    slot_len: usize,
    pattern: Option<Arc<AlignedBuf>>,
    /// Buffers (slots at 0..n, the pattern at n) and the target (file 0) are registered, so the
    /// kernel neither pins pages nor reference-counts the file per I/O (fget/fput alone took
    /// 1.7 % of the CPU of a 4 KiB QD32 read run on an ext4 file).
    fixed: bool,
    rw_flags: i32,
    busy: Vec<bool>,
    in_flight: usize,
    queued: usize,
}

impl UringQueue {
    /// A queue of `depth` slots of `slot_len` bytes on `fd`. `sync` sets per-write RWF_DSYNC /
    /// RWF_SYNC (harmless alongside an O_DSYNC open).
    pub fn new(
        fd: Arc<OwnedFd>,
        depth: u32,
        slot_len: usize,
        pattern: Option<Arc<AlignedBuf>>,
        sync: SyncMode,
        huge_pages: bool,
    ) -> io::Result<UringQueue> {
        let entries = depth.max(1).next_power_of_two();
        // SINGLE_ISSUER + DEFER_TASKRUN (6.1+) cut completion overhead; fall back quietly on
        // kernels without them.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries))
            .or_else(|_| IoUring::new(entries))?;
        let slots = (0..depth)
            .map(|_| AlignedBuf::for_requests(slot_len, huge_pages))
            .collect::<io::Result<Vec<_>>>()?;
        let rw_flags = match sync {
            SyncMode::None => 0,
            SyncMode::Dsync => libc::RWF_DSYNC,
            SyncMode::Sync => libc::RWF_SYNC,
        };
        let mut queue = UringQueue {
            ring,
            fd,
            busy: vec![false; slots.len()],
            slots,
            slot_len,
            pattern,
            fixed: false,
            rw_flags,
            in_flight: 0,
            queued: 0,
        };
        queue.fixed = queue.register_file_and_buffers();
        Ok(queue)
    }

    /// Registers the target and the buffers, both or neither (fio's `--registerfiles
    /// --fixedbufs`). Buffers need RLIMIT_MEMLOCK allowance, so failure just means plain I/O.
    fn register_file_and_buffers(&mut self) -> bool {
        if self
            .ring
            .submitter()
            .register_files(&[self.fd.as_raw_fd()])
            .is_err()
        {
            return false;
        }
        if self.register_buffers().is_err() {
            let _ = self.ring.submitter().unregister_files();
            return false;
        }
        true
    }

    /// Registers the buffers so the kernel pins them once instead of per I/O.
    fn register_buffers(&mut self) -> io::Result<()> {
        let mut iovecs: Vec<libc::iovec> = self
            .slots
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        if let Some(p) = &self.pattern {
            iovecs.push(libc::iovec {
                iov_base: p.as_ptr().cast_mut().cast(),
                iov_len: p.len(),
            });
        }
        // SAFETY: every iovec points into a buffer owned by self (slots) or kept alive by its
        // Arc (pattern); Drop drops the ring, and the registration, before those buffers.
        unsafe { self.ring.submitter().register_buffers(&iovecs) }
    }

    /// True when buffers are registered (fixed-buffer I/O).
    pub fn uses_fixed_buffers(&self) -> bool {
        self.fixed
    }

    pub fn depth(&self) -> u32 {
        self.slots.len() as u32
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn claim(&mut self, slot: u32, len: u32) -> io::Result<usize> {
        let i = slot as usize;
        if i >= self.slots.len() || self.busy[i] {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("slot {slot} is not free"),
            ));
        }
        if len as usize > self.slot_len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "request larger than its buffer",
            ));
        }
        Ok(i)
    }

    fn push(&mut self, entry: squeue::Entry, slot: usize) -> io::Result<()> {
        // SAFETY: the buffer belongs to slot `slot` (or the pattern), owned by self and not
        // freed while in flight (busy flag + Drop); the slot was free, so no other I/O uses it.
        unsafe { self.ring.submission().push(&entry) }
            .map_err(|_| io::Error::other("submission queue full"))?;
        self.busy[slot] = true;
        self.in_flight += 1;
        self.queued += 1;
        Ok(())
    }

    /// Queues a read of `len` bytes at `offset` into `slot`'s buffer.
    pub fn push_read(&mut self, slot: u32, offset: u64, len: u32) -> io::Result<()> {
        let i = self.claim(slot, len)?;
        let buf = self.slots[i].as_mut_ptr();
        let entry = if self.fixed {
            opcode::ReadFixed::new(types::Fixed(0), buf, len, slot as u16)
                .offset(offset)
                .build()
        } else {
            opcode::Read::new(types::Fd(self.fd.as_raw_fd()), buf, len)
                .offset(offset)
                .build()
        };
        self.push(entry.user_data(u64::from(slot)), i)
    }

    /// Queues a write of `len` bytes at `offset` from `source`, using `slot` to track it.
    pub fn push_write(
        &mut self,
        slot: u32,
        offset: u64,
        len: u32,
        source: WriteSource,
    ) -> io::Result<()> {
        let i = self.claim(slot, len)?;
        let (buf, index) = match source {
            WriteSource::Slot => (self.slots[i].as_ptr(), slot as u16),
            WriteSource::Pattern(at) => {
                let p = self.pattern.as_ref().ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidInput, "no pattern buffer")
                })?;
                if at + len as usize > p.len() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "write beyond the pattern buffer",
                    ));
                }
                // SAFETY: at + len <= p.len(), so the pointer stays inside the allocation.
                (unsafe { p.as_ptr().add(at) }, self.slots.len() as u16)
            }
        };
        let entry = if self.fixed {
            opcode::WriteFixed::new(types::Fixed(0), buf, len, index)
                .offset(offset)
                .rw_flags(self.rw_flags)
                .build()
        } else {
            opcode::Write::new(types::Fd(self.fd.as_raw_fd()), buf, len)
                .offset(offset)
                .rw_flags(self.rw_flags)
                .build()
        };
        self.push(entry.user_data(u64::from(slot)), i)
    }

    /// Hands the queued I/Os to the kernel without waiting; returns how many it took.
    pub fn submit(&mut self) -> io::Result<usize> {
        if self.queued == 0 {
            return Ok(0);
        }
        match self.ring.submit() {
            Ok(n) => {
                self.queued = self.queued.saturating_sub(n);
                Ok(n)
            }
            // Interrupted, or the completion queue is full: the caller reaps and comes back.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => Ok(0),
            Err(e) => Err(e),
        }
    }

    /// Submits what is queued and waits for `want` completions or `timeout` (so a caller sees
    /// a stop even when the device does not answer). A timeout is no error.
    pub fn submit_and_wait(&mut self, want: usize, timeout: Option<Duration>) -> io::Result<()> {
        let want = want.min(self.in_flight);
        let result = match timeout {
            Some(t) if self.ring.params().is_feature_ext_arg() => {
                let ts = types::Timespec::new()
                    .sec(t.as_secs())
                    .nsec(t.subsec_nanos());
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(want, &args)
            }
            _ => self.ring.submit_and_wait(want),
        };
        match result {
            Ok(_) => {
                self.queued = 0;
                Ok(())
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME) | Some(libc::EINTR)) => {
                self.queued = 0;
                Ok(())
            }
            // The completion queue is full: the caller reaps, then calls again.
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Moves up to `max` ready completions into `out`; their slots become free.
    pub fn reap(&mut self, out: &mut Vec<Completion>, max: usize) {
        for cqe in self.ring.completion().take(max) {
            let slot = cqe.user_data() as u32;
            if let Some(b) = self.busy.get_mut(slot as usize)
                && *b
            {
                *b = false;
                self.in_flight -= 1;
            }
            out.push(Completion {
                slot,
                result: cqe.result(),
            });
        }
    }

    /// Completions ready to reap without waiting.
    pub fn ready(&mut self) -> usize {
        self.ring.completion().len()
    }

    /// The contents of a slot's buffer (after its read completed).
    pub fn slot_data(&self, slot: u32) -> Option<&[u8]> {
        let i = slot as usize;
        if self.busy.get(i).copied().unwrap_or(true) {
            return None;
        }
        self.slots.get(i).map(AlignedBuf::as_slice)
    }
}

impl Drop for UringQueue {
    fn drop(&mut self) {
        // Give in-flight I/O a bounded time to finish so its buffers can be freed.
        let mut scratch = Vec::new();
        for _ in 0..50 {
            if self.in_flight == 0 {
                break;
            }
            let _ = self.submit_and_wait(1, Some(Duration::from_millis(100)));
            scratch.clear();
            self.reap(&mut scratch, usize::MAX);
        }
        if self.in_flight == 0 && self.fixed {
            // Give the registered file back now: left to the ring's teardown, which the kernel
            // finishes asynchronously after close (even after exit), it kept the exclusive open
            // alive and a run right after a write run found the device "busy" 7 times in 10.
            // (Not with I/O in flight: unregistering waits for it.)
            let _ = self.ring.submitter().unregister_files();
        }
        if self.in_flight > 0 {
            // The kernel may still write these buffers after the ring is closed: leak them
            // rather than free memory under an active DMA.
            for b in std::mem::take(&mut self.slots) {
                std::mem::forget(b);
            }
            if let Some(p) = self.pattern.take() {
                std::mem::forget(p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::direct::BUFFER_ALIGN;
    use super::*;
    use std::io::Write;

    fn temp_file(len: usize) -> (tempfile::NamedTempFile, Arc<OwnedFd>) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        f.write_all(&data).unwrap();
        f.flush().unwrap();
        let fd = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(f.path())
            .unwrap();
        (f, Arc::new(OwnedFd::from(fd)))
    }

    #[test]
    fn reads_land_in_their_slots() {
        let (_f, fd) = temp_file(16384);
        let mut q = UringQueue::new(fd, 2, 4096, None, SyncMode::None, false).unwrap();
        q.push_read(0, 0, 4096).unwrap();
        q.push_read(1, 8192, 4096).unwrap();
        assert!(q.push_read(1, 0, 4096).is_err(), "slot 1 is busy");
        let mut done = Vec::new();
        while done.len() < 2 {
            q.submit_and_wait(1, Some(Duration::from_secs(5))).unwrap();
            q.reap(&mut done, usize::MAX);
        }
        assert!(done.iter().all(|c| c.result == 4096));
        assert_eq!(q.in_flight(), 0);
        assert_eq!(q.slot_data(0).unwrap()[1], 1);
        assert_eq!(q.slot_data(1).unwrap()[0], (8192 % 251) as u8);
    }

    #[test]
    fn writes_from_the_pattern_and_errors_come_back_as_results() {
        let (f, fd) = temp_file(8192);
        let mut pattern = AlignedBuf::zeroed(8192, BUFFER_ALIGN).unwrap();
        pattern.as_mut_slice().fill(0xAB);
        let mut q =
            UringQueue::new(fd, 1, 4096, Some(Arc::new(pattern)), SyncMode::Dsync, false).unwrap();
        assert!(
            q.push_write(0, 0, 4096, WriteSource::Pattern(8000))
                .is_err(),
            "beyond"
        );
        q.push_write(0, 4096, 4096, WriteSource::Pattern(4096))
            .unwrap();
        let mut done = Vec::new();
        while done.is_empty() {
            q.submit_and_wait(1, None).unwrap();
            q.reap(&mut done, usize::MAX);
        }
        assert_eq!(done[0].result, 4096);
        let back = std::fs::read(f.path()).unwrap();
        assert!(back[4096..].iter().all(|&b| b == 0xAB));
        assert_eq!(back[0], 0);
    }

    #[test]
    fn buffers_and_file_are_registered_together() {
        let (_f, fd) = temp_file(8192);
        let mut q = UringQueue::new(fd, 2, 4096, None, SyncMode::None, false).unwrap();
        // The kernel's own account of the ring: registered files and buffers.
        let info =
            std::fs::read_to_string(format!("/proc/self/fdinfo/{}", q.ring.as_raw_fd())).unwrap();
        let count = |key: &str| -> u32 {
            info.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {key} in {info}"))
        };
        if q.uses_fixed_buffers() {
            assert_eq!(count("UserFiles:"), 1, "{info}");
            assert_eq!(count("UserBufs:"), 2, "{info}");
        } else {
            assert_eq!(count("UserFiles:"), 0, "{info}");
        }
        // I/O on the registered file works.
        q.push_read(0, 4096, 4096).unwrap();
        let mut done = Vec::new();
        while done.is_empty() {
            q.submit_and_wait(1, Some(Duration::from_secs(5))).unwrap();
            q.reap(&mut done, usize::MAX);
        }
        assert_eq!(done[0].result, 4096);
        assert_eq!(q.slot_data(0).unwrap()[0], (4096 % 251) as u8);
    }
}
