#!/bin/bash
# disktriage alone, R times, on a file on ext4 on a loop device over tmpfs (4 KiB random reads,
# QD32, the default engine), each run under `perf stat` counting io_uring's hand-offs of
# requests to its blocking kernel workers (io_uring:io_uring_queue_async_work) and the context
# switches, with each run's own IOPS, engine, CPU and probe from its JSON (root; needs perf).
#   R=20 scripts/ab/ext4-handoffs.sh            # DT=/path/to/disktriage, default /tmp/dt-cur
# A run far below the others that shows hand-offs is the ring falling back to blocking workers;
# one without is the machine.
set -u
T=$(mktemp -d /dev/shm/ext4h.XXXX); truncate -s 1536M $T/ext4.img
D=$(losetup -f --show $T/ext4.img); mkfs.ext4 -q -F $D; mkdir $T/mnt; mount $D $T/mnt
trap "umount $T/mnt || { sleep 1; umount $T/mnt; }; losetup -d $D; rm -rf $T" EXIT
F=$T/mnt/data.bin
DT=${DT:-/tmp/dt-cur}
# disktriage lays out a missing file at --size with random data, as the vs_fio bench does.
DISKTRIAGE_HISTORY_DIR=$T/h $DT run $F --test seq-read --size 1G --count 1 >/dev/null
for r in $(seq ${R:-20}); do
  perf stat -e io_uring:io_uring_queue_async_work,sched:sched_switch -a -x, -o $T/p.stat -- \
    env DISKTRIAGE_HISTORY_DIR=$T/h $DT run $F --test rand-read --qd 32 --time 3s --warmup 1 \
    --json > $T/out 2>$T/err
  handoffs=$(grep queue_async $T/p.stat | cut -d, -f1)
  switches=$(grep sched_switch $T/p.stat | cut -d, -f1)
  run=$(python3 - $T/out <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["outcome"]["phases"][0]
probe = (p.get("engine_choice") or {}).get("probe") or {}
kilo = lambda e: (probe.get(e) or {}).get("iops", 0) / 1e3
print("%d IOPS %s cpu %.2f s probe io_uring %dk sync %dk set aside %s" % (
    p["read"]["iops"], p["engine"], p["cpu_seconds"], kilo("uring"), kilo("sync"),
    probe.get("set_aside")))
PY
)
  echo "r$r $run; hand-offs $handoffs; context switches $switches"
done
