#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Property test of the C fingerprint against a plain-Python restatement of the
xagent contract (§1.2 from_parts(), §1.3 canonical_sandbox_path(), §2
fingerprint(), §5 rule 2 int()), for every Python version xagent may run on.

  fingerprint-oracle.py BATCH [--seed N] [--count N] [--data DIR]

BATCH is tests/fingerprint-batch (--wrap runs it under e.g. valgrind). The
oracle restates Python's str repr() with a Unicode database read from DIR
(default tests/data/unicode: the npm @unicode/unicode-X packages' General_Category
ranges, decoded here on their own), and first proves the restatement equal to
this interpreter's real repr() for all 1,114,112 code points (Python 3.11,
Unicode 14.0.0). Then, per Python version 3.11, 3.12, 3.13, 3.14:
  specs        --count random specs (default 10000) from a fixed seed: the
               canonical bytes and the fingerprint must be identical, and both
               sides must refuse the same specs;
  json         the same specs in this service's JSON format, through the
               contract-level parser (everything from_parts() accepts);
  json-ascii   those specs and --count Unicode-heavy ones (astral code points,
               CJK Ext F, code points whose low 16 bits are D800-DFFF) written
               as json.dumps() writes by default (ensure_ascii: every non-ASCII
               character a \\u escape, astral ones as surrogate pairs), and
               (3.11) each with a lone surrogate escape in it, which the
               reader refuses (json.loads() keeps it; no spec string can hold it);
  code-points  3.11: repr(), isdecimal()/decimal(), isspace(), isprintable() of
               every code point U+0001…U+10FFFF except the surrogates; the other
               versions: their C table equals the data's ranges, and repr() of
               each code point whose printability differs between versions.
And once: ints, random strings through int() vs. sbx_py_int_parse().
U+0000 is never generated: SbxSpec strings are C strings and cannot hold it.
Must run under Python 3.11 (Unicode 14.0.0).
"""

import argparse
import bisect
import hashlib
import json
import os
import posixpath
import random
import re
import shlex
import subprocess
import sys
import unicodedata

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
MAX_CP = 0x10FFFF
VERSIONS = [("3.11", "14.0.0"), ("3.12", "15.0.0"), ("3.13", "15.1.0"), ("3.14", "16.0.0")]
NONPRINTABLE = ["Control", "Format", "Surrogate", "Private_Use", "Unassigned", "Line_Separator",
                "Paragraph_Separator", "Space_Separator"]     # Cc Cf Cs Co Cn Zl Zp Zs
DEFAULT_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "unicode")
JSON_DEFAULT_IMAGE = "img:default"


# ---- one Python version's Unicode database ------------------------------------

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def decode_deltas(text):
    """The packages' variable-length base64 numbers (5/10/15/21 bits)."""
    out, i = [], 0
    while i < len(text):
        x = B64.index(text[i])
        i += 1
        extra = {32: 1, 40: 1, 48: 2, 56: 3}.get(x & 56, 0)
        x &= 15 if extra == 1 else 7 if extra else 63
        for _ in range(extra):
            x = (x << 6) | B64.index(text[i])
            i += 1
        out.append(x)
    return out


def decode_ranges(text):
    """[first, last] ranges from the packages' run-length encoding."""
    d, out, end = decode_deltas(text), [], -1
    for i in range(1, len(d), 2):
        begin = end + 1 + d[i - 1]
        end = begin + 1 + d[i]
        out.append((begin, end - 1))
    return out


class UnicodeDb:
    """The code points one Python version's isprintable() rejects."""

    def __init__(self, data_dir, unicode_version):
        ranges = []
        for name in NONPRINTABLE:
            with open(os.path.join(data_dir, unicode_version, name + ".mjs"), encoding="utf-8") as f:
                ranges += decode_ranges(re.search(r"decodeRanges\('([^']*)'\)", f.read()).group(1))
        ranges.sort()
        self.firsts = [a for a, _ in ranges]
        self.ranges = ranges

    def printable(self, c):
        if c == 0x20:
            return True
        i = bisect.bisect_right(self.firsts, c) - 1
        return not (i >= 0 and self.ranges[i][0] <= c <= self.ranges[i][1])


