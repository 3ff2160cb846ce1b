#!/bin/sh
# Guest side of tests/lab/qemu_lab_triage.rs: `disktriage triage` on disks whose faults are
# known, in one boot (tests/vm/lab.sh, disk set `triage`). Each step prints a `===== NAME`
# header, then what the step printed, `rc=N` and its stderr; `stat NAME ...` lines are
# /sys/block/NAME/stat, `wall=S` the step's wall time in seconds (the guest's /proc/uptime).
#
# The disks:
# - from QEMU: SATA on AHCI (7200 rpm), NVMe, NVMe with critical warning 4 ("reliability
#   degraded"), SCSI on virtio-scsi, three virtio disks of the same size, the third throttled
#   by QEMU (the outlier among equal siblings);
# - scsi_debug (an sd disk, read through SG_IO), 1 GiB (16 MiB of RAM behind it, repeated:
#   `virtual_gb`), with $SD_BAD_COUNT unrecoverable sectors at LBA $SD_BAD_LBA (`opts=2`);
# - `dtslow`, a dm table over null_blk (no data), $SLOW_TOTAL_MIB MiB, with a $SLOW_MIB MiB
#   dm-delay segment of $SLOW_MS ms at $SLOW_AT_MIB MiB.
# The bad and slow areas are away from the start, middle and end, where the sequential reads
# go (64 MiB each), so only the sampled surface read (3000 reads of 64 KiB, one in each of
# 3000 equal strata) meets them: some 12 samples in the bad sectors, some 19 in the slow
# segment. The sizes differ from the other disks', so no two of them look like siblings.
#
# Runnable alone while developing it:
#     DISKTRIAGE_BIN=... LAB_TOOLS="dmsetup ioping" tests/vm/lab.sh run /tmp/w \
#         tests/vm/triage-guest.sh triage
set -u
export DM_DISABLE_UDEV=1

# Keep in step with the constants of tests/lab/qemu_lab_triage.rs.
SD_BAD_LBA=524288
SD_BAD_COUNT=8192
SLOW_TOTAL_MIB=320
SLOW_AT_MIB=80
SLOW_MIB=2
SLOW_MS=400

section() { echo "===== $*"; }
W=/tmp/triage
mkdir -p $W

# The serial from virtio's `serial`, NVMe's `device/serial` (space padded) or the SCSI VPD page
# 0x80 (a 4-byte binary header, no printable characters in it for these lengths).
serial_of() {
    for f in "$1/serial" "$1/device/serial" "$1/device/vpd_pg80"; do
        if [ -r "$f" ]; then
            tr -dc 'A-Za-z0-9-' <"$f"
            return
        fi
    done
}

