# SPDX-License-Identifier: LGPL-2.1-or-later
"""A unix-socket HTTP/1.1 relay between the daemon under test and the private dockerd,
run as threads inside the test process. The daemon's --docker-host points at it.

It forwards byte-exactly: keep-alive connections (one upstream connection per daemon
connection, as libcurl reuses them), request bodies (Content-Length or chunked; an
"Expect: 100-continue" is answered here), streaming answers (chunked: /events and logs
flow through piece by piece, never buffered), answers delimited by the connection's end,
and upgrades (101, then raw bytes both ways until either side closes).

It records every request (method, path without the /v1.xx prefix, its container's name
where known, times, status) and lets a test stop one in its tracks:

    h = relay.hold("POST", r"^/containers/[0-9a-f]+/start", when="before", subject="f1")
    ...                     # the daemon makes the call
    h.wait_held(10)         # the request has arrived and waits ("after": Docker answered
                            # it and the answer waits)
    os.kill(daemon, SIGKILL) / h.release()

A held request is dropped when the daemon's side closes; when the dockerd side dies the
relay closes the daemon's connection.

Rules change what happens to every matching request (count=None) or the next few:

    relay.delay("GET", r"^/containers/", 12)    # forwarded 12 s late
    relay.answer("POST", r"/stop", GARBAGE)     # answered by the relay, never forwarded
    relay.lose("POST", r"^/containers/create")  # forwarded, Docker's answer dropped and
                                                # the daemon's connection closed
"""

import errno
import json
import os
import re
import select
import socket
import threading
import time
from urllib.parse import parse_qs, unquote, urlsplit

VERSION_PREFIX = re.compile(r"^/v[0-9]+\.[0-9]+(?=/)")
CONTAINER_PATH = re.compile(r"^/containers/([^/?]+)(/[^?]*)?")
CAPTURE_MAX = 64 * 1024


class _Gone(Exception):
    """The connection ended (EOF, error, the relay stops, the peer we watch went away)."""


def _peer_closed(sock):
    """True when sock has reached EOF or failed (it has no data to read otherwise)."""
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


class _Reader:
    """Buffered reads from one socket that give up when a watched socket closes."""

    def __init__(self, sock, relay):
        self.sock, self.relay, self.data = sock, relay, b""

    def _fill(self, watch=None):
        while True:
            if self.relay.stopping:
                raise _Gone("relay stopping")
            socks = [self.sock] + ([watch] if watch is not None else [])
            try:
                r, _, _ = select.select(socks, [], [], 0.2)
            except (OSError, ValueError):
                raise _Gone("select failed")
            if watch is not None and watch in r and self.sock not in r:
                if _peer_closed(watch):
                    raise _Gone("watched peer closed")
                watch = None            # unexpected data: stop watching, do not spin
            if self.sock in r:
                try:
                    chunk = self.sock.recv(65536)
                except OSError:
                    raise _Gone("recv failed")
                if not chunk:
                    raise _Gone("eof")
                self.data += chunk
                return

    def head(self, watch=None):
        """Bytes up to and including the blank line; None at EOF before any byte."""
        while b"\r\n\r\n" not in self.data:
            try:
                self._fill(watch)
            except _Gone:
                if not self.data:
                    return None
                raise
        i = self.data.index(b"\r\n\r\n") + 4
        out, self.data = self.data[:i], self.data[i:]
        return out

    def line(self, watch=None):
        while b"\r\n" not in self.data:
            self._fill(watch)
        i = self.data.index(b"\r\n") + 2
        out, self.data = self.data[:i], self.data[i:]
        return out

    def exact(self, n, watch=None):
        while len(self.data) < n:
            self._fill(watch)
        out, self.data = self.data[:n], self.data[n:]
        return out

    def some(self, n, watch=None):
        """Up to n bytes: what is buffered, else one read's worth."""
        if not self.data:
            self._fill(watch)
        out, self.data = self.data[:n], self.data[n:]
        return out

    def take(self):
        out, self.data = self.data, b""
        return out


def _parse_head(head):
    lines = head.decode("latin-1").split("\r\n")
    first = lines[0]
    headers = []
    for line in lines[1:]:
        if not line:
            continue
        k, _, v = line.partition(":")
        headers.append((k.strip(), v.strip()))
    return first, headers


