#!/bin/bash
# 1 MiB direct reads at QD1 by dd, fio and disktriage on one device, in alternating rounds, with
# the requests the device itself counted (reads completed in /sys/block/X/stat) per MiB read.
# disktriage's default must be level with dd and fio and send as many requests as they do;
# with --huge-pages (its buffers in 2 MiB pages) it sends fewer, larger ones. Root.
#   R=5 scripts/ab/mib-vs-dd.sh                 a loop device over a 2 GiB file in /dev/shm
#   DEV=/dev/zram0 R=5 scripts/ab/mib-vs-dd.sh  a device you name (read only: nothing is written)
# DT=path/to/disktriage (default target/release/disktriage), C="dd fio dt dt-huge fio-huge"
# (the contenders; the -huge ones need huge pages: fio-huge reserves them in
# /proc/sys/vm/nr_hugepages for its run and puts the old count back), T=seconds per run;
# DT_OLD=another/disktriage adds the contender dt-old, that binary with its defaults.
# NICE=-10 runs every contender at that priority, for a machine shared with other work.
set -u
cd "$(dirname "$0")/../.."
P=(); [ -n "${NICE:-}" ] && P=(nice -n "$NICE")
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
LOG=$(mktemp)
for r in $(seq "$R"); do
  for c in $C; do
    read -r r0 s0 < <(reads)
    case $c in
      dd) # As long as the others run: whole passes over the device, rated by dd's own
          # byte counts and seconds (its MB/s is rounded to two digits).
          v=$(end=$((SECONDS + T)); while [ $SECONDS -lt $end ]; do
                "${P[@]}" dd if="$D" of=/dev/null iflag=direct bs=1M count="$MIB" 2>&1
              done | awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s,") { b += $1; t += $(i-1) } }
                          END { printf "%.1f", b / t / 1e6 }');;
      fio|fio-huge)
        extra=""; old=""
        if [ "$c" = fio-huge ]; then
          extra=--huge-pages; old=$(cat /proc/sys/vm/nr_hugepages)
          echo $(( old + 4 )) > /proc/sys/vm/nr_hugepages
        fi
        v=$(eval "${P[*]} $(fio_line "$extra") --output-format=terse --terse-version=3" | awk -F';' '{printf "%.1f", $7 * 1024 / 1e6 }')
        [ -n "$old" ] && echo "$old" > /proc/sys/vm/nr_hugepages;;
      dt|dt-huge|dt-old)
        extra=""; [ "$c" = dt-huge ] && extra=--huge-pages
        bin=$DT; [ "$c" = dt-old ] && bin=$DT_OLD
        v=$("${P[@]}" "$bin" run "$D" --test seq-read --engine uring --time "${T}s" --size "${MIB}M" $extra --json | python3 -c 'import json,sys; p=json.load(sys.stdin)["outcome"]["phases"][0]; print("%.1f" % (p["read"]["bytes_per_sec"]/1e6))');;
    esac
    read -r r1 s1 < <(reads)
    mib_read=$(( (s1 - s0) / 2048 ))
    echo "$c $v" >> "$LOG"
    printf 'r%s %-9s %9s MB/s  %7s requests for %5s MiB (%s per MiB)\n' "$r" "$c" "$v" $((r1 - r0)) "$mib_read" \
      "$(awk -v n=$((r1 - r0)) -v m="$mib_read" 'BEGIN { if (m > 0) printf "%.2f", n / m; else print "-" }')"
  done
done
echo "medians over $R rounds:"
sort -k1,1 -k2,2n "$LOG" | awk '{ v[$1] = v[$1] " " $2; n[$1]++ }
  END { for (c in v) { split(substr(v[c], 2), a, " "); m = (n[c] % 2) ? a[(n[c] + 1) / 2] : (a[n[c] / 2] + a[n[c] / 2 + 1]) / 2; printf "  %-9s %9.1f MB/s\n", c, m } }'
rm -f "$LOG"
