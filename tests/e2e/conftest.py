# SPDX-License-Identifier: LGPL-2.1-or-later
"""pytest fixtures for the end-to-end suite: one stack (private bus + polkitd) per session."""

import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import stack as e2e  # noqa: E402

# Test modules read the users' homes at import (collection) time: on a fresh machine
# they must exist before pytest imports them, not only once the stack starts.
e2e.ensure_users()

SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD_ROOT = os.environ.get("SBX_BUILD_ROOT", os.path.join(SOURCE_ROOT, "build"))


@pytest.fixture(scope="session")
def stack():
    """The running stack. Teardown stops everything and asserts that the host's polkit
    directories are byte-for-byte what they were before."""
    s = e2e.Stack(SOURCE_ROOT, BUILD_ROOT,
                  keep_tmp=bool(os.environ.get("SBX_E2E_KEEP_TMP"))).start()
    try:
        yield s
    finally:
        s.stop()
    assert s.host_untouched(), "the host's polkit directories changed during the run"


IMAGE_SETUP = os.path.join(SOURCE_ROOT, "tests", "setup-docker.sh")


@pytest.fixture(scope="session")
def docker_image():
    """The test image (and a dockerd answering): tests/setup-docker.sh when missing."""
    import subprocess
    import sandbox_helpers as h
    try:
        present = h.docker_image_exists(h.TEST_IMAGE)
    except OSError:
        present = False
    if not present:
        subprocess.run(["/bin/bash", IMAGE_SETUP], check=True)
    assert h.docker_image_exists(h.TEST_IMAGE)
    return h.TEST_IMAGE


@pytest.fixture(scope="session")
def sandboxd(stack, docker_image):
    """Calls to org.xagent.Sandbox1 as a user. Teardown: nothing this run made is left in
    Docker (every name starts with the run's PREFIX)."""
    import sandbox_helpers as h
    yield h.Sandboxd(stack)
    status, containers = h.docker("GET", "/containers/json?all=1")
    left = [c["Names"] for c in containers
            if h.plain(c.get("Labels", {}).get("xagent.sandbox.name", "")).startswith(h.PREFIX)]
    status, images = h.docker("GET", "/images/json")
    left += [t for i in images for t in (i.get("RepoTags") or [])
             if re.match(re.escape(h.SNAPSHOT_REPOSITORY) + r":([0-9]+-)?" + re.escape(h.PREFIX), t)]
    assert not left, f"left behind: {left}"


@pytest.fixture
def cleanup(sandboxd):
    """Registers what a test creates; removes it afterwards (see sandbox_helpers.Cleanup)."""
    import sandbox_helpers as h
    c = h.Cleanup(sandboxd)
    yield c
    c.run()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report carries the end of the service's own log (its stderr goes
    to the private bus's log): what the daemon said is what explains a failure seen
    only in CI."""
    outcome = yield
    report = outcome.get_result()
    s = item.funcargs.get("stack") if hasattr(item, "funcargs") else None
    if report.failed and s is not None:
        lines = s.log("dbus-daemon", tail=None).splitlines()
        report.sections.append(("the service's log (its last 80 lines)", "\n".join(lines[-80:])))