by_serial() {
    for d in /sys/block/*; do
        if [ "$(serial_of "$d")" = "$1" ]; then
            basename "$d"
            return
        fi
    done
}

# The kernel name of the dm device called $1.
dm_name() {
    for d in /sys/block/dm-*; do
        [ "$(cat "$d/dm/name" 2>/dev/null)" = "$1" ] && basename "$d"
    done
}

# Seconds since boot, to the hundredth.
now() { cut -d' ' -f1 /proc/uptime; }

# Runs a triage with its arguments; prints its output, status, wall time and stderr (stderr
# is a file, not a terminal: no progress lines).
triage() {
    t0=$(now)
    disktriage triage "$@" >$W/out 2>$W/err
    rc=$?
    t1=$(now)
    cat $W/out
    echo "rc=$rc"
    echo "wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
    cat $W/err
}

section SETUP
insmod /lab/modules/scsi_debug.ko dev_size_mb=16 virtual_gb=1 opts=2 \
    medium_error_start=$SD_BAD_LBA medium_error_count=$SD_BAD_COUNT
echo "scsi_debug rc=$?"
sdbg=
i=0
while [ -z "$sdbg" ] && [ $i -lt 100 ]; do
    for d in /sys/block/sd*; do
        [ "$(tr -d ' ' <"$d/device/model" 2>/dev/null)" = scsi_debug ] && sdbg=$(basename "$d")
    done
    [ -n "$sdbg" ] || sleep 0.1
    i=$((i + 1))
done
insmod /lab/modules/null_blk.ko nr_devices=1 gb=1 queue_mode=2 irqmode=0
echo "null_blk rc=$?"
mib=2048 # sectors
{
    echo "0 $((SLOW_AT_MIB * mib)) linear /dev/nullb0 0"
    echo "$((SLOW_AT_MIB * mib)) $((SLOW_MIB * mib)) delay /dev/nullb0 $((SLOW_AT_MIB * mib)) $SLOW_MS"
    echo "$(((SLOW_AT_MIB + SLOW_MIB) * mib)) $(((SLOW_TOTAL_MIB - SLOW_AT_MIB - SLOW_MIB) * mib)) linear /dev/nullb0 $(((SLOW_AT_MIB + SLOW_MIB) * mib))"
} | dmsetup create dtslow --noudevsync
echo "dmsetup rc=$?"
dtslow=$(dm_name dtslow)
dmsetup table

sata=$(by_serial DT-SATA-0)
nvme=$(by_serial DT-NVME-0)
nvmewarn=$(by_serial DT-NVME-WARN)
scsi=$(by_serial DT-SCSI-0)
virtio0=$(by_serial DT-VIRTIO-0)
virtio1=$(by_serial DT-VIRTIO-1)
virtio2=$(by_serial DT-VIRTIO-2)
all="$sata $nvme $nvmewarn $scsi $virtio0 $virtio1 $virtio2 $sdbg $dtslow"

section DEVICES
echo "sata=$sata nvme=$nvme nvmewarn=$nvmewarn scsi=$scsi virtio0=$virtio0 virtio1=$virtio1 virtio2=$virtio2 sdbg=$sdbg dtslow=$dtslow"
for n in $all; do
    echo "$n size=$(cat /sys/block/$n/size) rotational=$(cat /sys/block/$n/queue/rotational)"
done
for l in /sys/class/ata_link/*; do
    [ -r "$l/sata_spd" ] && echo "$(basename "$l") sata_spd=$(cat "$l/sata_spd")"
done

section STATS-BEFORE
for n in $all; do echo "stat $n $(cat /sys/block/$n/stat)"; done

# Every lab disk at once, as JSON: the verdicts, the findings, the exit status, the wall time.
section TRIAGE-ALL
# shellcheck disable=SC2086 # one argument per disk
triage --json $(for n in $all; do echo "/dev/$n"; done)

section STATS-AFTER
for n in $all; do echo "stat $n $(cat /sys/block/$n/stat)"; done

# The healthy disks alone, as the table a person reads: exit status 0.
section TRIAGE-HEALTHY
triage "/dev/$sata" "/dev/$nvme" "/dev/$scsi" "/dev/$virtio0" "/dev/$virtio1"

# The slow region alone: suspect, exit status 3.
section TRIAGE-SLOW
triage --json "/dev/$dtslow"

# Names as a rescue system without udev has them: /dev/mapper/dtslow is a node dmsetup made
# (no link to ../dm-N), and a node made by mknod in another directory; each is the device of
# its number, for the triage and for the commands that resolve a disk (sched).
section NAMES-NODES
ls -l /dev/mapper/dtslow
mknod $W/the-sata-disk b $(tr ':' ' ' </sys/block/$sata/dev)
echo "sched:"
disktriage sched /dev/mapper/dtslow
echo "sched-rc=$?"
disktriage sched $W/the-sata-disk
echo "sched-rc=$?"
section NAMES-TRIAGE
triage --quick --json /dev/mapper/dtslow $W/the-sata-disk

# Fitness for an array (issue 38): a zoned null_blk (host-managed, made through configfs) is a
# note; the SATA disk in an md RAID1 (md refuses the small null_blk meant as its mirror, so
# the array runs degraded on the SATA disk alone) is judged on its SCT Error Recovery
# Control against its kernel timeout, at 30 s and at 180 s; everything is taken down after.
section FITNESS-SETUP
[ -d /sys/module/configfs ] || insmod /lab/modules/configfs.ko
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
CFGNB=/sys/kernel/config/nullb
fit_nullb() { # configfs name, zoned (0/1): prints the kernel name of the device that appeared
    before=$(ls /sys/block)
    mkdir "$CFGNB/$1" || return 1
    echo 256 >"$CFGNB/$1/size"
    if [ "$2" = 1 ]; then
        echo 1 >"$CFGNB/$1/zoned"
        echo 64 >"$CFGNB/$1/zone_size"
    fi
    echo 1 >"$CFGNB/$1/power"
    for b in $(ls /sys/block); do
        echo "$before" | grep -qx "$b" || echo "$b"
    done
}
zoned=$(fit_nullb fitzoned 1)
member=$(fit_nullb fitmember 0)
mdadm --create /dev/md9 --run --level=1 --raid-devices=2 --metadata=1.0 --assume-clean \
    "/dev/$sata" "/dev/$member" </dev/null >$W/mdadm 2>&1
echo "mdadm rc=$?"
sed 's/^/mdadm: /' $W/mdadm
echo "zoned=$zoned member=$member queue/zoned=$(cat /sys/block/$zoned/queue/zoned) \
nr_zones=$(cat /sys/block/$zoned/queue/nr_zones) timeout=$(cat /sys/block/$sata/device/timeout) \
holders=$(ls /sys/block/$sata/holders)"
section FITNESS-30
triage --quick --json "/dev/$sata" "/dev/$zoned"
echo 180 >/sys/block/$sata/device/timeout
section FITNESS-180
triage --quick --json "/dev/$sata"
echo 30 >/sys/block/$sata/device/timeout
section FITNESS-TEARDOWN
mdadm --stop /dev/md9 && mdadm --zero-superblock "/dev/$sata" "/dev/$member"
echo "mdadm rc=$?"
for n in fitzoned fitmember; do
    echo 0 >"$CFGNB/$n/power"
    rmdir "$CFGNB/$n"
done
echo "timeout=$(cat /sys/block/$sata/device/timeout) holders=$(ls /sys/block/$sata/holders)"

section TEARDOWN
dmsetup remove dtslow
echo "rc=$?"

# The flush check's lab (tests/lab/qemu_lab_flush.rs) shares this boot: it writes to the disks,
# so it comes after the triage, which it does not disturb.
[ -r /lab/flush-guest.sh ] && sh /lab/flush-guest.sh
# The capacity probe's lab (tests/lab/qemu_lab_capacity.rs) writes to the SATA disk (its
# journals), the NVMe and SCSI disks: after the flush lab.
[ -r /lab/capacity-guest.sh ] && sh /lab/capacity-guest.sh