def _header(headers, name):
    name = name.lower()
    for k, v in headers:
        if k.lower() == name:
            return v
    return None


def _build_head(first, headers):
    return ("\r\n".join([first] + [f"{k}: {v}" for k, v in headers]) + "\r\n\r\n").encode("latin-1")


class Request:
    """One request as the relay saw it."""

    def __init__(self, conn_id, method, target):
        self.conn_id = conn_id
        self.method = method
        self.target = target
        self.path = VERSION_PREFIX.sub("", target, count=1)    # query included
        self.decoded = unquote(self.path)
        self.subject = None         # the container name it is about, where known
        self.t_start = time.monotonic()
        self.t_forwarded = None
        self.t_answered = None
        self.status = None
        self.response = b""         # the answer's body (bounded ones, up to 64 KiB)
        self.outcome = None         # "answered", "dropped" (held, then the daemon left)…
        self.orphaned = False       # forwarded by an orphan hold after the daemon left

    def __repr__(self):
        return (f"<{self.method} {self.decoded} subject={self.subject} status={self.status} "
                f"outcome={self.outcome}>")


class Hold:
    """Holds the next `count` requests matching (method, path regex, subject regex), each
    before it is forwarded ("before") or once Docker answered it ("after")."""

    def __init__(self, relay, method, path_re, when, count, subject, orphan=False, answer=None):
        assert when in ("before", "after")
        assert not orphan or when == "before"
        assert answer is None or when == "after"
        self.orphan = orphan        # forwarded at release even when the daemon left meanwhile
        self.relay = relay
        self.answer = answer        # "after": sent instead of Docker's answer, then the connection closed
        self.method = method
        self.path_re = re.compile(path_re)
        self.subject_re = re.compile(subject) if isinstance(subject, str) else subject
        self.when = when
        self.count = count
        self.caught = []            # matched (an "after" one is not held until answered)
        self.held = []              # waiting now or before
        self.dropped = []           # the daemon's side closed while it waited
        self._cond = threading.Condition()
        self._released = threading.Event()
        self.active = True

    def __repr__(self):
        return (f"<Hold {self.when} {self.method} {self.path_re.pattern} subject="
                f"{self.subject_re.pattern if self.subject_re else None} caught={self.caught}>")

    def matches(self, req):
        return (self.active and len(self.caught) < self.count
                and (self.method is None or req.method == self.method)
                and self.path_re.search(req.decoded) is not None
                and (self.subject_re is None
                     or (req.subject is not None and self.subject_re.search(req.subject))))

    def _now_held(self, req):
        with self._cond:
            self.held.append(req)
            self._cond.notify_all()

    def wait_held(self, timeout, n=None):
        """Waits until n (default: count) requests are held; returns them."""
        n = self.count if n is None else n
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.held) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{self}: {len(self.held)} of {n} held after {timeout}s; "
                                         f"recent requests: {self.relay.requests[-15:]}")
                self._cond.wait(min(left, 0.1))
            return list(self.held)

    def release(self):
        """Lets the held requests (and any caught later) go on."""
        self.active = False
        self._released.set()

    def cancel(self):
        """Catches nothing more; releases what it holds."""
        self.release()
        self.relay._remove_hold(self)

    def _wait_release(self, req, down, up):
        """In the connection's thread: waits for release(). False when the daemon's
        side closed meanwhile (the request is dropped) or the dockerd side died."""
        self._now_held(req)
        while not self._released.wait(0.05):
            if self.relay.stopping:
                return False
            if self.orphan:
                continue
            if _peer_closed(down):
                with self._cond:
                    self.dropped.append(req)
                return False
            if up is not None and _peer_closed(up):     # dockerd's side died
                return False
        # released: but not to a daemon that is gone meanwhile (unless an orphan)
        if self.orphan:
            req.orphaned = _peer_closed(down)
            return True
        if _peer_closed(down):
            with self._cond:
                self.dropped.append(req)
            return False
        return True


