# SPDX-License-Identifier: LGPL-2.1-or-later
"""The examples of README.md and the manual pages, run for real as the member
through the private bus, their shown output compared with what the tools print.

Examples are written for a member of uid 1000 and for the image debian:bookworm (the
Python examples: xagent-sandbox-python:latest, made by tools/make-python-image.sh);
here they run as a member of its own, made for this module and removed after, so that
its lists hold only what the examples made (its uid put in place of 1000, the test
image in place of debian:bookworm), under names of their own (a run shares Docker with
others), with HOME a fresh directory in its home. In shown output `…` stands for anything,
a run of 12 or more hexadecimal digits for as many others (ids, fingerprints), a
time stamp for any, and runs of spaces for any (table columns widen with the names).

A `sh` block: each command (continued with \\), then `# → OUTPUT` lines: what it
prints. A `console` block: `$ COMMAND` lines, the lines below each what it prints
(standard output and error); `shell` runs on a pseudo-terminal with `exit` typed."""

import os
import pwd
import re
import shutil
import subprocess
import uuid

import pytest

import sandbox_helpers as h

USER = "sbx-docs"
GROUP = "xagent-sandbox"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGE = "xagent-sandbox-test:latest"
DOC_UID = "1000"


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def block(text, after, lang):
    """The first ```lang block after the text `after`."""
    start = text.index(after)
    m = re.compile(r"^```%s\n(.*?)^```" % re.escape(lang), re.S | re.M).search(text, start)
    assert m, (after, lang)
    return m.group(1)


def scd_block(text, after):
    """The first ``` block of a scdoc page after `after`, its escapes undone."""
    start = text.index(after)
    m = re.compile(r"^\t*```\n(.*?)^\t*```", re.S | re.M).search(text, start)
    assert m, after
    return "\n".join(line.lstrip("\t") for line in m.group(1).replace("\\\\", "\\").splitlines()) + "\n"


def sh_examples(body):
    """[(command, [expected lines])] of a sh block."""
    out, cmd = [], ""
    for line in body.splitlines():
        if cmd:
            cmd += "\n" + line
        elif line.startswith("# → "):
            out[-1][1].append(line[len("# → "):])
            continue
        elif line.startswith("#") or not line.strip():
            continue
        else:
            cmd = line
        if not cmd.endswith("\\"):
            out.append((cmd, []))
            cmd = ""
    return out


def console_examples(body):
    """[(command, [expected lines])] of a console block."""
    out = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append([line[2:], []])
        elif out and out[-1][0].endswith("\\"):
            out[-1][0] += "\n" + line
        elif out:
            out[-1][1].append(line)
    return [(c, e) for c, e in out]


def pattern(expected):
    """The shown output as a regular expression (see the module's docstring)."""
    rx = ""
    for tok in re.split(r"(…|[0-9a-f]{12,}|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC| +)", expected):
        if tok == "…":
            rx += r".*?"
        elif re.fullmatch(r"[0-9a-f]{12,}", tok):
            rx += r"[0-9a-f]{%d}" % len(tok)
        elif re.fullmatch(r"\d{4}-.* UTC", tok):
            rx += r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+"
        elif tok and tok.strip() == "":
            rx += r" +"
        else:
            rx += re.escape(tok)
    return rx


