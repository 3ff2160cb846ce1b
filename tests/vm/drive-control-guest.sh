#!/bin/sh
# Guest side of tests/lab/qemu_lab.rs: drive control on every lab drive in one boot. Each step
# prints a `===== NAME` header and its output; `rc=N` lines carry exit statuses. The host
# test asserts on the sections. smartctl and nvme (from the host, via LAB_TOOLS) are
# independent witnesses of the drives' cache state; fio and ioping witness latency.
set -u

# The serial from virtio's `serial`, NVMe's `device/serial` (space padded) or the SCSI VPD page
# 0x80 (a 4-byte binary header, no printable characters in it for these lengths).
serial_of() {
    for f in "$1/serial" "$1/device/serial" "$1/device/vpd_pg80"; do
        if [ -r "$f" ]; then
            tr -dc 'A-Za-z0-9-' < "$f"
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

section() { echo "===== $*"; }

sata=$(by_serial DT-SATA-0)
nvme=$(by_serial DT-NVME-0)
nvmewarn=$(by_serial DT-NVME-WARN)
scsi=$(by_serial DT-SCSI-0)
virtio=$(by_serial DT-VIRTIO-0)
# The NVMe controller node of a namespace, for nvme-cli.
nvmectl=$(basename "$(readlink -f "/sys/block/$nvme/device")")

section DEVICES
echo "sata=$sata nvme=$nvme nvmewarn=$nvmewarn scsi=$scsi virtio=$virtio nvmectl=$nvmectl"
echo "start=$(cut -d' ' -f1 /proc/uptime)"

section LIST-JSON
disktriage list --json --all
section LIST
disktriage list

# What someone other than disktriage says about a drive's cache.
witness() {
    case $1 in
        sata) smartctl -g wcache -d sat "/dev/$2" | grep -i 'cache is' ;;
        scsi) smartctl -g wcache -d scsi "/dev/$2" | grep -i 'cache is' ;;
        nvme) nvme get-feature "/dev/$nvmectl" -f 6 ;;
        virtio) echo "cache_type: $(cat "/sys/block/$2/cache_type")" ;;
    esac
    echo "kernel: $(cat "/sys/block/$2/queue/write_cache")"
}

for t in sata nvme scsi virtio; do
    eval dev=\$$t
    section CACHE-INITIAL $t
    disktriage cache "$dev" --json
    section CACHE-OFF $t
    disktriage cache "$dev" off --json; echo "rc=$?"
    section CACHE-READ-OFF $t
    disktriage cache "$dev" --json
    section WITNESS-OFF $t
    witness $t "$dev"
    section CACHE-ON $t
    disktriage cache "$dev" on --json; echo "rc=$?"
    section CACHE-READ-ON $t
    disktriage cache "$dev" --json
    section WITNESS-ON $t
    witness $t "$dev"
done
section CACHE-TEXT-OFF
disktriage cache "$sata" off; echo "rc=$?"
section CACHE-TEXT-NVME-OFF
disktriage cache "$nvme" off; echo "rc=$?"
section CACHE-TEXT-RESTORE
disktriage restore; echo "rc=$?"
section CACHE-TEXT-READ
disktriage cache "$sata"
section CACHE-PARTITION
disktriage cache "/dev/${virtio}1" --json; echo "rc=$?"
section JOURNAL-AFTER-CACHE
ls /run/disktriage; cat /run/disktriage/journal.json 2>/dev/null
echo "end"

for t in sata nvme nvmewarn scsi virtio; do
    eval dev=\$$t
    section SMART $t
    disktriage smart "$dev" --json; echo "rc=$?"
