//! Opening test targets (block devices and files) for direct I/O, the block-device ioctls that
//! size them, and the aligned memory O_DIRECT needs.
//!
//! O_DIRECT needs buffer addresses, offsets and lengths aligned to the logical block size;
//! buffers here are aligned to 4096 bytes, which covers every size x86_64 supports (512, 4096).

use std::alloc::{self, Layout};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::model::{ChosenDevice, DevNum, FileId};

/// Alignment of every I/O buffer.
pub const BUFFER_ALIGN: usize = 4096;

/// A zero-initialised buffer with a fixed alignment, for O_DIRECT.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    /// The allocation, which may be larger than the buffer (whole pages).
    layout: Layout,
    len: usize,
    /// A mapping of its own (`mmap`), given back with `munmap`; else from the allocator.
    mapped: bool,
}

/// A transparent huge page on x86_64.
const HUGE_PAGE: usize = 2 << 20;

const PAGE: usize = 4096;

/// From this request size on, `--huge-pages` gives a request's buffer huge pages of its own.
const HUGE_PAGE_REQUEST: usize = 1 << 20;

/// From this size on, a buffer in ordinary pages is a mapping of its own, as glibc's malloc
/// makes one from `M_MMAP_THRESHOLD` (128 KiB): so are dd's and fio's 1 MiB buffers.
const OWN_MAPPING: usize = 128 << 10;

/// The bytes `AlignedBuf::for_requests` takes for `len`: whole huge pages from
/// `HUGE_PAGE_REQUEST` on with huge pages, else whole 4 KiB pages.
pub fn request_buffer_bytes(len: u64, huge_pages: bool) -> u64 {
    if huge_pages && len >= HUGE_PAGE_REQUEST as u64 {
        len.div_ceil(HUGE_PAGE as u64)
            .saturating_mul(HUGE_PAGE as u64)
    } else {
        len.div_ceil(PAGE as u64).saturating_mul(PAGE as u64)
    }
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Box<[u8]>, so sending or sharing it
// is as safe as for Box<[u8]>.
unsafe impl Send for AlignedBuf {}
// SAFETY: see Send; shared references only allow reads.
unsafe impl Sync for AlignedBuf {}

fn out_of_memory() -> io::Error {
    io::Error::new(io::ErrorKind::OutOfMemory, "cannot allocate an I/O buffer")
}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (at least 1) aligned to `align` (a power of two).
    pub fn zeroed(len: usize, align: usize) -> io::Result<AlignedBuf> {
        let layout = Layout::from_size_align(len.max(1), align)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: the layout has a non-zero size (len.max(1)).
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(out_of_memory)?;
        Ok(AlignedBuf {
            ptr,
            layout,
            len: layout.size(),
            mapped: false,
        })
    }

    /// The buffer of one outstanding request of `len` bytes (a pread/pwrite thread's, an
    /// io_uring slot's), or the write pattern.
    ///
    /// In 4 KiB pages by default, as dd's and fio's are, so the kernel splits a request into
    /// the same segments (a loop device takes 128: 1 MiB becomes two requests); from 128 KiB on,
    /// a mapping of its own that never becomes a huge page, whatever the THP setting.
    /// `huge_pages`: from 1 MiB on, whole 2 MiB pages, a 1 MiB request one segment.
    pub fn for_requests(len: usize, huge_pages: bool) -> io::Result<AlignedBuf> {
        if huge_pages && len >= HUGE_PAGE_REQUEST {
            let mut buf = AlignedBuf::zeroed_huge_pages(
                usize::try_from(request_buffer_bytes(len as u64, true))
                    .map_err(|_| out_of_memory())?,
            )?;
            buf.len = len;
            return Ok(buf);
        }
        if len < OWN_MAPPING {
            return AlignedBuf::zeroed(len, BUFFER_ALIGN);
        }
        AlignedBuf::mapped_small_pages(len)
    }

    /// A zeroed anonymous mapping of `len` bytes in 4 KiB pages (see `for_requests`).
    fn mapped_small_pages(len: usize) -> io::Result<AlignedBuf> {
        let size = len
            .checked_next_multiple_of(PAGE)
            .ok_or_else(out_of_memory)?;
        let layout = Layout::from_size_align(size, PAGE)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: a new private anonymous mapping; it aliases nothing. Checked against
        // MAP_FAILED before use.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(out_of_memory());
        }
        // SAFETY: madvise only marks the pages of this new, untouched mapping, so none is
        // faulted in huge. Failure (no THP) changes nothing, so it is ignored.
        unsafe {
            libc::madvise(raw, size, libc::MADV_NOHUGEPAGE);
        }
        // An anonymous mapping reads as zeros: nothing to clear.
        let ptr = NonNull::new(raw.cast::<u8>()).ok_or_else(out_of_memory)?;
        Ok(AlignedBuf {
            ptr,
            layout,
            len,
            mapped: true,
        })
    }

    /// A zeroed buffer in transparent huge pages where allowed (`--huge-pages`): fewer entries
    /// for O_DIRECT's page pinning and the TLB. Only whole 2 MiB pages inside it can be huge.
    pub fn zeroed_huge_pages(len: usize) -> io::Result<AlignedBuf> {
        let layout = Layout::from_size_align(len.max(1), HUGE_PAGE)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: the layout has a non-zero size (len.max(1)).
        let raw = unsafe { alloc::alloc(layout) };
        let ptr = NonNull::new(raw).ok_or_else(out_of_memory)?;
        // SAFETY: madvise only advises on [raw, raw + size), this allocation (2 MiB aligned);
        // it does not touch the memory. Failure (THP off) only means 4 KiB pages: ignored.
        unsafe {
            libc::madvise(raw.cast(), layout.size(), libc::MADV_HUGEPAGE);
        }
        // SAFETY: raw points to layout.size() writable bytes this buffer owns; zeroing after
        // the advice makes the first touch fault in huge pages.
        unsafe { std::ptr::write_bytes(raw, 0, layout.size()) };
        Ok(AlignedBuf {
            ptr,
            layout,
            len: layout.size(),
            mapped: false,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr points to layout.size() >= len initialised (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in as_slice, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.mapped {
            // SAFETY: ptr starts this buffer's own mapping of layout.size() bytes, unmapped
            // once, here.
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.layout.size()) };
            return;
        }
        // SAFETY: ptr was allocated with exactly this layout by the global allocator.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBuf({} bytes)", self.len())
    }
}

