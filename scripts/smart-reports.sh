#!/usr/bin/env bash
# The triage's rules measured on real drives: runs `disktriage triage --json --report` over the
# shared set of smartctl reports (../shared/data/smart-reports, or DIR) and prints, per kind of
# drive, how many clean drives it calls anything but healthy and what it calls the drives the
# SMART standard calls failing, then how many clean drives each rule fired on
# (examples/smart_reports.rs makes the table). Builds what it needs with cargo; no root.
#
#     scripts/smart-reports.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-../shared/data/smart-reports}
if [ ! -f "$dir/MANIFEST.tsv" ]; then
    echo "smart-reports.sh: no $dir/MANIFEST.tsv (the shared set of smartctl reports)" >&2
    exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cargo build --quiet --bin disktriage --example smart_reports
# The triage's exit status is its worst verdict, or 1 when a file was not judged: the JSON is
# printed either way.
status=0
cargo run --quiet --bin disktriage -- triage --json --report "$dir"/text/* "$dir"/json/* \
    >"$out/triage.json" 2>"$out/stderr" || status=$?
if [ ! -s "$out/triage.json" ]; then
    echo "smart-reports.sh: the triage printed no report (exit status $status):" >&2
    cat "$out/stderr" >&2
    exit 1
fi
cargo run --quiet --example smart_reports -- "$dir" "$out/triage.json" "$out/stderr"
