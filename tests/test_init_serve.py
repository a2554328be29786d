# SPDX-License-Identifier: LGPL-2.1-or-later
"""xagent-sandbox-init --serve (src/init/serve.c), the service's kept channel into a
sandbox, driven directly with frames written here by an independent implementation
of the protocol (src/core/proto.h): every request, the bounds, and hostile frames —
a malformed request gets an ERROR reply and the program goes on; a stream out of step
ends it."""

import os
import stat
import struct
import subprocess

import pytest

INIT = os.path.join(os.environ["SBX_BUILD_ROOT"], "src", "init", "xagent-sandbox-init")

HELLO, READ, WRITE, LIST, REMOVE, OK, ERROR = 1, 2, 3, 4, 5, 100, 101
(T_VERSION, T_PATH, T_OFFSET, T_LENGTH, T_DATA, T_MODE, T_FLAGS, T_DEPTH, T_LIMIT, T_SIZE, T_MTIME, T_EOF,
 T_ENTRY, T_NAME, T_KIND, T_TRUNCATED, T_ERRNO, T_MESSAGE) = range(1, 19)
APPEND, MAKE_PARENTS, RECURSIVE = 1, 2, 1


def field(tag, value):
    if isinstance(value, int):
        value = struct.pack("<Q", value)
    elif isinstance(value, str):
        value = value.encode()
    return struct.pack("<BI", tag, len(value)) + value


def frame(type_, *fields, version=1):
    payload = b"".join(field(t, v) for t, v in fields)
    return b"XSB" + bytes([version]) + struct.pack("<II", type_, len(payload)) + payload


def fields_of(payload):
    out, pos = [], 0
    while pos < len(payload):
        tag, n = struct.unpack_from("<BI", payload, pos)
        out.append((tag, payload[pos + 5:pos + 5 + n]))
        pos += 5 + n
    return out


class Channel:
    def __init__(self):
        self.p = subprocess.Popen([INIT, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def recv(self):
        head = self.p.stdout.read(12)
        assert head[:4] == b"XSB\x01", head
        type_, size = struct.unpack("<II", head[4:])
        return type_, fields_of(self.p.stdout.read(size))

    def call(self, type_, *fields):
        self.send_raw(frame(type_, *fields))
        return self.recv()

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait(10)
        self.p.stdout.close()
        self.p.stderr.close()
        return rc


@pytest.fixture
def ch():
    c = Channel()
    yield c
    if c.p.poll() is None:
        assert c.close() == 0


def one(fields, tag):
    return [v for t, v in fields if t == tag][0]


def num(fields, tag):
    return struct.unpack("<Q", one(fields, tag))[0]


def error_of(reply):
    type_, f = reply
    assert type_ == ERROR, reply
    return num(f, T_ERRNO), one(f, T_MESSAGE).decode()


def test_hello(ch):
    type_, f = ch.call(HELLO, (T_VERSION, 1))
    assert type_ == OK and num(f, T_VERSION) == 1


def test_write_read_round_trip(ch, tmp_path):
    p = str(tmp_path / "a.txt")
    assert ch.call(WRITE, (T_PATH, p), (T_DATA, b"hello world"), (T_MODE, 0o600))[0] == OK
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
    type_, f = ch.call(READ, (T_PATH, p))
    assert type_ == OK and one(f, T_DATA) == b"hello world" and num(f, T_EOF) == 1
    assert num(f, T_SIZE) == 11 and stat.S_ISREG(num(f, T_MODE))
    assert abs(num(f, T_MTIME) / 1e6 - os.stat(p).st_mtime) < 1
    _, f = ch.call(READ, (T_PATH, p), (T_OFFSET, 6), (T_LENGTH, 3))
    assert one(f, T_DATA) == b"wor" and num(f, T_EOF) == 0
    _, f = ch.call(READ, (T_PATH, p), (T_OFFSET, 1 << 40))
    assert one(f, T_DATA) == b"" and num(f, T_EOF) == 1


def test_write_is_atomic_appends_and_makes_parents(ch, tmp_path):
    p = str(tmp_path / "f")
    ch.call(WRITE, (T_PATH, p), (T_DATA, b"one"))
    ino = os.stat(p).st_ino
    ch.call(WRITE, (T_PATH, p), (T_DATA, b"two"))
    assert open(p, "rb").read() == b"two" and os.stat(p).st_ino != ino, "replaced by rename"
    ch.call(WRITE, (T_PATH, p), (T_DATA, b"+more"), (T_FLAGS, APPEND))
    assert open(p, "rb").read() == b"two+more"
    deep = str(tmp_path / "x" / "y" / "z.txt")
    err, msg = error_of(ch.call(WRITE, (T_PATH, deep), (T_DATA, b"")))
    assert err == 2 and "cannot open the directory" in msg
    assert ch.call(WRITE, (T_PATH, deep), (T_DATA, b""), (T_FLAGS, MAKE_PARENTS))[0] == OK
    assert os.path.isfile(deep)
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".xagent")]
    err, msg = error_of(ch.call(WRITE, (T_PATH, str(tmp_path)), (T_DATA, b"x")))
    assert err == 21, msg                     # EISDIR: a directory is not replaced


