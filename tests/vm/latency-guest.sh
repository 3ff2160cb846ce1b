#!/bin/sh
# Guest side of qemu_lab_latency: latency on devices whose latency is known, measured by
# disktriage (default engine, --engine sync, --engine uring) and by two witnesses, fio (psync,
# its `lat`: from handing the I/O to the kernel to its completion) and ioping (the time of each
# request). QD1 random 4 KiB direct reads. Sourced by drive-control-guest.sh (one boot for
# both tests) and runnable alone as the lab's guest script while developing it:
#     DISKTRIAGE_BIN=... LAB_TOOLS="fio ioping dmsetup" tests/vm/lab.sh run /tmp/w \
#         tests/vm/latency-guest.sh
#
# The devices:
# - null_blk in timer mode completes every request NULLB_NS after the driver received it,
#   with a high-resolution timer.
# - dm-delay over a loop device on a tmpfs file holds every request DELAY_MS. Its timer counts
#   in jiffies (HZ=250 in Debian's kernel: 4 ms), so the delay is a whole number of ticks.
set -u

NULLB_NS=2000000
DELAY_MS=20
LAT_SECONDS=5

lat_section() { echo "===== $*"; }

lat_section LATENCY-SETUP
insmod /lab/modules/null_blk.ko nr_devices=1 irqmode=2 completion_nsec=$NULLB_NS \
    queue_mode=2 gb=1
echo "null_blk rc=$?"
mkdir -p /tmp/lat
dd if=/dev/zero of=/tmp/lat/backing bs=1M count=64 2>/dev/null
lat_loop=$(losetup -f)
losetup "$lat_loop" /tmp/lat/backing
echo "loop=$lat_loop rc=$?"
export DM_DISABLE_UDEV=1
dmsetup create dtslow --noudevsync \
    --table "0 $(blockdev --getsz "$lat_loop") delay $lat_loop 0 $DELAY_MS"
echo "dmsetup rc=$?"
lat_dm=
for lat_d in /sys/block/dm-*; do
    [ "$(cat "$lat_d/dm/name" 2>/dev/null)" = dtslow ] && lat_dm=$(basename "$lat_d")
done
echo "devices nullblk=nullb0 dmdelay=$lat_dm nullb_ns=$NULLB_NS delay_ms=$DELAY_MS" \
    "seconds=$LAT_SECONDS"

# Reads the kernel completed on a device so far.
lat_reads() { awk '{ print $1 }' "/sys/block/$1/stat"; }

# The emulated machine runs on a shared host: when the host is busy the guest's clock runs on
# while its CPU waits, and every latency grows by up to a few milliseconds for a while. Tools
# run one after the other would each see a different host. So the witnesses measure at the
# same time as disktriage, on the same device, each at QD1 (neither device queues: null_blk
# times every request on its own, dm-delay holds every request for the same time). The tools
# share the guest's one CPU, which adds to every latency, so all three run during the same
# seconds: fio starts first (loading its libraries is slow under TCG and is not measured: its
# ramp time starts when its reads do), ioping and disktriage once fio's reads have begun, and
# the witnesses are stopped with SIGINT (both print their results) when disktriage ends.
for lat_pair in nullblk:nullb0 dmdelay:$lat_dm; do
    lat_kind=${lat_pair%%:*}
    lat_name=${lat_pair#*:}
    lat_dev=/dev/$lat_name
    for lat_engine in default sync uring; do
        lat_before=$(lat_reads "$lat_name")
        fio --name=lat --filename="$lat_dev" --rw=randread --bs=4k --ioengine=psync \
            --direct=1 --iodepth=1 --time_based --runtime=300 --ramp_time=1 \
            --clocksource=clock_gettime --lat_percentiles=1 --output-format=json \
            >/tmp/lat/fio 2>/tmp/lat/fio.err &
        lat_fio=$!
        lat_i=0
        while [ "$(lat_reads "$lat_name")" = "$lat_before" ] && [ $lat_i -lt 600 ]; do
            sleep 0.1
            lat_i=$((lat_i + 1))
        done
        ioping -D -i 0 -s 4k -S 64m -w 300s -J "$lat_dev" >/tmp/lat/ioping 2>/tmp/lat/ioping.err &
        lat_ioping=$!
        lat_opt=
        [ "$lat_engine" = default ] || lat_opt="--engine $lat_engine"
        # shellcheck disable=SC2086 # $lat_opt is empty or two words
        disktriage run "$lat_dev" --test rand-read --qd 1 --bs 4k --time $LAT_SECONDS \
            --warmup 1 $lat_opt --json >/tmp/lat/dt 2>/tmp/lat/dt.err
        lat_dt_rc=$?
        kill -INT $lat_ioping $lat_fio
        wait $lat_ioping
        lat_ioping_rc=$?
        wait $lat_fio
        lat_fio_rc=$?
        lat_section "LATENCY-DT $lat_kind $lat_engine"
        cat /tmp/lat/dt
        echo "rc=$lat_dt_rc"
        cat /tmp/lat/dt.err
        # fio prints "fio: terminating on signal 2" before its JSON, and exits with 128 when
        # stopped by a signal: its results are the JSON document.
        lat_section "LATENCY-FIO $lat_kind $lat_engine"
        sed -n '/^{/,$p' /tmp/lat/fio
        echo "rc=$lat_fio_rc"
        cat /tmp/lat/fio.err
        # ioping -J prints one JSON object per request; only the times (ns) of the requests
        # it counts (not its warm-up) are kept, one per line, to keep the serial log small.
        lat_section "LATENCY-IOPING $lat_kind $lat_engine"
        awk '/"time":/ { t = $2; gsub(/[^0-9]/, "", t) } /"ignored": false/ { print t }' \
            /tmp/lat/ioping
        echo "rc=$lat_ioping_rc"
        cat /tmp/lat/ioping.err
    done
done

dmsetup remove dtslow
losetup -d "$lat_loop"
rm -f /tmp/lat/backing
