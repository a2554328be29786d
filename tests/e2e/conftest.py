# SPDX-License-Identifier: LGPL-2.1-or-later
"""pytest fixtures for the end-to-end suite: one stack (private bus + polkitd) per session."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import stack as e2e  # noqa: E402

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