class Runner:
    def __init__(self, stack, names):
        self.stack = stack
        self.names = {n: f"{n}{uuid.uuid4().hex[:6]}" for n in names}
        self.uid = str(h.uid_of(USER))
        pw = self.pw = pwd.getpwnam(USER)
        self.home = os.path.join(pw.pw_dir, "docs-" + uuid.uuid4().hex[:8])
        os.mkdir(self.home)
        os.chown(self.home, pw.pw_uid, pw.pw_gid)
        self.ctl_dir = os.path.join(stack.build_root, "src", "ctl")

    def rename(self, text):
        for doc, real in self.names.items():
            text = re.sub(r"(?<![A-Za-z0-9/.-])%s(?![A-Za-z0-9])" % re.escape(doc), real, text)
            text = text.replace(f"_3a{doc}\"", f"_3a{real}\"")
            text = re.sub(r"_3a%s\b" % re.escape(doc), "_3a" + real, text)
        return text

    def command(self, cmd):
        cmd = cmd.replace("debian:bookworm", IMAGE).replace("_7e%s_3a" % DOC_UID, "_7e%s_3a" % self.uid)
        return self.rename(cmd)

    def expected(self, lines):
        text = "\n".join(lines).replace("_7e%s_3a" % DOC_UID, "_7e%s_3a" % self.uid)
        text = re.sub(r"(?<![\w.])%s(?![\w.])" % DOC_UID, self.uid, text)
        text = text.replace("alice", USER).replace("sbx-member", USER)
        return self.rename(text)

    def argv(self, cmd):
        env = [f"HOME={self.home}", f"PATH={self.ctl_dir}:/usr/bin:/bin"]
        return ["/usr/bin/env"] + env + ["sh", "-c", cmd + " 2>&1"]

    def run(self, cmd):
        r = self.stack.run_as(USER, self.argv(cmd), timeout=120)
        return r.returncode, r.stdout

    def run_on_terminal(self, cmd, keys=b"exit\r", timeout=60):
        return self.stack.run_on_terminal(USER, self.argv(cmd), keys, prompts=(b"$ ",), timeout=timeout,
                                          path="/usr/bin:/bin", controlling=True)

    def check(self, cmd, expected, interactive=False):
        real_cmd = self.command(cmd)
        want = self.expected(expected)
        if interactive:
            code, out = self.run_on_terminal(real_cmd)
            assert code == 0, (cmd, out)
            # The prompt is drawn again here (no terminal answers the shell's cursor
            # query): every line shown but the last, then the prompt.
            lines = [line for line in want.splitlines()[:-1] if line]
            got = [line for line in out.splitlines() if line]
            assert got[:len(lines)] == lines, (cmd, out)
            assert want.splitlines()[-1].split(" $ ")[0] + " $ " in out, (cmd, out)
            return
        code, out = self.run(real_cmd)
        # An example that shows a failure fails (exit status 1); one that shows its
        # exit status does not end with it.
        shows_error = re.match(r'xagent-sandboxctl: |\{"error"', want)
        if "echo \"exit $?\"" not in cmd:
            assert code == (1 if shows_error else 0), (cmd, code, out)
        assert re.fullmatch(pattern(want), out.rstrip("\n"), re.S), (cmd, want, out)

    def mkdir(self, rel):
        path = os.path.join(self.home, rel)
        os.makedirs(path)
        os.chown(path, self.pw.pw_uid, self.pw.pw_gid)

    def cleanup(self):
        for name in self.names.values():
            self.run(f"xagent-sandboxctl --no-ask-password delete {name}; "
                     f"xagent-sandboxctl --no-ask-password delete-snapshot {name}")
        shutil.rmtree(self.home, ignore_errors=True)


@pytest.fixture(scope="module")
def docs_user():
    subprocess.run(["userdel", "-r", USER], capture_output=True)
    subprocess.run(["useradd", "-m", "-G", GROUP, USER], check=True)
    try:
        yield USER
    finally:
        subprocess.run(["userdel", "-r", USER], capture_output=True)


@pytest.fixture
def runner(stack, sandboxd, docs_user):
    made = []

    def make(*names):
        r = Runner(stack, names)
        made.append(r)
        return r
    yield make
    for r in made:
        r.cleanup()


def run_sh(r, body):
    examples = sh_examples(body)
    assert examples
    for cmd, expected in examples:
        if expected:
            r.check(cmd, expected)
        else:
            code, out = r.run(r.command(cmd))
            assert code == 0 and out == "", (cmd, out)


def run_console(r, body):
    examples = console_examples(body)
    assert examples
    for cmd, expected in examples:
        r.check(cmd, expected, interactive="xagent-sandboxctl shell" in cmd)


def test_readme_quick_tour(runner):
    r = runner("work")
    run_console(r, block(read("README.md"), "A quick tour", "console"))


def test_readme_busctl_examples(runner):
    r = runner("work", "v1")
    r.mkdir("project")
    run_sh(r, block(read("README.md"), "## The API at a glance", "sh"))


def test_readme_ctl_session(runner):
    r = runner("demo", "demo-snapshot")
    r.mkdir("demo-workspace")
    run_console(r, block(read("README.md"), "An example session", "console"))


def test_bus_man_page_examples(runner):
    r = runner("work")
    r.mkdir("project")
    page = read("man/org.xagent.Sandbox1.7.scd")
    run_sh(r, scd_block(page, "# EXAMPLES") + "busctl call org.xagent.Sandbox1 /org/xagent/Sandbox1 "
           "org.xagent.Sandbox1.Manager DeleteSandbox s work\n")


def test_ctl_man_page_tour(runner):
    r = runner("work")
    r.mkdir("project")
    r.run("echo hello > ~/project/notes.txt")
    run_console(r, scd_block(read("man/xagent-sandboxctl.1.scd"), "# DESCRIPTION"))


def test_ctl_man_page_examples(runner):
    r = runner("demo", "demo-v1")
    r.mkdir("demo")
    page = read("man/xagent-sandboxctl.1.scd")
    run_console(r, scd_block(page, "# EXAMPLES"))
    run_console(r, scd_block(page, "Save it, stop it"))


