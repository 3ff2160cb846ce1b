#!/bin/sh
# Guest side of tests/vm/capture-fixtures.sh: builds md, dm and mounted-partition cases on the
# lab's disks, then captures sysfs and prints it as a base64 tarball between markers.
set -u

by_serial() {
    for d in /sys/block/*; do
        if [ "$(cat "$d/serial" 2>/dev/null || cat "$d/device/serial" 2>/dev/null)" = "$1" ]; then
            basename "$d"
            return
        fi
    done
}

virtio=$(by_serial DT-VIRTIO-0)
x1=$(by_serial DT-EXTRA-1)
x2=$(by_serial DT-EXTRA-2)
x3=$(by_serial DT-EXTRA-3)
echo "virtio=$virtio extra=$x1,$x2,$x3"

# A mounted partition on the virtio disk (the host wrote its partition table).
mke2fs -q "/dev/${virtio}1" && mkdir -p /mnt/data && mount -t ext4 "/dev/${virtio}1" /mnt/data
# A swap partition beside it.
mkswap "/dev/${virtio}2" >/dev/null && swapon "/dev/${virtio}2"

# md RAID1 over two disks.
export MDADM_NO_UDEV=1
mdadm --create /dev/md0 --run --level=1 --raid-devices=2 --metadata=1.2 --assume-clean \
    "/dev/$x1" "/dev/$x2" 2>&1 | tail -n 2

# An LVM-style dm linear device (lvm2 gives its dm uuids the LVM- prefix), mounted.
export DM_DISABLE_UDEV=1
dmsetup create vg0-data --noudevsync --uuid LVM-dtcapture0000000000000000000000000000vg0data0 \
    --table "0 262144 linear /dev/$x3 0"
mke2fs -q /dev/dm-0 && mkdir -p /mnt/lv && mount -t ext4 /dev/mapper/vg0-data /mnt/lv \
    || mount -t ext4 /dev/dm-0 /mnt/lv

echo "----- disktriage list"
disktriage list --all 2>&1
echo "----- capture"
sh /lab/capture-sysfs.sh /tmp/capture
echo "===== BEGIN TAR"
tar -C /tmp/capture -czf - . | base64
echo "===== END TAR"
