#!/bin/bash
# The one test command (README, .ci/run): installs what is needed, builds, and runs
# every suite — unit natively, under ASan+UBSan and under valgrind, then the suites
# that need the real Docker daemon, D-Bus and polkit. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -f build/meson-logs/*.json build-sanitize/meson-logs/*.json build-tsan/meson-logs/*.json

tools/install-deps.sh

build() {
        local dir=$1; shift
        if [ -d "$dir" ]; then
                meson setup --reconfigure "$dir" "$@" >/dev/null
        else
                meson setup "$dir" "$@" >/dev/null
        fi
        ninja -C "$dir"
}

step() { printf '\n=== %s\n' "$*"; }

# Warnings are errors here (CI), not in a user's build with a newer compiler.
step "build"
build build -Dwerror=true
step "no include circle in any folder of src"
for folder in src/*/; do
        tools/check-include-cycles.py "${folder%/}"
done
step "unit tests"
meson test -C build --suite unit --print-errorlogs --logbase unit

step "unit tests under ASan+UBSan"
build build-sanitize -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
# check(1)'s per-test timeouts (4 s by default) are for a native build on a quiet machine.
export CK_TIMEOUT_MULTIPLIER=10
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        meson test -C build-sanitize --suite unit --print-errorlogs --logbase unit-sanitize

step "threaded unit tests under ThreadSanitizer"
[ -d build-tsan ] || meson setup build-tsan -Dwerror=true -Db_sanitize=thread -Db_lundef=false \
        -Dbuildtype=debug >/dev/null
# The suite 'threads': every unit test that starts a thread (tests/meson.build).
threaded=$(meson test -C build-tsan --list --suite threads 2>/dev/null | sed -n 's|^.* / ||p')
ninja -C build-tsan $(printf 'tests/test-%s ' $threaded)
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        meson test -C build-tsan --no-rebuild --suite threads --print-errorlogs --logbase unit-tsan

VALGRIND='valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite'
step "unit tests under valgrind"
meson test -C build --suite unit --no-suite oracle --print-errorlogs --logbase unit-valgrind \
        --wrap="$VALGRIND"
# The oracle's C side (the batch program) under valgrind too, on fewer specs.
/usr/bin/python3 tests/fingerprint-oracle.py build/tests/fingerprint-batch --count 2000 --wrap "$VALGRIND"

step "fuzzing the channel protocol (libFuzzer, ASan+UBSan, 30 s)"
tools/fuzz.sh 30

step "Docker suite (real dockerd; started if none answers)"
meson test -C build --suite docker --print-errorlogs --logbase docker

step "the Python image of the README's examples and the demo (debootstrap once, then cached)"
tests/setup-docker.sh >/dev/null && tools/make-python-image.sh

# One meson test per file, each with a stack of its own (tests/e2e/README.md, "Running"):
# two at a time (the files that time calls or compare whole lists run alone, after).
# tools/e2e-times.py build/meson-logs/e2e.json writes each file's time into its README.
step "end-to-end tests (private dbus-daemon, real polkitd, test users)"
meson test -C build --suite e2e --num-processes 2 --print-errorlogs --logbase e2e

step "fault injection (private dockerd, relay)"
meson test -C build --suite fault --print-errorlogs --logbase fault

step "end-to-end tests with the daemon built with ASan+UBSan (daemon life, volumes, bad input, exec)"
sanitizer_logs=$(mktemp -d /tmp/sbx-e2e-asan.XXXXXX)
SBX_BUILD_ROOT="$PWD/build-sanitize" PYTHONDONTWRITEBYTECODE=1 \
SBX_E2E_DAEMON_WRAPPER="/usr/bin/env ASAN_OPTIONS=detect_leaks=1:log_path=$sanitizer_logs/asan UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$sanitizer_logs/ubsan" \
        /usr/bin/python3 -m pytest -q -p no:cacheprovider \
        tests/e2e/test_daemon.py tests/e2e/test_pinned_volumes.py tests/e2e/test_bad_input.py \
        tests/e2e/test_exec.py -k "not racing_the_idle_exit"    # timing-bound: the plain run has it
if [ -n "$(ls -A "$sanitizer_logs")" ]; then
        echo "the daemon's sanitizers reported:"; cat "$sanitizer_logs"/*; exit 1
fi
rm -rf "$sanitizer_logs"

step "the README's installation on a booted systemd machine (Debian 12 in systemd-nspawn)"
meson test -C build --suite systemd --print-errorlogs --logbase systemd

step "summary"
/usr/bin/python3 tools/test-summary.py build/meson-logs/*.json build-sanitize/meson-logs/*.json \
        build-tsan/meson-logs/*.json
