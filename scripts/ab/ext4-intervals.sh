#!/bin/bash
# disktriage and fio side by side, R rounds, on a file on ext4 on a loop device over tmpfs
# (4 KiB random reads, QD32, io_uring for both), each printing its overall IOPS and then its
# IOPS in every 250 ms interval (thousands): whether a run's rate moves within the run, and
# whether fio's moves as much (root).
#   R=4 scripts/ab/ext4-intervals.sh            # DT=/path/to/disktriage, default /tmp/dt-cur
set -u
T=$(mktemp -d /dev/shm/ext4i.XXXX); truncate -s 1536M $T/ext4.img
D=$(losetup -f --show $T/ext4.img); mkfs.ext4 -q -F $D; mkdir $T/mnt; mount $D $T/mnt
trap "umount $T/mnt || { sleep 1; umount $T/mnt; }; losetup -d $D; rm -rf $T" EXIT
F=$T/mnt/data.bin
DT=${DT:-/tmp/dt-cur}
DISKTRIAGE_HISTORY_DIR=$T/h $DT run $F --test seq-read --size 1G --count 1 >/dev/null
for r in $(seq ${R:-4}); do
  DISKTRIAGE_HISTORY_DIR=$T/h $DT run $F --test rand-read --qd 32 --engine uring --time 6s \
    --json > $T/out 2>/dev/null
  python3 - $T/out $r <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["outcome"]["phases"][0]
series = " ".join("%d" % (q["read"]["ops"] * 4 / 1000) for q in p["series"]["points"])
print("r%s disktriage %d  %s" % (sys.argv[2], p["read"]["iops"], series))
PY
  v=$(fio --name=b --filename=$F --size=1G --direct=1 --rw=randread --bs=4k --ioengine=io_uring \
    --iodepth=32 --fixedbufs --registerfiles --time_based --runtime=6 --ramp_time=1 \
    --norandommap --output-format=terse --terse-version=3 --write_iops_log=$T/fl \
    --log_avg_msec=250 | awk -F';' '{print $8}')
  echo "r$r fio $v  $(awk -F, '{printf "%d ", $2/1000}' $T/fl_iops.1.log)"
  rm -f $T/fl_iops.1.log
done
