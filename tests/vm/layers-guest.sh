# Sourced by drive-control-guest.sh (qemu_lab_filesystem_layers): a file test on a file system
# over each layer the honesty guards name, on the lab's real disks, and on one with no layer.
# - md RAID1 over the two NVMe disks;
# - dm-crypt (aes-xts-plain64, a fixed key: the data is thrown away) over the virtio disk's
#   partition, made with bare dmsetup, without the `CRYPT-` uuid cryptsetup gives its
#   mappings (tools built on dmsetup leave it out): the kernel's table names the crypt target
#   all the same;
# - ext2 directly on the SCSI disk: no layer, no note.
# Each file system is small (busybox mke2fs, 64 MiB, few inodes) and each test writes 4 MiB,
# so the section costs a few seconds of guest time. Everything is taken down again: the later
# sections remove the SCSI disk.
export DM_DISABLE_UDEV=1

# A file test in text, then as JSON, on a new file in directory $2; section names start with $1.
layer_run() {
    section "$1-TEXT"
    disktriage run "$2/testfile" --test seq-write --size 4M --bs 1M --count 4 --warmup 0 \
        2>/tmp/layer.err
    echo "rc=$?"
    cat /tmp/layer.err
    section "$1-JSON"
    disktriage run "$2/testfile-json" --test seq-write --size 4M --bs 1M --count 4 \
        --warmup 0 --json 2>/tmp/layer.err
    echo "rc=$?"
    cat /tmp/layer.err
}

# A small ext2 (mounted by the ext4 driver) on $1, at $2.
layer_fs() {
    mkdir -p "$2"
    mke2fs -F -b 4096 -i 262144 "$1" 65536 >/dev/null 2>&1 || echo "mke2fs $1 failed"
    mount -t ext4 "$1" "$2" || echo "mount $1 failed"
}

section LAYER-MD-SETUP
echo "start=$(cut -d' ' -f1 /proc/uptime)"
mdadm --create /dev/md7 --run --level=1 --raid-devices=2 --metadata=1.2 --assume-clean \
    "/dev/$nvme" "/dev/$nvmewarn" >/dev/null 2>&1
echo "mdadm rc=$?"
layer_fs /dev/md7 /mnt/md
echo "md=$(basename "$(readlink -f /dev/md7)") members=$nvme,$nvmewarn" \
    "level=$(cat /sys/block/md7/md/level)"
layer_run LAYER-MD /mnt/md
umount /mnt/md
mdadm --stop /dev/md7 >/dev/null 2>&1

section LAYER-CRYPT-SETUP
layer_part=${virtio}1
dmsetup create dtcrypt --noudevsync --table \
    "0 $(blockdev --getsz "/dev/$layer_part") crypt aes-xts-plain64 $(printf '%064d' 7) 0 /dev/$layer_part 0"
echo "dmsetup rc=$?"
layer_dm=
for d in /sys/block/dm-*; do
    [ "$(cat "$d/dm/name" 2>/dev/null)" = dtcrypt ] && layer_dm=$(basename "$d")
done
layer_fs "/dev/$layer_dm" /mnt/crypt
echo "dm=$layer_dm mapping=dtcrypt below=$layer_part"
layer_run LAYER-CRYPT /mnt/crypt
umount /mnt/crypt
dmsetup remove --noudevsync dtcrypt

section LAYER-PLAIN-SETUP
layer_fs "/dev/$scsi" /mnt/plain
echo "disk=$scsi"
layer_run LAYER-PLAIN /mnt/plain
umount /mnt/plain
section LAYER-END
echo "end=$(cut -d' ' -f1 /proc/uptime)"
