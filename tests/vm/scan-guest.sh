#!/bin/sh
# Guest side of tests/qemu_lab_scan.rs: the surface scan on devices whose bad, slow and
# stalling areas are known, in one boot. Each step prints a `===== NAME` header, then the
# scan's JSON, `rc=N` and its stderr; `stat NAME ...` lines are /sys/block/NAME/stat.
#
# The devices:
# - scsi_debug (an sd disk: the scan reads it through SG_IO) with 16 unrecoverable sectors at
#   LBA 8192 (`opts=2`), and `sdlin`, a dm-linear over it (plain O_DIRECT reads of the same
#   sectors). Later the disk answers every command after `delay` jiffies (25 s, then 10 s at
#   HZ=250), longer than --timeout: through its sg node (the `sg` module is loaded in the
#   standard boot) a block is abandoned at the timeout; with the module removed, through SG_IO
#   on the block device, at the kernel's 7 s; through dm-linear it is waited for. With the
#   disk's largest transfer cut to 64 KiB (`max_sectors_kb`) a block is several commands, sent
#   together through the sg node.
# - null_blk (1 GiB, no data) under dm tables: `dtslow` with a 1 MiB dm-delay segment of
#   300 ms at 24 MiB; `dterr` with 40 dm-error sectors at sector 40970 (inside a block: the
#   scan bisects to them); `dttime` with a 64 KiB dm-delay segment of 1500 ms at 8 MiB (more
#   than --timeout 1s); `dtresume`, every read delayed 40 ms, stopped with SIGINT part way and
#   run again with the same mapfile.
# - at the end, `scan --repair` on the scsi_debug disk (medium errors back on): refused while
#   dm-linear holds it, without --destroy-data and with another name; then run, once as JSON
#   with a mapfile and a badblocks list and once as text over the 64 KiB around the bad
#   sectors, each between `stat` lines of the disk; a plain read and the content afterwards.
#
# Runnable alone while developing it:
#     DISKTRIAGE_BIN=... LAB_TOOLS="dmsetup ddrescuelog" tests/vm/lab.sh run /tmp/w \
#         tests/vm/scan-guest.sh
set -u
export DM_DISABLE_UDEV=1

section() { echo "===== $*"; }
W=/tmp/scan
mkdir -p $W

# The kernel name of the dm device called $1.
dm_name() {
    for d in /sys/block/dm-*; do
        [ "$(cat "$d/dm/name" 2>/dev/null)" = "$1" ] && basename "$d"
    done
}

# Every scanned device's counters: the host checks that no sector was written.
stats() {
    for n in $sdbg nullb0 $sdlin $dtslow $dterr $dttime $dtresume; do
        echo "stat $n $(cat /sys/block/$n/stat)"
    done
}

# Runs a scan with its arguments and prints its JSON, status and stderr.
scan() {
    disktriage scan "$@" --json >$W/out 2>$W/err
    rc=$?
    cat $W/out
    echo "rc=$rc"
    cat $W/err
}

section SETUP
insmod /lab/modules/scsi_debug.ko dev_size_mb=16 opts=2 medium_error_start=8192 \
    medium_error_count=16
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
dmsetup create sdlin --noudevsync --table "0 32768 linear /dev/$sdbg 0"
printf '0 49152 linear /dev/nullb0 0\n49152 2048 delay /dev/nullb0 49152 300\n51200 79872 linear /dev/nullb0 51200\n' |
    dmsetup create dtslow --noudevsync
printf '0 40970 linear /dev/nullb0 0\n40970 40 error\n41010 90062 linear /dev/nullb0 41010\n' |
    dmsetup create dterr --noudevsync
printf '0 16384 linear /dev/nullb0 0\n16384 128 delay /dev/nullb0 16384 1500\n16512 49024 linear /dev/nullb0 16512\n' |
    dmsetup create dttime --noudevsync
dmsetup create dtresume --noudevsync --table "0 131072 delay /dev/nullb0 0 40"
sdlin=$(dm_name sdlin)
dtslow=$(dm_name dtslow)
dterr=$(dm_name dterr)
dttime=$(dm_name dttime)
dtresume=$(dm_name dtresume)
echo "devices sdbg=$sdbg sdlin=$sdlin dtslow=$dtslow dterr=$dterr dttime=$dttime dtresume=$dtresume"
dmsetup table

section STATS-BEFORE
stats

