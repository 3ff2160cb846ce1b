#!/usr/bin/env python3
"""A one-file FUSE file system that behaves like a disk with a volatile write cache, for the
power-cut check's root tests (tests/root/flushcheck_powercut.rs), like a disk with
unreadable sectors, for the root tests of `scan --repair`, or like a fake-capacity stick
that claims more than it stores, for the capacity probe's, or like a drive-managed SMR disk
whose media cache fills, for the write-cliff probe's.

    cachedisk.py MODE STORE MOUNTPOINT SIZE READY_FILE

The file system holds one file, `disk`, of SIZE bytes, backed by STORE (a plain file on
another file system: the "medium"). Writes stay in the daemon's memory (the "cache") until an
fsync; a read sees the cache over the medium. A loop device over `disk` turns a block-layer
flush (REQ_PREFLUSH) into vfs_fsync, which reaches this daemon as FUSE_FSYNC.

MODE:
  honest  an fsync writes every cached block to STORE and fsyncs STORE before it answers;
  liar    an fsync answers at once; cached blocks reach STORE only when more than
          LIAR_BATCH of them pile up (so a kill loses the acknowledged tail).
  bad     no cache: reads and writes go straight to STORE, an fsync fsyncs it. The
          sectors listed in CACHEDISK_BAD are unreadable: a read that overlaps one fails
          whole with EIO, until a write covering that sector "remaps" it (a partly written
          sector counts as written). The file is opened with FOPEN_DIRECT_IO, so a loop
          device's 512-byte reads and writes reach the daemon as they are, not as pages.
  smr     no cache and no bad sectors, as bad: reads and writes go straight to STORE (with
          FOPEN_DIRECT_IO). Once CACHEDISK_SMR's BYTES have been written (counted from the
          daemon's start, every write alike), each further write is answered MS
          milliseconds late: a media cache that is full, where every write waits for a
          cleaning (the write cliff of a drive-managed SMR disk).

Environment, mode smr only:
  CACHEDISK_SMR=BYTES:MS
          the bytes written before the cliff, and each later write's delay in ms.

Environment, mode bad only:
  CACHEDISK_BAD=OFFSET+LENGTH[,OFFSET+LENGTH...]
          the bad byte ranges, each a multiple of 512 (e.g. 8388608+4096,12582912+512).
  CACHEDISK_HOLD=PATH:OFFSET
          while PATH exists, reads at OFFSET or beyond are not answered (PATH.held is
          created when one is first held); once PATH is gone they are, in order. Other
          requests are served meanwhile: a test acts between a scan and its repair.
  CACHEDISK_SLOW=PATH:OFFSET:MS
          each read at OFFSET or beyond is answered MS milliseconds late (PATH is created at
          the first): a scan's last stretch is slow while the I/O goes on, for a test that
          acts through the block layer (a loop device stacked on the disk waits for a held
          read, not for a slow one).

Killing the daemon (SIGKILL) is the power cut: its memory, the cache, is gone; STORE keeps
what was made durable. A new daemon over the same STORE is the reboot.

It speaks the kernel's FUSE protocol on /dev/fuse directly (mount(2) with fd=N), so it needs
no libfuse, no fusermount and no Python package: only root and the fuse module. It writes
READY_FILE once mounted.
"""

import ctypes
import errno
import os
import select
import stat
import struct
import sys
import time

LIAR_BATCH = 64
PAGE = 4096
SECTOR = 512
HOLD_POLL = 0.02  # seconds between looks at the hold file while reads are held
FOPEN_DIRECT_IO = 1

FUSE_LOOKUP = 1
FUSE_FORGET = 2
FUSE_GETATTR = 3
FUSE_SETATTR = 4
FUSE_OPEN = 14
FUSE_READ = 15
FUSE_WRITE = 16
FUSE_STATFS = 17
FUSE_RELEASE = 18
FUSE_FSYNC = 20
FUSE_FLUSH = 25
FUSE_INIT = 26
FUSE_OPENDIR = 27
FUSE_READDIR = 28
FUSE_RELEASEDIR = 29
FUSE_INTERRUPT = 36
FUSE_DESTROY = 38
FUSE_BATCH_FORGET = 42

