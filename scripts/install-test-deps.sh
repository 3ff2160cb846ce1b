#!/usr/bin/env bash
# Installs the Debian packages the test suite needs (as root), only those missing.
#   util-linux/fdisk/e2fsprogs: losetup, blockdev, partx, sfdisk, mkfs.ext4 for device tests
#   bindfs: a FUSE file system to fail a loop device's backing store mid-run
#   procps: pgrep for the terminal tests
#   fio: the reference the engine is compared with
#   tmux: the end-to-end terminal test
#   qemu-system-x86, linux-image-amd64, busybox-static, cpio: the QEMU lab
#   smartmontools, nvme-cli: copied into the lab guest, the smartctl fallback and independent
#   witnesses of the drives' cache state (disktriage itself needs neither)
#   groff-base: groff formats the man page with warnings on (tests/assets/)
#   ioping (with fio): copied into the lab guest, witnesses of latency; dmsetup: builds the
#   lab's dm-delay device; mdadm: builds the lab's md arrays (the members table)
#   gddrescue: ddrescuelog reads back the scan's mapfile, ddrescue writes one it resumes
#   python3: runs tests/fuse/cachedisk.py, the FUSE disk with a volatile cache (honest or
#   lying about flushes) of the power-cut check's tests; it speaks /dev/fuse itself, so it
#   needs no libfuse nor Python package
set -euo pipefail
packages=(util-linux fdisk e2fsprogs bindfs procps fio tmux qemu-system-x86 linux-image-amd64
    busybox-static cpio smartmontools nvme-cli groff-base ioping dmsetup mdadm gddrescue python3)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "missing packages (install as root): ${missing[*]}" >&2
    exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
