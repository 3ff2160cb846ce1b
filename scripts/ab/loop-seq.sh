#!/bin/bash
# Alternating A/B runs of disktriage binaries against fio, for engine changes (root).
# Put each binary to compare at $DT_DIR/dt-NAME (default /tmp) and list the contenders:
#   C="fio old new" R=5 scripts/ab/loop-seq.sh
# Each round runs every contender once, back to back; compare the rounds, not one figure.
# RW=read|write, QD=N, E=uring|sync (the engine; default auto). A loop device over tmpfs.
set -u
RW=${RW:-read}; QD=${QD:-1}
T=$(mktemp -d /dev/shm/seqexp.XXXX); truncate -s 2G $T/img
D=$(losetup -f --show $T/img); N=$(basename $D)
trap "losetup -d $D; rm -rf $T" EXIT
dd if=/dev/urandom of=$D bs=1M count=2048 oflag=direct status=none
for r in $(seq ${R:-3}); do
 for c in ${C:-fio old new}; do
  case $c in
   fio) v=$(fio --name=b --filename=$D --direct=1 --rw=$RW --bs=1M --ioengine=io_uring --iodepth=$QD --fixedbufs --registerfiles --time_based --runtime=3 --ramp_time=1 --scramble_buffers=0 --output-format=terse --terse-version=3 | awk -F';' -v rw=$RW '{print (rw=="read")?$8:$49}');;
   *) t=$([ $RW = read ] && echo seq-read || echo seq-write); v=$(${DT_DIR:-/tmp}/dt-$c run $D --test $t --qd $QD --bs 1M ${E:+--engine $E} --time 3s --destroy-data $N 2>&1 | grep -E "^(read|write) " | grep -o "[0-9]* IOPS");;
  esac
  echo "r$r $c $v"
 done
done
