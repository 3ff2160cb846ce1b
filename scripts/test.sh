#!/usr/bin/env bash
# Runs the whole test suite: unit tests, fixture tests, snapshot tests, and, as root, the tests
# on real loop and zram devices and the QEMU lab. As root it first installs the Debian packages
# those need and makes missing prerequisites an error instead of a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then
    scripts/install-test-deps.sh
    export DISKTRIAGE_REQUIRE_ROOT=1
fi
# Snapshot tests must match the committed snapshots, never write new ones.
export INSTA_UPDATE=no
cargo test --locked "$@"
