#!/bin/sh
# Guest side of tests/lab/qemu_lab_discard.rs: `disktriage trimcheck` (issue 38) on devices
# whose discards are known, in a boot of its own (disk set `discard`: the lab's four QEMU
# disks, QEMU's default discard=ignore; null_blk and scsi_debug loaded here with their
# parameters). Runnable alone while developing it:
#     DISKTRIAGE_BIN=... tests/vm/lab.sh run /tmp/w tests/vm/discard-guest.sh discard
#
# Each device gets two sections: `===== DISCARD-WITNESS-<case>` checks it with shell tools
# alone (a random MiB written with dd, blkdiscard, read back with O_DIRECT and compared with
# cmp: `witness=zeros|old|other|refused`, with the kernel's limits and the device's name), and
# `===== DISCARD-<case>` is `disktriage trimcheck --json`, `rc=N` and its stderr. The test
# asserts the witness first, so a lab that does not behave as built fails as the lab.
#
# The cases:
# - sdbg-lbprz1: scsi_debug lbpu=1 lbprz=1 (UNMAP; LBPRZ 1 in READ CAPACITY(16));
# - sdbg-lbprz0: scsi_debug lbpu=1 lbprz=0 (UNMAP; LBPRZ 0);
# - nullb-discard: null_blk (configfs) memory_backed=1 discard=1;
# - nullb-nodiscard: null_blk memory_backed=1 discard=0 (the kernel sends it no discards);
# - sata, nvme, scsi, virtio: QEMU's disks over raw images (discard=ignore by default).
#
# Found in the lab (kernel 6.1, QEMU 7.2 TCG; the witness and disktriage agree on each):
# - scsi_debug lbprz=1: UNMAP, granularity 512, reads zeros; LBPRZ 1: works (38.5 ms);
# - scsi_debug lbprz=0: reads the old data (scsi_debug leaves an unmapped block's data
#   alone); LBPRZ 0: kept (6.8 ms);
# - null_blk discard=1: reads zeros, no claim: works; discard=0: discard_max_bytes 0,
#   blkdiscard refused (EOPNOTSUPP): no-discard, nothing written;
# - QEMU's SATA disk: word 69 DRAT without RZAT, reads the old data: kept (0.8 ms);
# - QEMU's NVMe namespace: DLFEAT 1 (zeros), reads the old data: broken, exit 4 (1.1 ms):
#   QEMU promises zeros whatever the drive's discard=ignore does with the Deallocate;
# - QEMU's scsi-hd: LBPRZ 0, granularity 4096, reads the old data: kept;
# - virtio-blk: no claim, reads the old data: kept (11.4 ms).
set -u

F=/tmp/discard
mkdir -p $F
CFG=/sys/kernel/config/nullb
MIB=1048576
# The witness's MiB: at 8 MiB, a place the check's own range (the middle) does not touch.
WITNESS_AT=8

section() { echo "===== $*"; }

dt() {
    timeout -s KILL 120 disktriage "$@" >$F/out 2>$F/err
    rc=$?
    cat $F/out
    echo "rc=$rc"
    cat $F/err
}

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

# The block device that appeared since the list $1 was taken.
appeared() {
    for b in $(ls /sys/block); do
        echo "$1" | grep -qx "$b" || echo "$b"
    done
}

dd if=/dev/zero of=$F/zero bs=$MIB count=1 2>/dev/null

# Witness and check of /dev/$2 as case $1.
check() {
    case=$1
    dev=$2
    q=/sys/block/$dev/queue
    section "DISCARD-WITNESS-$case"
    echo "dev=$dev discard_max_bytes=$(cat $q/discard_max_bytes) granularity=$(cat $q/discard_granularity) sector=$(cat $q/logical_block_size)"
    dd if=/dev/urandom of=$F/pat bs=$MIB count=1 2>/dev/null
    dd if=$F/pat of=/dev/$dev bs=$MIB seek=$WITNESS_AT count=1 oflag=direct conv=fsync 2>/dev/null
    dd if=/dev/$dev of=$F/before bs=$MIB skip=$WITNESS_AT count=1 iflag=direct 2>/dev/null
    cmp -s $F/before $F/pat && echo "written=yes" || echo "written=no"
    if blkdiscard -o $((WITNESS_AT * MIB)) -l $MIB /dev/$dev 2>$F/bd; then
        dd if=/dev/$dev of=$F/back bs=$MIB skip=$WITNESS_AT count=1 iflag=direct 2>/dev/null
        if cmp -s $F/back $F/zero; then
            echo "witness=zeros"
        elif cmp -s $F/back $F/pat; then
            echo "witness=old"
        else
            echo "witness=other"
            hexdump -C $F/back | head -4
        fi
    else
        echo "witness=refused $(cat $F/bd)"
    fi
    section "DISCARD-$case"
    dt trimcheck /dev/$dev --confirm $dev --journal /run/trim-$case.journal --json
}

section DISCARD-SETUP
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
echo "configfs rc=$?"
insmod /lab/modules/null_blk.ko nr_devices=0
echo "null_blk rc=$?"

for lbprz in 1 0; do
    before=$(ls /sys/block)
    insmod /lab/modules/scsi_debug.ko dev_size_mb=64 lbpu=1 lbprz=$lbprz
    echo "scsi_debug lbprz=$lbprz rc=$?"
    i=0
    dev=
    while [ -z "$dev" ] && [ $i -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
        dev=$(appeared "$before")
    done
    check "sdbg-lbprz$lbprz" "$dev"
    rmmod scsi_debug
    echo "rmmod rc=$?"
done

for d in 1 0; do
    name=dt$d
    before=$(ls /sys/block)
    mkdir "$CFG/$name"
    echo 1 >"$CFG/$name/memory_backed"
    echo $d >"$CFG/$name/discard"
    echo 64 >"$CFG/$name/size"
    echo 1 >"$CFG/$name/power"
    dev=$(appeared "$before")
    case $d in
        1) check nullb-discard "$dev" ;;
        0) check nullb-nodiscard "$dev" ;;
    esac
done

for disk in SATA NVME SCSI VIRTIO; do
    dev=$(by_serial "DT-$disk-0")
    check "$(echo $disk | tr 'A-Z' 'a-z')" "$dev"
done
section DISCARD-END
