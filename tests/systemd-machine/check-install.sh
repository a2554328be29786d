#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Follows the README's "Installing on a systemd machine" literally, on a machine where
# systemd is PID 1: a Debian 12 container booted with systemd-nspawn. Run as root.
#
#   1. On the host: the Debian package, built by tools/build-deb.sh
#      (dpkg-buildpackage -us -uc -b in a clean copy of the tree) and checked by
#      lintian (no errors).
#   2. A minimal bookworm root file system with systemd, dbus, polkitd, man-db,
#      bash-completion and the build dependencies, made once by debootstrap and kept
#      in $SBX_ROOTFS_CACHE (rebuilt only when missing, incomplete or made for
#      another package list).
#   3. The machine boots from an overlay on that cache (the cache stays clean), with
#      the host's Docker socket at /run/docker.sock, the package in /usr/src/deb and a
#      copy of this source tree in /usr/src/xagent-sandboxd. The test user's home is
#      the same directory on the host and in the machine, so that the host's dockerd
#      finds the volume.
#   4. Inside, as root: `apt-get install ./xagent-sandboxd_*.deb` and the README's
#      setup (the user and the group; nothing else); then, as the ordinary user:
#      ListSandboxes (which activates the service through systemd), CreateSandbox
#      with an rw volume below the 0700 home, VerifySandbox, DeleteSandbox, the manual
#      pages and the completion (of the live service's sandbox names). In between,
#      the running service is checked for the unit's hardening, and at the end for
#      its idle exit.
#   5. The package purged (the running service stopped with it), then the README's
#      source installation: meson, ninja, meson install, and ListSandboxes again.
#
# Prints every step and its output; exits non-zero on the first failure. Cleans up
# the machine, its overlay, the test home and the containers it made.
# Environment: SBX_ROOTFS_CACHE (default /var/cache/xagent-sandboxd/bookworm-rootfs),
# SBX_DEBIAN_MIRROR (default: debootstrap's), SBX_BOOT_TIMEOUT (s, default 120).

set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${SBX_ROOTFS_CACHE:-/var/cache/xagent-sandboxd/bookworm-rootfs}
MIRROR=${SBX_DEBIAN_MIRROR:-}
BOOT_TIMEOUT=${SBX_BOOT_TIMEOUT:-120}
MACHINE=xagent-sysd-check
STATE=/run/xagent-sysd-check.pid          # the nspawn of a run, for a later run to end
USER_NAME=sbxcheck
USER_HOME=/home/$USER_NAME                # the same path on the host and in the machine
HOME_MARK=.xagent-sysd-check              # marks a host $USER_HOME as ours to remove
# The sandboxes' init, for the host's dockerd: the same path on the host and in the
# machine (not below /tmp or /var/tmp, which the unit makes private).
INIT_SHARED=/run/xagent-sysd-check-init
SANDBOX=xagent-systemd-check
IMAGE=xagent-sandbox-test:latest
DEST=org.xagent.Sandbox1
OBJ=/org/xagent/Sandbox1
IFACE=org.xagent.Sandbox1.Manager

# What the machine needs: systemd as init, the bus, polkit, man and bash-completion
# (to read the package's pages and complete), and the README's build dependencies
# for the source installation (check and python3 too, so that the tree could also
# run its tests). The package's own dependencies are among these: the machine has no
# network, so apt-get installs the .deb offline.
PACKAGES=(systemd systemd-sysv dbus polkitd pkexec man-db bash-completion
          meson ninja-build gcc libc6-dev pkg-config scdoc
          libsystemd-dev libcurl4-gnutls-dev libjson-c-dev libsqlite3-dev libgnutls28-dev
          check python3
          nftables)                             # the package's Depends (egress), installed offline
COMPLETE=.xagent-rootfs-complete          # in the cache: the package list, written last

START=$SECONDS
say() { printf '[%4ds] %s\n' $((SECONDS - START)) "$*"; }
die() { say "FAIL: $*" >&2; exit 1; }
step() { printf '\n[%4ds] === %s\n' $((SECONDS - START)) "$*"; }

[ "$(id -u)" -eq 0 ] || die "must run as root"