class Rule:
    """delay / answer / lose for the matching requests (count: how many; None: all)."""

    def __init__(self, kind, method, path_re, subject, count, **params):
        self.kind, self.method, self.count, self.params = kind, method, count, params
        self.path_re = re.compile(path_re)
        self.subject_re = re.compile(subject) if isinstance(subject, str) else subject
        self.caught = []
        self.active = True

    def __repr__(self):
        return f"<Rule {self.kind} {self.method} {self.path_re.pattern} caught={len(self.caught)}>"

    def matches(self, req):
        return (self.active and (self.count is None or len(self.caught) < self.count)
                and (self.method is None or req.method == self.method)
                and self.path_re.search(req.decoded) is not None
                and (self.subject_re is None
                     or (req.subject is not None and self.subject_re.search(req.subject))))

    def cancel(self):
        self.active = False


class Relay:
    def __init__(self, listen_path, upstream_path):
        self.listen_path = listen_path
        self.upstream_path = upstream_path
        self.requests = []
        self.names = {}             # container id -> name, learnt from creates and renames
        self.stopping = False
        self._holds = []
        self._rules = []
        self._lock = threading.Lock()
        self._conns = set()
        self._conn_ids = iter(range(1, 1 << 62))
        self._sock = None
        self._thread = None

    # ---- control ----------------------------------------------------------------------

    def start(self):
        if os.path.exists(self.listen_path):
            os.unlink(self.listen_path)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(self.listen_path)
        os.chmod(self.listen_path, 0o660)
        self._sock.listen(256)
        self._thread = threading.Thread(target=self._accept_loop, name="relay-accept", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self.stopping = True
        for h in list(self._holds):
            h.release()
        try:
            self._sock.close()
        except OSError:
            pass
        self.close_connections()
        if self._thread:
            self._thread.join(timeout=5)
        if os.path.exists(self.listen_path):
            os.unlink(self.listen_path)

    def hold(self, method, path_re, when="before", count=1, subject=None, orphan=False, answer=None):
        """subject: a regex the request's container name must match (creates: the
        name asked for; /containers/{id}/…: the name that id was created or renamed
        with; lists: the name label of the filter, else "owner=<uid>" of its owner label).
        orphan (before only): at release the request goes to dockerd even when the
        daemon's side closed meanwhile (a request Docker carries out after the daemon
        gave up on it); its answer goes nowhere.
        answer (bytes, with when="after"): Docker did the request, but the daemon gets
        these bytes instead of its answer, at once, and then the connection closes (a
        500, garbage, an answer cut short)."""
        h = Hold(self, method, path_re, when, count, subject, orphan, answer)
        with self._lock:
            self._holds.append(h)
        return h

    def _rule(self, kind, method, path_re, subject, count, **params):
        r = Rule(kind, method, path_re, subject, count, **params)
        with self._lock:
            self._rules.append(r)
        return r

    def delay(self, method, path_re, seconds, count=None, subject=None):
        """Forwards the matching requests `seconds` late (dropped if the daemon's side
        closes meanwhile)."""
        return self._rule("delay", method, path_re, subject, count, seconds=seconds)

    def answer(self, method, path_re, response, count=None, subject=None, close=False, pause=0.0):
        """Answers the matching requests with the raw bytes `response` (status line,
        headers, body; or a list of pieces, sent `pause` seconds apart) instead of
        Docker; they never reach it. close: then ends the daemon's connection."""
        pieces = [response] if isinstance(response, bytes) else list(response)
        return self._rule("answer", method, path_re, subject, count, pieces=pieces, close=close, pause=pause)

    def lose(self, method, path_re, count=None, subject=None):
        """Forwards the matching requests, waits for Docker's answer head (Docker did it)
        and closes the daemon's connection without a byte of it."""
        return self._rule("lose", method, path_re, subject, count)

    def drop_events(self, action_re=".", count=None):
        """Docker's events (the daemon's /events stream) whose Action matches are not
        passed on: a lost event; with the default, every event, a stalled stream (the
        connection stays open, no byte of it comes). The events dropped are in the
        returned rule's `caught` (as dicts)."""
        return self._rule("drop_event", None, r"^/events", None, count, action_re=re.compile(action_re))

    def _drops_event(self, line):
        """Whether one event (a JSON line of /events) is dropped by a rule."""
        try:
            event = json.loads(line)
        except ValueError:
            return False
        with self._lock:
            for r in self._rules:
                if (r.kind == "drop_event" and r.active and (r.count is None or len(r.caught) < r.count)
                        and r.params["action_re"].search(event.get("Action") or event.get("status") or "")):
                    r.caught.append(event)
                    return True
        return False

    def _filter_events(self, data):
        """A piece of the event stream, the events rules drop taken out."""
        with self._lock:
            if not any(r.kind == "drop_event" and r.active for r in self._rules):
                return data
        lines = data.split(b"\n")
        return b"\n".join(ln for ln in lines if not (ln.strip() and self._drops_event(ln)))

    def _find_rule(self, req, kind):
        with self._lock:
            for r in self._rules:
                if r.kind == kind and r.matches(req):
                    r.caught.append(req)
                    return r
        return None

    def _delay(self, req, down, seconds):
        """False when the daemon's side closed while the request waited."""
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            if self.stopping or _peer_closed(down):
                return False
            time.sleep(min(0.05, max(0, until - time.monotonic())))
        return not _peer_closed(down)

    def _remove_hold(self, h):
        with self._lock:
            if h in self._holds:
                self._holds.remove(h)

    def release_all(self):
        """Releases every hold and ends every rule."""
        with self._lock:
            holds, self._holds = self._holds, []
            rules, self._rules = self._rules, []
        for h in holds:
            h.release()
        for r in rules:
            r.cancel()

    def mark(self):
        with self._lock:
            return len(self.requests)

    def since(self, mark=0, method=None, path_re=None, subject=None):
        with self._lock:
            reqs = self.requests[mark:]
        return [r for r in reqs
                if (method is None or r.method == method)
                and (path_re is None or re.search(path_re, r.decoded))
                and (subject is None or (r.subject is not None and re.search(subject, r.subject)))]

    def close_connections(self):
        """Ends every relayed connection now (as a dying dockerd would)."""
        with self._lock:
            conns = list(self._conns)
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    # ---- serving ----------------------------------------------------------------------

    def _accept_loop(self):
        while not self.stopping:
            try:
                down, _ = self._sock.accept()
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(down, next(self._conn_ids)),
                                 name="relay-conn", daemon=True)
            t.start()

    def _track(self, s, add):
        with self._lock:
            (self._conns.add if add else self._conns.discard)(s)

    def _subject_of(self, req):
        q = parse_qs(urlsplit(req.path).query)
        m = CONTAINER_PATH.match(urlsplit(req.path).path)
        if m and m.group(1) == "create":
            return (q.get("name") or [None])[0]
        if m and m.group(1) == "json":
            try:
                labels = json.loads(q.get("filters", ["{}"])[0]).get("label", [])
            except ValueError:
                return None
            names = [x.split("=", 1)[1] for x in labels if x.startswith("xagent.sandbox.name=")]
            owners = [x.split("=", 1)[1] for x in labels if x.startswith("xagent.sandbox.owner=")]
            return names[0] if names else f"owner={owners[0]}" if owners else None
        if m:
            with self._lock:
                return self.names.get(m.group(1), m.group(1))
        return None

    @staticmethod
    def _is_create(req):
        m = CONTAINER_PATH.match(urlsplit(req.path).path)
        return bool(m) and m.group(1) == "create"

    def _learn(self, req):
        """Remembers which name a created container has (and a rename's new name)."""
        m = CONTAINER_PATH.match(urlsplit(req.path).path)
        if not m or req.status is None or req.status // 100 != 2:
            return
        if m.group(1) == "create" and req.subject:
            try:
                cid = json.loads(req.response)["Id"]
            except (ValueError, KeyError, TypeError):
                return
            with self._lock:
                self.names[cid] = req.subject
        elif m.group(2) == "/rename":
            new = (parse_qs(urlsplit(req.path).query).get("name") or [None])[0]
            if new:
                with self._lock:
                    self.names[m.group(1)] = new

    def _find_hold(self, req, when):
        with self._lock:
            for h in self._holds:
                if h.when == when and h.matches(req):
                    h.caught.append(req)
                    return h
        return None

    def _connect_up(self):
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        up.settimeout(5)
        try:
            up.connect(self.upstream_path)
        except OSError:
            up.close()
            return None
        up.settimeout(None)
        self._track(up, True)
        return up

    def _serve(self, down, conn_id):
        self._track(down, True)
        up = None
        try:
            dr = _Reader(down, self)
            ur = None
            while not self.stopping:
                head = dr.head()
                if head is None:
                    return
                first, headers = _parse_head(head)
                method, target, _version = first.split(" ", 2)
                req = Request(conn_id, method, target)
                req.subject = self._subject_of(req)
                with self._lock:
                    self.requests.append(req)

                # the request's body, whole (requests to Docker are small)
                if (_header(headers, "Expect") or "").lower() == "100-continue":
                    down.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                    headers = [(k, v) for k, v in headers if k.lower() != "expect"]
                    head = _build_head(first, headers)
                body = b""
                if (_header(headers, "Transfer-Encoding") or "").lower() == "chunked":
                    while True:
                        line = dr.line()
                        body += line
                        size = int(line.split(b";")[0].strip(), 16)
                        if size == 0:
                            while True:
                                t = dr.line()
                                body += t
                                if t == b"\r\n":
                                    break
                            break
                        body += dr.exact(size + 2)
                elif _header(headers, "Content-Length"):
                    body = dr.exact(int(_header(headers, "Content-Length")))

                hold = self._find_hold(req, "before")
                if hold is not None and not hold._wait_release(req, down, up):
                    req.outcome = "dropped"
                    return
                rule = self._find_rule(req, "delay")
                if rule is not None and not self._delay(req, down, rule.params["seconds"]):
                    req.outcome = "dropped"
                    return
                rule = self._find_rule(req, "answer")
                if rule is not None:
                    response = b"".join(rule.params["pieces"])
                    req.status = int(response.split(b" ", 2)[1])
                    req.response = response.partition(b"\r\n\r\n")[2][:CAPTURE_MAX]
                    for i, piece in enumerate(rule.params["pieces"]):
                        if i > 0:
                            time.sleep(rule.params["pause"])
                        down.sendall(piece)
                    req.t_answered = time.monotonic()
                    req.outcome = "answered by the relay"
                    if rule.params["close"]:
                        return
                    continue
                lose = self._find_rule(req, "lose")
                if up is None:
                    up = self._connect_up()
                    if up is None:
                        req.outcome = "no dockerd"
                        return
                    ur = _Reader(up, self)
                try:
                    up.sendall(head + body)
                except OSError:
                    req.outcome = "dockerd gone"
                    return
                req.t_forwarded = time.monotonic()
                if req.orphaned:
                    rhead = ur.head()
                    req.status = int(_parse_head(rhead)[0].split(" ", 2)[1]) if rhead else None
                    req.t_answered = time.monotonic()
                    req.outcome = "orphan"
                    return

                rhead = ur.head(watch=down)
                if rhead is None:
                    req.outcome = "dockerd gone"
                    return
                rfirst, rheaders = _parse_head(rhead)
                req.status = int(rfirst.split(" ", 2)[1])
                if lose is not None:
                    length = _header(rheaders, "Content-Length")
                    if length is not None:
                        req.response = ur.exact(int(length), watch=down)
                    req.t_answered = time.monotonic()
                    req.outcome = "answer lost"
                    self._learn(req)
                    return
                after = self._find_hold(req, "after")

                if req.status == 101:
                    req.t_answered = time.monotonic()
                    req.outcome = "upgraded"
                    down.sendall(rhead)
                    self._pipe(down, dr, up, ur)
                    return
                te = (_header(rheaders, "Transfer-Encoding") or "").lower()
                length = _header(rheaders, "Content-Length")
                if method == "HEAD" or req.status in (204, 304) or 100 <= req.status < 200:
                    kind = "none"
                elif te == "chunked":
                    kind = "chunked"
                elif length is not None:
                    kind = "length"
                else:
                    kind = "close"

                if kind == "close":
                    # hijacked (attach, exec without Upgrade) or HTTP/1.0 style: raw
                    # bytes both ways until either side ends
                    req.t_answered = time.monotonic()
                    req.outcome = "raw stream"
                    down.sendall(rhead)
                    self._pipe(down, dr, up, ur)
                    return

                if after is not None:
                    rbody = b""
                    if kind == "length":
                        rbody = ur.exact(int(length), watch=down)
                    elif kind == "chunked":
                        while True:
                            line = ur.line(watch=down)
                            rbody += line
                            size = int(line.split(b";")[0].strip(), 16)
                            if size == 0:
                                while True:
                                    t = ur.line(watch=down)
                                    rbody += t
                                    if t == b"\r\n":
                                        break
                                break
                            rbody += ur.exact(size + 2, watch=down)
                    req.t_answered = time.monotonic()
                    req.response = _dechunk(rbody) if kind == "chunked" else rbody
                    self._learn(req)
                    if after.answer is not None:
                        after._now_held(req)
                        down.sendall(after.answer)
                        req.outcome = "replaced"
                        return
                    if not after._wait_release(req, down, up):
                        req.outcome = "dropped"
                        return
                    down.sendall(rhead + rbody)
                    req.outcome = "answered"
                elif kind == "length" and self._is_create(req):
                    # A create's answer is learnt (its container's name) before the
                    # daemon has it: its next request may come on another connection.
                    rbody = ur.exact(int(length), watch=down)
                    req.t_answered = time.monotonic()
                    req.response = rbody[:CAPTURE_MAX]
                    self._learn(req)
                    down.sendall(rhead + rbody)
                    req.outcome = "answered"
                else:
                    down.sendall(rhead)
                    self._forward_body(req, kind, length, down, ur)
                    req.t_answered = time.monotonic()
                    req.outcome = "answered"
                    self._learn(req)

                if ((_header(rheaders, "Connection") or "").lower() == "close"
                        or (_header(headers, "Connection") or "").lower() == "close"):
                    return
        except _Gone:
            pass
        except OSError as e:
            if e.errno not in (errno.EPIPE, errno.ECONNRESET, errno.EBADF, errno.ENOTCONN):
                raise
        finally:
            for s in (down, up):
                if s is not None:
                    self._track(s, False)
                    try:
                        s.close()
                    except OSError:
                        pass

    def _forward_body(self, req, kind, length, down, ur):
        """Passes the answer's body on piece by piece as it arrives (a stream's pieces
        reach the daemon at once), keeping the first 64 KiB."""
        captured = []
        size = 0

        def send(b, data=True):
            nonlocal size
            down.sendall(b)
            if data and size < CAPTURE_MAX:
                captured.append(b)
                size += len(b)

        if kind == "length":
            left = int(length)
            while left > 0:
                piece = ur.some(left, watch=down)
                send(piece)
                left -= len(piece)
        elif kind == "chunked":
            while True:
                line = ur.line(watch=down)
                n = int(line.split(b";")[0].strip(), 16)
                if n > 0 and req.path.startswith("/events"):
                    # an event whole, passed on as a chunk of its own unless dropped
                    data = self._filter_events(ur.exact(n, watch=down))
                    ur.exact(2, watch=down)
                    if data:
                        send(b"%x\r\n" % len(data), data=False)
                        send(data)
                        send(b"\r\n", data=False)
                    continue
                send(line, data=False)
                if n == 0:
                    while True:
                        t = ur.line(watch=down)
                        send(t, data=False)
                        if t == b"\r\n":
                            break
                    break
                left = n
                while left > 0:
                    piece = ur.some(left, watch=down)
                    send(piece)
                    left -= len(piece)
                send(ur.exact(2, watch=down), data=False)
        req.response = b"".join(captured)[:CAPTURE_MAX]

    def _pipe(self, down, dr, up, ur):
        """Raw bytes both ways (after an upgrade) until either side closes."""
        pending_up, pending_down = dr.take(), ur.take()
        if pending_up:
            up.sendall(pending_up)
        if pending_down:
            down.sendall(pending_down)
        open_from = {down: True, up: True}
        while not self.stopping and any(open_from.values()):
            socks = [s for s, o in open_from.items() if o]
            r, _, _ = select.select(socks, [], [], 0.2)
            for s in r:
                other = up if s is down else down
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    open_from[s] = False
                    try:
                        other.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    if s is up:         # dockerd's side ended: so does the daemon's
                        return
                    continue
                other.sendall(data)


def _dechunk(raw):
    out, i = b"", 0
    while i < len(raw):
        j = raw.index(b"\r\n", i)
        n = int(raw[i:j].split(b";")[0].strip(), 16)
        if n == 0:
            break
        out += raw[j + 2:j + 2 + n]
        i = j + 2 + n + 2
    return out