/// How writes reach stable storage, as dd's `oflag=dsync` / `oflag=sync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    #[default]
    None,
    /// O_DSYNC: each write returns once its data is durable.
    Dsync,
    /// O_SYNC: data and metadata.
    Sync,
}

/// What a path given as a test target is, found before anything is opened (not
/// `bench::results::outcome::TargetClass`, what a run measured).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathKind {
    /// A block device with its kernel name (e.g. `loop0`, `sda1`).
    BlockDevice { name: String, dev: DevNum },
    /// A regular file; `backing` is the block device of its filesystem (tmpfs has none).
    File { backing: Option<DevNum> },
    /// A file that does not exist yet.
    Missing,
}

/// Finds out what `path` is without opening it. Symlinks (`/dev/disk/by-id/...`) are followed.
pub fn identify(path: &Path) -> io::Result<PathKind> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(PathKind::Missing),
        Err(e) => return Err(e),
    };
    let ft = meta.file_type();
    if ft.is_block_device() {
        let dev = devnum(meta.rdev());
        let name = block_name(dev).unwrap_or_else(|| {
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        Ok(PathKind::BlockDevice { name, dev })
    } else if ft.is_file() {
        let dev = devnum(meta.dev());
        Ok(PathKind::File {
            backing: (dev.major != 0).then_some(dev),
        })
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a block device or a regular file",
        ))
    }
}

pub(crate) fn devnum(raw: u64) -> DevNum {
    DevNum {
        major: nix::sys::stat::major(raw) as u32,
        minor: nix::sys::stat::minor(raw) as u32,
    }
}

