#!/bin/sh
# Guest side of tests/lab/qemu_lab_flush.rs: `disktriage flushcheck` (issue 27) on devices
# whose honesty is known. Run after tests/vm/triage-guest.sh in the triage's boot (disk set
# `triage`: the SATA disk says 7200 rpm), which it leaves alone until the triage is done;
# runnable alone while developing it:
#     DISKTRIAGE_BIN=... LAB_TOOLS="dmsetup ioping" tests/vm/lab.sh run /tmp/w \
#         tests/vm/flush-guest.sh triage
#
# Every step prints a `===== FLUSH-...` header, then what it printed, `rc=N` and its stderr
# (as triage-guest.sh does). The PROOF sections check the devices with shell tools alone, so
# a failure of the lab itself is told apart from a failure of disktriage.
#
# The devices:
# - the SATA disk (ide-hd, DT-SATA-0, rotation_rate=7200): QEMU acknowledges writes and
#   flushes from the host's cache, far faster than one revolution (8.33 ms);
# - `dtflush`, dm-delay over that disk: every write and every flush held $DM_DELAY_MS ms,
#   more than a revolution; its rotation rate is the SATA disk's beneath it;
# - null_blk through configfs, memory backed with a $NULLB_CACHE_MIB MiB volatile cache
#   (`cache_size`): a power-off (`power` 0) discards what is in the cache and keeps what a
#   flush moved to its memory. The honest one (nullb1) tells the kernel it has a cache
#   ("write back"), so the kernel sends flushes (and FUA); the liar (nullb2) is the same
#   device after `echo "write through" > queue/write_cache`: the kernel then strips every
#   flush and FUA while null_blk still caches, so it acknowledges what it does not keep.
#
# Found with these tools in the lab (kernel 6.1, QEMU 7.2 TCG; the null_blk findings are
# above FLUSH-PROOF-NULLB):
# - SATA with `cache=unsafe` (tests/vm/lab.sh): ioping 4 KiB O_DIRECT|O_DSYNC writes, 200 of
#   them: min 0.43 ms, avg 0.60 ms, max 9.2 ms (one emulator hiccup), against a revolution of
#   8.33 ms; write_cache "write back", rotational 1.
# - dm-delay on this kernel takes the flush class: the 9-argument table (read 0, write and
#   flush $DM_DELAY_MS ms) is accepted; ioping's O_DSYNC writes on it: min 69.5 ms, avg
#   72.1 ms (a write then a flush, each rounded up to whole 4 ms ticks); it shows the SATA
#   disk as its only slave, rotational 1, write_cache "write back".
# - disktriage itself (main at 5b48946 merged, in the triage's boot): SATA commit_ms 0.36
#   (cache off 0.19), floor 8.33, rpm 7200 from VPD B1h: volatile-cache, exit 3; dm-delay
#   commit_ms 47.97, rpm 7200 "of sda under dm-0": waits-for-medium, exit 0; the power cut:
#   honest 8560 acknowledged, 8560 verified, exit 0; liar 13138 acknowledged, 1010 lost
#   (12128-13137, the newest), exit 4; the three LOG cases refused, exit 1.
set -u
export DM_DISABLE_UDEV=1

# Keep in step with tests/lab/qemu_lab_flush.rs.
DM_DELAY_MS=20
NULLB_CACHE_MIB=4
# 128 MiB each: the guest has 1 GiB of memory, and memory_backed keeps every block written.
NULLB_SIZE_MIB=128
RECORD_SECONDS=3

fsection() { echo "===== $*"; }
F=/tmp/flush
mkdir -p $F
CFG=/sys/kernel/config/nullb

# The serial from virtio's `serial`, NVMe's `device/serial` or the SCSI VPD page 0x80 (as
# triage-guest.sh finds it).
f_serial_of() {
    for f in "$1/serial" "$1/device/serial" "$1/device/vpd_pg80"; do
        if [ -r "$f" ]; then
            tr -dc 'A-Za-z0-9-' <"$f"
            return
        fi
    done
}