# 16 unreadable sectors through SG_IO (the sd disk) and through plain reads (dm-linear).
section SCAN-SD
scan /dev/$sdbg --mapfile $W/sd.map --badblocks $W/sd.bb --bb-size 512
section SD-MAPFILE
cat $W/sd.map
section SD-BADBLOCKS
cat $W/sd.bb
section DDRESCUELOG-SD-BAD
ddrescuelog -b 512 -l- $W/sd.map
echo "rc=$?"
section DDRESCUELOG-SD-UNDONE
ddrescuelog -b 512 -l'?*/' $W/sd.map
echo "rc=$?"
# The same 16 sectors with the disk's largest transfer cut to 64 KiB: a 1 MiB block is 16
# SG_IO commands sent together through the disk's sg node.
sd_max=$(cat /sys/block/$sdbg/queue/max_sectors_kb)
echo 64 >/sys/block/$sdbg/queue/max_sectors_kb
section SCAN-SD-PIECES
scan /dev/$sdbg --mapfile $W/sdp.map --badblocks $W/sdp.bb --bb-size 512
echo "$sd_max" >/sys/block/$sdbg/queue/max_sectors_kb
section SDP-MAPFILE
cat $W/sdp.map
section SDP-BADBLOCKS
cat $W/sdp.bb
section SCAN-SDLIN
scan /dev/$sdlin --mapfile $W/sdlin.map --badblocks $W/sdlin.bb --bb-size 512
section SDLIN-MAPFILE
cat $W/sdlin.map
section SDLIN-BADBLOCKS
cat $W/sdlin.bb

# One slow segment and nothing else (the threshold is above the emulator's hiccups).
section SCAN-SLOW
scan /dev/$dtslow --slow 250ms --block 64k

# dm-error sectors, to the sector, with EIO.
section SCAN-ERR
scan /dev/$dterr --mapfile $W/err.map
section ERR-MAPFILE
cat $W/err.map
section DDRESCUELOG-ERR-BAD
ddrescuelog -b 512 -l- $W/err.map
echo "rc=$?"

# A segment slower than --timeout on dm: waited for, then TIME.
section SCAN-TIME
scan /dev/$dttime --timeout 1s --block 64k

# Stopped part way with SIGINT, then resumed: the second run reads only the rest.
section RESUME-FIRST
cut_at=$((16 << 11))
echo "stat $dtresume $(cat /sys/block/$dtresume/stat)"
disktriage scan /dev/$dtresume --mapfile $W/resume.map --slow 2s --json >$W/out 2>$W/err &
pid=$!
i=0
while [ "$(awk '{ print $3 }' /sys/block/$dtresume/stat)" -lt $cut_at ] && [ $i -lt 600 ]; do
    sleep 0.05
    i=$((i + 1))
done
kill -INT $pid
wait $pid
rc=$?
echo "stat $dtresume $(cat /sys/block/$dtresume/stat)"
cat $W/out
echo "rc=$rc"
cat $W/err
section RESUME-MAPFILE
cat $W/resume.map
section RESUME-SECOND
echo "stat $dtresume $(cat /sys/block/$dtresume/stat)"
disktriage scan /dev/$dtresume --mapfile $W/resume.map --slow 2s --json >$W/out 2>$W/err
rc=$?
echo "stat $dtresume $(cat /sys/block/$dtresume/stat)"
cat $W/out
echo "rc=$rc"
cat $W/err

# The sd disk answers every command after 25 s (6250 jiffies at HZ=250): through SG_IO each
# block is abandoned at the kernel's shortest SG_IO timeout, 7 s (asked for 1 s); then, at
# 10 s, through dm-linear a block is waited for (plain reads: the sd timeout is 30 s).
section SD-DELAY
# opts=1: scsi_debug logs every command and abort (in dmesg, below), medium errors off.
echo 1 >/sys/bus/pseudo/drivers/scsi_debug/opts
echo 6250 >/sys/bus/pseudo/drivers/scsi_debug/delay
echo "delay=$(cat /sys/bus/pseudo/drivers/scsi_debug/delay) rc=$?"
# Through the disk's sg node each command carries --timeout itself.
section SCAN-SD-TIMEOUT
scan /dev/$sdbg --size 128k --block 64k --timeout 1s
section SD-TIMEOUT-DMESG
dmesg | grep scsi_debug | tail -n 12
section SCAN-SD-TIMEOUT-TEXT
disktriage scan /dev/$sdbg --size 64k --block 64k --timeout 1s
echo "rc=$?"
# One 128 KiB block in two 64 KiB commands sent together: both abandoned at once.
echo 64 >/sys/block/$sdbg/queue/max_sectors_kb
section SCAN-SD-TIMEOUT-PIECES
scan /dev/$sdbg --size 128k --block 128k --timeout 2s
echo "$sd_max" >/sys/block/$sdbg/queue/max_sectors_kb
# Without the sg module: SG_IO on the block device, where the kernel gives a command 7 s.
rmmod sg
echo "rmmod sg rc=$?"
section SCAN-SD-TIMEOUT-NO-SG
scan /dev/$sdbg --size 128k --block 64k --timeout 1s
section SCAN-SD-TIMEOUT-NO-SG-TEXT
disktriage scan /dev/$sdbg --size 64k --block 64k --timeout 1s
echo "rc=$?"
insmod /lab/modules/sg.ko
echo "insmod sg rc=$?"
echo 2500 >/sys/bus/pseudo/drivers/scsi_debug/delay
section SCAN-SDLIN-TIMEOUT
scan /dev/$sdlin --size 64k --block 64k --timeout 1s
echo 1 >/sys/bus/pseudo/drivers/scsi_debug/delay

