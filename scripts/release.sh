#!/usr/bin/env bash
# Builds the executable to carry to a rescue system: one static binary (glibc linked in, no
# shared library needed), stripped, with its checksum. The QEMU lab boots this same build in
# a bare initramfs (tests/lab/qemu_lab.rs).
#
#   scripts/release.sh      writes dist/disktriage and dist/SHA256SUMS, prints the size
#
# DIST_DIR changes the output directory; CARGO_TARGET_DIR is cargo's own.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-unknown-linux-gnu
dist=${DIST_DIR:-dist}
built="${CARGO_TARGET_DIR:-target}/$target/release/disktriage"

started=$(date +%s)
RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --release --locked --target "$target"
seconds=$(($(date +%s) - started))

# A dynamic binary would not start in an initramfs without the loader: refuse to ship one.
if readelf --program-headers "$built" | grep INTERP >/dev/null ||
    readelf --dynamic "$built" | grep NEEDED >/dev/null; then
    echo "release.sh: $built is not static (it needs a loader or shared libraries)" >&2
    exit 1
fi

mkdir -p "$dist"
# Copied, stripped, then renamed: an interrupted run never leaves a half-written binary.
cp "$built" "$dist/disktriage.partial"
strip "$dist/disktriage.partial"
mv "$dist/disktriage.partial" "$dist/disktriage"
"$dist/disktriage" --version >/dev/null

(cd "$dist" && sha256sum disktriage >SHA256SUMS && sha256sum --quiet -c SHA256SUMS)

bytes=$(stat -c %s "$dist/disktriage")
echo "$dist/disktriage: $bytes bytes ($(numfmt --to=iec-i --suffix=B "$bytes")), static, stripped; built in ${seconds}s"
cat "$dist/SHA256SUMS"