def repr_str(s, db):
    """CPython's unicode_repr() with the printability of db."""
    quote = '"' if "'" in s and '"' not in s else "'"
    out = [quote]
    for ch in s:
        c = ord(ch)
        if ch in (quote, "\\"):
            out.append("\\" + ch)
        elif ch in "\t\n\r":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r"}[ch])
        elif c < 0x20 or c == 0x7f:
            out.append(f"\\x{c:02x}")
        elif c < 0x7f or db.printable(c):
            out.append(ch)
        elif c <= 0xff:
            out.append(f"\\x{c:02x}")
        elif c <= 0xffff:
            out.append(f"\\u{c:04x}")
        else:
            out.append(f"\\U{c:08x}")
    out.append(quote)
    return "".join(out)


def repr_value(v, db):
    """repr() of the fingerprint tuple's values: str, int, bool, None, tuple."""
    if isinstance(v, str):
        return repr_str(v, db)
    if isinstance(v, tuple):
        items = [repr_value(x, db) for x in v]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return repr(v)


def check_restatement(db):
    """The restated repr() is this interpreter's, for every code point."""
    assert unicodedata.unidata_version == "14.0.0"
    bad = [c for c in range(MAX_CP + 1) if repr_str(chr(c), db) != repr(chr(c))
           or db.printable(c) != chr(c).isprintable()]
    print(f"restatement: {MAX_CP + 1 - len(bad)} of {MAX_CP + 1} code points as Python 3.11's repr()")
    return len(bad)


# ---- the contract, restated -------------------------------------------------

def canonical_sandbox_path(path):
    n = posixpath.normpath(path)
    if n.startswith("//"):
        n = "/" + n.lstrip("/")
    return n


def from_parts(*, template_type, image=None, snapshot_id=None, working_dir=None, cpus=None,
               memory=None, env=None, volumes=None, network_isolated=False, ports=None):
    """The normalized 10-tuple, or ValueError as __post_init__ raises it."""
    env = tuple(sorted(dict(env or []).items()))   # a later duplicate key wins
    volumes = tuple(sorted({(canonical_sandbox_path(h), canonical_sandbox_path(g), m)
                            for h, g, m in volumes or []}))
    ports = tuple(sorted({(h, g) for h, g in ports or []}))
    working_dir = canonical_sandbox_path(working_dir) if working_dir else "/home"
    cpus = cpus or 1
    memory = memory or 512
    if template_type == "image":
        if not image or snapshot_id:
            raise ValueError("template_type='image' requires 'image' and forbids 'snapshot_id'")
    elif template_type == "snapshot":
        if not snapshot_id or image:
            raise ValueError("template_type='snapshot' requires 'snapshot_id' and forbids 'image'")
    else:
        raise ValueError(f"unknown template_type: {template_type!r}")
    if cpus < 1:
        raise ValueError(f"cpus must be >= 1 to be realizable, got {cpus!r}")
    if memory < 128:
        raise ValueError(f"memory must be >= 128 MB to be realizable, got {memory!r}")
    return (template_type, image, snapshot_id, working_dir, cpus, memory, env, volumes,
            network_isolated, ports)


def expected_line(spec, db):
    try:
        t = from_parts(**spec)
    except ValueError:
        return "error"
    text = repr_value(t, db)
    if db is BASE_DB:
        assert text == repr(t), spec
    canonical = text.encode("utf-8")
    return f"{canonical.hex()} {hashlib.sha256(canonical).hexdigest()}"


BASE_DB = None      # Unicode 14.0.0, set in main()


# ---- known vectors (contract §2), so a wrong oracle cannot pass ------------