/// `struct loop_info64` of include/uapi/linux/loop.h.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

nix::ioctl_read_bad!(loop_get_status64, 0x4C05, LoopInfo64);

/// A loop device's backing file identity, and its device number when it is a block device
/// (LOOP_GET_STATUS64 on `node`, opened read-only, checked to be `dev`).
pub fn loop_status(node: &Path, dev: DevNum) -> io::Result<(FileId, Option<DevNum>)> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(node)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_block_device() || devnum(meta.rdev()) != dev {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not the device {dev}", node.display()),
        ));
    }
    // SAFETY: LoopInfo64 is plain integers and byte arrays, for which all-zero is valid.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one struct loop_info64 (layout above) into a local; the
    // fd is open.
    unsafe { loop_get_status64(file.as_raw_fd(), &mut info) }.map_err(io::Error::from)?;
    let id = FileId {
        dev: devnum(info.lo_device),
        ino: info.lo_inode,
    };
    Ok((id, (info.lo_rdevice != 0).then(|| devnum(info.lo_rdevice))))
}

// BLKGETDISKSEQ, _IOR(0x12, 128, __u64) in include/uapi/linux/fs.h (Linux 5.15).
nix::ioctl_read!(blk_get_diskseq, 0x12, 128, u64);

/// What the opened block device `fd` is, in `chosen`'s terms: its number, its disk's `diskseq`
/// (a partition answers with its disk's), and for a loop device or its partition the backing
/// file's identity (LOOP_GET_STATUS64) and path (sysfs). `None` when `fd` is no block device.
pub fn found_on_fd(fd: &impl AsFd, chosen: &ChosenDevice) -> io::Result<Option<ChosenDevice>> {
    let st = nix::sys::stat::fstat(fd.as_fd()).map_err(io::Error::from)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFBLK {
        return Ok(None);
    }
    let dev = devnum(st.st_rdev);
    let raw = fd.as_fd().as_raw_fd();
    let mut seq: u64 = 0;
    // SAFETY: BLKGETDISKSEQ writes one u64 into a local; the fd is open. Kernels before 5.15
    // answer ENOTTY: the sequence is then unknown.
    let diskseq = unsafe { blk_get_diskseq(raw, &mut seq) }.ok().map(|_| seq);
    let mut found = ChosenDevice {
        name: block_name(dev).unwrap_or_else(|| chosen.name.clone()),
        dev: Some(dev),
        diskseq,
        ..ChosenDevice::default()
    };
    if chosen.loop_file.is_some() || chosen.backing_file.is_some() {
        // SAFETY: LoopInfo64 is plain integers and byte arrays, for which all-zero is valid.
        let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
        // SAFETY: as in `loop_status`. A detached loop device answers ENXIO, a non-loop
        // device ENOTTY: no backing file.
        if unsafe { loop_get_status64(raw, &mut info) }.is_ok() {
            found.loop_file = Some(FileId {
                dev: devnum(info.lo_device),
                ino: info.lo_inode,
            });
            // The disk's attribute (a partition's is one level up).
            let sys = PathBuf::from(format!("/sys/dev/block/{dev}"));
            found.backing_file = [
                sys.join("loop/backing_file"),
                sys.join("../loop/backing_file"),
            ]
            .iter()
            .find_map(|p| fs::read_to_string(p).ok())
            .map(|s| s.trim_end().to_string())
            .filter(|s| !s.is_empty())
            .or_else(|| {
                Some(format!(
                    "inode {} on {}",
                    info.lo_inode,
                    devnum(info.lo_device)
                ))
            });
        }
    }
    Ok(Some(found))
}

/// Refuses the opened block device `fd` unless it is `chosen`, in `ChosenDevice::refusal`'s words.
pub fn refuse_unless_chosen(
    fd: &impl AsFd,
    chosen: &ChosenDevice,
) -> io::Result<Result<(), String>> {
    let found = found_on_fd(fd, chosen)?;
    Ok(match chosen.refusal(found.as_ref()) {
        Some(why) => Err(why),
        None => Ok(()),
    })
}

