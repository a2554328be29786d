#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# `meson install --destdir` puts every installed file where the system looks for it.
# Usage: test-install.sh BUILD_ROOT PREFIX BINDIR LIBEXECDIR DATADIR UNITDIR SYSUSERSDIR
#                        BASHCOMPLETIONDIR MANDIR
# (absolute paths as meson configured them; BASHCOMPLETIONDIR "no" and MANDIR "" when
# the build installs no completion or no manual pages).

set -euo pipefail

build=$1 prefix=$2 bindir=$3 libexecdir=$4 datadir=$5 unitdir=$6 sysusersdir=$7 completiondir=$8 mandir=$9
dest=$(mktemp -d /tmp/sbx-install-test.XXXXXX)
trap 'rm -rf "$dest"' EXIT

meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null

fail=0
expect() {      # expect TEST PATH
        if [ "$1" "$dest$2" ]; then
                echo "ok   $2"
        else
                echo "FAIL $2 (test $1)"
                fail=1
        fi
}

expect -x "$libexecdir/xagent-sandboxd"
expect -x "$bindir/xagent-sandboxctl"
expect -x "$bindir/xagent-sandbox-mcp"
expect -x "$libexecdir/xagent-sandbox-init/xagent-sandbox-init"
expect -f "$datadir/dbus-1/system.d/org.xagent.Sandbox1.conf"
expect -f "$datadir/dbus-1/system-services/org.xagent.Sandbox1.service"
expect -f "$datadir/dbus-1/interfaces/org.xagent.Sandbox1.Manager.xml"
expect -f "$datadir/dbus-1/interfaces/org.xagent.Sandbox1.Sandbox.xml"
expect -f "$datadir/dbus-1/interfaces/org.xagent.Sandbox1.Exec.xml"
expect -f "$datadir/polkit-1/actions/org.xagent.sandbox1.policy"
expect -f "$datadir/polkit-1/rules.d/50-xagent-sandbox.rules"
expect -f "$unitdir/xagent-sandboxd.service"
expect -f "$unitdir/xagent-sandboxd-deadlines.timer"
expect -f "$datadir/doc/xagent-sandboxd/sandboxd.json.example"
expect -f "$datadir/doc/xagent-sandboxd/README.md"
expect -f "$sysusersdir/xagent-sandboxd.conf"
# The Python client, where Debian's /usr/bin/python3 imports from for this prefix.
expect -f "$prefix/lib/python3/dist-packages/xagent_sandbox/__init__.py"
expect -f "$prefix/lib/python3/dist-packages/xagent_sandbox/_processes.py"
expect -f "$prefix/lib/python3/dist-packages/xagent_sandbox/_errors.py"
expect -f "$prefix/lib/python3/dist-packages/xagent_sandbox/_lease.py"
# The Cockpit page (docs/cockpit.md), its manifest's condition the activation file.
for f in manifest.json index.html xagent-sandbox.js common.js details.js create.js texts.js xagent-sandbox.css; do
        expect -f "$datadir/cockpit/xagent-sandbox/$f"
done
grep -q "\"path-exists\": \"$datadir/dbus-1/system-services/org.xagent.Sandbox1.service\"" \
        "$dest$datadir/cockpit/xagent-sandbox/manifest.json" || { echo "FAIL the manifest's condition"; fail=1; }
expected=28
if [ "$completiondir" != no ]; then
        expect -f "$completiondir/xagent-sandboxctl"
        expected=$((expected + 1))
fi
if [ -n "$mandir" ]; then
        for page in man1/xagent-sandboxctl.1 man1/xagent-sandbox-mcp.1 man5/sandboxd.json.5 man7/org.xagent.Sandbox1.7 \
                    man8/xagent-sandboxd.8; do
                expect -f "$mandir/$page"
        done
        expected=$((expected + 5))
fi

# Nothing in /etc: a missing /etc/xagent/sandboxd.json means the built-in defaults.
if [ -e "$dest/etc" ] || [ -e "$dest$prefix/etc" ]; then
        echo "FAIL something was installed to etc:"; find "$dest" -path '*/etc/*'
        fail=1
fi

# The activation file and the unit start the installed daemon, and name each other.
service="$dest$datadir/dbus-1/system-services/org.xagent.Sandbox1.service"
unit="$dest$unitdir/xagent-sandboxd.service"
grep -qx "Exec=$libexecdir/xagent-sandboxd" "$service" || { echo "FAIL Exec= of $service"; fail=1; }
grep -qx "SystemdService=xagent-sandboxd.service" "$service" || { echo "FAIL SystemdService= of $service"; fail=1; }
grep -qx "ExecStart=$libexecdir/xagent-sandboxd" "$unit" || { echo "FAIL ExecStart= of $unit"; fail=1; }
grep -qx "BusName=org.xagent.Sandbox1" "$unit" || { echo "FAIL BusName= of $unit"; fail=1; }
grep -q "@[a-z]*@" "$service" "$unit" && { echo "FAIL unsubstituted @...@"; fail=1; }
# The deadlines' timer starts that unit after boot, and is enabled by timers.target.
timer="$dest$unitdir/xagent-sandboxd-deadlines.timer"
grep -qx "Unit=xagent-sandboxd.service" "$timer" || { echo "FAIL Unit= of $timer"; fail=1; }
grep -q "^OnBootSec=" "$timer" || { echo "FAIL OnBootSec= of $timer"; fail=1; }
grep -qx "WantedBy=timers.target" "$timer" || { echo "FAIL WantedBy= of $timer"; fail=1; }
if command -v systemd-analyze >/dev/null; then
        out=$(cd "$dest$unitdir" && systemd-analyze verify --man=no "$timer" 2>&1) ||
                { echo "FAIL systemd-analyze verify $timer: $out"; fail=1; }
fi

# The sandboxes' first process is alone in its directory (dockerd mounts all of it
# into every sandbox) and static (it runs in any image).
[ "$(ls -A "$dest$libexecdir/xagent-sandbox-init")" = xagent-sandbox-init ] ||
        { echo "FAIL $libexecdir/xagent-sandbox-init holds more than the init"; fail=1; }
file -L "$dest$libexecdir/xagent-sandbox-init/xagent-sandbox-init" | grep -q 'statically linked' ||
        { echo "FAIL xagent-sandbox-init is not statically linked"; fail=1; }

# The sysusers.d file makes the group that the polkit rule trusts.
mkdir -p "$dest/sysusers-root/etc"
systemd-sysusers --root="$dest/sysusers-root" - <"$dest$sysusersdir/xagent-sandboxd.conf" >/dev/null 2>&1 ||
        { echo "FAIL systemd-sysusers refused $sysusersdir/xagent-sandboxd.conf"; fail=1; }
if grep -q '^xagent-sandbox:' "$dest/sysusers-root/etc/group" 2>/dev/null &&
   grep -q 'isInGroup("xagent-sandbox")' "$dest$datadir/polkit-1/rules.d/50-xagent-sandbox.rules"; then
        echo "ok   systemd-sysusers creates the group xagent-sandbox of the polkit rule"
else
        echo "FAIL systemd-sysusers did not create the group xagent-sandbox of the polkit rule"
        fail=1
fi
rm -rf "$dest/sysusers-root"

# Nothing unexpected: every installed file is one of the above.
count=$(find "$dest" -type f | wc -l)
[ "$count" -eq $expected ] || { echo "FAIL $count files installed, expected $expected:"; find "$dest" -type f; fail=1; }

exit $fail