NO_REPLY = {FUSE_FORGET, FUSE_BATCH_FORGET, FUSE_INTERRUPT}

IN_HEADER = struct.Struct("<IIQQIIIHH")  # len opcode unique nodeid uid gid pid extlen pad
OUT_HEADER = struct.Struct("<IiQ")  # len error unique
ROOT = 1
DISK = 2
TTL = 3600


class Disk:
    def __init__(self, mode, store, size, bad=(), hold=None, slow=None, fake=None, smr=None):
        self.mode = mode
        self.smr = smr  # (bytes before the cliff, seconds per write after it) (mode smr)
        self.written = 0  # bytes written since the start (mode smr)
        self.fake = fake  # (kind, real bytes) or None (mode fake)
        self.size = size
        self.store = os.open(store, os.O_RDWR | os.O_CREAT, 0o600)
        if os.fstat(self.store).st_size < size:
            os.ftruncate(self.store, size)
        self.cache = {}  # page number -> bytearray(PAGE)
        self.bad = set(bad)  # numbers of the sectors still unreadable (mode bad)
        self.hold = hold  # (path, offset) or None (mode bad)
        self.slow = slow  # (path, offset, seconds) or None (mode bad)

    def _sectors(self, offset, size):
        return range(offset // SECTOR, (offset + size + SECTOR - 1) // SECTOR)

    def holding(self):
        return os.path.exists(self.hold[0])

    def _page(self, n):
        p = self.cache.get(n)
        if p is None:
            p = bytearray(os.pread(self.store, PAGE, n * PAGE).ljust(PAGE, b"\0"))
            self.cache[n] = p
        return p

    def _fake_pieces(self, offset, size):
        """(offset in the store or None, length) for each stretch of the request."""
        kind, real = self.fake
        pos, end = offset, offset + size
        while pos < end:
            if pos < real:
                take = min(end, real) - pos
                yield pos, take
            elif kind == "wrap":
                at = pos % real
                take = min(end - pos, real - at)
                yield at, take
            else:
                take = end - pos
                yield None, take
            pos += take

    def read(self, offset, size):
        end = min(offset + size, self.size)
        if self.mode == "fake":
            out = bytearray()
            for at, take in self._fake_pieces(offset, max(end - offset, 0)):
                if at is None and self.fake[0] == "fail":
                    return -errno.EIO
                out += b"\0" * take if at is None else os.pread(self.store, take, at)
            return bytes(out)
        if self.mode == "smr":
            return os.pread(self.store, max(end - offset, 0), offset)
        if self.mode == "bad":
            size = max(end - offset, 0)
            if any(s in self.bad for s in self._sectors(offset, size)):
                return -errno.EIO
            return os.pread(self.store, size, offset)
        out = bytearray()
        pos = offset
        while pos < end:
            n, within = divmod(pos, PAGE)
            take = min(PAGE - within, end - pos)
            p = self.cache.get(n)
            if p is None:
                chunk = os.pread(self.store, take, pos).ljust(take, b"\0")
            else:
                chunk = p[within:within + take]
            out += chunk
            pos += take
        return bytes(out)

    def write(self, offset, data):
        if offset >= self.size:
            return -errno.ENOSPC
        data = data[: self.size - offset]
        if self.mode == "fake":
            i = 0
            for at, take in self._fake_pieces(offset, len(data)):
                if at is None and self.fake[0] == "fail":
                    return -errno.EIO
                if at is not None:
                    os.pwrite(self.store, data[i:i + take], at)
                i += take
            return len(data)
        if self.mode == "smr":
            if self.written >= self.smr[0]:
                time.sleep(self.smr[1])
            n = os.pwrite(self.store, data, offset)
            self.written += n
            return n
        if self.mode == "bad":
            n = os.pwrite(self.store, data, offset)
            # A drive remaps a pending sector when it is written.
            self.bad.difference_update(self._sectors(offset, n))
            return n
        pos = offset
        i = 0
        while i < len(data):
            n, within = divmod(pos, PAGE)
            take = min(PAGE - within, len(data) - i)
            self._page(n)[within:within + take] = data[i:i + take]
            pos += take
            i += take
        if self.mode == "liar" and len(self.cache) > LIAR_BATCH:
            self._write_back(sync=False)
        return len(data)

    def _write_back(self, sync):
        for n, p in sorted(self.cache.items()):
            os.pwrite(self.store, bytes(p), n * PAGE)
        self.cache.clear()
        if sync:
            os.fsync(self.store)

    def fsync(self):
        if self.mode == "honest":
            self._write_back(sync=True)
        elif self.mode in ("bad", "fake", "smr"):
            os.fsync(self.store)
        # The liar acknowledges without writing anything.


def attr(nodeid, size):
    if nodeid == ROOT:
        mode, nlink, size = stat.S_IFDIR | 0o755, 2, 0
    else:
        mode, nlink = stat.S_IFREG | 0o600, 1
    # ino size blocks atime mtime ctime atimens mtimens ctimens mode nlink uid gid rdev
    # blksize flags
    return struct.pack("<QQQQQQIIIIIIIIII", nodeid, size, (size + 511) // 512, 0, 0, 0, 0, 0, 0,
                       mode, nlink, 0, 0, 0, PAGE, 0)


def attr_out(nodeid, size):
    return struct.pack("<QII", TTL, 0, 0) + attr(nodeid, size)


def entry_out(nodeid, size):
    return struct.pack("<QQQQII", nodeid, 0, TTL, TTL, 0, 0) + attr(nodeid, size)


def mount(fd, mountpoint):
    libc = ctypes.CDLL(None, use_errno=True)
    opts = "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other" % fd
    flags = 0x2 | 0x4  # MS_NOSUID | MS_NODEV
    if libc.mount(b"cachedisk", mountpoint.encode(), b"fuse", flags, opts.encode()) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "mount: " + os.strerror(e))