def words_of(text):
    return set(re.findall(r"[a-z][a-z0-9_]+", text))


def test_every_inspection_and_usage_key_is_documented(stack, sandboxd, cleanup):
    """The keys InspectSandbox and GetSandboxUsage really return (a sandbox with a
    published port, so bound_ports is there) are each named in the XML's comment of
    the method and in org.xagent.Sandbox1(7)'s paragraph about it."""
    name = cleanup.sandbox(h.unique("dockeys"))
    sandboxd.create(h.MEMBER, name, h.spec(ports=[(0, 8080)])).result
    inspection = set(sandboxd.inspect(h.MEMBER, name).result[0])
    usage = set(sandboxd.call(h.MEMBER, "GetSandboxUsage", "s", [name]).result[0])
    assert "bound_ports" in inspection and "pids" in usage
    xml = read("dbus/org.xagent.Sandbox1.Manager.xml")
    page = read("man/org.xagent.Sandbox1.7.scd")
    for method, keys in (("InspectSandbox", inspection), ("GetSandboxUsage", usage)):
        comment = re.search(r"<!-- %s:(.*?)-->" % method, xml, re.S).group(1)
        assert keys - words_of(comment) == set(), (method, keys - words_of(comment))
        paragraph = re.search(r"\*%s\(\)\* returns(.*?)(?:\n\n|\*[A-Z]\w+\(\)\*)" % method, page, re.S).group(1)
        assert keys - words_of(paragraph) == set(), (method, keys - words_of(paragraph))


def test_docs_agree_a_new_member_needs_no_new_login():
    """What test_group_membership.py shows of polkitd, said once and the same way."""
    for rel in ("README.md", "man/org.xagent.Sandbox1.7.scd", "docs/api.md", "docs/security.md"):
        text = " ".join(read(rel).split())
        assert not re.search(r"then log in again|must log in again|needs? (a new|to) log", text), rel
    assert "need not log in again" in " ".join(read("README.md").split())
    assert "without a new login" in " ".join(read("man/org.xagent.Sandbox1.7.scd").split())


# ---- the Python examples ---------------------------------------------------------------

PYTHON_IMAGE = "xagent-sandbox-python:latest"
PYTHON_EXAMPLES = {
    # page: (the heading before its example, the sandbox it makes, lines it prints)
    "README.md": ("## From Python", "hello", [r"GNU Make [0-9.]+", r"b'done\\n' \[\('127\.0\.0\.1', \d+, 8000\)\] \d+"]),
    "docs/python.md": ("# The Python client", "project", [r"0 42", r"b'done\\n'", r"\[\('127\.0\.0\.1', \d+, 8000\)\]"]),
}


@pytest.fixture(scope="module")
def python_image():
    """xagent-sandbox-python:latest, made by tools/make-python-image.sh when missing."""
    if not h.docker_image_exists(PYTHON_IMAGE):
        subprocess.run([os.path.join(ROOT, "tools", "make-python-image.sh")], check=True, timeout=3600)
    assert h.docker_image_exists(PYTHON_IMAGE)
    return PYTHON_IMAGE


@pytest.mark.parametrize("page", sorted(PYTHON_EXAMPLES))
def test_python_example_runs_as_written(stack, sandboxd, docs_user, python_image, page):
    """The page's Python example, unchanged, as a member (its own sandbox name, so two
    examples in a row do not collide), against the Python image the README names."""
    after, name, want = PYTHON_EXAMPLES[page]
    code = block(read(page), after, "python")
    assert PYTHON_IMAGE in code and f'"{name}"' in code, code
    lib = os.path.join(stack.tmp, "docs-pylib")
    if not os.path.isdir(lib):
        shutil.copytree(os.path.join(ROOT, "python", "xagent_sandbox"), os.path.join(lib, "xagent_sandbox"))
        for dirpath, _, _ in os.walk(lib):
            os.chmod(dirpath, 0o755)
    path = os.path.join(stack.tmp, f"docs-example-{uuid.uuid4().hex[:6]}.py")
    with open(path, "w") as f:
        f.write(code)
    os.chmod(path, 0o644)
    ctl = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    try:
        r = stack.run_as(USER, ["/usr/bin/env", f"PYTHONPATH={lib}", "/usr/bin/python3", path], timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        for line in want:
            assert re.search(r"^%s$" % line, r.stdout, re.M), (line, r.stdout)
    finally:
        stack.run_as(USER, [ctl, "--no-ask-password", "delete", name], timeout=120)
        shutil.rmtree(os.path.join(h.home_of(USER), "project"), ignore_errors=True)
