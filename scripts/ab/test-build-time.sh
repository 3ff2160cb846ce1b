#!/bin/bash
# How long the test suite takes to build, at two git revisions, in interleaved rounds:
#   scripts/ab/test-build-time.sh REV_A REV_B [ROUNDS]      # e.g. main HEAD 3
# Each rev is exported (git archive) to a scratch directory with a target directory of its
# own (CARGO_TARGET_DIR), and each round, for each rev in turn, measures
#   clean:  `cargo test --no-run` from an empty target directory (dependencies included), and
#   relink: `touch src/lib.rs` then `cargo test --no-run` again: the library rebuilt and every
#           test binary linked anew, which is what a change in src/ costs before a test runs.
# It prints one line per measurement (wall and CPU seconds) and the mean per rev and kind. Compare the rounds, not
# one figure: run it on an idle machine (other builds make every figure longer). Scratch
# space: $TMPDIR (default /tmp), about 3 GB per rev; removed at the end.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,3p' "$0"; exit 2; }
A=$1 B=$2 ROUNDS=${3:-3}
REPO=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test-build-time.XXXX")
trap 'rm -rf "$WORK"' EXIT

# Resolved once: a commit made while the rounds run must not change what HEAD means here.
declare -A SHA
for rev in "$A" "$B"; do
    sha=$(git -C "$REPO" rev-parse --short "$rev^{commit}")
    SHA[$rev]=$sha
    mkdir -p "$WORK/$sha/src"
    git -C "$REPO" archive "$sha" | tar -x -C "$WORK/$sha/src"
    echo "$rev = $sha: $(ls "$WORK/$sha/src/tests"/*.rs "$WORK/$sha/src/tests"/*/main.rs 2>/dev/null | wc -l) test binaries"
done

secs() { # "WALL CPU": the seconds a command takes and the CPU seconds (user + system) its
          # processes used, to 0.1 s; CPU time moves less than wall time when other work
          # shares the machine. Its output goes to $WORK/log.
    local t0 t1
    t0=$(date +%s.%N)
    times >"$WORK/cpu0" # the shell's finished children so far (not in $(...): a subshell's)
    "$@" >>"$WORK/log" 2>&1 || { echo "failed: $* (see the log below)"; tail -30 "$WORK/log"; exit 1; }
    times >"$WORK/cpu1"
    t1=$(date +%s.%N)
    echo "$t0 $t1 $(cpu "$WORK/cpu0") $(cpu "$WORK/cpu1")" |
        awk '{printf "%.1f %.1f", $2 - $1, $4 - $3}'
}

cpu() { # the children's user + system seconds in the output of `times` in file $1
    tail -1 "$1" | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/);
                          printf "%.2f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}

build() { # $1 = scratch directory of a rev
    (cd "$1/src" && CARGO_TARGET_DIR="$1/target" cargo test --no-run --locked -q)
}

results=()
for r in $(seq "$ROUNDS"); do
    for rev in "$A" "$B"; do
        sha=${SHA[$rev]}
        dir=$WORK/$sha
        rm -rf "$dir/target"
        read -r clean clean_cpu <<<"$(secs build "$dir")"
        touch "$dir/src/src/lib.rs"
        read -r relink relink_cpu <<<"$(secs build "$dir")"
        echo "round $r $rev ($sha): clean ${clean}s (cpu ${clean_cpu}s), relink ${relink}s (cpu ${relink_cpu}s)"
        results+=("$rev clean $clean $clean_cpu" "$rev relink $relink $relink_cpu")
    done
done
printf '%s\n' "${results[@]}" | awk '
    { k = $1" "$2; sum[k] += $3; cpu[k] += $4; n[k]++ }
    END { for (k in sum) printf "mean %s: %.1fs (cpu %.1fs) over %d rounds\n", k, sum[k] / n[k], cpu[k] / n[k], n[k] }' | sort