/// `st_dev`/`st_ino` of the file at `path` (symlinks followed), and `st_rdev` when it is a
/// block device; `None` when it cannot be stat'ed.
pub fn file_identity(path: &Path) -> Option<(FileId, Option<DevNum>)> {
    let meta = fs::metadata(path).ok()?;
    let id = FileId {
        dev: devnum(meta.dev()),
        ino: meta.ino(),
    };
    Some((
        id,
        meta.file_type()
            .is_block_device()
            .then(|| devnum(meta.rdev())),
    ))
}

/// The kernel name of a block device number, from `/sys/dev/block/M:m`.
pub fn block_name(dev: DevNum) -> Option<String> {
    let link = fs::read_link(format!("/sys/dev/block/{dev}")).ok()?;
    link.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// The `/sys/class/block/<name>/stat` path for a disk or partition.
pub fn stat_path(name: &str) -> PathBuf {
    PathBuf::from("/sys/class/block").join(name).join("stat")
}

/// What an opened (pinned) target is, from `fstat` of its descriptor, so every check and
/// report is about the object actually opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// A block device: its number and kernel name (`/sys/dev/block/M:m`), when sysfs knows it.
    Block { dev: DevNum, name: Option<String> },
    /// A regular file: its identity, its file system's block device (none on tmpfs) and the
    /// kernel's path for the descriptor.
    File {
        id: FileId,
        backing: Option<DevNum>,
        real_path: Option<PathBuf>,
    },
}

/// Resolves `path` once and holds what it named with O_PATH (no device touched). Checks look at
/// this descriptor; `reopen` opens the very same object.
pub fn pin(path: &Path) -> io::Result<OwnedFd> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
        .open(path)?;
    Ok(OwnedFd::from(file))
}

/// What a pinned or opened descriptor is.
pub fn describe_fd(fd: &OwnedFd) -> io::Result<Opened> {
    let st = nix::sys::stat::fstat(fd).map_err(io::Error::from)?;
    let mode = st.st_mode & libc::S_IFMT;
    if mode == libc::S_IFBLK {
        let dev = devnum(st.st_rdev);
        Ok(Opened::Block {
            dev,
            name: block_name(dev),
        })
    } else if mode == libc::S_IFREG {
        let fs_dev = devnum(st.st_dev);
        Ok(Opened::File {
            id: FileId {
                dev: fs_dev,
                ino: st.st_ino,
            },
            backing: (fs_dev.major != 0).then_some(fs_dev),
            real_path: fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok(),
        })
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a block device or a regular file",
        ))
    }
}

/// Opens the object `pinned` holds (through `/proc/self/fd`, never by name again) and checks
/// the result is that same object.
pub fn reopen(pinned: &OwnedFd, spec: OpenSpec) -> io::Result<OwnedFd> {
    let magic = PathBuf::from(format!("/proc/self/fd/{}", pinned.as_raw_fd()));
    let fd = open(&magic, spec).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound && !Path::new("/proc/self/fd").is_dir() {
            io::Error::new(
                io::ErrorKind::NotFound,
                "/proc is not mounted: the target is opened through /proc/self/fd",
            )
        } else {
            e
        }
    })?;
    let same = |a: &OwnedFd, b: &OwnedFd| -> io::Result<bool> {
        let (x, y) = (
            nix::sys::stat::fstat(a).map_err(io::Error::from)?,
            nix::sys::stat::fstat(b).map_err(io::Error::from)?,
        );
        Ok(x.st_dev == y.st_dev && x.st_ino == y.st_ino && x.st_rdev == y.st_rdev)
    };
    if !same(pinned, &fd)? {
        return Err(io::Error::other(
            "the target changed while it was being opened",
        ));
    }
    Ok(fd)
}

/// How long an exclusive open of a block device waits while the kernel refuses it as busy.
pub const EXCLUSIVE_PATIENCE: Duration = Duration::from_secs(2);