def serve(fd, disk):
    held = []  # READ requests kept back by the hold, oldest first
    while True:
        if held and not disk.holding():
            for req in held:
                answer(fd, disk, req)
            held = []
        # While reads are held the loop must not block on the fd: it looks at the hold file
        # every HOLD_POLL and serves everything else meanwhile.
        if held and not select.select([fd], [], [], HOLD_POLL)[0]:
            continue
        try:
            req = os.read(fd, 1 << 21)
        except OSError as e:
            if e.errno in (errno.EINTR, errno.EAGAIN, errno.ENOENT):
                continue
            if e.errno == errno.ENODEV:  # unmounted
                return
            raise
        opcode = IN_HEADER.unpack_from(req)[1]
        if opcode == FUSE_DESTROY:
            return
        if opcode == FUSE_READ and disk.hold is not None:
            offset = struct.unpack_from("<QQ", req, IN_HEADER.size)[1]
            # Once reads are held, a later one queues behind them even if the hold file has
            # just gone: they are answered in order.
            if offset >= disk.hold[1] and (held or disk.holding()):
                if not held:
                    open(disk.hold[0] + ".held", "w").close()
                held.append(req)
                continue
        if opcode == FUSE_READ and disk.slow is not None:
            offset = struct.unpack_from("<QQ", req, IN_HEADER.size)[1]
            path, start, seconds = disk.slow
            if offset >= start:
                if not os.path.exists(path):
                    open(path, "w").close()
                time.sleep(seconds)
        answer(fd, disk, req)


