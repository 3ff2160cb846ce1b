#!/bin/sh
# Guest side of tests/lab/qemu_lab_zoned.rs: zoned disks (issue 38) in a boot of their own
# (disk set `zoned`: the lab's four QEMU disks, the SATA one at 7,200 rpm; scsi_debug and
# null_blk loaded here). Runnable alone while developing it:
#     DISKTRIAGE_BIN=... tests/vm/lab.sh run /tmp/w tests/vm/zoned-guest.sh zoned
#
# The devices:
# - sdbg: scsi_debug zbc=host-managed, 64 MiB in zones of 4 MiB (the first conventional);
# - nullb: null_blk through configfs, zoned=1, 64 MiB in zones of 4 MiB;
# - sata: QEMU's IDE disk, which claims TRIM at 7,200 rpm (the SMR hint).
# Each zoned device is witnessed first with shell tools (`ZONED-WITNESS-<case>`: its sysfs
# zone attributes, a sequential read with dd, and a 4 KiB write in the middle of its third
# zone, which a sequential-write-required zone must reject). Then `disktriage list` (text and
# JSON), `triage --quick --json`, and on each zoned device a random and a sequential write
# test (`ZONED-RUN-<kind>-<case>`: refused up front, nothing written), a read test and a
# scan (`ZONED-READ-<case>`, `ZONED-SCAN-<case>`), each with `rc=N` and its stderr.
set -u

F=/tmp/zoned
mkdir -p $F
CFG=/sys/kernel/config/nullb
MIB=1048576

section() { echo "===== $*"; }

dt() {
    timeout -s KILL 180 disktriage "$@" >$F/out 2>$F/err
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

appeared() {
    for b in $(ls /sys/block); do
        echo "$1" | grep -qx "$b" || echo "$b"
    done
}

# The device's sha256 over its whole length (what no refused write may change).
sum() { sha256sum </dev/$1 | cut -c1-16; }

witness() {
    case=$1
    dev=$2
    q=/sys/block/$dev/queue
    section "ZONED-WITNESS-$case"
    echo "dev=$dev zoned=$(cat $q/zoned) nr_zones=$(cat $q/nr_zones) chunk_sectors=$(cat $q/chunk_sectors) rotational=$(cat $q/rotational)"
    dd if=/dev/$dev of=/dev/null bs=$MIB iflag=direct 2>$F/dd && echo "read=ok" || echo "read=failed $(tail -1 $F/dd)"
    # 4 KiB into the middle of the third zone (at 10 MiB), ahead of its write pointer.
    if dd if=/dev/zero of=/dev/$dev bs=4096 seek=2560 count=1 oflag=direct 2>$F/dd; then
        echo "random-write=accepted"
    else
        echo "random-write=rejected $(tail -1 $F/dd)"
    fi
    echo "sum=$(sum $dev)"
}

section ZONED-SETUP
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
echo "configfs rc=$?"
before=$(ls /sys/block)
insmod /lab/modules/scsi_debug.ko dev_size_mb=64 zbc=host-managed zone_size_mb=4
echo "scsi_debug rc=$?"
i=0
sdbg=
while [ -z "$sdbg" ] && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
    sdbg=$(appeared "$before")
done
insmod /lab/modules/null_blk.ko nr_devices=0
echo "null_blk rc=$?"
before=$(ls /sys/block)
mkdir $CFG/zn
echo 1 >$CFG/zn/memory_backed
echo 64 >$CFG/zn/size
echo 1 >$CFG/zn/zoned
echo 4 >$CFG/zn/zone_size
echo 1 >$CFG/zn/power
nullb=$(appeared "$before")
sata=$(by_serial DT-SATA-0)
echo "sdbg=$sdbg nullb=$nullb sata=$sata"

witness sdbg "$sdbg"
witness nullb "$nullb"

section ZONED-LIST
dt list
section ZONED-LIST-JSON
dt list --json
section ZONED-TRIAGE
dt triage --quick --json "/dev/$sdbg" "/dev/$nullb" "/dev/$sata"

for pair in "sdbg $sdbg" "nullb $nullb"; do
    set -- $pair
    case=$1
    dev=$2
    for t in rand-write seq-write; do
        section "ZONED-RUN-$t-$case"
        dt run /dev/$dev --test $t --time 2 --destroy-data $dev --json
        echo "sum=$(sum $dev)"
    done
    section "ZONED-READ-$case"
    dt run /dev/$dev --test seq-read --time 2 --json
    section "ZONED-SCAN-$case"
    dt scan /dev/$dev --json
done
section ZONED-END
