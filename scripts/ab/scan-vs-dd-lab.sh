#!/bin/bash
# The surface scan's speed against dd on the QEMU lab's emulated disks (SATA on AHCI, NVMe,
# SCSI on virtio-scsi, virtio-blk): boots tests/vm/lab.sh once with
# tests/vm/scan-vs-dd-guest.sh, which reads each disk in alternating rounds of
# `dd if=DEV of=/dev/null bs=1M iflag=direct` and `disktriage scan DEV`, and prints each
# disk's medians and the scan's share of dd's rate, which must be at least 0.95 (exit status 1
# when it is not on some disk). Root; the lab's packages (tests/vm/lab.sh check).
#   R=5 scripts/ab/scan-vs-dd-lab.sh
# R rounds (default 3), MIB=how much of each 256 MiB disk a run reads (default all of it),
# DT=a static disktriage (default: built by scripts/release.sh into target/lab/dist, as the
# lab tests do), WORK=the lab's directory (default a temporary one, removed at the end).
# The guest runs under software emulation (TCG) on one CPU: the rates are the emulator's, the
# ratio is what compares.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${DT:-}" ]; then
  CARGO_TARGET_DIR=target/lab DIST_DIR=target/lab/dist scripts/release.sh >&2
  DT=target/lab/dist/disktriage
fi
if [ -z "${WORK:-}" ]; then
  WORK=$(mktemp -d /tmp/scan-vs-dd-lab.XXXX)
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
# The rounds and size reach the guest at the top of its script.
{
  echo '#!/bin/sh'
  echo "R=${R:-3}"
  [ -n "${MIB:-}" ] && echo "MIB=$MIB"
  cat tests/vm/scan-vs-dd-guest.sh
} >"$WORK/guest.sh"
DISKTRIAGE_BIN="$(realpath "$DT")" LAB_TOOLS=dd LAB_TIMEOUT=${LAB_TIMEOUT:-1500} \
  tests/vm/lab.sh run "$WORK" "$WORK/guest.sh" standard
tr -d '\r' <"$WORK/results.log" | sed -n '/^===== SCAN-VS-DD/,/^===== LAB END/p' | grep -v '^===== LAB END'
echo "scan / dd per disk (at least 0.95):"
awk '{ sub(/\r$/, "") }
     /^===== SCAN-VS-DD / { kind = $3 }
     /^median / { r = ($3 > 0) ? $5 / $3 : 0; ok = (r >= 0.95) ? "yes" : "NO"; if (ok == "NO") bad = 1
                  printf "  %-7s dd %8s MB/s  scan %8s MB/s  ratio %.3f (%s)  block %s\n", kind, $3, $5, r, ok, $NF }
     END { exit bad }' "$WORK/results.log"