VECTORS = [
    (dict(template_type="image", image="xprobe/xagent-sandbox:latest"),
     "74bdfffa02ebff2f8698c27f615c9f69afda69ded16442baa97112e494e6bbe3"),
    (dict(template_type="image", image="python:3.12-slim", working_dir="/home", cpus=1, memory=512,
          env=[("FOO", "bar"), ("BAZ", "qux")], volumes=[("/host/a", "/guest/a", "ro")],
          ports=[(8080, 80)]),
     "faa07e00685bf70d80690bfb465ad1958c65b19b41064f8bd0c22df011e1d62e"),
    (dict(template_type="snapshot", snapshot_id="snap-1"),
     "c6a5a8fb70a563eb4f108f4c867be81064eef4cab1ad36a9709f7db7396f2440"),
    (dict(template_type="image", image="img", cpus=0, memory=0, working_dir=""),
     "c6068b21e285d316b179636cc3dddcb8506cab51e118931cc468425b4c702afa"),
]


def check_vectors():
    for spec, fp in VECTORS:
        got = expected_line(spec, BASE_DB).split()[1]
        assert got == fp, (spec, got)


# ---- random specs ------------------------------------------------------------

SPECIAL_CHARS = [
    "'", '"', "\\", "\t", "\n", "\r", "\x01", "\x1b", "\x1f", "\x7f", "\x80", "\x85", "\x9f",
    "\xa0", "\xad", "\xe9", "\xff", "\u0378", "\u0600", "\u200b", "\u200d", "\u2028", "\u2029",
    "\u3000", "\ue000", "\uf8ff", "\ufeff", "\ufffd", "\uffff", "\U0001f600", "\U000e0001",
    "\U000e0080", "\U000f0000", "\U0010fffd", "\U0010ffff", "\u0301", "\u0661", " ", "/", ".",
]


def random_code_point(rng):
    while True:
        c = rng.choice([rng.randint(1, 0x7f), rng.randint(0x80, 0xffff), rng.randint(1, MAX_CP)])
        if not 0xD800 <= c <= 0xDFFF:
            return chr(c)


VERSION_SENSITIVE = []     # code points whose printability differs between versions, set in main()


HEAVY = [False]     # random_char() draws astral code points mostly (random_heavy_specs())
CJK_EXT_F = (0x2CEB0, 0x2EBEF)


def random_astral(rng):
    r = rng.random()
    if r < 0.3:
        return chr(rng.randint(*CJK_EXT_F))
    if r < 0.6:     # low 16 bits in D800-DFFF: json-c 0.16 made these U+FFFD
        return chr(rng.randint(1, 16) << 16 | rng.randint(0xD800, 0xDFFF))
    return chr(rng.randint(0x10000, MAX_CP))


def random_char(rng):
    r = rng.random()
    if HEAVY[0] and r < 0.6:
        return random_astral(rng)
    if r < 0.45:
        return chr(rng.randint(0x20, 0x7e))
    if r < 0.70:
        return rng.choice(SPECIAL_CHARS)
    if r < 0.80:
        return chr(rng.choice(VERSION_SENSITIVE))
    return random_code_point(rng)


def random_string(rng, max_len=10):
    return "".join(random_char(rng) for _ in range(rng.randint(0, max_len)))


def random_segment(rng):
    return rng.choice(["", ".", "..", "a", "data", "home", "x y", "sub", random_string(rng, 6)]).replace("/", "_")


def random_path(rng):
    r = rng.random()
    if r < 0.1:
        return rng.choice(["", ".", "/", "//", "///", "..", "/..", "~/x"])
    segs = [random_segment(rng) for _ in range(rng.randint(0, 5))]
    lead = rng.choice(["", "/", "/", "/", "//", "///"])
    return lead + "/".join(segs) + rng.choice(["", "", "/", "//"])


def random_int(rng, choices):
    c = rng.choice(choices)
    return c(rng) if callable(c) else c


def maybe_dup(rng, make):
    out = []
    for _ in range(rng.randint(0, 6)):
        out.append(rng.choice(out) if out and rng.random() < 0.25 else make())
    return out


def random_optional_string(rng):
    return rng.choice([None, "", random_string(rng, 12), random_string(rng, 12)])


