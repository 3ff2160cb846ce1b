#!/bin/bash
# Alternating A/B runs of disktriage binaries against fio, for engine changes (root).
# Put each binary to compare at $DT_DIR/dt-NAME (default /tmp) and list the contenders:
#   C="fio old new" R=5 scripts/ab/ext4-randread.sh
# Each round runs every contender once, back to back; compare the rounds, not one figure.
# 4 KiB random reads at QD32 (io_uring) from a file on ext4 on a loop device over tmpfs.
# A contender NAME:auto runs dt-NAME with its default engine (auto) instead of io_uring:
#   C="fio cur cur:auto" R=8 scripts/ab/ext4-randread.sh
set -u
T=$(mktemp -d /dev/shm/ext4ab.XXXX); truncate -s 1536M $T/ext4.img
D=$(losetup -f --show $T/ext4.img); mkfs.ext4 -q -F $D; mkdir $T/mnt; mount $D $T/mnt
trap "umount $T/mnt || { sleep 1; umount $T/mnt; }; losetup -d $D; rm -rf $T" EXIT
dd if=/dev/urandom of=$T/mnt/data.bin bs=1M count=1024 status=none
for r in $(seq ${R:-3}); do
 for c in ${C:-fio old cur}; do
  case $c in
   fio) v=$(fio --name=b --filename=$T/mnt/data.bin --size=1G --direct=1 --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 --fixedbufs --registerfiles --time_based --runtime=3 --ramp_time=1 --norandommap --output-format=terse --terse-version=3 | awk -F';' '{print $8}');;
   *:auto) v=$(${DT_DIR:-/tmp}/dt-${c%:auto} run $T/mnt/data.bin --test rand-read --qd 32 --time 3s 2>&1 | grep "^read" | grep -o "[0-9]* IOPS");;
   *) v=$(${DT_DIR:-/tmp}/dt-$c run $T/mnt/data.bin --test rand-read --qd 32 --engine uring --time 3s 2>&1 | grep "^read" | grep -o "[0-9]* IOPS");;
  esac
  echo "r$r $c $v"
 done
done
