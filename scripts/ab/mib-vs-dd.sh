#!/bin/bash
# 1 MiB direct reads at QD1 by dd, fio and disktriage on one device, in alternating rounds, with
# the requests the device itself counted (reads completed in /sys/block/X/stat) per MiB read.
# disktriage's default must be level with dd and fio and send as many requests as they do;
# with --huge-pages (its buffers in 2 MiB pages) it sends fewer, larger ones. Root.
#   R=5 scripts/ab/mib-vs-dd.sh                 a loop device over a 2 GiB file in /dev/shm
#   DEV=/dev/zram0 R=5 scripts/ab/mib-vs-dd.sh  a device you name (read only: nothing is written)
# DT=path/to/disktriage (default target/release/disktriage), C="dd fio dt dt-huge fio-huge"
# (the contenders; the -huge ones need huge pages: fio-huge reserves them in
# /proc/sys/vm/nr_hugepages for its run and puts the old count back), T=seconds per run.
set -u
cd "$(dirname "$0")/../.."
DT=${DT:-target/release/disktriage}; T=${T:-5}; R=${R:-3}
C=${C:-dd fio dt}
if [ -n "${DEV:-}" ]; then
  D=$DEV
else
  W=$(mktemp -d /dev/shm/mibdd.XXXX); truncate -s 2G "$W/img"
  D=$(losetup -f --show "$W/img")
  trap 'losetup -d "$D"; rm -rf "$W"' EXIT
  dd if=/dev/urandom of="$D" bs=1M count=2048 oflag=direct status=none
fi
N=$(basename "$(readlink -f "$D")")
SIZE=$(blockdev --getsize64 "$D"); MIB=$(( SIZE >> 20 )); [ "$MIB" -gt 2048 ] && MIB=2048
reads() { awk '{print $1" "$3}' "/sys/block/$N/stat"; }   # reads completed, sectors read
# The fio line disktriage exports for its own run (io_uring, as `auto` picks on loop and zram).
fio_line() { "$DT" run "$D" --test seq-read --engine uring --time "${T}s" --size "${MIB}M" $1 --fio | grep '^fio '; }
echo "device $D ($N): max_segments $(cat /sys/block/$N/queue/max_segments), max_segment_size $(cat /sys/block/$N/queue/max_segment_size), max_sectors_kb $(cat /sys/block/$N/queue/max_sectors_kb)"
for r in $(seq "$R"); do
  for c in $C; do
    read -r r0 s0 < <(reads)
    case $c in
      dd) v=$(dd if="$D" of=/dev/null iflag=direct bs=1M count="$MIB" 2>&1 | awk -F', ' '/copied/ {print $NF}' | awk '{v=$1; if ($2=="GB/s") v*=1000; printf "%.1f", v}');;
      fio|fio-huge)
        extra=""; old=""
        if [ "$c" = fio-huge ]; then
          extra=--huge-pages; old=$(cat /proc/sys/vm/nr_hugepages)
          echo $(( old + 4 )) > /proc/sys/vm/nr_hugepages
        fi
        v=$(eval "$(fio_line "$extra") --output-format=terse --terse-version=3" | awk -F';' '{printf "%.1f", $7 * 1024 / 1e6 }')
        [ -n "$old" ] && echo "$old" > /proc/sys/vm/nr_hugepages;;
      dt|dt-huge)
        extra=""; [ "$c" = dt-huge ] && extra=--huge-pages
        v=$("$DT" run "$D" --test seq-read --engine uring --time "${T}s" --size "${MIB}M" $extra --json | python3 -c 'import json,sys; p=json.load(sys.stdin)["outcome"]["phases"][0]; print("%.1f" % (p["read"]["bytes_per_sec"]/1e6))');;
    esac
    read -r r1 s1 < <(reads)
    mib_read=$(( (s1 - s0) / 2048 ))
    printf 'r%s %-9s %9s MB/s  %7s requests for %5s MiB (%s per MiB)\n' "$r" "$c" "$v" $((r1 - r0)) "$mib_read" \
      "$(awk -v n=$((r1 - r0)) -v m="$mib_read" 'BEGIN { if (m > 0) printf "%.2f", n / m; else print "-" }')"
  done
done