def random_spec(rng):
    template_type = rng.choice(["image", "snapshot"])
    image, snapshot_id = random_optional_string(rng), random_optional_string(rng)
    if rng.random() < 0.9:      # mostly valid combinations
        if template_type == "image":
            image = image or "img:" + random_string(rng, 8)
            snapshot_id = rng.choice([None, None, ""])
        else:
            snapshot_id = snapshot_id or "snap-" + random_string(rng, 8)
            image = rng.choice([None, None, ""])
    env_keys = ["A", "B", "PATH", "é", "", "a=b", random_string(rng, 4)]
    return dict(
        template_type=template_type,
        image=image,
        snapshot_id=snapshot_id,
        working_dir=rng.choice([None, "", random_path(rng), random_path(rng)]),
        cpus=random_int(rng, [0, 0, 1, 2, lambda r: r.randint(1, 1024), INT64_MAX]
                        if rng.random() < 0.97 else [-1, INT64_MIN]),
        memory=random_int(rng, [0, 0, 128, 512, lambda r: r.randint(128, 1 << 24), INT64_MAX]
                          if rng.random() < 0.97 else [127, 1, -5]),
        env=maybe_dup(rng, lambda: (rng.choice(env_keys + [random_string(rng)]), random_string(rng, 12))),
        volumes=maybe_dup(rng, lambda: (random_path(rng), random_path(rng),
                                              rng.choice(["ro", "rw", "RO", "", random_string(rng, 3)]))),
        network_isolated=rng.random() < 0.5,
        ports=maybe_dup(rng, lambda: tuple(random_int(rng, [0, 80, 8080, 65535, -1, INT64_MAX, INT64_MIN,
                                                                 lambda r: r.randint(0, 70000)])
                                                 for _ in range(2))),
    )


def service_json(spec):
    """The spec in this service's JSON format, and the from_parts() arguments it
    stands for (the default image filled in, INT64_MIN lifted by one); None if
    the format cannot say it (an image template with a snapshot_id)."""
    def lift(i):    # the JSON reader's range starts at INT64_MIN + 1
        return INT64_MIN + 1 if i == INT64_MIN else i

    spec = dict(spec, cpus=lift(spec["cpus"]), memory=lift(spec["memory"]),
                ports=[tuple(map(lift, p)) for p in spec["ports"]])
    d, parts = {}, dict(spec)
    if spec["template_type"] == "snapshot":
        d["snapshot"] = spec["snapshot_id"]
        if spec["image"] is not None:
            d["image"] = spec["image"]
    elif spec["snapshot_id"] is not None:
        return None
    elif spec["image"] is None:
        parts["image"] = JSON_DEFAULT_IMAGE
    else:
        d["image"] = spec["image"]
    d.update(working_dir=spec["working_dir"], cpus=spec["cpus"], memory=spec["memory"],
             env=dict(spec["env"]), volumes=[list(v) for v in spec["volumes"]],
             network_isolated=spec["network_isolated"], ports=[list(p) for p in spec["ports"]])
    return json.dumps(d, ensure_ascii=False) + "\n", parts


def random_heavy_specs(rng, count):
    HEAVY[0] = True
    try:
        return [random_spec(rng) for _ in range(count)]
    finally:
        HEAVY[0] = False


LONE_SURROGATES = ["\\ud800", "\\udbff", "\\udc00", "\\udfff", "\\udc00\\ud800", "\\ud876x"]


def with_lone_surrogate(rng, line):
    """line with a lone surrogate escape put into the first string after its first key."""
    i = line.index('"', line.index(":")) + 1
    return line[:i] + rng.choice(LONE_SURROGATES) + line[i:]


def run_batch(batch, mode, lines, version=None):
    out = subprocess.run(batch + [mode] + ([version] if version else []), input="".join(lines).encode("utf-8"),
                         stdout=subprocess.PIPE, check=True).stdout
    return out.split(b"\n")[:-1]   # bytes: U+2028 in a repr is not a line break