/// `reopen`, waiting up to `EXCLUSIVE_PATIENCE` while an exclusive open gets EBUSY; also says
/// whether it waited. A killed io_uring run keeps its claim until its rings are torn down (up
/// to 90 ms seen), and a rerun right after must not be refused; a claim that stays (a mount,
/// md/dm, a program) is still refused after the wait. A set `stop` ends it as `Interrupted`.
pub fn reopen_waiting_for_release(
    pinned: &OwnedFd,
    spec: OpenSpec,
    stop: Option<&AtomicBool>,
) -> io::Result<(OwnedFd, bool)> {
    let deadline = Instant::now() + EXCLUSIVE_PATIENCE;
    let mut waited = false;
    let stopped = || stop.is_some_and(|s| s.load(Ordering::Relaxed));
    loop {
        match reopen(pinned, spec) {
            Err(e) if spec.exclusive && e.raw_os_error() == Some(libc::EBUSY) => {
                if stopped() {
                    return Err(io::Error::new(
                        io::ErrorKind::Interrupted,
                        "stopped while the device was busy",
                    ));
                }
                if Instant::now() >= deadline {
                    return Err(e);
                }
                waited = true;
                std::thread::sleep(Duration::from_millis(20));
            }
            done => return done.map(|fd| (fd, waited)),
        }
    }
}

/// A second open file description of `fd`'s object, same access and caching flags, never
/// O_EXCL. One per synchronous I/O thread: threads sharing one `struct file` bounce its
/// refcount's cache line on every I/O, a measurable cost on a fast device (fio's jobs each
/// open their own).
pub fn reopen_for_thread(fd: &OwnedFd) -> io::Result<OwnedFd> {
    let flags = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let keep = libc::O_ACCMODE | libc::O_DIRECT | libc::O_DSYNC | libc::O_SYNC;
    let magic = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
    let file = OpenOptions::new()
        .read(true)
        .write(flags & libc::O_ACCMODE != libc::O_RDONLY)
        .custom_flags(flags & keep & !libc::O_ACCMODE)
        .open(magic)?;
    let again = OwnedFd::from(file);
    let (a, b) = (
        nix::sys::stat::fstat(fd).map_err(io::Error::from)?,
        nix::sys::stat::fstat(&again).map_err(io::Error::from)?,
    );
    if (a.st_dev, a.st_ino, a.st_rdev) != (b.st_dev, b.st_ino, b.st_rdev) {
        return Err(io::Error::other(
            "the target changed while it was being opened",
        ));
    }
    Ok(again)
}

/// The file system type (as in /proc/self/mountinfo) of the mount holding `dir`; `None` when
/// unknown.
pub fn filesystem_type(dir: &Path) -> Option<String> {
    let dev = devnum(fs::metadata(dir).ok()?.dev());
    let table = fs::read_to_string("/proc/self/mountinfo").ok()?;
    super::parse::parse_mountinfo(&table)
        .into_iter()
        .rev()
        .find(|m| m.dev == Some(dev))
        .map(|m| m.fstype)
}

/// How to open a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenSpec {
    pub write: bool,
    pub direct: bool,
    /// O_EXCL on a block device: fails with EBUSY when it is mounted or held by md/dm.
    pub exclusive: bool,
    pub sync: SyncMode,
}

/// Opens a target for the test. Errors keep the OS error (EACCES, EBUSY, EINVAL for no
/// O_DIRECT).
pub fn open(path: &Path, spec: OpenSpec) -> io::Result<OwnedFd> {
    let mut flags = 0;
    if spec.direct {
        flags |= libc::O_DIRECT;
    }
    if spec.exclusive {
        flags |= libc::O_EXCL;
    }
    flags |= match spec.sync {
        SyncMode::None => 0,
        SyncMode::Dsync => libc::O_DSYNC,
        SyncMode::Sync => libc::O_SYNC,
    };
    let file = OpenOptions::new()
        .read(true)
        .write(spec.write)
        .custom_flags(flags)
        .open(path)?;
    Ok(OwnedFd::from(file))
}

