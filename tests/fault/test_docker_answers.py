# SPDX-License-Identifier: LGPL-2.1-or-later
"""Docker's answers late, lost or wrong (the relay's delay / lose / answer rules): a stop
answers before the bus's 25 s however its requests hang; a POST whose answer was lost is
never sent twice; a 2xx that is not what Docker answers is BackendError and changes no
row; an event stream that Docker breaks right after accepting it is retried with a
backoff, not four times a second with a reconciliation each."""

import re
import time

import fault as F
from fault import MEMBER, ROOT
from test_create import ID, subject_of

BACKEND_ERROR = F.ERR + "BackendError"
GARBAGE = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\ngarbage"


def made(f, names):
    for c in [f.create(u, n) for u, n in names]:
        assert c.result().ok


def forwarded(f, method, path_re, user, name):
    return [r for r in f.relay.since(0, method, path_re, subject=subject_of("container", user, name))
            if r.t_forwarded]


def test_stop_answers_within_its_budget(f):
    """docker_timeout 20 (the default). A stop's operation — its inspect and its stop —
    has max(docker_timeout, timeout + 10 s): with every request of the sandbox 12 s or
    30 s late, or its /stop never answered (timeout 1, and the default 10), the stop is
    answered BackendUnavailable before the bus's 25 s; the error names the operation's
    budget where the deadline ended it. The rows still say running."""
    f.write_config(docker_timeout=20)
    f.activate()
    cases = {           # name: (user, what the relay does, stop options, answered by)
        "late12": (MEMBER, "delay12", {}, 20),
        "late30": (ROOT, "delay30", {}, 20),
        "hung-t1": (MEMBER, "hang", {"timeout": ["u", 1]}, 11),
        "hung-t10": (ROOT, "hang", {}, 20),
    }
    names = {case: (u, F.unique(case)) for case, (u, _, _, _) in cases.items()}
    made(f, names.values())
    holds = []
    for case, (user, fault, _, _) in cases.items():
        subject = subject_of("container", *names[case])
        if fault.startswith("delay"):
            f.relay.delay(None, r"^/containers/", int(fault[5:]), subject=subject)
        else:
            holds.append(f.relay.hold("POST", rf"^/containers/{ID}/stop", subject=subject))
    calls = {case: f.submit(u, "StopSandbox", "sa{sv}", [names[case][1], opts])
             for case, (u, _, opts, _) in cases.items()}
    for case, (user, _, _, budget) in cases.items():
        r = calls[case].result()            # asserts: within 25 s
        message = r.error(F.BACKEND_UNAVAILABLE)
        print(f"{case}: {r.elapsed:.1f}s: {message}")
        assert budget - 1 < r.elapsed < budget + 4, (case, r.elapsed, message)
        if budget == 20:
            assert "within the operation's 20 s" in message, (case, message)
    for hd in holds:
        hd.cancel()
    f.relay.release_all()
    rows = f.rows()
    for case, (user, name) in names.items():
        assert rows[F.qualified(name, user)][1] == "running", (case, rows)
    f.assert_settled()


def test_lost_create_answer_is_not_sent_again(f):
    """Docker creates the container, its answer is lost (the connection closed): the
    create is not sent a second time (which would say SandboxExists for the service's
    own container) — the caller gets BackendUnavailable, the never-verified container is
    removed in the background, and the create then succeeds."""
    f.activate()
    name = F.unique("lostc")
    f.relay.lose("POST", r"^/containers/create\?", count=1, subject=subject_of("container", MEMBER, name))
    message = f.create(MEMBER, name).result().error(F.BACKEND_UNAVAILABLE)
    assert "lost Docker's answer to POST /containers/create" in message and "not sent again" in message, message
    creates = f.relay.since(0, "POST", r"^/containers/create\?", subject=subject_of("container", MEMBER, name))
    assert len(creates) == 1 and creates[0].status == 201, creates
    f.assert_settled()
    assert not f.containers_of(name, MEMBER)
    assert f.create(MEMBER, name).result().ok
    assert f.inspect(MEMBER, name).result[0]["verdict"] == "match"
    f.assert_settled()


