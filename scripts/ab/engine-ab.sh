#!/bin/bash
# Interleaved A/B of two disktriage binaries on the engine's hot loops (root): 4 KiB random
# read QD32 with io_uring and with the threads (sync) engine, and 1 MiB sequential read QD8
# (io_uring). A loop device over a file in /dev/shm, made here and removed on exit.
#   A=/tmp/engine-base/disktriage B=target/release/disktriage R=4 scripts/ab/engine-ab.sh
# CASES="rand4k-uring" limits the cases; TIME and WARMUP set each run's (default 3s, 1s).
# Each round runs every case with A then B (the order flips every round: ABBA), back to
# back; on a shared machine only the rounds' relative figures count.
set -u
A=${A:-/tmp/engine-base/disktriage}; B=${B:-target/release/disktriage}
R=${R:-4}; T=${TIME:-3s}; W=${WARMUP:-1s}
CASES=${CASES:-rand4k-uring rand4k-sync seq1m-q8}
DIR=$(mktemp -d /dev/shm/engine-ab.XXXX); truncate -s 1G "$DIR/img"
DEV=$(losetup -f --show "$DIR/img")
trap 'losetup -d "$DEV"; rm -rf "$DIR"' EXIT
dd if=/dev/urandom of="$DEV" bs=1M count=1024 oflag=direct status=none
run() { # binary, case -> "<IOPS> <CPU us per I/O>"
  local bin=$1 args out
  case $2 in
    rand4k-uring) args="--test rand-read --bs 4k --qd 32 --engine uring";;
    rand4k-sync) args="--test rand-read --bs 4k --qd 32 --engine sync";;
    seq1m-q8) args="--test seq-read --bs 1M --qd 8 --engine uring";;
  esac
  out=$("$bin" run "$DEV" $args --time "$T" --warmup "$W" --history-dir "$DIR/hist" 2>&1)
  # "read ... <N> IOPS ..." and "cpu ... <x> us per I/O".
  echo "$(grep -E '^read ' <<<"$out" | grep -oE '[0-9]+ IOPS' | head -1 | cut -d' ' -f1)" \
    "$(grep -E '^cpu ' <<<"$out" | grep -oE '[0-9.]+ us per I/O' | cut -d' ' -f1)"
}
for r in $(seq "$R"); do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for c in $CASES; do
    for who in $order; do
      bin=$A; [ "$who" = B ] && bin=$B
      echo "r$r $c $who $(run "$bin" "$c")"
    done
  done
done | tee "$DIR/rounds"
# Per case: the median over rounds of B/A, for IOPS and for CPU per I/O (B's over A's).
echo "case  median B/A IOPS  median B/A CPU-us/IO  (rounds)"
awk '{k=$1" "$2; if ($3=="A") {ai[k]=$4; ac[k]=$5} else {bi[k]=$4; bc[k]=$5}}
     END {for (k in ai) if (ai[k] > 0 && ac[k] > 0 && k in bi) {split(k, p, " ");
            print p[2], bi[k]/ai[k], bc[k]/ac[k]}}' "$DIR/rounds" | sort \
  | awk '{c[$1]=c[$1]" "$2; u[$1]=u[$1]" "$3} END {for (k in c) print k, c[k], "|", u[k]}' \
  | while read -r name rest; do
      iops=$(tr ' ' '\n' <<<"${rest%%|*}" | grep . | sort -g)
      cpu=$(tr ' ' '\n' <<<"${rest##*|}" | grep . | sort -g)
      n=$(wc -l <<<"$iops")
      med() { awk -v n="$n" 'NR==int((n+1)/2){a=$1} NR==int(n/2)+1{b=$1} END{printf "%.3f", (a+b)/2}'; }
      echo "$name $(med <<<"$iops") $(med <<<"$cpu") ($n)"
    done
