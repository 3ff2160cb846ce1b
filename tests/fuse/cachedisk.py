#!/usr/bin/env python3
"""A one-file FUSE file system that behaves like a disk with a volatile write cache, for the
power-cut check's root tests (tests/root/flushcheck_powercut.rs).

    cachedisk.py MODE STORE MOUNTPOINT SIZE READY_FILE

The file system holds one file, `disk`, of SIZE bytes, backed by STORE (a plain file on
another file system: the "medium"). Writes stay in the daemon's memory (the "cache") until an
fsync; a read sees the cache over the medium. A loop device over `disk` turns a block-layer
flush (REQ_PREFLUSH) into vfs_fsync, which reaches this daemon as FUSE_FSYNC.

MODE:
  honest  an fsync writes every cached block to STORE and fsyncs STORE before it answers;
  liar    an fsync answers at once; cached blocks reach STORE only when more than
          LIAR_BATCH of them pile up (so a kill loses the acknowledged tail).

Killing the daemon (SIGKILL) is the power cut: its memory, the cache, is gone; STORE keeps
what was made durable. A new daemon over the same STORE is the reboot.

It speaks the kernel's FUSE protocol on /dev/fuse directly (mount(2) with fd=N), so it needs
no libfuse, no fusermount and no Python package: only root and the fuse module. It writes
READY_FILE once mounted.
"""

import ctypes
import errno
import os
import stat
import struct
import sys

LIAR_BATCH = 64
PAGE = 4096

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
    def __init__(self, mode, store, size):
        self.mode = mode
        self.size = size
        self.store = os.open(store, os.O_RDWR | os.O_CREAT, 0o600)
        if os.fstat(self.store).st_size < size:
            os.ftruncate(self.store, size)
        self.cache = {}  # page number -> bytearray(PAGE)

    def _page(self, n):
        p = self.cache.get(n)
        if p is None:
            p = bytearray(os.pread(self.store, PAGE, n * PAGE).ljust(PAGE, b"\0"))
            self.cache[n] = p
        return p

    def read(self, offset, size):
        end = min(offset + size, self.size)
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
    while True:
        try:
            req = os.read(fd, 1 << 21)
        except OSError as e:
            if e.errno in (errno.EINTR, errno.EAGAIN, errno.ENOENT):
                continue
            if e.errno == errno.ENODEV:  # unmounted
                return
            raise
        length, opcode, unique, nodeid, _uid, _gid, _pid, _ext, _pad = IN_HEADER.unpack_from(req)
        body = req[IN_HEADER.size:length]
        if opcode in NO_REPLY:
            continue
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
            out = struct.pack("<QII", 0, 0, 0)
        elif opcode == FUSE_READ:
            _fh, offset, size = struct.unpack_from("<QQI", body)
            out = disk.read(offset, size)
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
        elif opcode == FUSE_DESTROY:
            return
        else:
            err = -errno.ENOSYS
        try:
            os.write(fd, OUT_HEADER.pack(OUT_HEADER.size + len(out), err, unique) + out)
        except OSError as e:
            if e.errno != errno.ENOENT:  # the request was interrupted meanwhile
                raise


def main():
    if len(sys.argv) != 6 or sys.argv[1] not in ("honest", "liar"):
        sys.stderr.write(__doc__)
        return 2
    mode, store, mountpoint, size, ready = sys.argv[1:]
    disk = Disk(mode, store, int(size))
    fd = os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC)
    mount(fd, mountpoint)
    with open(ready, "w") as f:
        f.write(str(os.getpid()))
    serve(fd, disk)
    return 0


if __name__ == "__main__":
    sys.exit(main())
