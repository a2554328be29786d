# SPDX-License-Identifier: LGPL-2.1-or-later
"""A python3-dbus client, run AS a test user (runuser) against $DBUS_SYSTEM_BUS_ADDRESS.

Prints one JSON object on stdout; exit status 0 whenever it could talk to the bus (a
D-Bus error reply is a result, not a failure).

  client.py whoami
      {"unique_name": ":1.7", "uid": 1001}
  client.py hold
      Prints whoami's JSON, then keeps the connection until stdin reaches EOF (a live
      subject for a CheckAuthorization made by someone else).
  client.py request-name NAME
      {"ok": true, "result": [REPLY]} or the error (e.g. AccessDenied by bus policy).
  client.py check-self ACTION [--interactive] [--detail KEY=VALUE]...
      polkit CheckAuthorization with subject system-bus-name = this connection's own
      unique name: {"unique_name", "authorized", "challenge", "details"} or an error.
  client.py call DEST PATH INTERFACE.METHOD SIGNATURE JSON_ARGS [--interactive]
                 [--timeout S]
      A method call with typed arguments. JSON_ARGS is a JSON list, one element per
      complete type of SIGNATURE. A variant ("v") is written as [SIGNATURE, VALUE],
      e.g. the spec a{sv}: {"image": ["s", "busybox"], "cpus": ["u", 2]}.
      {"ok": true, "result": [...]} or {"ok": false, "error": NAME, "message": TEXT}.
      JSON_ARGS "-" reads them from stdin (for inputs larger than one argv string).
  client.py flood DEST PATH INTERFACE [--connections N] < PHASES
      Sends many calls without waiting for their replies. stdin is a JSON list of
      phases {"delay": SECONDS, "calls": [[METHOD, SIGNATURE, ARGS], ...]}: each phase's
      calls go out round-robin over N connections after its delay; prints the list of
      every call's reply (as `call` prints them), in the order the calls were given.
  client.py sequence DEST PATH INTERFACE < CALLS
      The calls of stdin's JSON list [[METHOD, SIGNATURE, ARGS], ...], one after the
      other on one connection, each waiting for its reply; prints the list of replies.
  client.py lines DEST PATH INTERFACE
      Like sequence, but one call per stdin line, each reply printed (one JSON line,
      flushed) before the next line is read; ends at EOF. For a test that acts between
      two calls on the same connection.
  client.py start-exec NAME ARGV_JSON OPTIONS_JSON [--vanish] [--kill SIGNAL] [--resize ROWS,COLS]
      StartExec with this process's own stdin, stdout and stderr as the exec's; waits
      for Exited and exits with the exit status (a D-Bus error: prints it as JSON on
      stderr, exits 250). --vanish: exits at once after the call (the connection
      closes with the process running); --kill: sends Kill(SIGNAL) once it started;
      --resize: sends Resize(ROWS, COLS) once it started.
  client.py attach EXEC_PATH
      Attach on a detached process's exec object with this process's own stdin, stdout
      and stderr; waits for its Exited (or, when it ended already, returns at once) and
      exits 0, keeping the connection (and so the session) until then. A D-Bus error:
      prints it as JSON on stderr, exits 250.
  client.py listen SENDER
      Subscribes to every signal from the bus name SENDER, prints {"ready": true} once
      the match is in place and the service knows this connection (it sends its signals
      as unicasts to the connections that called it and may read them: the listener
      calls GetManagedObjects, as an ObjectManager client does, and again whenever the
      name gets a new owner), then one {"member", "interface", "path", "args"} line per
      signal, until stdin reaches EOF.
"""

import argparse
import json
import os
import sys

import dbus
import dbus.lowlevel

BASIC = {
    "y": dbus.Byte, "b": dbus.Boolean, "n": dbus.Int16, "q": dbus.UInt16,
    "i": dbus.Int32, "u": dbus.UInt32, "x": dbus.Int64, "t": dbus.UInt64,
    "d": dbus.Double, "s": dbus.String, "o": dbus.ObjectPath, "g": dbus.Signature,
}