def compare(name, expected, got, describe):
    failed = 0
    if len(got) != len(expected):
        print(f"{name}: C printed {len(got)} lines for {len(expected)} inputs")
        return len(expected), len(expected)
    for i, (e, g) in enumerate(zip(expected, got)):
        if e != g:
            failed += 1
            if failed <= 5:
                print(f"{name}: MISMATCH for {describe(i)}\n  python: {e!r}\n  C:      {g!r}")
    print(f"{name}: {len(expected) - failed} passed, {failed} failed")
    return len(expected) - failed, failed


def check_specs(batch, specs, version, db):
    lines = [json.dumps(s, ensure_ascii=False) + "\n" for s in specs]
    expected = [expected_line(s, db).encode() for s in specs]
    errors = sum(e == b"error" for e in expected)
    name = f"specs {version}"
    print(f"{name}: {len(specs)} generated, {errors} of them invalid per __post_init__")
    return compare(name, expected, run_batch(batch, "specs", lines, version), lambda i: lines[i].strip())


def check_json(batch, specs, version, db):
    converted = [c for c in map(service_json, specs) if c]
    lines = [line for line, _ in converted]
    expected = [expected_line(parts, db).encode() for _, parts in converted]
    name = f"json {version}"
    print(f"{name}: {len(lines)} of the specs in the JSON format, "
          f"{sum(e != b'error' for e in expected)} of them valid for from_parts()")
    return compare(name, expected, run_batch(batch, "json", lines, version), lambda i: lines[i].strip())


def check_json_ascii(batch, specs, version, db, rng):
    """rng: for the lone surrogates (None: none, they do not depend on the version)."""
    converted = [c for c in map(service_json, specs) if c]
    lines = [json.dumps(json.loads(line), ensure_ascii=True) + "\n" for line, _ in converted]
    expected = [expected_line(parts, db).encode() for _, parts in converted]
    lone = [with_lone_surrogate(rng, line) for line in lines] if rng else []
    assert all(json.loads(line) is not None for line in lone)  # Python takes them
    name = f"json-ascii {version}"
    astral = sum(bool(re.search(r"\\ud[89ab]", line)) for line in lines)
    print(f"{name}: {len(lines)} specs with every non-ASCII character escaped, {astral} of them with surrogate "
          f"pairs; {len(lone)} with a lone surrogate, refused")
    return compare(name, expected + [b"error"] * len(lone), run_batch(batch, "json", lines + lone, version),
                   lambda i: (lines + lone)[i].strip())


def check_table(batch, version, db):
    """The C table of version is the data's, range for range (sbx_unicode_is_printable()
    itself is proven on every code point by the 3.11 check)."""
    expected = [f"{a:x} {b:x}".encode() for a, b in merge_ranges(db.ranges, exclude=0x20)]
    got = subprocess.run(batch + ["ranges", version], stdout=subprocess.PIPE, check=True).stdout
    failed = compare(f"table {version}", expected, got.split(b"\n")[:-1], lambda i: f"range {i}")[1]
    lines = [json.dumps(chr(c), ensure_ascii=False) + "\n" for c in VERSION_SENSITIVE]
    expected = [repr_str(chr(c), db).encode("utf-8") for c in VERSION_SENSITIVE]
    failed += compare(f"code-points {version}", expected, run_batch(batch, "strings", lines, version),
                      lambda i: f"U+{VERSION_SENSITIVE[i]:04X}")[1]
    return failed


def merge_ranges(ranges, exclude):
    """Sorted, disjoint, non-adjacent ranges of the union, without the code point exclude."""
    out = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    split = []
    for a, b in out:
        split += [(x, y) for x, y in ((a, min(b, exclude - 1)), (max(a, exclude + 1), b)) if x <= y] \
            if a <= exclude <= b else [(a, b)]
    return split


def check_code_points(batch, version, db):
    expected = []
    for c in range(1, MAX_CP + 1):
        if 0xD800 <= c <= 0xDFFF:
            continue
        ch = chr(c)
        decimal = unicodedata.decimal(ch) if ch.isdecimal() else -1
        expected.append(f"{repr_str(ch, db)}\t{decimal}\t{int(ch.isspace())}\t{int(db.printable(c))}"
                        .encode("utf-8"))
    got = subprocess.run(batch + ["code-points", version], stdout=subprocess.PIPE, check=True).stdout
    return compare(f"code-points {version}", expected, got.split(b"\n")[:-1],
                   lambda i: "the code point on line %d" % (i + 1))