f_by_serial() {
    for d in /sys/block/*; do
        if [ "$(f_serial_of "$d")" = "$1" ]; then
            basename "$d"
            return
        fi
    done
}

# Runs disktriage with its arguments (under a timeout of $DT_TIMEOUT s, 300 unless set: a
# hung check must not eat the boot); prints its stdout, `rc=N`, then its stderr.
dt() {
    timeout -s KILL "${DT_TIMEOUT:-300}" disktriage "$@" >$F/out 2>$F/err
    rc=$?
    cat $F/out
    echo "rc=$rc"
    cat $F/err
}

# 4 KiB O_DIRECT|O_DSYNC writes at QD1 by ioping (a witness independent of disktriage):
# `ioping -B` (ioping 1.3) prints "count runtime iops bytes/s min avg max mdev ..." with
# times in nanoseconds; the line is printed as `ioping-dsync COUNT RUNTIME ...`.
f_ioping_dsync() {
    echo "ioping-dsync $(ioping -W -W -W -D -y -i 0 -c "$2" -s 4k -S 16m -B "$1" 2>&1)"
}

# null_blk device $1 (a configfs directory name), created and powered on; prints its kernel
# name (found as the block device that appeared, whatever naming the kernel uses).
f_nullb_create() {
    before=$(ls /sys/block)
    mkdir "$CFG/$1" || return 1
    echo 1 >"$CFG/$1/memory_backed"
    echo $NULLB_CACHE_MIB >"$CFG/$1/cache_size"
    echo 4096 >"$CFG/$1/blocksize"
    echo $NULLB_SIZE_MIB >"$CFG/$1/size"
    echo 1 >"$CFG/$1/power"
    for b in $(ls /sys/block); do
        echo "$before" | grep -qx "$b" || echo "$b"
    done
}

# Powers null_blk device $1 (configfs name) back on and waits for /dev/$2.
f_power_on() {
    # Whatever wrote to /dev/$2 by its name after the power-off created a regular file there
    # (the stand-in of proof boot 4 did), which would hide the device node.
    if [ -e "/dev/$2" ] && [ ! -b "/dev/$2" ]; then
        echo "a regular file took the place of /dev/$2: removed"
        rm -f "/dev/$2"
    fi
    echo 1 >"$CFG/$1/power"
    i=0
    while [ ! -b "/dev/$2" ] && [ $i -lt 50 ]; do
        sleep 0.1
        i=$((i + 1))
    done
}

f_md5() { md5sum | cut -d' ' -f1; }

# The first MiB of /dev/$1, read past the page cache.
f_head_md5() { dd if="/dev/$1" bs=1M count=1 iflag=direct 2>/dev/null | f_md5; }

fsection FLUSH-SETUP
[ -d /sys/module/configfs ] || insmod /lab/modules/configfs.ko
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
echo "configfs rc=$?"
# nr_devices=0: no device from module parameters (triage-guest.sh may have loaded it already,
# with its own nullb0).
[ -d /sys/module/null_blk ] || insmod /lab/modules/null_blk.ko nr_devices=0
echo "null_blk rc=$?"
echo "configfs features: $(cat "$CFG/features" 2>/dev/null)"
[ -d /sys/module/loop ] || insmod /lab/modules/loop.ko
[ -d /sys/module/ext4 ] || insmod /lab/modules/ext4.ko
echo "loop ext4 rc=$?"
sata=$(f_by_serial DT-SATA-0)
echo "sata=$sata"
echo "sata rotational=$(cat /sys/block/$sata/queue/rotational)" \
    "write_cache=$(cat /sys/block/$sata/queue/write_cache)" \
    "size=$(cat /sys/block/$sata/size)"
command -v disktriage >/dev/null && disktriage --version
dd if=/dev/urandom of=$F/pattern bs=1M count=1 2>/dev/null
pattern=$(f_md5 <$F/pattern)
zeros=$(dd if=/dev/zero bs=1M count=1 2>/dev/null | f_md5)
echo "pattern=$pattern zeros=$zeros"

# ---- 1. timing on the SATA disk: QEMU's cache acknowledges ----
fsection FLUSH-PROOF-SATA
f_ioping_dsync "/dev/$sata" 200

fsection FLUSH-TIMING-SATA
dt flushcheck "/dev/$sata" --destroy-data "$sata" --json

# ---- 2. timing on dm-delay over it: commits wait ----
fsection FLUSH-DM-SETUP
sectors=$(blockdev --getsz "/dev/$sata")
# dm-delay's table: read, write and (since 5.x) flush classes, each "device offset delay".
dmsetup create dtflush --noudevsync --table \
    "0 $sectors delay /dev/$sata 0 0 /dev/$sata 0 $DM_DELAY_MS /dev/$sata 0 $DM_DELAY_MS"
echo "dmsetup flush-delay rc=$?"
if ! dmsetup status dtflush >/dev/null 2>&1; then
    dmsetup create dtflush --noudevsync --table \
        "0 $sectors delay /dev/$sata 0 0 /dev/$sata 0 $DM_DELAY_MS"
    echo "dmsetup write-delay-only rc=$?"
fi
dmsetup table dtflush
dm=
for d in /sys/block/dm-*; do
    [ "$(cat "$d/dm/name" 2>/dev/null)" = dtflush ] && dm=$(basename "$d")
done
echo "dm=$dm slaves=$(ls /sys/block/$dm/slaves 2>/dev/null)" \
    "write_cache=$(cat /sys/block/$dm/queue/write_cache 2>/dev/null)" \
    "rotational=$(cat /sys/block/$dm/queue/rotational 2>/dev/null)"

fsection FLUSH-PROOF-DM
f_ioping_dsync "/dev/$dm" 50

fsection FLUSH-TIMING-DM
dt flushcheck "/dev/$dm" --destroy-data "$dm" --json

fsection FLUSH-DM-TEARDOWN
dmsetup remove dtflush
echo "rc=$?"

# ---- 3. the power cut on null_blk ----
# What null_blk keeps across a power-off, by busybox dd alone, each case on a fresh device
# (state carried over from earlier cycles muddles the picture: see the second finding):
# 1 MiB of a random pattern written O_DIRECT at the start, then (fsync) an fsync of the
# block device, which is what sends the flush; read back before the power-off and after it.
# Printed: `CASE name=... write_cache=write-back|write-through flushes=N
# before=pattern|zeros|other after=... write_cache_after_power_on=...`.
# Found (kernel 6.1, first boots of this lab; lab-logs in the final report):
# - "write back", no flush: before=pattern after=zeros (the cache is discarded at power-off,
#   memory_backed keeps the rest: the honest volatile cache);
# - "write back", fsync: flushes=1, after=pattern (a flush moves the cache to memory);
# - "write through", fsync: flushes=0 (the kernel strips the flush), after=zeros: the liar;
# - `blockdev --flushbufs` and `sync` send no flush to a raw block device (lost as well);
# - a power-on makes a new queue: queue/write_cache is "write back" again, so the liar's
#   "write through" is set after each power-on, right before the record;
# - `power` 0 then 1 keeps the configfs name as the disk name (/dev/nullb1 for
#   .../nullb/nullb1), whatever module-parameter devices exist.
fsection FLUSH-PROOF-NULLB
f_proof() {
    case=$1 cfg=$2 wc=$3 how=$4
    name=$(f_nullb_create "$cfg")
    [ "$wc" = through ] && echo "write through" >"/sys/block/$name/queue/write_cache"
    if [ "$how" = fsync ]; then
        dd if=$F/pattern of="/dev/$name" bs=1M count=1 oflag=direct conv=fsync 2>/dev/null
    else
        dd if=$F/pattern of="/dev/$name" bs=1M count=1 oflag=direct 2>/dev/null
    fi
    before=$(f_head_md5 "$name")
    # /sys/block/X/stat field 16: flush requests completed.
    flushes=$(awk '{ print $16 }' "/sys/block/$name/stat")
    shown_wc=$(tr ' ' - <"/sys/block/$name/queue/write_cache")
    echo 0 >"$CFG/$cfg/power"
    f_power_on "$cfg" "$name"
    after=$(f_head_md5 "$name")
    echo "$case name=$name write_cache=$shown_wc flushes=$flushes before=$(f_word "$before")" \
        "after=$(f_word "$after")" \
        "write_cache_after_power_on=$(tr ' ' - <"/sys/block/$name/queue/write_cache")"
    echo 0 >"$CFG/$cfg/power"
    rmdir "$CFG/$cfg"
}
f_word() {
    case "$1" in
        "$pattern") echo pattern ;;
        "$zeros") echo zeros ;;
        *) echo other ;;
    esac
}
f_proof honest-nosync nullb11 back nosync
f_proof honest-fsync nullb12 back fsync
f_proof liar-fsync nullb13 through fsync

fsection FLUSH-NULLB-SETUP
honest=$(f_nullb_create nullb1)
liar=$(f_nullb_create nullb2)
echo "honest=$honest liar=$liar"
for c in nullb1 nullb2; do
    echo "$c: $(for a in memory_backed cache_size blocksize size power index; do
        printf '%s=%s ' $a "$(cat $CFG/$c/$a 2>/dev/null)"
    done)"
done

# The record until the power is cut, then the verify after power comes back.
# Proved before the command existed with a busybox stand-in for `flushcheck --record/--verify`
# (4 KiB records "seq N" at block N, each written then fsynced, holding the device open; the
# LOG on this tmpfs): honest: 166 acknowledged in the 3 s, 166 verified, none lost, the
# writer ending at once with the device gone; liar: 152 acknowledged, all 152 lost (608 KiB,
# all still in the 4 MiB cache at the cut). A writer that opens /dev/X by name again after the
# power-off creates a regular file there (the stand-in's first version did): the real record
# keeps its descriptor. With the power-cut helper's build (branch h-powercut at 25c646a, run
# through this script): honest 9338 acknowledged in the 3 s, 9338 verified, none lost (exit
# 0; the record ended at once, exit 0, on ENOSPC with the size gone to 0); liar 11319
# acknowledged, 10304 verified, 1015 lost (exit 4): the newest ones, fewer than the 1024
# pages of the cache. $1 configfs
# name, $2 kernel name, $3 the kernel's write cache to set ("back" leaves it), $4 the
# sections' name: FLUSH-RECORD-$4 and FLUSH-VERIFY-$4.
f_powercut() {
    cfg=$1 name=$2 wc=$3
    fsection "FLUSH-RECORD-$4"
    [ "$wc" = through ] && echo "write through" >"/sys/block/$name/queue/write_cache"
    echo "$name write_cache=$(cat /sys/block/$name/queue/write_cache)" \
        "fua=$(cat /sys/block/$name/queue/fua)"
    rm -f "$F/$cfg.log"
    disktriage flushcheck "/dev/$name" --record "$F/$cfg.log" --destroy-data "$name" \
        >$F/rec.out 2>$F/rec.err &
    pid=$!
    sleep $RECORD_SECONDS
    running=no
    kill -0 $pid 2>/dev/null && running=yes
    echo 0 >"$CFG/$cfg/power"
    echo "power off: record running=$running"
    # The record ends on its own once the device stops answering; after 60 s it is stopped
    # (SIGTERM: its status is then 143, which the test reports), then killed; one stuck in
    # the kernel is left behind (rc=hung) rather than waited for, so the boot still ends.
    i=0
    while kill -0 $pid 2>/dev/null && [ $i -lt 600 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    for sig in TERM KILL; do
        kill -0 $pid 2>/dev/null || break
        kill -$sig $pid
        j=0
        while kill -0 $pid 2>/dev/null && [ $j -lt 50 ]; do
            sleep 0.1
            j=$((j + 1))
        done
    done
    if kill -0 $pid 2>/dev/null; then
        rc=hung
    else
        wait $pid
        rc=$?
    fi
    cat $F/rec.out
    echo "rc=$rc"
    echo "ended_after_s=$((i / 10))"
    echo "log_lines=$(wc -l <"$F/$cfg.log" 2>/dev/null)"
    # The stderr's progress lines are many: the first and last few.
    echo "stderr:"
    head -n 5 $F/rec.err
    echo ...
    tail -n 5 $F/rec.err
    f_power_on "$cfg" "$name"
    fsection "FLUSH-VERIFY-$4"
    dt flushcheck "/dev/$name" --verify "$F/$cfg.log" --json
}
f_powercut nullb1 "$honest" back honest
f_powercut nullb2 "$liar" through liar

# ---- 4. the LOG on the device checked is refused ----
# A file system on a loop device over the target, mounted, the LOG on it: stacked on the
# target, so refused (exit 1, the reason named).
fsection FLUSH-LOG-STACKED
loop=$(losetup -f)
losetup "$loop" "/dev/$honest"
echo "losetup=$loop losetup_rc=$?"
mke2fs -q "$loop" >/dev/null 2>&1
echo "mke2fs_rc=$?"
mkdir -p $F/mnt
mount -t ext2 "$loop" $F/mnt 2>/dev/null || mount "$loop" $F/mnt
echo "mount_rc=$?"
# A refusal is immediate; a record that is not refused would run until killed.
DT_TIMEOUT=30 dt flushcheck "/dev/$honest" --record $F/mnt/stacked.log --destroy-data "$honest"
echo "log_exists=$([ -e $F/mnt/stacked.log ] && echo yes || echo no)"
umount $F/mnt
losetup -d "$loop"

# The target is a loop device over an image file, the LOG beside that image: the LOG's file
# system is on the disk the target lives on (nullb3, memory backed, no cache), so a power
# cut takes both. The write guard has nothing against the loop device (nothing holds it):
# this refusal is the LOG's own check.
fsection FLUSH-LOG-UNDER
under=$(f_nullb_create nullb3)
# 4 KiB blocks: a file system of 1 KiB blocks does not mount on a 4 KiB-sector device.
mke2fs -q -b 4096 "/dev/$under" >/dev/null 2>&1
echo "under=$under mke2fs_rc=$?"
mkdir -p $F/under
mount -t ext2 "/dev/$under" $F/under
echo "mount_rc=$?"
dd if=/dev/zero of=$F/under/image bs=1M count=16 2>/dev/null
target=$(losetup -f)
losetup "$target" $F/under/image
echo "target=$target losetup_rc=$?"
DT_TIMEOUT=30 dt flushcheck "$target" --record $F/under/beside.log \
    --destroy-data "${target#/dev/}"
echo "log_exists=$([ -e $F/under/beside.log ] && echo yes || echo no)"
losetup -d "$target"
umount $F/under
echo 0 >"$CFG/nullb3/power"
rmdir "$CFG/nullb3"

# The LOG is the target's own device node.
fsection FLUSH-LOG-SAME
DT_TIMEOUT=30 dt flushcheck "/dev/$honest" --record "/dev/$honest" --destroy-data "$honest"

fsection FLUSH-TEARDOWN
for c in nullb1 nullb2; do
    echo 0 >"$CFG/$c/power"
    rmdir "$CFG/$c"
done
echo "rc=$?"