section STATS-AFTER
stats

# scan --repair on the scsi_debug disk, its medium errors back on (opts=2). scsi_debug fails a
# READ that touches LBA 8192-8207 as long as the option is on, but takes a WRITE there like any
# other (resp_write_dt0 never checks medium_error_start) and does not clear the error: the
# repair writes the 16 sectors and reads them back still unreadable. A pattern around them
# (written before the counters are taken) shows that nothing else was written.
section REPAIR-SETUP
echo 2 >/sys/bus/pseudo/drivers/scsi_debug/opts
echo "opts=$(cat /sys/bus/pseudo/drivers/scsi_debug/opts)"
# 200 sectors of 0xaa over LBA 8100-8299.
head -c $((200 * 512)) /dev/zero | tr '\000' '\252' >$W/pattern
dd if=$W/pattern of=/dev/$sdbg bs=512 seek=8100 count=200 oflag=direct conv=notrunc 2>&1
echo "pattern rc=$?"
sd_stat() { echo "stat $sdbg $(cat /sys/block/$sdbg/stat)"; }

# Refused while dm-linear (sdlin) holds the disk, and without the typed name, or with another.
section REPAIR-HELD
sd_stat
scan /dev/$sdbg --repair --destroy-data $sdbg
sd_stat

section TEARDOWN
for n in sdlin dtslow dterr dttime dtresume; do dmsetup remove $n; done
echo "rc=$?"

section REPAIR-NO-NAME
sd_stat
scan /dev/$sdbg --repair
sd_stat
section REPAIR-WRONG-NAME
sd_stat
scan /dev/$sdbg --repair --destroy-data nullb0
sd_stat

section REPAIR
echo "device $sdbg"
sd_stat
scan /dev/$sdbg --repair --destroy-data /dev/$sdbg --mapfile $W/repair.map \
    --badblocks $W/repair.bb --bb-size 512
sd_stat
section REPAIR-MAPFILE
cat $W/repair.map
section REPAIR-BADBLOCKS
cat $W/repair.bb
# The same, as text, over the 64 KiB around the bad sectors only.
section REPAIR-TEXT
sd_stat
disktriage scan /dev/$sdbg --offset 4M --size 64k --repair --destroy-data $sdbg
echo "rc=$?"
sd_stat
# A plain read of the first bad sector still fails: scsi_debug kept the error.
section REPAIR-REREAD
dd if=/dev/$sdbg of=/dev/null bs=512 skip=8192 count=1 iflag=direct 2>&1
echo "rc=$?"
# With the errors off, LBA 8100-8299 reads as the pattern with zeros over LBA 8192-8207.
section REPAIR-CONTENT
echo 0 >/sys/bus/pseudo/drivers/scsi_debug/opts
{
    head -c $((92 * 512)) $W/pattern
    head -c $((16 * 512)) /dev/zero
    head -c $((92 * 512)) $W/pattern
} >$W/expected
dd if=/dev/$sdbg of=$W/content bs=512 skip=8100 count=200 iflag=direct 2>/dev/null
cmp $W/expected $W/content
echo "rc=$?"

# The sd disk removed while a scan reads it in pieces (max_sectors_kb 64: 16 commands a block,
# sent together through its sg node, each answered 100 ms late): the scan ends with what it
# read and says the device is gone. Last: the disk does not come back.
section SCAN-SD-REMOVED
echo 64 >/sys/block/$sdbg/queue/max_sectors_kb
echo 25 >/sys/bus/pseudo/drivers/scsi_debug/delay
disktriage scan /dev/$sdbg --json >$W/out 2>$W/err &
pid=$!
sleep 0.6
echo 1 >/sys/block/$sdbg/device/delete
echo "delete rc=$?"
wait $pid
rc=$?
cat $W/out
echo "rc=$rc"
cat $W/err