def answer(fd, disk, req):
    length, opcode, unique, nodeid, _uid, _gid, _pid, _ext, _pad = IN_HEADER.unpack_from(req)
    body = req[IN_HEADER.size:length]
    if opcode in NO_REPLY:
        return
    err, out = 0, b""
    if opcode == FUSE_INIT:
        major, minor, readahead, flags = struct.unpack_from("<IIII", body)
        # major minor max_readahead flags max_background congestion max_write time_gran
        # max_pages map_alignment flags2 unused[7]
        out = struct.pack("<IIIIHHIIHHI28x", 7, 31, readahead, 0, 16, 12, 1 << 17, 1, 32,
                          0, 0)
    elif opcode == FUSE_LOOKUP:
        name = body.split(b"\0", 1)[0]
        if nodeid == ROOT and name == b"disk":
            out = entry_out(DISK, disk.size)
        else:
            err = -errno.ENOENT
    elif opcode in (FUSE_GETATTR, FUSE_SETATTR):
        out = attr_out(nodeid, disk.size)
    elif opcode in (FUSE_OPEN, FUSE_OPENDIR):
        # Direct I/O for the bad disk: through the page cache a loop device's 512-byte read
        # would fetch, and fail on, the whole page around it.
        direct = opcode == FUSE_OPEN and disk.mode in ("bad", "fake", "smr")
        out = struct.pack("<QII", 0, FOPEN_DIRECT_IO if direct else 0, 0)
    elif opcode == FUSE_READ:
        _fh, offset, size = struct.unpack_from("<QQI", body)
        out = disk.read(offset, size)
        if isinstance(out, int):
            err, out = out, b""
    elif opcode == FUSE_WRITE:
        _fh, offset, size = struct.unpack_from("<QQI", body)
        n = disk.write(offset, body[40:40 + size])
        if n < 0:
            err = n
        else:
            out = struct.pack("<II", n, 0)
    elif opcode == FUSE_FSYNC:
        disk.fsync()
    elif opcode in (FUSE_FLUSH, FUSE_RELEASE, FUSE_RELEASEDIR):
        pass
    elif opcode == FUSE_READDIR:
        out = b""
    elif opcode == FUSE_STATFS:
        out = struct.pack("<QQQQQIIII24x", disk.size // PAGE, 0, 0, 1, 0, PAGE, 255, PAGE, 0)
    else:
        err = -errno.ENOSYS
    try:
        os.write(fd, OUT_HEADER.pack(OUT_HEADER.size + len(out), err, unique) + out)
    except OSError as e:
        if e.errno != errno.ENOENT:  # the request was interrupted meanwhile
            raise


def bad_sectors(spec):
    """CACHEDISK_BAD ("OFFSET+LENGTH,...", bytes, multiples of 512) as sector numbers."""
    sectors = set()
    for item in filter(None, (x.strip() for x in spec.split(","))):
        offset, length = (int(x) for x in item.split("+"))
        if offset % SECTOR or length % SECTOR:
            raise ValueError("CACHEDISK_BAD: %s is not in whole sectors" % item)
        sectors.update(range(offset // SECTOR, (offset + length) // SECTOR))
    return sectors


def hold_spec(spec):
    """CACHEDISK_HOLD ("PATH:OFFSET") as (path, offset), or None."""
    if not spec:
        return None
    path, offset = spec.rsplit(":", 1)
    return path, int(offset)


def slow_spec(spec):
    """CACHEDISK_SLOW ("PATH:OFFSET:MS") as (path, offset, seconds), or None."""
    if not spec:
        return None
    path, offset, ms = spec.rsplit(":", 2)
    return path, int(offset), int(ms) / 1000


def main():
    if len(sys.argv) != 6 or sys.argv[1] not in ("honest", "liar", "bad", "fake", "smr"):
        sys.stderr.write(__doc__)
        return 2
    mode, store, mountpoint, size, ready = sys.argv[1:]
    if mode == "bad":
        disk = Disk(mode, store, int(size), bad_sectors(os.environ.get("CACHEDISK_BAD", "")),
                    hold_spec(os.environ.get("CACHEDISK_HOLD", "")),
                    slow_spec(os.environ.get("CACHEDISK_SLOW", "")))
    elif mode == "fake":
        kind, real = os.environ.get("CACHEDISK_FAKE", "").split(":")
        if kind not in ("wrap", "drop", "fail") or int(real) % SECTOR or int(real) <= 0:
            sys.stderr.write("CACHEDISK_FAKE=wrap|drop|fail:BYTES (a multiple of 512)\n")
            return 2
        disk = Disk(mode, store, int(size), fake=(kind, int(real)))
    elif mode == "smr":
        before, ms = os.environ.get("CACHEDISK_SMR", "").split(":")
        disk = Disk(mode, store, int(size), smr=(int(before), int(ms) / 1000))
    else:
        disk = Disk(mode, store, int(size))
    fd = os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC)
    mount(fd, mountpoint)
    with open(ready, "w") as f:
        f.write(str(os.getpid()))
    serve(fd, disk)
    return 0


if __name__ == "__main__":
    sys.exit(main())
