#!/usr/bin/env bash
# Captures the raw pages the QEMU lab's drives return into tests/fixtures/pages/: IDENTIFY and
# SMART pages (plus SMART RETURN STATUS sense) from the SATA disk, NVMe Identify Controller and
# SMART/Health logs (one drive healthy, one with smart_critical_warning=4), the SCSI caching
# mode page from scsi-hd and from libata's translation, the ATA SMART error and self-test
# logs (again after a short self-test), the NVMe error and self-test logs, and smartctl's JSON
# for each drive. OUT_DIR puts the files elsewhere (to compare before replacing).
# A developer tool (the fixtures are committed); needs the lab's packages and smartmontools.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=${WORK_DIR:-$(mktemp -d /tmp/dt-pages.XXXXXX)}
out=${OUT_DIR:-$repo/tests/fixtures/pages}

(cd "$repo" && RUSTFLAGS="-C target-feature=+crt-static" CARGO_TARGET_DIR=target/lab \
    cargo build --locked --release --target x86_64-unknown-linux-gnu)
export DISKTRIAGE_BIN="$repo/target/lab/x86_64-unknown-linux-gnu/release/disktriage"
export LAB_TOOLS="smartctl"
"$here/lab.sh" run "$work" "$here/capture-pages-guest.sh" standard

mkdir -p "$out"
tr -d '\r' < "$work/results.log" | awk -v out="$out" '
    /^===== DEVICE / { serial = tolower($3); sub(/^dt-/, "", serial); mode = ""; next }
    /^----- page / { file = out "/qemu-" serial "-" $4 ".hex"; printf "" > file; mode = "hex"; next }
    /^----- error / { mode = ""; print "skipped: " $0 > "/dev/stderr"; next }
    /^===== SMARTCTL-EXIT / { mode = ""; next }
    /^===== SMARTCTL / { file = out "/smartctl-qemu-" serial ".json"; printf "" > file; mode = "json"; next }
    /^=====/ { mode = ""; next }
    mode == "hex" { print >> file }
    mode == "json" { print >> file }
'
ls -l "$out"