def unix_fd(value):
    """'h' arguments: "<PATH" opens PATH for reading, ">PATH" creates it for writing,
    as this user; a number passes that descriptor."""
    if isinstance(value, int):
        return dbus.types.UnixFd(value)
    if value[0] == "<":
        fd = os.open(value[1:], os.O_RDONLY)
    else:
        fd = os.open(value[1:], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        return dbus.types.UnixFd(fd)
    finally:
        os.close(fd)


def typed(sig, value):
    """JSON value → python-dbus value of the complete type sig."""
    c = sig[0]
    if c == "h":
        return unix_fd(value)
    if c in BASIC:
        return BASIC[c](value)
    if c == "v":
        inner_sig, inner = value
        return typed(inner_sig, inner)
    if sig.startswith("a{"):
        k, v = list(dbus.Signature(sig[2:-1]))
        return dbus.Dictionary({typed(k, a): typed(v, b) for a, b in value.items()},
                               signature=sig[2:-1])
    if c == "a":
        return dbus.Array([typed(sig[1:], x) for x in value], signature=sig[1:])
    if c == "(":
        parts = list(dbus.Signature(sig[1:-1]))
        if len(parts) != len(value):
            raise ValueError(f"struct {sig} needs {len(parts)} members")
        return dbus.Struct([typed(s, x) for s, x in zip(parts, value)],
                           signature=sig[1:-1])
    raise ValueError(f"unsupported type {sig}")


def plain(v):
    """python-dbus value → JSON-able value (variants unwrapped)."""
    if isinstance(v, dbus.Boolean):
        return bool(v)
    if isinstance(v, (dbus.Dictionary, dict)):
        return {str(plain(k)): plain(x) for k, x in v.items()}
    if isinstance(v, (dbus.Array, dbus.Struct, list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, (dbus.String, dbus.ObjectPath, dbus.Signature, str)):
        return str(v)
    if isinstance(v, dbus.Double):
        return float(v)
    if isinstance(v, int):
        return int(v)
    return v


def call(bus, dest, path, iface, method, sig, args, interactive=False, timeout=60):
    msg = dbus.lowlevel.MethodCallMessage(dest, path, iface, method)
    if sig:
        msg.append(signature=sig, *[typed(s, a) for s, a in zip(dbus.Signature(sig), args)])
    msg.set_allow_interactive_authorization(interactive)
    try:
        reply = bus.send_message_with_reply_and_block(msg, timeout)
    except dbus.exceptions.DBusException as e:
        return {"ok": False, "error": e.get_dbus_name(), "message": e.get_dbus_message()}
    return {"ok": True, "result": plain(reply.get_args_list())}


def listen(sender):
    """Prints the signals sent by sender's owner (whoever owns it at the time)."""
    import dbus.mainloop.glib
    from gi.repository import GLib

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    loop = GLib.MainLoop()

    def on_signal(*args, **kw):
        json.dump({"member": kw["member"], "interface": kw["interface"], "path": kw["path"],
                   "args": plain(list(args))}, sys.stdout)
        sys.stdout.write("\n")
        sys.stdout.flush()

    # sender_keyword etc. ask python-dbus to pass the header fields along.
    bus.add_signal_receiver(on_signal, sender_keyword="sender", member_keyword="member",
                            interface_keyword="interface", path_keyword="path",
                            bus_name=sender)
    # A round trip to the bus after AddMatch: once answered, the match is in force.
    bus.get_unique_name()
    bus.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                      "GetId", "", [])

    def subscribe(owner=None):
        if owner == "":
            return
        msg = dbus.lowlevel.MethodCallMessage(sender, "/org/xagent/Sandbox1",
                                              "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        if owner is None:
            try:
                bus.send_message_with_reply_and_block(msg, 60)
            except dbus.exceptions.DBusException:
                pass        # the service refused: it knows the connection all the same
        else:
            bus.send_message_with_reply(msg, lambda reply: None, 60)

    subscribe()
    bus.watch_name_owner(sender, subscribe)
    print(json.dumps({"ready": True}), flush=True)
    GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP,
                      lambda *_: (loop.quit(), False)[1])
    loop.run()
    return 0


def start_exec(name, argv, options, vanish, kill, resize):
    import dbus.mainloop.glib
    from gi.repository import GLib

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    loop = GLib.MainLoop()
    ended = {}                  # path: status, of every exec whose Exited this caller saw
    mine = []

    def on_exited(code, path=None):
        ended[str(path)] = int(code)
        if mine and mine[0] in ended:
            loop.quit()

    bus.add_signal_receiver(on_exited, signal_name="Exited", dbus_interface="org.xagent.Sandbox1.Exec",
                            path_keyword="path")
    manager = dbus.Interface(bus.get_object("org.xagent.Sandbox1", "/org/xagent/Sandbox1"),
                             "org.xagent.Sandbox1.Manager")
    opts = dbus.Dictionary({k: typed(sig, v) for k, (sig, v) in options.items()}, signature="sv")
    try:
        path = manager.StartExec(name, dbus.Array(argv, signature="s"), opts, dbus.types.UnixFd(0),
                                 dbus.types.UnixFd(1), dbus.types.UnixFd(2), timeout=60)
    except dbus.exceptions.DBusException as e:
        json.dump({"ok": False, "error": e.get_dbus_name(), "message": e.get_dbus_message()}, sys.stderr)
        return 250
    print(json.dumps({"exec": str(path)}), file=sys.stderr, flush=True)
    mine.append(str(path))
    if vanish:
        os._exit(0)
    obj = dbus.Interface(bus.get_object("org.xagent.Sandbox1", path), "org.xagent.Sandbox1.Exec")
    if resize:
        rows, cols = resize.split(",")
        obj.Resize(dbus.UInt16(int(rows)), dbus.UInt16(int(cols)))
    if kill:
        obj.Kill(kill)
    props = dbus.Interface(bus.get_object("org.xagent.Sandbox1", path), "org.freedesktop.DBus.Properties")
    if not props.Get("org.xagent.Sandbox1.Exec", "Running"):
        return int(props.Get("org.xagent.Sandbox1.Exec", "ExitStatus"))
    if mine[0] not in ended:
        loop.run()
    return ended[mine[0]]


def attach(path):
    import dbus.mainloop.glib
    from gi.repository import GLib

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    loop = GLib.MainLoop()
    bus.add_signal_receiver(lambda code: loop.quit(), signal_name="Exited",
                            dbus_interface="org.xagent.Sandbox1.Exec", path=path)
    obj = dbus.Interface(bus.get_object("org.xagent.Sandbox1", path), "org.xagent.Sandbox1.Exec")
    try:
        obj.Attach(dbus.types.UnixFd(0), dbus.types.UnixFd(1), dbus.types.UnixFd(2), timeout=60)
    except dbus.exceptions.DBusException as e:
        json.dump({"ok": False, "error": e.get_dbus_name(), "message": e.get_dbus_message()}, sys.stderr)
        return 250
    props = dbus.Interface(bus.get_object("org.xagent.Sandbox1", path), "org.freedesktop.DBus.Properties")
    if props.Get("org.xagent.Sandbox1.Exec", "Running"):
        loop.run()
    return 0


def flood(dest, path, iface, n_connections, phases):
    import dbus.mainloop.glib
    from gi.repository import GLib

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    address = os.environ["DBUS_SYSTEM_BUS_ADDRESS"]
    # Several connections: dbus-daemon caps the replies one connection may await.
    conns = [dbus.bus.BusConnection(address) for _ in range(n_connections)]
    loop = GLib.MainLoop()
    total = sum(len(p["calls"]) for p in phases)
    results = [None] * total
    pending = [total]

    def done(i, out):
        results[i] = out
        pending[0] -= 1
        if pending[0] == 0:
            loop.quit()

    def on_reply(i):
        def handler(reply):
            if reply.get_type() == dbus.lowlevel.MESSAGE_TYPE_ERROR:
                args = reply.get_args_list()
                done(i, {"ok": False, "error": reply.get_error_name(),
                         "message": str(args[0]) if args else ""})
            else:
                done(i, {"ok": True, "result": plain(reply.get_args_list())})
        return handler

    keep = []

    def send(first, calls):
        for k, (method, sig, args) in enumerate(calls):
            msg = dbus.lowlevel.MethodCallMessage(dest, path, iface, method)
            if sig:
                msg.append(signature=sig,
                           *[typed(s, x) for s, x in zip(dbus.Signature(sig), args)])
            conn = conns[(first + k) % len(conns)]
            keep.append(conn.send_message_with_reply(msg, on_reply(first + k), 120))
        return False

    first = 0
    for phase in phases:
        GLib.timeout_add(int(phase.get("delay", 0) * 1000), send, first, phase["calls"])
        first += len(phase["calls"])
    if total:
        loop.run()
    json.dump(results, sys.stdout)
    sys.stdout.write("\n")
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("whoami")
    sub.add_parser("hold")
    sub.add_parser("request-name").add_argument("name")
    p = sub.add_parser("check-self")
    p.add_argument("action")
    p.add_argument("--interactive", action="store_true")
    p.add_argument("--detail", action="append", default=[])
    p = sub.add_parser("call")
    for a in ("dest", "path", "method", "signature", "args"):
        p.add_argument(a)
    p.add_argument("--interactive", action="store_true")
    p.add_argument("--timeout", type=float, default=60)
    sub.add_parser("listen").add_argument("sender")
    sub.add_parser("attach").add_argument("path")
    p = sub.add_parser("start-exec")
    for a in ("name", "argv", "options"):
        p.add_argument(a)
    p.add_argument("--vanish", action="store_true")
    p.add_argument("--kill")
    p.add_argument("--resize")
    p = sub.add_parser("flood")
    for a in ("dest", "path", "interface"):
        p.add_argument(a)
    p.add_argument("--connections", type=int, default=4)
    for cmd in ("sequence", "lines"):
        p = sub.add_parser(cmd)
        for a in ("dest", "path", "interface"):
            p.add_argument(a)
    a = ap.parse_args()

    if a.cmd == "listen":
        return listen(a.sender)
    if a.cmd == "attach":
        return attach(a.path)
    if a.cmd == "start-exec":
        return start_exec(a.name, json.loads(a.argv), json.loads(a.options), a.vanish, a.kill, a.resize)
    if a.cmd == "flood":
        return flood(a.dest, a.path, a.interface, a.connections, json.load(sys.stdin))

    bus = dbus.SystemBus()
    me = bus.get_unique_name()
    if a.cmd in ("whoami", "hold"):
        out = {"unique_name": me, "uid": os.getuid()}
        if a.cmd == "hold":
            print(json.dumps(out), flush=True)
            sys.stdin.read()
            return 0
    elif a.cmd == "lines":
        for line in sys.stdin:
            method, sig, args = json.loads(line)
            print(json.dumps(call(bus, a.dest, a.path, a.interface, method, sig, args)), flush=True)
        return 0
    elif a.cmd == "sequence":
        out = [call(bus, a.dest, a.path, a.interface, method, sig, args)
               for method, sig, args in json.load(sys.stdin)]
    elif a.cmd == "request-name":
        # flags 4 = DBUS_NAME_FLAG_DO_NOT_QUEUE
        out = call(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                   "org.freedesktop.DBus", "RequestName", "su", [a.name, 4])
    elif a.cmd == "check-self":
        details = dict(d.split("=", 1) for d in a.detail)
        r = call(bus, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                 "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization",
                 "(sa{sv})sa{ss}us",
                 [["system-bus-name", {"name": ["s", me]}], a.action, details,
                  1 if a.interactive else 0, ""],
                 interactive=a.interactive)
        if r["ok"]:
            authorized, challenge, rdetails = r["result"][0]
            out = {"unique_name": me, "uid": os.getuid(), "authorized": authorized,
                   "challenge": challenge, "details": rdetails}
        else:
            out = dict(r, unique_name=me, uid=os.getuid())
    else:
        iface, _, method = a.method.rpartition(".")
        args = json.loads(sys.stdin.read() if a.args == "-" else a.args)
        out = call(bus, a.dest, a.path, iface, method, a.signature, args,
                   interactive=a.interactive, timeout=a.timeout)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
