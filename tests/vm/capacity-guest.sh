#!/bin/sh
# Guest side of tests/lab/qemu_lab_capacity.rs: `disktriage capacity` (issue 38) on devices
# whose real size is known. Run after tests/vm/flush-guest.sh in the triage's boot (disk set
# `triage`), so it costs no boot of its own; runnable alone while developing it:
#     DISKTRIAGE_BIN=... LAB_TOOLS="dmsetup ioping" tests/vm/lab.sh run /tmp/w \
#         tests/vm/capacity-guest.sh triage
#
# Every step prints a `===== CAP-...` header, then what it printed, `rc=N`, and its stderr
# (as triage-guest.sh does). The PROOF sections check each device with busybox dd alone
# before disktriage touches it, so a lab that does not behave as built fails as the lab.
#
# The devices (sectors of 512 bytes):
# - `sd`: scsi_debug, $SD_MIB MiB of RAM claimed as $SD_GB GiB (`virtual_gb`): a write past
#   the store lands on it again, modulo its size;
# - `wrap`: a dm table of linear segments, each the first $WRAP_PERIOD sectors of the
#   NVMe disk DT-NVME-WARN, repeated up to $CLAIM_SECTORS: a wrap every 72 MiB + 5 sectors,
#   longer than the probe's 64 MiB region (found by its giant steps) and no power of two;
# - `zero`: dm-linear over the first $ZERO_REAL sectors (40 MiB + 7) of the SCSI disk
#   DT-SCSI-0, then dm-zero up to $CLAIM_SECTORS (writes dropped, reads zeros): found in the
#   region;
# - `error`: dm-linear over the first $ERROR_REAL sectors (66 MiB + 5) of the same disk, then
#   dm-error (every read and write fails): found by the giant steps and the bisection;
# - `real`: scsi_debug again, without `virtual_gb`: $REAL_MIB MiB that store what they claim.
# The start of each store (the sectors the device really keeps; the first 64 MiB at most, the
# probe's region) is filled with random bytes first, and the sha256 of the whole store printed
# before and after each probe. The journal is on an ext2 file system on the SATA disk, another
# disk than any probed. A probe of `sd` is killed (SIGKILL) once its journal holds
# $KILL_AT_MIB MiB (past the store: wrapped writes have overwritten the first ones), and
# `restore --capacity` puts back what it saved.
#
# busybox dd's `direct` flags are not kept to here: the kernel logged its reads of a dm device
# as page reads ("Buffer I/O error ... async page read" of the 4 KiB block across the end of
# dm-error's linear part). So its reads come after the page cache is dropped (`blockdev
# --flushbufs`), its writes with conv=fsync, and what they show is the device's; but a sector
# whose 4 KiB page crosses into dm-error cannot be read or written by dd at all (the probe,
# with O_DIRECT, reads and writes it).
set -u
export DM_DISABLE_UDEV=1

# Keep in step with tests/lab/qemu_lab_capacity.rs.
SD_MIB=24
SD_GB=1
WRAP_PERIOD=147461
ZERO_REAL=81927
ERROR_REAL=135173
REAL_MIB=80
CLAIM_SECTORS=4194304
KILL_AT_MIB=30

csection() { echo "===== $*"; }
C=/tmp/cap
J=$C/journals
mkdir -p $C $J

c_serial_of() {
    for f in "$1/serial" "$1/device/serial" "$1/device/vpd_pg80"; do
        if [ -r "$f" ]; then
            tr -dc 'A-Za-z0-9-' <"$f"
            return
        fi
    done
}

