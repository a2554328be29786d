# SPDX-License-Identifier: LGPL-2.1-or-later
"""The daemon refuses to start without the sandboxes' first process
(--init-dir DIR/xagent-sandbox-init, a regular executable file): every create needs
it, so a missing one is said at start-up, with the path and the option to fix it,
rather than at the first create."""

import os
import subprocess

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER


def bad_init_dirs(tmp):
    """(directory, what is wrong with it): missing, empty, a directory in place of the
    program, a program that is not executable."""
    empty = os.path.join(tmp, "init-empty")
    os.makedirs(empty, exist_ok=True)
    dir_in_place = os.path.join(tmp, "init-dir-in-place")
    os.makedirs(os.path.join(dir_in_place, "xagent-sandbox-init"), exist_ok=True)
    not_exec = os.path.join(tmp, "init-not-exec")
    os.makedirs(not_exec, exist_ok=True)
    with open(os.path.join(not_exec, "xagent-sandbox-init"), "w") as f:
        f.write("#!/bin/sh\n")
    os.chmod(os.path.join(not_exec, "xagent-sandbox-init"), 0o644)
    return [(os.path.join(tmp, "no-such-dir"), "is missing"), (empty, "is missing"),
            (dir_in_place, "is not an executable file"), (not_exec, "is not an executable file")]


def test_daemon_refuses_to_start_without_its_init(stack, tmp_path):
    state = tmp_path / "state"
    stack.stop_daemon()         # an earlier test's daemon would own the name
    for init_dir, why in bad_init_dirs(str(tmp_path)):
        r = subprocess.run([stack.daemon_binary, "--state-dir", str(state), "--idle-timeout", "0",
                            "--docker-host", "unix:///nonexistent.sock", "--init-dir", init_dir],
                           capture_output=True, text=True, timeout=20,
                           env={"DBUS_SYSTEM_BUS_ADDRESS": stack.address})
        assert r.returncode == 1, (init_dir, r.stderr)
        program = os.path.join(init_dir, "xagent-sandbox-init")
        assert f"first process {program} {why}" in r.stderr, r.stderr
        assert "--init-dir" in r.stderr, r.stderr
        # Nothing was started or made: no state directory, no name on the bus.
        assert not state.exists()
        assert not stack.name_has_owner(h.BUS_NAME)


def test_activation_without_init_fails_the_first_call(stack, sandboxd, tmp_path):
    """Through D-Bus activation: the first call of all (a read) fails, and the bus log
    carries the daemon's reason."""
    init_dir = str(tmp_path / "nowhere")
    argv = stack.default_daemon_argv()
    argv[argv.index("--init-dir") + 1] = init_dir
    mark = h.LogMark(stack)
    with h.daemon_argv(stack, argv):
        code, _, err = sandboxd.busctl(MEMBER, "ListSandboxes", interactive=False)
        assert code != 0 and "exited with status 1" in err, err
        log = mark.new()
        assert f"{init_dir}/xagent-sandbox-init is missing" in log and "--init-dir" in log, log
    # The default command line (a real init) works again.
    code, _, err = sandboxd.busctl(MEMBER, "ListSandboxes", interactive=False)
    assert code == 0, err