INT_ALPHABET = list("0123456789_+- \t\n\v\f\r.xe") + [
    "\x1c", "\x1f", "\x85", "\xa0", "\u2028", "\u3000", "\u0660", "\u0661", "\u0669", "\u06f5",
    "\u0966", "\uff11", "\U0001d7ce", "\U0001d7ff", "\U0001fbf9", "\xb2", "\u2155", "\u00bd", "\x7f",
]


def random_int_string(rng):
    r = rng.random()
    if r < 0.15:
        v = rng.choice([INT64_MAX, INT64_MIN, INT64_MAX + 1, INT64_MIN - 1, 0, 1, -1,
                        rng.randint(-2 ** 70, 2 ** 70)])
        return rng.choice(["", " ", "+", "0"]) + str(v) + rng.choice(["", "\n", " "])
    if r < 0.2:
        n = rng.choice([4299, 4300, 4301])
        return rng.choice(["", "0" * (n - 1)]) + "1" * (1 if rng.random() < 0.5 else n)
    return "".join(rng.choice(INT_ALPHABET) if rng.random() < 0.6 else rng.choice("0123456789")
                   for _ in range(rng.randint(0, 8)))


def expected_int(s):
    try:
        v = int(s)
    except ValueError:
        return b"EINVAL"
    return b"ERANGE" if not INT64_MIN <= v <= INT64_MAX else f"ok {v}".encode()


def check_ints(batch, rng, count):
    strings = [random_int_string(rng) for _ in range(count)]
    lines = [json.dumps(s, ensure_ascii=False) + "\n" for s in strings]
    expected = [expected_int(s) for s in strings]
    return compare("ints", expected, run_batch(batch, "ints", lines), lambda i: repr(strings[i][:60]))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("batch")
    p.add_argument("--seed", type=int, default=1007)
    p.add_argument("--count", type=int, default=10000)
    p.add_argument("--data", default=DEFAULT_DATA, help="the npm packages' General_Category ranges")
    p.add_argument("--wrap", default="", help="command to run BATCH under, e.g. valgrind")
    args = p.parse_args()
    batch = shlex.split(args.wrap) + [args.batch]

    global BASE_DB
    if unicodedata.unidata_version != "14.0.0":
        sys.exit(f"need Python 3.11 (Unicode 14.0.0), this is Unicode {unicodedata.unidata_version}")
    dbs = {python: UnicodeDb(args.data, u) for python, u in VERSIONS}
    BASE_DB = dbs["3.11"]
    failed = check_restatement(BASE_DB)
    check_vectors()
    VERSION_SENSITIVE.extend(c for c in range(MAX_CP + 1) if not 0xD800 <= c <= 0xDFFF
                             and len({db.printable(c) for db in dbs.values()}) > 1)
    print(f"{len(VERSION_SENSITIVE)} code points differ in printability between the versions")
    rng = random.Random(args.seed)
    print(f"seed {args.seed}")
    specs = [random_spec(rng) for _ in range(args.count)]
    heavy = random_heavy_specs(rng, args.count)
    base = [expected_line(spec, BASE_DB) for spec in specs]
    for python, _ in VERSIONS[1:]:
        n = sum(e != expected_line(spec, dbs[python]) for spec, e in zip(specs, base))
        print(f"{n} of the specs have another fingerprint under Python {python} than under 3.11")
    for python, _ in VERSIONS:
        failed += check_specs(batch, specs, python, dbs[python])[1]
        failed += check_json(batch, specs, python, dbs[python])[1]
        failed += check_json_ascii(batch, specs + heavy, python, dbs[python],
                                   random.Random(args.seed) if dbs[python] is BASE_DB else None)[1]
        failed += check_code_points(batch, python, dbs[python])[1] if dbs[python] is BASE_DB \
            else check_table(batch, python, dbs[python])
    failed += check_ints(batch, rng, args.count)[1]
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
