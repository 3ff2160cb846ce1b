#!/bin/bash
# How the rate of the ext4-file job depends on the queue depth (root): fio's io_uring and
# disktriage (io_uring) at QD16/32/64/128, 4 KiB random reads from a file on ext4 on a loop
# device over tmpfs, each pair back to back. Binary: $DT (default /tmp/dt-cur).
#   R=2 scripts/ab/ext4-depths.sh
set -u
DT=${DT:-/tmp/dt-cur}
T=$(mktemp -d /dev/shm/ext4qd.XXXX); truncate -s 1536M $T/ext4.img
D=$(losetup -f --show $T/ext4.img); mkfs.ext4 -q -F $D; mkdir $T/mnt; mount $D $T/mnt
trap "sleep 1; umount $T/mnt || { sleep 1; umount $T/mnt; }; losetup -d $D; rm -rf $T" EXIT
export DISKTRIAGE_HISTORY_DIR=$T/history
dd if=/dev/urandom of=$T/mnt/data.bin bs=1M count=1024 status=none; sync
for r in $(seq ${R:-2}); do
 for qd in 16 32 64 128; do
  f=$(fio --name=b --filename=$T/mnt/data.bin --size=1G --direct=1 --rw=randread --bs=4k --ioengine=io_uring --iodepth=$qd --fixedbufs --registerfiles --time_based --runtime=3 --ramp_time=1 --norandommap --output-format=terse --terse-version=3 | awk -F';' '{print $8}')
  d=$($DT run $T/mnt/data.bin --test rand-read --qd $qd --engine uring --time 3s 2>&1 | grep "^read" | grep -o "[0-9]* IOPS")
  echo "r$r QD$qd fio $f disktriage $d"
 done
done
