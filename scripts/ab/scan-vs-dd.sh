#!/bin/bash
# The surface scan's speed against dd on one device: alternating rounds of
# `dd if=DEV of=/dev/null bs=1M iflag=direct` and `disktriage scan DEV` over the same bytes
# (both read-only, 1 MiB direct reads at QD1), with the medians and the scan's share of dd's
# rate, which must be at least 0.95 (exit status 1 when it is not). Root.
#   R=5 scripts/ab/scan-vs-dd.sh                 a loop device over a 1 GiB file in /dev/shm
#   DEV=/dev/sdb R=5 scripts/ab/scan-vs-dd.sh    a device you name (read only: nothing is written)
# DT=path/to/disktriage (default target/release/disktriage), MIB=how much of the device each
# run reads (default 1024, at most the device), NICE=-10 runs both at that priority,
# MAXKB=128 sets the test loop device's queue/max_sectors_kb (an NVMe disk's largest transfer).
set -u
cd "$(dirname "$0")/../.."
P=(); [ -n "${NICE:-}" ] && P=(nice -n "$NICE")
DT=${DT:-target/release/disktriage}; R=${R:-3}
if [ -n "${DEV:-}" ]; then
  D=$DEV
else
  W=$(mktemp -d /dev/shm/scandd.XXXX); truncate -s 1G "$W/img"
  D=$(losetup -f --show "$W/img")
  Q=/sys/block/${D#/dev/}/queue/max_sectors_kb; KB=$(cat "$Q")
  # The largest transfer outlives the detach: put it back for the next user of the name.
  trap 'echo "$KB" > "$Q"; losetup -d "$D"; rm -rf "$W"' EXIT
  dd if=/dev/urandom of="$D" bs=1M count=1024 oflag=direct status=none
  [ -n "${MAXKB:-}" ] && echo "$MAXKB" > "$Q"
fi
SIZE=$(blockdev --getsize64 "$D"); MAX=$(( SIZE >> 20 ))
MIB=${MIB:-1024}; [ "$MIB" -gt "$MAX" ] && MIB=$MAX
echo "device $D: $MIB MiB per run, $R rounds, $DT"
LOG=$(mktemp)
for r in $(seq "$R"); do
  v=$("${P[@]}" dd if="$D" of=/dev/null iflag=direct bs=1M count="$MIB" 2>&1 |
      awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s,") printf "%.1f", $1 / $(i-1) / 1e6 }')
  echo "dd $v" >> "$LOG"; printf 'r%s %-5s %9s MB/s\n' "$r" dd "$v"
  v=$("${P[@]}" "$DT" scan "$D" --size "${MIB}M" --json |
      awk -F'[:,]' '/"bytes_read"/ { b = $2 } /"seconds"/ { s = $2 } END { printf "%.1f", b / s / 1e6 }')
  echo "scan $v" >> "$LOG"; printf 'r%s %-5s %9s MB/s\n' "$r" scan "$v"
done
echo "medians over $R rounds:"
sort -k1,1 -k2,2n "$LOG" | awk '{ v[$1] = v[$1] " " $2; n[$1]++ }
  END { for (c in v) { split(substr(v[c], 2), a, " "); m[c] = (n[c] % 2) ? a[(n[c] + 1) / 2] : (a[n[c] / 2] + a[n[c] / 2 + 1]) / 2; printf "  %-5s %9.1f MB/s\n", c, m[c] }
        ratio = (m["dd"] > 0) ? m["scan"] / m["dd"] : 0; ok = "yes"; if (ratio < 0.95) ok = "NO"
        printf "  scan / dd = %.3f (at least 0.95: %s)\n", ratio, ok
        if (ok == "NO") exit 1 }'
rc=$?
rm -f "$LOG"
exit $rc