c_by_serial() {
    for d in /sys/block/*; do
        if [ "$(c_serial_of "$d")" = "$1" ]; then
            basename "$d"
            return
        fi
    done
}

c_dm_name() {
    for d in /sys/block/dm-*; do
        [ "$(cat "$d/dm/name" 2>/dev/null)" = "$1" ] && basename "$d"
    done
}

c_now() { cut -d' ' -f1 /proc/uptime; }
c_since() { awk -v a="$1" -v b="$(c_now)" 'BEGIN { printf "%.2f", b - a }'; }

# sha256 of the first $2 sectors of /dev/$1, read past the page cache (dropped first too:
# a probe through a dm device writes past the cache of the disk beneath).
c_sha() {
    blockdev --flushbufs "/dev/$1"
    {
        dd if="/dev/$1" bs=1M count=$(($2 / 2048)) iflag=direct 2>/dev/null
        [ $(($2 % 2048)) -gt 0 ] && dd if="/dev/$1" bs=512 skip=$(($2 / 2048 * 2048)) \
            count=$(($2 % 2048)) iflag=direct 2>/dev/null
    } | sha256sum | cut -d' ' -f1
}

# Random bytes over the first $2 sectors of /dev/$1, 64 MiB at most (the probe's region:
# what it overwrites most), from one file of them made once.
c_fill() {
    n=$2
    [ "$n" -gt 131072 ] && n=131072
    dd if=$C/random of="/dev/$1" bs=1M count=$((n / 2048)) oflag=direct conv=fsync \
        2>/dev/null
    [ $((n % 2048)) -gt 0 ] && dd if=$C/random of="/dev/$1" bs=512 skip=$((n / 2048 * 2048)) \
        seek=$((n / 2048 * 2048)) count=$((n % 2048)) oflag=direct conv=notrunc,fsync \
        2>/dev/null
    return 0
}

# One sector of /dev/$1 at sector $2, as its md5 ("fail" when the read fails; dd's
# complaint goes to $C/dd.err).
c_sector_md5() {
    blockdev --flushbufs "/dev/$1" 2>/dev/null
    if dd if="/dev/$1" bs=512 skip="$2" count=1 iflag=direct status=none 2>>$C/dd.err \
        >$C/sector; then
        md5sum <$C/sector | cut -d' ' -f1
    else
        echo fail
    fi
}

# Writes the marker sector to /dev/$1 at sector $2; prints the status.
c_mark() {
    dd if=$C/marker of="/dev/$1" bs=512 seek="$2" count=1 oflag=direct conv=notrunc,fsync \
        status=none 2>>$C/dd.err
    echo $?
}

# The dm device $1's table and queue limits; dd's complaints so far (then forgotten).
c_dm_show() {
    dmsetup table "$1"
    q=/sys/block/$2/queue
    echo "$1 logical=$(cat $q/logical_block_size) physical=$(cat $q/physical_block_size)" \
        "dma_alignment=$(cat $q/dma_alignment 2>/dev/null) size=$(cat /sys/block/$2/size)"
}
c_dd_errors() {
    [ -s $C/dd.err ] && sed 's/^/dd: /' $C/dd.err
    : >$C/dd.err
}

# What one sector holds, in a word: marker, zeros, fail or other.
c_word() {
    case "$1" in
        "$marker") echo marker ;;
        "$zero_sector") echo zeros ;;
        fail) echo fail ;;
        *) echo other ;;
    esac
}

# The probe of /dev/$2 (the section CAP-PROBE-$1): the sha256 of its store (the first $4
# sectors of /dev/$3) before, the JSON, rc=, the wall time, the sha256 after, whether the
# journal is left, then stderr.
c_probe() {
    key=$1 dev=$2 store=$3 sectors=$4
    csection "CAP-PROBE-$key"
    t0=$(c_now)
    echo "sha_before=$(c_sha "$store" "$sectors")"
    echo "sha_s=$(c_since "$t0")"
    rm -f "$J/$key.journal"
    t0=$(c_now)
    timeout -s KILL 600 disktriage capacity "/dev/$dev" --confirm "$dev" \
        --journal "$J/$key.journal" --json >$C/out 2>$C/err
    rc=$?
    wall=$(c_since "$t0")
    cat $C/out
    echo "rc=$rc"
    echo "wall=$wall"
    sha_after=$(c_sha "$store" "$sectors")
    echo "sha_after=$sha_after"
    echo "journal_left=$([ -e "$J/$key.journal" ] && echo yes || echo no)"
    echo "stderr:"
    cat $C/err
}

# Loads scsi_debug with the parameters given; prints the kernel name of its disk.
c_scsi_debug() {
    # It may be loaded already (the triage's, with its medium errors; or the fake's).
    if [ -d /sys/module/scsi_debug ]; then
        rmmod scsi_debug || return 1
    fi
    before=$(ls /sys/block)
    insmod /lab/modules/scsi_debug.ko "$@" || return 1
    i=0
    while [ $i -lt 100 ]; do
        for d in /sys/block/sd*; do
            b=$(basename "$d")
            echo "$before" | grep -qx "$b" && continue
            [ "$(tr -d ' ' <"$d/device/model" 2>/dev/null)" = scsi_debug ] && echo "$b" && return
        done
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

csection CAP-SETUP
echo "dm_zero=$([ -d /sys/module/dm_zero ] && echo yes || echo no)"
[ -d /sys/module/ext4 ] || insmod /lab/modules/ext4.ko
sd=$(c_scsi_debug dev_size_mb=$SD_MIB virtual_gb=$SD_GB)
echo "scsi_debug rc=$?"
sata=$(c_by_serial DT-SATA-0)
wrapbase=$(c_by_serial DT-NVME-WARN)
tailbase=$(c_by_serial DT-SCSI-0)
# The journals' file system, on the SATA disk (the flush lab is done with it).
mke2fs -q "/dev/$sata" >/dev/null 2>&1
echo "mke2fs_rc=$?"
mount -t ext2 "/dev/$sata" $J
echo "mount_rc=$?"
t0=$(c_now)
dd if=/dev/urandom of=$C/random bs=1M count=64 2>/dev/null
echo "random 64 MiB in $(c_since "$t0") s"
dd if=/dev/urandom of=$C/marker bs=512 count=1 2>/dev/null
marker=$(md5sum <$C/marker | cut -d' ' -f1)
zero_sector=$(dd if=/dev/zero bs=512 count=1 2>/dev/null | md5sum | cut -d' ' -f1)
: >$C/dd.err
echo "sd=$sd wrapbase=$wrapbase tailbase=$tailbase sata=$sata"
for n in $sd $wrapbase $tailbase; do
    echo "$n size=$(cat /sys/block/$n/size) logical=$(cat /sys/block/$n/queue/logical_block_size)"
done
command -v disktriage >/dev/null && disktriage --version

# ---- scsi_debug claiming more than its store ----
# A marker written one store past sector 100 reads at sector 100; the store is then filled
# (the marker goes).
csection CAP-PROOF-sd
at=$((SD_MIB * 2048 + 100))
echo "sd write_rc=$(c_mark "$sd" $at)" \
    "at_store=$(c_word "$(c_sector_md5 "$sd" 100)")" \
    "at_written=$(c_word "$(c_sector_md5 "$sd" $at)")" \
    "size=$(cat /sys/block/$sd/size)"
c_dd_errors
c_fill "$sd" $((SD_MIB * 2048))

c_probe sd "$sd" "$sd" $((SD_MIB * 2048))

# Killed mid-probe, then restored from its journal.
# (The store is as the probe above left it: its sha256 is not read again.)
csection CAP-KILL-sd
echo "sha_before=$sha_after"
rm -f $J/kill.journal
disktriage capacity "/dev/$sd" --confirm "$sd" --journal $J/kill.journal --json \
    >$C/kill.out 2>$C/kill.err &
pid=$!
i=0
size=0
while kill -0 $pid 2>/dev/null && [ $i -lt 3000 ]; do
    size=$(stat -c %s $J/kill.journal 2>/dev/null || echo 0)
    [ "$size" -ge $((KILL_AT_MIB * 1048576)) ] && break
    sleep 0.02
    i=$((i + 1))
done
running=no
kill -0 $pid 2>/dev/null && running=yes
kill -KILL $pid 2>/dev/null
wait $pid
echo "running=$running killed_rc=$?"
echo "journal_bytes=$(stat -c %s $J/kill.journal 2>/dev/null)"
echo "sha_killed=$(c_sha "$sd" $((SD_MIB * 2048)))"
cat $C/kill.out

csection CAP-RESTORE-sd
t0=$(c_now)
disktriage restore --capacity $J/kill.journal >$C/out 2>$C/err
rc=$?
wall=$(c_since "$t0")
cat $C/out
echo "rc=$rc"
echo "wall=$wall"
echo "sha_after=$(c_sha "$sd" $((SD_MIB * 2048)))"
echo "journal_left=$([ -e $J/kill.journal ] && echo yes || echo no)"
echo "stderr:"
cat $C/err

# ---- repeated dm segments: a wrap of no power of two, past the region ----
csection CAP-WRAP-SETUP
wrap_table() {
    at=0
    while [ $at -lt $CLAIM_SECTORS ]; do
        len=$WRAP_PERIOD
        [ $((at + len)) -gt $CLAIM_SECTORS ] && len=$((CLAIM_SECTORS - at))
        echo "$at $len linear /dev/$wrapbase 0"
        at=$((at + len))
    done
}
wrap_table | dmsetup create capwrap --noudevsync
echo "dmsetup capwrap rc=$? segments=$(wrap_table | wc -l)"
wrap=$(c_dm_name capwrap)
echo "wrap=$wrap"
c_dm_show capwrap "$wrap" | tail -n 3

# A marker in the third period reads in the second, and on the disk beneath.
csection CAP-PROOF-wrap
at=$((2 * WRAP_PERIOD + 100))
echo "wrap write_rc=$(c_mark "$wrap" $at)" \
    "at_base=$(c_word "$(c_sector_md5 "$wrapbase" 100)")" \
    "at_first_period=$(c_word "$(c_sector_md5 "$wrap" $((WRAP_PERIOD + 100)))")" \
    "before_period=$(c_word "$(c_sector_md5 "$wrap" $((WRAP_PERIOD - 1)))")" \
    "size=$(cat /sys/block/$wrap/size)"
c_dd_errors
c_fill "$wrapbase" $WRAP_PERIOD

c_probe wrap "$wrap" "$wrapbase" $WRAP_PERIOD
dmsetup remove capwrap

# ---- the tails, each built, proved, probed and removed in turn over the same disk ----
csection CAP-ZERO-SETUP
{
    echo "0 $ZERO_REAL linear /dev/$tailbase 0"
    echo "$ZERO_REAL $((CLAIM_SECTORS - ZERO_REAL)) zero"
} | dmsetup create capzero --noudevsync
echo "dmsetup capzero rc=$?"
zero=$(c_dm_name capzero)
echo "zero=$zero"
c_dm_show capzero "$zero"

# A marker past the linear part is taken and dropped (zeros read back); the linear part's
# last sector keeps one.
csection CAP-PROOF-zero
echo "zero past_write_rc=$(c_mark "$zero" $((ZERO_REAL + 100)))" \
    "past=$(c_word "$(c_sector_md5 "$zero" $((ZERO_REAL + 100)))")" \
    "first_past=$(c_word "$(c_sector_md5 "$zero" $ZERO_REAL)")" \
    "last_write_rc=$(c_mark "$zero" $((ZERO_REAL - 1)))" \
    "last=$(c_word "$(c_sector_md5 "$zero" $((ZERO_REAL - 1)))")"
c_dd_errors
c_fill "$tailbase" $ZERO_REAL

c_probe zero "$zero" "$tailbase" $ZERO_REAL
dmsetup remove capzero

csection CAP-ERROR-SETUP
{
    echo "0 $ERROR_REAL linear /dev/$tailbase 0"
    echo "$ERROR_REAL $((CLAIM_SECTORS - ERROR_REAL)) error"
} | dmsetup create caperror --noudevsync
echo "dmsetup caperror rc=$?"
error=$(c_dm_name caperror)
echo "error=$error"
c_dm_show caperror "$error"

# Past the linear part a write and a read fail; below it they do not: at `page_last`, the
# last sector of the last whole 4 KiB page below the end (dd goes through the page cache: the
# sectors of the page across the end fail for it; the table says where the end is).
csection CAP-PROOF-error
page_last=$((ERROR_REAL / 8 * 8 - 1))
echo "error past_write_rc=$(c_mark "$error" $ERROR_REAL)" \
    "first_past=$(c_word "$(c_sector_md5 "$error" $ERROR_REAL)")" \
    "page_last_write_rc=$(c_mark "$error" $page_last)" \
    "page_last=$(c_word "$(c_sector_md5 "$error" $page_last)")"
c_dd_errors
c_fill "$tailbase" $ERROR_REAL

c_probe error "$error" "$tailbase" $ERROR_REAL
dmsetup remove caperror

# ---- a device that stores what it claims: scsi_debug without virtual_gb ----
csection CAP-REAL-SETUP
real=$(c_scsi_debug dev_size_mb=$REAL_MIB)
echo "scsi_debug rc=$?"
echo "real=$real size=$(cat /sys/block/$real/size 2>/dev/null)"

# A marker at its last sector reads back there, and sector 100 is not it.
csection CAP-PROOF-real
last=$(($(cat /sys/block/$real/size) - 1))
echo "real write_rc=$(c_mark "$real" $last)" \
    "at_last=$(c_word "$(c_sector_md5 "$real" $last)")" \
    "at_100=$(c_word "$(c_sector_md5 "$real" 100)")" \
    "size=$(cat /sys/block/$real/size)"
c_dd_errors
c_fill "$real" $((last + 1))

c_probe real "$real" "$real" $((last + 1))

csection CAP-TEARDOWN
umount $J
echo "umount rc=$?"
rmmod scsi_debug
echo "rmmod rc=$?"