done
section SMART-TEXT sata
disktriage smart "$sata"; echo "rc=$?"
section SMART-TEXT nvmewarn
disktriage smart "$nvmewarn"; echo "rc=$?"
section SMART-NO-SMARTCTL scsi
mv /bin/smartctl /tmp/smartctl.hidden
disktriage smart "$scsi" --json; echo "rc=$?"
mv /tmp/smartctl.hidden /bin/smartctl
# The drives' own logs and self-tests. QEMU 7.2's ide-hd logs a short self-test at once and
# refuses an abort; its NVMe controller has no Device Self-test. smartctl and nvme-cli are the
# witnesses.
section SELFTEST-START sata
disktriage smart "$sata" --self-test short --json; echo "rc=$?"
section SELFTEST-AFTER sata
disktriage smart "$sata" --json; echo "rc=$?"
section SELFTEST-WITNESS sata
smartctl -j -l selftest -l error "/dev/$sata"; echo "rc=$?"
section SELFTEST-TEXT sata
disktriage smart "$sata"; echo "rc=$?"
section SELFTEST-ABORT sata
disktriage smart "$sata" --self-test abort; echo "rc=$?"
section SELFTEST-START nvme
disktriage smart "$nvme" --self-test short; echo "rc=$?"
section SELFTEST-WITNESS nvme
nvme device-self-test "/dev/$nvmectl" -s 1; echo "rc=$?"
section ERRLOG-WITNESS nvme
nvme error-log "/dev/$nvmectl" -e 1 -o json; echo "rc=$?"
section TEMP
disktriage debug temp "$sata" --count 2
disktriage debug temp "$nvme" --count 2
disktriage debug temp "$virtio" --count 1

for t in sata nvme scsi virtio; do
    eval dev=\$$t
    section SCHED-BEFORE $t
    disktriage sched "$dev" --json
    section SCHED-SET $t
    disktriage sched "$dev" bfq --json; echo "rc=$?"
    section SCHED-KERNEL $t
    cat "/sys/block/$dev/queue/scheduler"
done
section SCHED-UNKNOWN
disktriage sched "$sata" nosuch; echo "rc=$?"
section SCHED-PARTITION
disktriage sched "${virtio}1" kyber --json; echo "rc=$?"
section RESTORE-LIST
disktriage restore --list
section RESTORE-SCHED
disktriage restore --json; echo "rc=$?"
for t in sata nvme scsi virtio; do
    eval dev=\$$t
    section SCHED-RESTORED $t
    cat "/sys/block/$dev/queue/scheduler"
done
section SCHED-KEEP
disktriage sched "$virtio" none --keep; echo "rc=$?"
disktriage restore; echo "rc=$?"
cat "/sys/block/$virtio/queue/scheduler"
disktriage sched "$virtio" mq-deadline --keep >/dev/null

# Wait until a background `debug hold` has applied its changes.
wait_holding() {
    i=0
    while ! grep -q '^holding pid' "$1" 2>/dev/null && [ $i -lt 600 ]; do
        sleep 0.1; i=$((i + 1))
    done
}

section HOLD-KILL
disktriage debug hold "$sata" --cache off --sched none > /tmp/hold-kill.out 2>&1 &
pid=$!
wait_holding /tmp/hold-kill.out
cat /tmp/hold-kill.out
section HOLD-KILL-HELD
disktriage cache "$sata" --json
cat "/sys/block/$sata/queue/scheduler"
section RESTORE-WHILE-ALIVE
disktriage restore; echo "rc=$?"
cat "/sys/block/$sata/queue/scheduler"
kill -KILL $pid
wait $pid
echo "killed rc=$?"
section JOURNAL-AFTER-KILL
cat /run/disktriage/journal.json
section CACHE-HINT-AFTER-KILL
disktriage cache "$nvme"
section RESTORE-AFTER-KILL
disktriage restore --json; echo "rc=$?"
section STATE-AFTER-KILL-RESTORE
disktriage cache "$sata" --json
cat "/sys/block/$sata/queue/scheduler"
ls /run/disktriage

section HOLD-TERM
disktriage debug hold "$nvme" --cache off --sched bfq > /tmp/hold-term.out 2>&1 &
pid=$!
wait_holding /tmp/hold-term.out
kill -TERM $pid
wait $pid
echo "rc=$?"
cat /tmp/hold-term.out
section STATE-AFTER-TERM
disktriage cache "$nvme" --json
cat "/sys/block/$nvme/queue/scheduler"
ls /run/disktriage