nix::ioctl_read!(blkgetsize64, 0x12, 114, u64);
nix::ioctl_read_bad!(blksszget, 0x1268, libc::c_int);
nix::ioctl_read_bad!(blkpbszget, 0x127B, libc::c_int);
nix::ioctl_read_bad!(blkroget, 0x125E, libc::c_int);

/// The kernel's read-only flag of an open block device (BLKROGET; `ro` in sysfs).
pub fn read_only_fd(fd: &OwnedFd) -> io::Result<bool> {
    let mut ro: libc::c_int = 0;
    // SAFETY: the ioctl writes one int through a valid pointer to a local; the fd is open.
    unsafe { blkroget(fd.as_raw_fd(), &mut ro) }.map_err(io::Error::from)?;
    Ok(ro != 0)
}

/// Whether the block device at `path` is read-only (None: not one, or not readable).
pub fn read_only(path: &Path) -> Option<bool> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    read_only_fd(&OwnedFd::from(file)).ok()
}

/// Size in bytes, logical and physical block size of an open block device.
pub fn block_geometry(fd: &OwnedFd) -> io::Result<(u64, u32, u32)> {
    let raw = fd.as_raw_fd();
    let mut size: u64 = 0;
    let mut logical: libc::c_int = 0;
    let mut physical: libc::c_int = 0;
    // SAFETY: each ioctl writes one integer of its type into a local; the fd is open.
    unsafe {
        blkgetsize64(raw, &mut size).map_err(io::Error::from)?;
        blksszget(raw, &mut logical).map_err(io::Error::from)?;
        blkpbszget(raw, &mut physical).map_err(io::Error::from)?;
    }
    let to_u32 = |v: libc::c_int| u32::try_from(v).unwrap_or(0);
    Ok((size, to_u32(logical), to_u32(physical)))
}

/// Size of an open regular file.
pub fn file_len(fd: &OwnedFd) -> io::Result<u64> {
    let file = File::from(fd.try_clone()?);
    Ok(file.metadata()?.len())
}

/// Reads `buf.len()` bytes at `offset` (positional); short only at end of file.
pub fn read_at(fd: &OwnedFd, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let off = libc::off_t::try_from(offset)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))?;
    nix::sys::uio::pread(fd, buf, off).map_err(io::Error::from)
}

/// Writes `buf` at `offset`; returns the count written.
pub fn write_at(fd: &OwnedFd, buf: &[u8], offset: u64) -> io::Result<usize> {
    let off = libc::off_t::try_from(offset)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))?;
    nix::sys::uio::pwrite(fd, buf, off).map_err(io::Error::from)
}

/// fdatasync: makes written data durable (used after laying out a new test file).
pub fn sync_data(fd: &OwnedFd) -> io::Result<()> {
    nix::unistd::fdatasync(fd).map_err(io::Error::from)
}

/// Creates a new file for a file-target test (`create_new`: never replaces one).
pub fn create_file(path: &Path) -> io::Result<OwnedFd> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)?;
    Ok(OwnedFd::from(file))
}

/// Removes the file at `path` if it is still `fd`'s (`false`: another or none, left alone). It
/// is moved into a 0700 directory of ours first, so what is compared is what is unlinked.
pub fn remove_file_if_same(path: &Path, fd: &OwnedFd) -> io::Result<bool> {
    let st = nix::sys::stat::fstat(fd).map_err(io::Error::from)?;
    let ours = |m: &fs::Metadata| m.dev() == st.st_dev && m.ino() == st.st_ino;
    match fs::symlink_metadata(path) {
        Ok(m) if ours(&m) => {}
        // Gone already: nothing of ours is at the path.
        Ok(_) => return Ok(false),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    }
    let (Some(name), parent) = (path.file_name(), path.parent()) else {
        return Ok(false);
    };
    let parent = parent
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Ok(private) = private_dir(parent) else {
        return fs::remove_file(path).map(|()| true);
    };
    let held = private.join(name);
    let result = fs::rename(path, &held).and_then(|()| remove_held(&held, path, &st));
    // Fails only if a file could not be put back; it stays where the error says.
    let _ = fs::remove_dir(&private);
    result
}

