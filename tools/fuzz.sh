#!/bin/bash
# Runs libFuzzer (clang, from Debian's clang and libclang-rt-14-dev) on the channel
# protocol's fuzz target (tests/fuzz/fuzz-proto.c) with ASan and UBSan, for SECONDS
# (default 30), from an empty corpus.
# Exit status non-zero on a crash; the crashing input is left in the work folder.
#   tools/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
work=$(mktemp -d /tmp/sbx-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE \
        -Isrc/core -Isrc/basic tests/fuzz/fuzz-proto.c src/core/proto.c src/core/ring.c -o "$work/fuzz-proto"
mkdir "$work/corpus"
"$work/fuzz-proto" -max_total_time="$seconds" -max_len=65536 -artifact_prefix="$work/" \
        -print_final_stats=1 "$work/corpus" 2>&1 | tail -n 25 || {
        echo "fuzz: a crash; input(s):" "$work"/crash-* >&2
        trap - EXIT
        exit 1
}