# ---------------------------------------------------------------- host tools, Docker
step "host: debootstrap, systemd-nspawn, dockerd and $IMAGE"
missing=()
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v systemd-nspawn >/dev/null || missing+=(systemd-container)
if [ ${#missing[@]} -gt 0 ]; then
        say "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q --no-install-recommends "${missing[@]}" ||
                { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; }
fi
"$SRC/tests/setup-docker.sh"
DOCKER=docker
docker version >/dev/null 2>&1 || DOCKER=/usr/bin/docker
DOCKER_SOCK=$(readlink -f /var/run/docker.sock)
[ -S "$DOCKER_SOCK" ] || die "no Docker socket at /var/run/docker.sock"

remove_containers() {
        local ids
        # The test's sandbox in any owner's names: "$SANDBOX" or "~<uid>:$SANDBOX".
        ids=$("$DOCKER" ps -a --filter label=xagent.managed=true \
                --format '{{.ID}} {{.Label "xagent.sandbox.name"}}' |
              awk -v n="$SANDBOX" '$2 == n || $2 ~ ("^~[0-9]+:" n "$") { print $1 }')
        if [ -n "$ids" ]; then
                say "removing container(s) $(echo $ids)"
                "$DOCKER" rm -f $ids >/dev/null
        fi
}

# ---------------------------------------------------------------- leftovers of a run
# A run that was killed may have left its machine, overlay, home and container.
stop_nspawn() {         # stop_nspawn PID: orderly poweroff (SIGTERM), then SIGKILL
        local pid=$1 i
        kill -TERM "$pid" 2>/dev/null || return 0
        for ((i = 0; i < 60; i++)); do
                kill -0 "$pid" 2>/dev/null || return 0
                sleep 0.5
        done
        say "machine did not power off within 30 s; killing nspawn $pid"
        kill -KILL "$pid" 2>/dev/null || true
        sleep 1
}

cleanup_stale() {
        local pid dir
        if [ -s "$STATE" ]; then
                read -r pid dir <"$STATE" || true
                if [ -n "${pid:-}" ] && grep -qa -- "-M.$MACHINE" "/proc/$pid/cmdline" 2>/dev/null; then
                        say "stopping the machine of an earlier run (nspawn $pid)"
                        stop_nspawn "$pid"
                fi
                if [ -n "${dir:-}" ] && [ -d "$dir" ]; then
                        mountpoint -q "$dir/root" && umount "$dir/root"
                        rm -rf "$dir"
                fi
                rm -f "$STATE"
        fi
        if [ -e "$USER_HOME" ]; then
                [ -e "$USER_HOME/$HOME_MARK" ] ||
                        die "$USER_HOME exists on the host and is not this test's: remove it or rename the test user"
                rm -rf "$USER_HOME"
        fi
        remove_containers
        rm -rf "$INIT_SHARED"
}

step "host: leftovers of an earlier run"
cleanup_stale

# ---------------------------------------------------------------- the package
step "host: the Debian package (tools/build-deb.sh --lintian)"
DEBDIR=$(mktemp -d /var/tmp/xagent-sysd-deb.XXXXXX)
trap 'rm -rf "$DEBDIR"' EXIT
t0=$SECONDS
DEB=$("$SRC/tools/build-deb.sh" --lintian "$DEBDIR" | tee /dev/stderr | tail -n 1) ||
        die "the package did not build, or lintian found errors"
[ -f "$DEB" ] || die "no package: $DEB"
say "built and checked in $((SECONDS - t0)) s: $(basename "$DEB") ($(du -h "$DEB" | cut -f1))"

# ---------------------------------------------------------------- the root file system
nspawn_chroot() {       # nspawn_chroot DIR CMD...: a command in DIR, not booted
        systemd-nspawn --quiet --register=no --keep-unit --pipe -D "$@"
}

rootfs_complete() {
        [ -f "$CACHE/$COMPLETE" ] && [ "$(cat "$CACHE/$COMPLETE")" = "${PACKAGES[*]}" ]
}

build_rootfs() {
        local new=$CACHE.new
        rm -rf "$new"
        mkdir -p "$(dirname "$CACHE")"
        say "debootstrap bookworm into $new"
        debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus \
                bookworm "$new" ${MIRROR:+"$MIRROR"} >"$new.log" 2>&1 ||
                { tail -n 30 "$new.log"; die "debootstrap failed (log: $new.log)"; }
        say "installing ${PACKAGES[*]}"
        nspawn_chroot "$new" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
                apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" >>"$new.log" 2>&1 ||
                { tail -n 30 "$new.log"; die "apt-get install in the root file system failed (log: $new.log)"; }
        nspawn_chroot "$new" apt-get clean
        echo "${PACKAGES[*]}" >"$new/$COMPLETE"
        rm -rf "$CACHE" "$new.log"
        mv "$new" "$CACHE"
}

step "root file system: $CACHE"
exec 9>"$CACHE.lock" 2>/dev/null || { mkdir -p "$(dirname "$CACHE")"; exec 9>"$CACHE.lock"; }
flock 9
if rootfs_complete; then
        say "cached and complete ($(du -sh "$CACHE" | cut -f1))"
else
        t0=$SECONDS
        build_rootfs
        say "built in $((SECONDS - t0)) s ($(du -sh "$CACHE" | cut -f1))"
fi
flock -u 9

# ---------------------------------------------------------------- the machine
WORK=$(mktemp -d /var/tmp/xagent-sysd-check.XXXXXX)
ROOT=$WORK/root
NSPAWN=
LEADER=

cleanup() {
        local rc=$?
        trap - EXIT
        step "cleanup"
        remove_containers || true
        if [ -n "$NSPAWN" ]; then
                say "powering off the machine (nspawn $NSPAWN)"
                stop_nspawn "$NSPAWN"
                wait "$NSPAWN" 2>/dev/null || true
        fi
        mountpoint -q "$ROOT" && umount "$ROOT"
        rm -rf "$WORK" "$STATE" "$DEBDIR" "$INIT_SHARED"
        [ -e "$USER_HOME/$HOME_MARK" ] && rm -rf "$USER_HOME"
        if [ $rc -eq 0 ]; then
                say "PASS: the README's installation works on a systemd machine ($((SECONDS - START)) s)"
        else
                say "FAIL (exit $rc)"
        fi
        exit $rc
}
trap cleanup EXIT

step "machine: overlay on the cache, source tree, test home, boot"
mkdir -p "$WORK"/{upper,work,root}
mount -t overlay overlay -o "lowerdir=$CACHE,upperdir=$WORK/upper,workdir=$WORK/work" "$ROOT"
# A copy of the tree, without Git's data and without build directories.
excludes=(--exclude=./.git)
for d in "$SRC"/*/; do
        [ -d "$d/meson-private" ] && excludes+=("--exclude=./$(basename "$d")")
done
mkdir -p "$ROOT/usr/src/xagent-sandboxd"
tar -C "$SRC" "${excludes[@]}" --exclude=__pycache__ -c . | tar -C "$ROOT/usr/src/xagent-sandboxd" -x
say "source tree copied to /usr/src/xagent-sandboxd ($(du -sh "$ROOT/usr/src/xagent-sandboxd" | cut -f1))"
mkdir -p "$ROOT/usr/src/deb"
cp "$DEB" "$ROOT/usr/src/deb/"
DEB_IN=/usr/src/deb/$(basename "$DEB")
# What an interactive bash does on TAB, as a script (systemd-run would expand the
# ${...} of a command line): bash-completion loads the completion on demand, which
# completes the words given, the last one being completed.
cat >"$ROOT/usr/src/complete.sh" <<'EOF_COMPLETE'
source /usr/share/bash-completion/bash_completion
__load_completion xagent-sandboxctl || { echo "no completion for xagent-sandboxctl" >&2; exit 1; }
read -r _ _ function _ < <(complete -p xagent-sandboxctl | sed 's/.* -F \([^ ]*\) .*/x x \1 x/')
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
"$function" xagent-sandboxctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
EOF_COMPLETE
mkdir -m 0700 "$USER_HOME"
mkdir -m 0755 "$INIT_SHARED"
touch "$USER_HOME/$HOME_MARK"
echo "$$ $WORK" >"$STATE.tmp"

# The unified cgroup hierarchy in the machine, as on a Debian 12 host, whatever the
# host has (it may be hybrid). IPAddressDeny='s BPF filter is still not applied in a
# container (systemd skips it silently); PrivateNetwork= is what the checks verify.
SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 \
systemd-nspawn --boot --register=no --keep-unit --private-network -M "$MACHINE" -D "$ROOT" \
        --bind="$DOCKER_SOCK:/run/docker.sock" --bind="$USER_HOME" --bind="$INIT_SHARED" \
        >"$WORK/console.log" 2>&1 </dev/null &
NSPAWN=$!
echo "$NSPAWN $WORK" >"$STATE"
rm -f "$STATE.tmp"

for ((i = 0; i < 100; i++)); do
        LEADER=$(cat /proc/"$NSPAWN"/task/*/children 2>/dev/null | awk '{print $1}')
        [ -n "$LEADER" ] && [ "$(cat /proc/"$LEADER"/comm 2>/dev/null)" = systemd ] && break
        LEADER=
        kill -0 "$NSPAWN" 2>/dev/null || break
        sleep 0.1
done
[ -n "$LEADER" ] || { cat "$WORK/console.log"; die "the machine did not start systemd"; }
say "nspawn $NSPAWN, the machine's PID 1 is host PID $LEADER"

in_ns() {               # a command in the machine's namespaces (not in a unit)
        nsenter -t "$LEADER" -a -- "$@"
}

# Until PID 1 listens on its private socket, systemctl cannot even ask it.
for ((i = 0; i < BOOT_TIMEOUT * 10; i++)); do
        in_ns test -S /run/systemd/private && break
        kill -0 "$NSPAWN" 2>/dev/null || break
        sleep 0.1
done
booted=$(in_ns timeout "$BOOT_TIMEOUT" systemctl is-system-running --wait 2>&1) || true
say "systemctl is-system-running: $booted"
case "$booted" in
running) ;;
*)      in_ns systemctl --failed --no-pager || true
        tail -n 40 "$WORK/console.log"
        die "the machine did not boot to 'running'" ;;
esac
say "PID 1 in the machine: $(in_ns cat /proc/1/comm), $(in_ns systemctl --version | head -n 1)," \
    "/sys/fs/cgroup: $(in_ns stat -fc %T /sys/fs/cgroup)"

# ---------------------------------------------------------------- steps in the machine
# Each command runs as a transient unit of the machine's systemd (systemd-run --pipe),
# as root in the source tree, or as the test user.
show() {                # show ARG...: the command line, quoted where needed
        local a out=
        for a in "$@"; do
                [[ $a =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]] || a="'${a//\'/\'\\\'\'}'"
                out+=" $a"
        done
        echo "${out# }"
}
as_root() {
        echo "# $(show "$@")"
        in_ns systemd-run --quiet --wait --pipe --collect --service-type=exec \
                -p WorkingDirectory=/usr/src/xagent-sandboxd -- "$@"
}
as_user() {
        echo "$USER_NAME\$ $(show "$@")"
        in_ns systemd-run --quiet --wait --pipe --collect --service-type=exec \
                -p User="$USER_NAME" -p WorkingDirectory="$USER_HOME" -- "$@"
}
expect_output() {       # expect_output REGEX OUTPUT WHAT
        grep -Eq -- "$1" <<<"$2" || die "$3: expected /$1/, got: $2"
}

step "README: install the package (as root)"
# --no-install-recommends: the recommended docker.io is the host's dockerd here.
as_root apt-get install -y -q -o Dpkg::Use-Pty=0 --no-install-recommends "$DEB_IN"
# The machine has a PID namespace of its own, and Docker's containers run on the host:
# a sandbox's network namespace (/proc/PID/ns/net of a host PID, Docker's netns file)
# cannot be reached from in here, so the egress rules could not be loaded and every
# bridge sandbox would fail closed (docs/security.md, "Egress"). The administrator's
# explicit choice of today's behaviour, as a machine like this one would need it:
in_ns sh -c 'mkdir -p /etc/xagent && echo "{ \"egress\": { \"default\": \"open\" } }" >/etc/xagent/sandboxd.json'
out=$(in_ns dpkg-query -W -f='${Status} ${Version}' xagent-sandboxd)
echo "$out"
expect_output '^install ok installed ' "$out" "the package's state"
out=$(in_ns getent group xagent-sandbox || true)
echo "getent group xagent-sandbox: $out"
expect_output '^xagent-sandbox:x:[0-9]+:$' "$out" "the group made by systemd-sysusers in postinst"
out=$(in_ns systemctl show -p LoadState -p ActiveState -p UnitFileState xagent-sandboxd.service)
echo "$out"
expect_output '^LoadState=loaded$' "$out" "the unit is known to systemd"
expect_output '^ActiveState=inactive$' "$out" "the service is not started by installation"
# The deadlines' timer (docs/lifecycle.md): installed, valid, enabled by the package.
out=$(in_ns systemctl show -p LoadState -p UnitFileState -p Unit xagent-sandboxd-deadlines.timer)
echo "$out"
expect_output '^LoadState=loaded$' "$out" "the deadlines timer is known to systemd"
expect_output '^UnitFileState=enabled$' "$out" "the deadlines timer is enabled by the package"
expect_output '^Unit=xagent-sandboxd\.service$' "$out" "the deadlines timer starts the service"
in_ns systemd-analyze verify /lib/systemd/system/xagent-sandboxd-deadlines.timer || die "the deadlines timer does not verify"
as_root useradd --no-create-home --home-dir "$USER_HOME" --shell /bin/bash "$USER_NAME"
as_root usermod -aG xagent-sandbox "$USER_NAME"
# The home is the host's directory (bound at the same path): make it the user's, 0700.
as_root chown "$USER_NAME:" "$USER_HOME"
as_root chmod 0700 "$USER_HOME"
as_root id "$USER_NAME"
as_root stat -c '%A %U:%G %n' "$USER_HOME"
# Names belong to their owner: the user's sandbox carries "~<uid>:<name>" as its Docker
# name label (no user namespace here: the uid is the host's too).
SANDBOX_LABEL="~$(stat -c %u "$USER_HOME"):$SANDBOX"
# The daemon hands dockerd its init directory as a path, and dockerd is the host's:
# the packaged init is copied to a directory that has the same path on both sides,
# and a runtime drop-in points the daemon at it (the only change to the package).
as_root cp /usr/libexec/xagent-sandbox-init/xagent-sandbox-init "$INIT_SHARED/"
as_root mkdir -p /run/systemd/system/xagent-sandboxd.service.d
as_root sh -c "printf '[Service]\nExecStart=\nExecStart=/usr/libexec/xagent-sandboxd --init-dir $INIT_SHARED\n' \
        >/run/systemd/system/xagent-sandboxd.service.d/10-init-dir.conf"
as_root systemctl daemon-reload

step "as $USER_NAME: ListSandboxes (activates the service)"
out=$(as_user busctl call $DEST $OBJ $IFACE ListSandboxes)
echo "$out"
expect_output '^a\(ssuso\) 0$' "$out" "ListSandboxes"

step "the service was started by systemd, through bus activation"
as_root systemctl status --no-pager xagent-sandboxd.service || die "xagent-sandboxd.service is not active"
out=$(in_ns systemctl show -p ActiveState -p SubState -p Type -p MainPID -p ControlGroup xagent-sandboxd.service)
echo "$out"
expect_output '^ActiveState=active$' "$out" "service state"
MAINPID=$(sed -n 's/^MainPID=//p' <<<"$out")
out=$(in_ns journalctl -b --no-pager -o cat -u dbus.service | grep "Activating via systemd: service name='$DEST'" || true)
echo "$out"
expect_output "unit='xagent-sandboxd\.service' requested by '[^']*' \(uid=[1-9]" "$out" "bus activation"

step "the unit's hardening, as the running service has it (machine PID $MAINPID)"
status=$(in_ns grep -E '^(Uid|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' "/proc/$MAINPID/status")
echo "$status"
expect_output '^CapBnd:[[:space:]]+0000000000281004$' "$status" "bounding set (CAP_DAC_READ_SEARCH; CAP_NET_ADMIN, CAP_SYS_PTRACE, CAP_SYS_ADMIN for egress)"
expect_output '^CapEff:[[:space:]]+0000000000281004$' "$status" "effective capabilities"
expect_output '^NoNewPrivs:[[:space:]]+1$' "$status" "NoNewPrivileges="
expect_output '^Seccomp:[[:space:]]+2$' "$status" "SystemCallFilter="
netns=$(in_ns readlink "/proc/$MAINPID/ns/net") pid1netns=$(in_ns readlink /proc/1/ns/net)
say "network namespace: service $netns, PID 1 $pid1netns"
[ "$netns" != "$pid1netns" ] || die "PrivateNetwork=: the service shares PID 1's network namespace"
mounts=$(in_ns nsenter -t "$MAINPID" -m -- sh -c \
        "for p in /home $USER_HOME /usr /var/lib/xagent-sandbox; do findmnt -n -o TARGET,OPTIONS -T \$p; done")
echo "$mounts"
expect_output "^$USER_HOME[[:space:]]+ro," "$mounts" "ProtectHome=read-only (the home as the service sees it)"
expect_output '^/usr[[:space:]]+ro,|^/[[:space:]]+ro,' "$mounts" "ProtectSystem=strict"
expect_output '^/var/lib/xagent-sandbox[[:space:]]+rw,' "$mounts" "StateDirectory="
in_ns systemd-analyze security --no-pager xagent-sandboxd.service | tail -n 1
# Anything systemd could not apply of the unit it says as a warning of the boot.
warnings=$(in_ns journalctl -b --no-pager -o cat -p warning | grep -i sandboxd || true)
[ -z "$warnings" ] || die "systemd warned while starting the service: $warnings"
say "no warning from systemd about the unit"

step "as $USER_NAME: CreateSandbox with an rw volume below the 0700 home"
as_user mkdir -p "$USER_HOME/project"
as_user sh -c "echo hello >$USER_HOME/project/README"
SPEC=(2 image s "$IMAGE" volumes 'a(sss)' 1 "$USER_HOME/project" /work rw)
out=$(as_user busctl call $DEST $OBJ $IFACE CreateSandbox 'sa{sv}a{sv}' "$SANDBOX" "${SPEC[@]}" 0) ||
        { in_ns journalctl -b --no-pager -u xagent-sandboxd.service | tail -n 20; die "CreateSandbox failed"; }
echo "$out"
expect_output '^os "/org/xagent/Sandbox1/' "$out" "CreateSandbox"

step "host: the container dockerd made"
"$DOCKER" ps -a --filter "label=xagent.sandbox.name=$SANDBOX_LABEL" \
        --format '{{.ID}} {{.Names}} {{.Image}} {{.Status}} owner={{.Label "xagent.sandbox.owner"}}'
mounts=$("$DOCKER" inspect --format '{{range .Mounts}}{{.Type}} {{.Source}} {{.Destination}} rw={{.RW}}{{"\n"}}{{end}}' \
        $("$DOCKER" ps -aq --filter "label=xagent.sandbox.name=$SANDBOX_LABEL"))
echo "$mounts"
expect_output "^bind $USER_HOME/project /work rw=true$" "$mounts" "the container's volume"

step "as $USER_NAME: the completion offers the live service's sandbox names"
out=$(as_user bash --norc /usr/src/complete.sh xagent-sandboxctl inspect "${SANDBOX:0:12}")
echo "$out"
expect_output "^$SANDBOX\$" "$out" "completion of a sandbox name"

step "as $USER_NAME: VerifySandbox, ListSandboxes"
out=$(as_user busctl call $DEST $OBJ $IFACE VerifySandbox 'sa{sv}' "$SANDBOX" "${SPEC[@]}")
echo "$out"
expect_output '^sas "match" 0$' "$out" "VerifySandbox"
out=$(as_user busctl call $DEST $OBJ $IFACE ListSandboxes)
echo "$out"
expect_output "^a\(ssuso\) 1 \"$SANDBOX\" \"[a-z]+\" [0-9]+ \"match\" \"/org/xagent/Sandbox1/" "$out" "ListSandboxes"

step "as $USER_NAME: DeleteSandbox"
as_user busctl call $DEST $OBJ $IFACE DeleteSandbox s "$SANDBOX"
out=$(as_user busctl call $DEST $OBJ $IFACE ListSandboxes)
echo "$out"
expect_output '^a\(ssuso\) 0$' "$out" "ListSandboxes after the delete"
left=$("$DOCKER" ps -aq --filter "label=xagent.sandbox.name=$SANDBOX_LABEL")
[ -z "$left" ] || die "the container is still there after DeleteSandbox: $left"
say "host: no container left"

step "the service's log (journalctl -u xagent-sandboxd)"
log=$(in_ns journalctl -b --no-pager -o short-monotonic -u xagent-sandboxd.service)
echo "$log"
expect_output 'AUDIT .*verb=create .*outcome=' "$log" "an AUDIT line for the create"
expect_output 'AUDIT .*verb=delete .*outcome=' "$log" "an AUDIT line for the delete"

step "as $USER_NAME: the manual pages and the completion of commands"
out=$(as_user man -P cat xagent-sandboxctl | head -n 8)
echo "$out"
expect_output '^ +xagent-sandboxctl - manage verified Docker sandboxes' "$out" "man xagent-sandboxctl"
for page in "8 xagent-sandboxd" "5 sandboxd.json" "7 org.xagent.Sandbox1"; do
        out=$(as_user man -w $page)
        echo "$out"
        expect_output "^/usr/share/man/man${page%% *}/${page#* }\.${page%% *}\.gz$" "$out" "man $page"
done
out=$(as_user bash --norc /usr/src/complete.sh xagent-sandboxctl de)
echo "$out"
expect_output '^delete-snapshot$' "$out" "completion of a command"

step "idle exit: the service stops by itself after 30 s without calls"
# Until it has stopped: "deactivating" is the moment between the name's release and
# the process's end.
for ((i = 0; i < 60; i++)); do
        state=$(in_ns systemctl is-active xagent-sandboxd.service 2>/dev/null || true)
        case "$state" in active|deactivating) sleep 1 ;; *) break ;; esac
done
out=$(in_ns systemctl show -p ActiveState -p Result -p ExecMainStatus xagent-sandboxd.service)
echo "$out"
expect_output '^ActiveState=inactive$' "$out" "state after the idle time"
expect_output '^Result=success$' "$out" "result of the idle exit"

step "control: without CAP_DAC_READ_SEARCH the same create fails (the capability is what reaches the 0700 home)"
as_root sh -c 'printf "[Service]\nCapabilityBoundingSet=\n" >/run/systemd/system/xagent-sandboxd.service.d/50-no-caps.conf'
as_root systemctl daemon-reload
out=$(as_user busctl call $DEST $OBJ $IFACE CreateSandbox 'sa{sv}a{sv}' "$SANDBOX" "${SPEC[@]}" 0 2>&1) &&
        die "CreateSandbox succeeded without the capability: $out"
echo "$out"
expect_output 'Permission denied' "$out" "the refusal without the capability"
status=$(in_ns systemctl show -p MainPID --value xagent-sandboxd.service)
in_ns grep -E '^CapBnd:' "/proc/$status/status"
as_root systemctl stop xagent-sandboxd.service
as_root rm /run/systemd/system/xagent-sandboxd.service.d/50-no-caps.conf
as_root systemctl daemon-reload
left=$("$DOCKER" ps -aq --filter "label=xagent.sandbox.name=$SANDBOX_LABEL")
[ -z "$left" ] || die "the refused create left a container: $left"

step "the package purged: its service stopped with it, its files gone, the group kept"
out=$(as_user busctl call $DEST $OBJ $IFACE ListSandboxes)
echo "$out"
state=$(in_ns systemctl is-active xagent-sandboxd.service || true)
say "xagent-sandboxd.service before the purge: $state"
[ "$state" = active ] || die "the service did not start for the purge to stop it"
as_root apt-get purge -y -q -o Dpkg::Use-Pty=0 xagent-sandboxd
state=$(in_ns systemctl is-active xagent-sandboxd.service || true)
say "xagent-sandboxd.service after the purge: $state"
[ "$state" = inactive ] || die "the purge left the service $state"
for f in /usr/libexec/xagent-sandboxd /lib/systemd/system/xagent-sandboxd.service \
         /usr/share/dbus-1/system.d/org.xagent.Sandbox1.conf /usr/share/man/man1/xagent-sandboxctl.1.gz; do
        in_ns test ! -e "$f" || die "$f is still there after the purge"
done
in_ns getent group xagent-sandbox

step "README: build and install from the source tree (as root)"
as_root meson setup build --prefix=/usr -Dtests=false | tail -n 15
as_root ninja -C build | tail -n 3
as_root meson install -C build
as_root systemctl daemon-reload
as_root systemctl reload dbus
as_root systemd-sysusers
out=$(as_user busctl call $DEST $OBJ $IFACE ListSandboxes)
echo "$out"
expect_output '^a\(ssuso\) 0$' "$out" "ListSandboxes from the source installation"
out=$(in_ns systemctl show -p ActiveState xagent-sandboxd.service)
echo "$out"
expect_output '^ActiveState=active$' "$out" "the source-installed service, activated"
out=$(as_user man -w xagent-sandboxctl)
echo "$out"
expect_output '^/usr/share/man/man1/xagent-sandboxctl\.1$' "$out" "the source installation's manual page"
as_root systemctl stop xagent-sandboxd.service
as_root ninja -C build uninstall | tail -n 1