section HOLD-PANIC
disktriage debug hold "$scsi" --cache off --sched none --panic > /tmp/hold-panic.out 2>&1
echo "rc=$?"
cat /tmp/hold-panic.out
section STATE-AFTER-PANIC
disktriage cache "$scsi" --json
cat "/sys/block/$scsi/queue/scheduler"
ls /run/disktriage

section HOLD-NORMAL
disktriage debug hold "$virtio" --cache off --sched none --seconds 1; echo "rc=$?"
section STATE-AFTER-NORMAL
disktriage cache "$virtio" --json
cat "/sys/block/$virtio/queue/scheduler"
ls /run/disktriage
section RESTORE-NOTHING
disktriage restore; echo "rc=$?"
# The I/O engine on every drive: a short read, a short write away from the partition table.
for t in sata nvme scsi virtio; do
    eval dev=\$$t
    # stderr is the serial console, a terminal: the progress line goes to a file instead.
    section ENGINE-READ $t
    disktriage run "/dev/$dev" --test seq-read --io-size 16M --json 2>/tmp/e; echo "rc=$?"
    cat /tmp/e
    section ENGINE-WRITE $t
    disktriage run "/dev/$dev" --test rand-write --count 200 --offset 128M --size 64M \
        --destroy-data "$dev" --json 2>/tmp/e; echo "rc=$?"
    cat /tmp/e
done
section ENGINE-WRITE-REFUSED
disktriage run "/dev/$sata" --test seq-write --count 1; echo "rc=$?"

# The seed's write-cache pair (seq-write and sync-latency, cache on and off in turns) on the
# SATA disk, tiny (100 I/Os of 64 KiB a run, the fewest a rate is given for: the lab is
# emulated); its cache is on again afterwards.
section SWEEP-CACHE
disktriage run "/dev/$sata" --sweep-cache --repeats 2 --bs 64k --count 100 --offset 128M --size 64M \
    --destroy-data "$sata" --json 2>/tmp/e; echo "rc=$?"
cat /tmp/e
section SWEEP-CACHE-AFTER
disktriage cache "$sata" --json
ls /run/disktriage
section SWEEP-CACHE-TEXT
disktriage run "/dev/$sata" --sweep-cache --test sync-latency --repeats 1 --count 20 \
    --offset 128M --size 64M --destroy-data "$sata" 2>/tmp/e; echo "rc=$?"
cat /tmp/e

# Latency on devices of known latency, measured by disktriage, fio and ioping (qemu_lab_latency).
. /lab/latency-guest.sh
. /lab/multi-guest.sh
# File tests over md RAID, dm-crypt and no layer (qemu_lab_filesystem_layers).
. /lab/layers-guest.sh

# Last, because the disk is gone afterwards: the SCSI disk is removed in the middle of a run.
section ENGINE-DETACH
disktriage run "/dev/$scsi" --test rand-read --time 60 --warmup 0 --json \
    > /tmp/detach.json 2> /tmp/detach.err &
pid=$!
sleep 3
echo "removed=$(cut -d' ' -f1 /proc/uptime)"
echo 1 > "/sys/block/$scsi/device/delete"
wait $pid
echo "rc=$?"
echo "ended=$(cut -d' ' -f1 /proc/uptime)"
cat /tmp/detach.err
section ENGINE-DETACH-JSON
cat /tmp/detach.json

# The SATA disk is removed in the middle of a write test: the kernel fails writes past the
# end of a device whose size dropped to 0 with ENOSPC, which must not read as a full file
# system.
section ENGINE-DETACH-WRITE
disktriage run "/dev/$sata" --test seq-write --time 60 --warmup 0 --destroy-data "$sata" \
    > /tmp/detach-write.out 2> /tmp/detach-write.err &
pid=$!
sleep 3
echo 1 > "/sys/block/$sata/device/delete"
wait $pid
echo "rc=$?"
cat /tmp/detach-write.out /tmp/detach-write.err

section DONE
echo "end=$(cut -d' ' -f1 /proc/uptime)"