/// `held` (moved from `path` into a private directory) is unlinked if it is `st`'s file, else
/// put back at `path`, never over a file there now.
fn remove_held(held: &Path, path: &Path, st: &nix::sys::stat::FileStat) -> io::Result<bool> {
    let meta = fs::symlink_metadata(held)?;
    if meta.dev() == st.st_dev && meta.ino() == st.st_ino {
        return fs::remove_file(held).map(|()| true);
    }
    nix::fcntl::renameat2(
        nix::fcntl::AT_FDCWD,
        held,
        nix::fcntl::AT_FDCWD,
        path,
        nix::fcntl::RenameFlags::RENAME_NOREPLACE,
    )
    .map(|()| false)
    .map_err(|e| {
        io::Error::new(
            io::Error::from(e).kind(),
            format!(
                "a file renamed to {} meanwhile could not be put back (another file is there \
                 now): it is at {}",
                path.display(),
                held.display()
            ),
        )
    })
}

/// A new directory in `parent` that only this process's user can enter (0700).
fn private_dir(parent: &Path) -> io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    for n in 0..100u32 {
        let dir = parent.join(format!(".disktriage-remove-{}-{n}", std::process::id()));
        match fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free name for a private directory",
    ))
}

/// Drops the page cache's copy of a file or device (so buffered runs start cold), as
/// `dd iflag=nocache` does.
pub fn drop_cache(fd: &OwnedFd) -> io::Result<()> {
    nix::fcntl::posix_fadvise(
        fd,
        0,
        0,
        nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
    )
    .map_err(io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the created file is unlinked; another is put back, never over a newcomer.
    #[test]
    fn only_the_created_file_is_unlinked_and_another_goes_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("test.bin");
        let held = dir.path().join("held.bin");
        let ours = create_file(&dir.path().join("ours.bin")).unwrap();
        let st = nix::sys::stat::fstat(&ours).unwrap();
        // Someone else's file was renamed to the path just before it was moved away.
        fs::write(&held, b"someone else's").unwrap();
        remove_held(&held, &path, &st).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"someone else's");
        assert!(!held.exists());
        // And a third file has appeared at the path since: nothing is overwritten.
        fs::write(&held, b"someone else's").unwrap();
        let e = remove_held(&held, &path, &st).unwrap_err();
        assert!(e.to_string().contains("could not be put back"), "{e}");
        assert_eq!(fs::read(&held).unwrap(), b"someone else's");
        // The created file itself is unlinked.
        fs::rename(dir.path().join("ours.bin"), &held).unwrap();
        remove_held(&held, &path, &st).unwrap();
        assert!(!held.exists());
        assert_eq!(fs::read(&path).unwrap(), b"someone else's");
    }

    #[test]
    fn a_thread_reopen_is_the_same_file_with_the_same_access() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let spec = |write| OpenSpec {
            write,
            direct: false,
            exclusive: false,
            sync: SyncMode::Dsync,
        };
        let rw = open(&path, spec(true)).unwrap();
        let again = reopen_for_thread(&rw).unwrap();
        let flags = |fd: &OwnedFd| nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_GETFL).unwrap();
        assert_eq!(flags(&again) & libc::O_ACCMODE, libc::O_RDWR);
        assert_ne!(flags(&again) & libc::O_DSYNC, 0, "O_DSYNC is kept");
        assert_eq!(write_at(&again, b"ab", 0).unwrap(), 2);
        let ro = open(&path, spec(false)).unwrap();
        let ro_again = reopen_for_thread(&ro).unwrap();
        assert!(
            write_at(&ro_again, b"cd", 0).is_err(),
            "a read-only open stays read-only"
        );
        let mut buf = [0u8; 4];
        assert_eq!(read_at(&ro_again, &mut buf, 0).unwrap(), 4);
        assert_eq!(&buf, b"ab23");
    }

    #[test]
    fn aligned_buffers_are_aligned_and_zeroed() {
        let mut b = AlignedBuf::zeroed(10_000, BUFFER_ALIGN).unwrap();
        assert_eq!(b.as_ptr() as usize % BUFFER_ALIGN, 0);
        assert_eq!(b.len(), 10_000);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        b.as_mut_slice()[9_999] = 7;
        assert_eq!(b.as_slice()[9_999], 7);
    }

    /// The buffer's bytes in transparent huge pages (AnonHugePages in /proc/self/smaps).
    fn huge_bytes_of(b: &AlignedBuf) -> u64 {
        let smaps = fs::read_to_string("/proc/self/smaps").unwrap();
        let addr = b.as_ptr() as usize;
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((lo, hi)) = range.split_once('-')
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = lo <= addr && addr < hi;
            } else if inside && let Some(kb) = line.strip_prefix("AnonHugePages:") {
                return kb
                    .trim()
                    .trim_end_matches(" kB")
                    .trim()
                    .parse::<u64>()
                    .unwrap()
                    * 1024;
            }
        }
        0
    }

    #[test]
    fn request_buffers_are_in_small_pages_unless_huge_pages_are_asked() {
        // Small requests: exactly their size, 4 KiB aligned, either way.
        for huge in [false, true] {
            let small = AlignedBuf::for_requests(64 << 10, huge).unwrap();
            assert_eq!((small.len(), small.layout.size()), (64 << 10, 64 << 10));
            assert_eq!(request_buffer_bytes(64 << 10, huge), 64 << 10);
        }
        // By default, 1 MiB and up: an own mapping of 4 KiB pages, none huge even with THP
        // "always" (like dd's and fio's buffers).
        for len in [1 << 20, 3 << 20, (4 << 20) + 512] {
            let mut b = AlignedBuf::for_requests(len, false).unwrap();
            assert!(b.mapped);
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % BUFFER_ALIGN, 0);
            assert_eq!(b.layout.size(), len.next_multiple_of(PAGE));
            assert_eq!(
                request_buffer_bytes(len as u64, false),
                b.layout.size() as u64
            );
            assert!(b.as_slice().iter().all(|&x| x == 0));
            b.as_mut_slice().fill(1);
            assert_eq!(
                huge_bytes_of(&b),
                0,
                "{len}: no huge page in the default buffer"
            );
        }
        // With huge pages, 1 MiB and up: whole 2 MiB pages.
        for (len, pages) in [
            (1 << 20, 1),
            (2 << 20, 1),
            (3 << 20, 2),
            ((4 << 20) + 512, 3),
        ] {
            let mut b = AlignedBuf::for_requests(len, true).unwrap();
            assert!(!b.mapped);
            assert_eq!(b.len(), len);
            assert_eq!(b.as_mut_slice().len(), len);
            assert_eq!(b.as_ptr() as usize % HUGE_PAGE, 0);
            assert_eq!(b.layout.size(), pages * HUGE_PAGE);
            assert_eq!(
                request_buffer_bytes(len as u64, true),
                (pages * HUGE_PAGE) as u64
            );
            assert!(b.as_slice().iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn ioctl_numbers_match_the_kernel_headers() {
        // include/uapi/linux/fs.h: BLKGETSIZE64 _IOR(0x12,114,size_t), BLKSSZGET _IO(0x12,104),
        // BLKPBSZGET _IO(0x12,123).
        assert_eq!(nix::request_code_read!(0x12, 114, 8), 0x8008_1272);
        assert_eq!(0x1268, (0x12 << 8) | 104);
        assert_eq!(0x127B, (0x12 << 8) | 123);
        // BLKROGET _IO(0x12,94).
        assert_eq!(0x125E, (0x12 << 8) | 94);
    }

    #[test]
    fn identify_files_and_missing_paths() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        assert_eq!(identify(&missing).unwrap(), PathKind::Missing);
        let f = dir.path().join("f");
        fs::write(&f, b"x").unwrap();
        assert!(matches!(identify(&f).unwrap(), PathKind::File { .. }));
        assert!(identify(dir.path()).is_err(), "a directory is not a target");
    }
}
