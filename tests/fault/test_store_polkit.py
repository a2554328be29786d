# SPDX-License-Identifier: LGPL-2.1-or-later
"""The daemon's own resources failing: its disk full, its store truncated, polkit hung,
and a SIGTERM with work queued."""

import errno
import os
import re
import signal
import time

import fault as F
from fault import MEMBER, ROOT


def fill(path):
    """Writes path until the file system is full (to the last byte)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 20, 1 << 16, 1 << 12, 1 << 8, 1):
            block = b"\0" * size
            while True:
                try:
                    os.write(fd, block)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    break
        os.fsync(fd)
    finally:
        os.close(fd)
    st = os.statvfs(os.path.dirname(path))
    assert st.f_bavail == 0, st


def test_disk_full(f):
    """With the state dir's file system full, a stop and a delete Docker carried out
    are reported as succeeded; a create fails with an error and leaves no container;
    once space is free and the daemon restarted, the store agrees with Docker."""
    f.activate()
    a, b, c = (F.unique("full") for _ in range(3))
    for call in [f.create(MEMBER, a), f.create(MEMBER, b)]:
        assert call.result().ok
    f.assert_settled()
    filler = os.path.join(f.state_dir, "filler")
    fill(filler)
    try:
        stop, delete = f.stop_sandbox(MEMBER, a), f.delete(MEMBER, b)
        r = stop.result()
        assert r.ok, dict(r)
        r = delete.result()
        assert r.ok, dict(r)
        (_, (_, _, running)), = f.containers_of(a, MEMBER).items()
        assert not running
        assert not f.containers_of(b, MEMBER)
        r = f.create(MEMBER, c).result()
        assert not r.ok, "a create with a full disk succeeded"
        assert not f.containers_of(c, MEMBER), f.containers_of(c, MEMBER)
        assert not [x for x in f.containers().values() if x[0].endswith(".pending")]
        print(f"create with a full disk: {r['error']}: {r['message']}")
    finally:
        os.unlink(filler)
    f.stop_daemon()
    f.activate()
    f.assert_settled()
    rows = f.rows()
    (ida, _), = f.containers_of(a, MEMBER).items()
    assert rows[F.qualified(a, MEMBER)][:2] == (ida, "stopped"), rows
    assert F.qualified(b, MEMBER) not in rows and F.qualified(c, MEMBER) not in rows
    ins = f.inspect(MEMBER, a).result[0]
    assert ins["state"] == "stopped" and ins["verdict"] == "match", ins
    assert f.delete(MEMBER, a).result().ok
    f.assert_settled()


# One line: the store was empty (held no sandboxes), containers of the service exist,
# the rows were rebuilt.
REBUILT = re.compile(r"(?i)^(?=.*(\bempty\b|\bno (sandboxes|rows)\b))(?=.*\bcontainers?\b)(?=.*\brebuil).*$",
                     re.M)


def test_truncated_store(f):
    """sandboxd.db (and its -wal, -shm) truncated to nothing while the daemon is down:
    the next activation notices managed containers without a store, says so in its log,
    rebuilds the rows, and the sandboxes inspect as match again."""
    f.activate()
    sandboxes = [(MEMBER, F.unique("trunc"), f.workspace(MEMBER)), (ROOT, F.unique("trunc"), None)]
    for c in [f.create(u, n, f.spec(ws)) for u, n, ws in sandboxes]:
        assert c.result().ok
    f.assert_settled()
    before = f.rows()
    f.stop_daemon()
    for suffix in ("", "-wal", "-shm"):
        p = f.db_path + suffix
        if os.path.exists(p):
            os.truncate(p, 0)
    mark = f.log_mark()
    f.activate()
    line = F.wait_until(lambda: REBUILT.search(mark.new()), 15,
                        what="a log line saying the empty store was rebuilt")
    print("log:", line.group(0))
    f.assert_settled()
    rows = f.rows()
    for u, n, _ in sandboxes:
        q = F.qualified(n, u)
        assert q in rows and rows[q][0] == before[q][0], rows
        ins = f.inspect(u, n).result[0]
        assert ins["verdict"] == "match", ins
    listed = {x[4]: x[3] for x in f.list_all()}
    assert sorted(listed.values()) == ["match", "match"], listed
    for c in [f.delete(u, n) for u, n, _ in sandboxes]:
        assert c.result().ok
    f.assert_settled()


def test_hung_polkit(f):
    """polkitd stopped (SIGSTOP): calls that need it are AuthorizationTimedOut (a
    transient error of its own, not a refusal), naming polkit, within the 20 s limit
    (bus-polkit.h), and nothing reaches Docker; after SIGCONT they work again."""
    f.activate()
    name = F.unique("pk")
    pid = f.stack.polkit_proc.pid
    mark = f.relay.mark()
    os.kill(pid, signal.SIGSTOP)
    try:
        calls = [f.create(MEMBER, name), f.submit(MEMBER, "ListSandboxes"),
                 f.stop_sandbox(MEMBER, name)]
        for c in calls:
            r = c.result()
            assert "polkit" in r.error(F.ERR + "AuthorizationTimedOut").lower(), dict(r)
            assert 19 <= r.elapsed <= 22, f"{c.what}: {r.elapsed:.2f}s"
    finally:
        os.kill(pid, signal.SIGCONT)
    assert not f.relay.since(mark, subject=re.escape(name))
    assert not f.containers_of(name, MEMBER)
    assert f.create(MEMBER, name).result().ok
    assert f.delete(MEMBER, name).result().ok
    f.assert_settled()


def test_polkit_answering_at_its_own_script_limit(f):
    """polkitd 122 sometimes answers only once its own 15 s limit for a rules script
    has run out (a lost wakeup in its duktape runner; it logs "Terminating runaway
    script after 15 seconds", then answers rightly): such an answer still counts —
    polkitd held here for 15.5 s, the call then succeeds."""
    f.activate()
    name = F.unique("pk15")
    pid = f.stack.polkit_proc.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        call = f.create(MEMBER, name)
        time.sleep(15.5)
    finally:
        os.kill(pid, signal.SIGCONT)
    r = call.result()
    assert r.ok, dict(r)
    assert r.elapsed >= 15.5
    assert f.delete(MEMBER, name).result().ok
    f.assert_settled()


def test_sigterm_with_queued_work(f):
    """48 creates hold all 48 state-change workers (their first Docker request held in
    the relay), four more wait in the queue; SIGTERM, then the held requests go on: the
    four are answered BackendUnavailable and never reach Docker, the 48 finish and are
    answered."""
    f.write_config(docker_timeout=60, max_sandboxes_per_user=64)    # 48 creates at once on two cores
    f.activate()
    busy = [F.unique("busy") for _ in range(48)]
    queued = [F.unique("queued") for _ in range(4)]
    hold = f.relay.hold("GET", r"^/containers/json\?", count=48, subject=rf"^{F.PREFIX}-busy-")
    running = [f.create(ROOT, n) for n in busy]
    hold.wait_held(60)
    waiting = [f.create(ROOT, n) for n in queued]
    time.sleep(1)
    assert not any(c.done() for c in running + waiting)
    pid = f.daemon_pid()
    os.kill(pid, signal.SIGTERM)
    time.sleep(0.5)
    hold.release()
    for c in waiting:
        msg = c.result().error(F.BACKEND_UNAVAILABLE)
        assert re.search(r"(?i)shutting down|not started", msg), msg
    for c in running:
        r = c.result()
        assert r.ok, dict(r)
    assert F.e2e._wait_gone(pid, 30), "the daemon did not exit"
    for n in queued:
        assert not f.relay.since(0, subject=re.escape(n)), f.relay.since(0, subject=re.escape(n))
        assert not f.containers_of(n, ROOT)
    f.activate()
    f.assert_settled()
    listed = {x[0]: x[3] for x in f.list_all()}
    assert all(listed.get(n) == "match" for n in busy), listed
    for c in [f.delete(ROOT, n) for n in busy]:
        assert c.result().ok
    f.assert_settled()
