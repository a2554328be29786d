# SPDX-License-Identifier: LGPL-2.1-or-later
"""docs/recipes.md, run for real: its Gio example (a captured run with bytes on stdin,
a streamed run through a pipe, a detached process read and killed) and its
python3-dbus snippet, as the member against a sandbox of its own; what the example
prints is what the page shows."""

import os
import re

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def block(text, after, lang):
    m = re.compile(r"^```%s\n(.*?)^```" % re.escape(lang), re.S | re.M).search(text, text.index(after))
    assert m, (after, lang)
    return m.group(1)


@pytest.fixture(scope="module")
def page():
    with open(os.path.join(ROOT, "docs", "recipes.md")) as f:
        return f.read()


@pytest.fixture(scope="module")
def box(stack, docker_image):
    yield from h.running_sandbox(stack, "recipe")


def run_python(stack, code, name):
    code = code.replace('NAME = "work"', f'NAME = "{name}"').replace('"work"', f'"{name}"')
    return stack.run_as(MEMBER, ["/usr/bin/python3", "-c", code], timeout=120)


def test_the_gio_example_prints_what_the_page_shows(stack, sandboxd, page, box):
    r = run_python(stack, block(page, "## A Gio example", "python"), box)
    assert r.returncode == 0, r.stderr
    assert r.stdout == block(page, "It prints:", "text")
    # Its detached process was killed: nothing of it runs.
    out = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["ps", "-o", "args"], {}]).result[1]
    assert "sleep 600" not in bytes(out).decode()


def test_the_python3_dbus_snippet_runs(stack, sandboxd, page, box):
    r = run_python(stack, block(page, "## python3-dbus traps", "python"), box)
    assert r.returncode == 0, r.stderr
    data = sandboxd.call(MEMBER, "ReadFile", "ssa{sv}", [box, "/tmp/note", {}]).result[0]
    assert bytes(data) == b"x"
