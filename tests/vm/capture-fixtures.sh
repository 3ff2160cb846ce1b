#!/usr/bin/env bash
# Captures the QEMU lab's sysfs into tests/fixtures/sysfs/qemu-lab/: SATA, NVMe, SCSI, virtio
# and USB disks, a mounted partition and a swap partition, md RAID1 and an LVM-style dm device.
# A developer tool (the fixtures are committed); needs root for nothing but the lab's packages
# plus dmsetup and mdadm on the host.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=${WORK_DIR:-$(mktemp -d /tmp/dt-capture.XXXXXX)}
out="$repo/tests/fixtures/sysfs/qemu-lab"

export LAB_TOOLS="mdadm dmsetup"
export LAB_PREPARE='printf "label: gpt\n,128M,L\n,,S\n" | sfdisk -q "$WORK/virtio.img"'
"$here/lab.sh" run "$work" "$here/capture-guest.sh" capture
sed -n '/^----- disktriage list/,/^----- capture/p' "$work/results.log"
rm -rf "$out"
mkdir -p "$out"
tr -d '\r' < "$work/results.log" | sed -n '/^===== BEGIN TAR/,/^===== END TAR/p' | sed '1d;$d' | base64 -d | tar -C "$out" -xzf -
echo "captured into $out"