def test_lost_rename_answer_is_not_sent_again(f):
    """The verified container renamed, the answer lost: no second rename (whose refusal
    threw the container away as SandboxExists) — BackendUnavailable, nothing left behind,
    and the create then succeeds."""
    f.activate()
    name = F.unique("lostr")
    f.relay.lose("POST", rf"^/containers/{ID}/rename", count=1, subject=subject_of("container", ROOT, name))
    message = f.create(ROOT, name).result().error(F.BACKEND_UNAVAILABLE)
    assert re.search(rf"lost Docker's answer to POST /containers/{ID}/rename", message), message
    renames = f.relay.since(0, "POST", rf"^/containers/{ID}/rename", subject=subject_of("container", ROOT, name))
    assert len(renames) == 1 and renames[0].status == 204, renames
    f.assert_settled()
    assert not f.containers_of(name, ROOT) and F.qualified(name, ROOT) not in f.rows()
    assert f.create(ROOT, name).result().ok
    f.assert_settled()


def test_garbage_2xx_changes_nothing(f):
    """A 200 with a garbage body where Docker answers 204 — to a delete, a stop, a start
    and a create's rename — is BackendError naming the request and what came back, and
    no row changes: the delete's row stays, the stop's says running, the start's stopped,
    the create leaves nothing."""
    f.activate()
    names = {op: (MEMBER if op in ("stop", "create") else ROOT, F.unique(op))
             for op in ("delete", "stop", "start", "create")}
    made(f, [names[op] for op in ("delete", "stop", "start")])
    assert f.stop_sandbox(*names["start"]).result().ok
    rules = {"delete": ("DELETE", rf"^/containers/{ID}(\?|$)"),
             "stop": ("POST", rf"^/containers/{ID}/stop"),
             "start": ("POST", rf"^/containers/{ID}/start"),
             "create": ("POST", rf"^/containers/{ID}/rename")}
    for op, (method, path) in rules.items():
        f.relay.answer(method, path, GARBAGE, subject=subject_of("container", *names[op]))
    calls = {"delete": f.delete(*names["delete"]),
             "stop": f.stop_sandbox(*names["stop"]),
             "start": f.start_sandbox(*names["start"]),
             "create": f.create(*names["create"])}
    for op, c in calls.items():
        message = c.result().error(BACKEND_ERROR)
        method, path = rules[op]
        assert re.search(rf"Docker answered {method} {path.lstrip('^')}\S* with HTTP 200 and 7 bytes "
                         r'\("garbage"\), not 204', message), (op, message)
    f.relay.release_all()
    rows = f.rows()
    for op, state, running in (("delete", "running", True), ("stop", "running", True),
                               ("start", "stopped", False)):
        user, name = names[op]
        (cid, (_, _, is_running)), = f.containers_of(name, user).items()
        assert is_running == running, op
        assert rows[F.qualified(name, user)][:2] == (cid, state), (op, rows)
    f.assert_settled()
    user, name = names["create"]
    assert not f.containers_of(name, user) and F.qualified(name, user) not in f.rows()
    # and with Docker's own answers it all works
    assert f.delete(*names["delete"]).result().ok
    assert f.stop_sandbox(*names["stop"]).result().ok
    assert f.start_sandbox(*names["start"]).result().ok
    assert f.create(*names["create"]).result().ok
    f.assert_settled()


def test_broken_event_stream_backs_off(f):
    """/events accepted (200) and then garbage, the connection closed: the daemon tries
    again after 0.25 s, 0.5 s, 1 s, 2 s, 4 s … — at most 6 streams in 8 s (not ~4 a
    second), and no more reconciliations than streams."""
    broken = [b"HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nContent-Type: application/json\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n", b"zz-not-a-chunk\r\n"]
    f.relay.answer("GET", r"^/events", broken, close=True, pause=0.1)
    mark = f.relay.mark()
    f.activate()
    t0 = time.monotonic()
    time.sleep(8)
    seen = f.relay.since(mark)
    streams = [r for r in seen if r.decoded.startswith("/events") and r.t_start < t0 + 8]
    lists = [r for r in seen if re.match(r"^/containers/json\?", r.decoded) and r.subject is None]
    gaps = [round(b.t_start - a.t_start, 2) for a, b in zip(streams, streams[1:])]
    print(f"{len(streams)} streams in 8 s, gaps {gaps}; {len(lists)} reconciliation lists")
    assert 3 <= len(streams) <= 6, gaps
    assert all(b >= 0.8 * a for a, b in zip(gaps, gaps[1:])), gaps      # growing
    # one reconciliation per stream (and the start-up's); each lists the managed
    # containers twice (to settle, then for the objects)
    assert len(lists) <= 2 * (len(streams) + 1), (len(lists), len(streams))
    f.relay.release_all()
    # with Docker's own stream the daemon follows events again (within its backoff)
    F.wait_until(lambda: any(r.decoded.startswith("/events") and r.t_forwarded for r in f.relay.since(mark)),
                 15, what="a /events stream reaching dockerd")