def test_read_of_what_is_not_a_file(ch, tmp_path):
    assert error_of(ch.call(READ, (T_PATH, str(tmp_path))))[0] == 21          # EISDIR
    assert error_of(ch.call(READ, (T_PATH, str(tmp_path / "nope"))))[0] == 2  # ENOENT
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    _, f = ch.call(READ, (T_PATH, fifo))     # no writer: ends at once, nothing in it
    assert one(f, T_DATA) == b"" and num(f, T_EOF) == 1
    _, f = ch.call(READ, (T_PATH, "/dev/zero"), (T_LENGTH, 1 << 20))
    assert one(f, T_DATA) == b"\0" * (1 << 20) and num(f, T_EOF) == 0
    _, f = ch.call(READ, (T_PATH, "/dev/zero"), (T_LENGTH, 1 << 40))      # capped at 16 MiB
    assert len(one(f, T_DATA)) == 16 << 20


def entries(reply):
    type_, f = reply
    assert type_ == OK, reply
    out = {}
    for tag, v in f:
        if tag == T_ENTRY:
            e = fields_of(v)
            out[one(e, T_NAME).decode()] = (one(e, T_KIND).decode(), num(e, T_SIZE))
    return out, num(f, T_TRUNCATED)


def test_list(ch, tmp_path):
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "e" / "deep").write_bytes(b"12345")
    (tmp_path / "f").write_bytes(b"abc")
    os.symlink("/etc", tmp_path / "l")
    got, truncated = entries(ch.call(LIST, (T_PATH, str(tmp_path))))
    assert got == {"d": ("directory", got["d"][1]), "f": ("file", 3), "l": ("symlink", 4)} and not truncated
    got, _ = entries(ch.call(LIST, (T_PATH, str(tmp_path)), (T_DEPTH, 3)))
    assert got["d/e/deep"] == ("file", 5) and not any(n.startswith("l/") for n in got), "links not followed"
    for i in range(3000):
        (tmp_path / "d" / f"n{i}").touch()
    got, truncated = entries(ch.call(LIST, (T_PATH, str(tmp_path / "d")), (T_LIMIT, 1000)))
    assert len(got) == 1000 and truncated
    assert error_of(ch.call(LIST, (T_PATH, str(tmp_path / "f"))))[0] == 20                # ENOTDIR
    assert error_of(ch.call(LIST, (T_PATH, str(tmp_path)), (T_DEPTH, 33)))[0] == 22       # EINVAL
    assert error_of(ch.call(LIST, (T_PATH, str(tmp_path)), (T_LIMIT, 100001)))[0] == 22


def test_remove(ch, tmp_path):
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "e" / "f").write_bytes(b"x")
    (tmp_path / "keep").write_bytes(b"k")
    os.symlink(str(tmp_path / "keep"), tmp_path / "d" / "link")
    err, msg = error_of(ch.call(REMOVE, (T_PATH, str(tmp_path / "d"))))
    assert err == 39, msg                                                          # ENOTEMPTY
    assert ch.call(REMOVE, (T_PATH, str(tmp_path / "d")), (T_FLAGS, RECURSIVE))[0] == OK
    assert sorted(os.listdir(tmp_path)) == ["keep"], "the link's target stays"
    assert ch.call(REMOVE, (T_PATH, str(tmp_path / "keep")))[0] == OK
    assert error_of(ch.call(REMOVE, (T_PATH, str(tmp_path / "keep"))))[0] == 2
    assert error_of(ch.call(REMOVE, (T_PATH, "/"), (T_FLAGS, RECURSIVE)))[0] == 16       # EBUSY


@pytest.mark.parametrize("bad,needle", [
    (frame(READ, (T_PATH, "relative")), "absolute path"),
    (frame(READ, (T_PATH, "/a\0b")), "absolute path"),
    (frame(READ, (T_PATH, "/" + "x" * 5000)), "absolute path"),
    (frame(READ), "absolute path"),
    (frame(READ, (T_PATH, "/"), (T_OFFSET, b"short")), "offset"),
    (frame(WRITE, (T_PATH, "/x")), "no data"),
    (frame(WRITE, (T_PATH, "/x"), (T_DATA, b""), (T_MODE, 0o10000)), "mode"),
    (frame(WRITE, (T_PATH, "/x"), (T_DATA, b""), (T_FLAGS, 8)), "flags"),
    (frame(77, (T_PATH, "/")), "unknown request type"),
    (b"XSB\x01" + struct.pack("<II", READ, 7) + struct.pack("<BI", T_PATH, 100) + b"/x", "malformed"),
])
def test_malformed_requests_get_an_error_and_the_channel_goes_on(ch, bad, needle):
    ch.send_raw(bad)
    err, msg = error_of(ch.recv())
    assert needle in msg, msg
    assert ch.call(HELLO)[0] == OK


@pytest.mark.parametrize("bad", [
    b"XSQ\x01" + b"\0" * 8,                                   # wrong magic
    frame(HELLO, version=2),                                  # another protocol version
    b"XSB\x01" + struct.pack("<II", READ, (16 << 20) + 65537),  # above the frame limit
    b"XSB\x01" + struct.pack("<II", READ, 100) + b"cut",      # ends inside the frame
])
def test_a_stream_out_of_step_ends_the_program(bad):
    c = Channel()
    c.send_raw(bad)
    assert c.close() == 1
