#!/bin/bash
# Alternating A/B runs of disktriage binaries against fio, for engine changes (root).
# Put each binary to compare at $DT_DIR/dt-NAME (default /tmp) and list the contenders:
#   C="fio old new" R=5 scripts/ab/zram-write.sh
# Each round runs every contender once, back to back; compare the rounds, not one figure.
# QD=N. 4 KiB random writes on /dev/zram0 (must be unused; the tests' lock is taken).
set -u
exec 9>/tmp/disktriage-tests-zram0.lock; flock 9
QD=${QD:-1}
echo 1 > /sys/block/zram0/reset; echo 1G > /sys/block/zram0/disksize; dd if=/dev/urandom of=/dev/zram0 bs=1M count=1024 oflag=direct status=none
for r in $(seq ${R:-3}); do
 for c in ${C:-fio old new}; do
  case $c in
   fio) v=$(fio --name=w --filename=/dev/zram0 --rw=randwrite --bs=4k --direct=1 --ioengine=psync --numjobs=$QD --thread --group_reporting --time_based --runtime=3 --ramp_time=1 --norandommap --randrepeat=0 --scramble_buffers=0 --output-format=terse --terse-version=3 | awk -F';' '{print $49}');;
   *) v=$(${DT_DIR:-/tmp}/dt-$c run /dev/zram0 --test rand-write --qd $QD ${DTARGS:-} --time 3s --destroy-data zram0 2>&1 | grep "^write" | grep -o "[0-9]* IOPS");;
  esac
  echo "r$r $c $v"
 done
done
echo 1 > /sys/block/zram0/reset
