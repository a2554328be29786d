#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Generates src/core/unicode-tables.{c,h}: the Unicode properties the xagent
fingerprint (Python repr) and Python int() parsing depend on.

  gen-unicode-tables.py --npm DIR [--copy-data TESTDATA] OUTDIR
        write OUTDIR/unicode-tables.{c,h}. DIR holds node_modules/ with the npm
        packages @unicode/unicode-14.0.0, -15.0.0, -15.1.0 and -16.0.0 (install
        them into a scratch directory: npm install --prefix DIR <packages>); they
        are read with node, through the packages' own decoder. --copy-data copies
        the raw General_Category range files the tables come from to TESTDATA
        (tests/data/unicode), where the fingerprint oracle reads them on its own.
  gen-unicode-tables.py --check OUTDIR
        exit 1 unless the Python 3.11 parts of the files there (printability for
        Unicode 14.0.0, decimal digits, white space) equal this interpreter's
        unicodedata. Needs /usr/bin/python3 = Python 3.11; no npm data.

Printability, per Python version (the Unicode database each one ships):
str.isprintable() is false exactly for the General_Categories Cc, Cf, Cs, Co,
Cn, Zl, Zp and Zs other than U+0020, and repr() escapes exactly those. The
decimal and space tables (Python int() of a version label) are Python 3.11's.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import unicodedata

MAX_CP = 0x10FFFF
# (Python version, Unicode version), in the order of SbxPythonVersion.
VERSIONS = [("3.11", "14.0.0"), ("3.12", "15.0.0"), ("3.13", "15.1.0"), ("3.14", "16.0.0")]
BASE_UNICODE = "14.0.0"         # the /usr/bin/python3 of Debian 12, Python 3.11
NONPRINTABLE_CATEGORIES = {
    "Cc": "Control", "Cf": "Format", "Cs": "Surrogate", "Co": "Private_Use", "Cn": "Unassigned",
    "Zl": "Line_Separator", "Zp": "Paragraph_Separator", "Zs": "Space_Separator",
}

NODE_READER = r"""
const [dir, versions, names] = [process.argv[1], JSON.parse(process.argv[2]), JSON.parse(process.argv[3])];
const out = {};
for (const v of versions) {
        out[v] = {};
        for (const n of names) {
                const url = `file://${dir}/node_modules/@unicode/unicode-${v}/General_Category/${n}/ranges.mjs`;
                const ranges = (await import(url)).default;
                out[v][n] = ranges.map((r) => [r.begin, r.end - 1]);
        }
}
console.log(JSON.stringify(out));
"""


def ranges_of(pred):
    """Maximal runs [first, last] of code points for which pred holds."""
    out, start = [], None
    for c in range(MAX_CP + 2):
        hit = c <= MAX_CP and pred(c)
        if hit and start is None:
            start = c
        elif not hit and start is not None:
            out.append((start, c - 1))
            start = None
    return out


def merge(ranges):
    """Sorted, disjoint, non-adjacent ranges covering the union of ranges."""
    out = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def npm_nonprintable(npm_dir):
    """{unicode version: nonprintable ranges} from the npm packages, read by node."""
    names = sorted(NONPRINTABLE_CATEGORIES.values())
    unicode_versions = [u for _, u in VERSIONS]
    out = subprocess.run(["node", "--input-type=module", "-e", NODE_READER, os.path.abspath(npm_dir),
                          json.dumps(unicode_versions), json.dumps(names)],
                         stdout=subprocess.PIPE, check=True).stdout
    data = json.loads(out)
    tables = {}
    for u in unicode_versions:
        rs = [tuple(r) for n in names for r in data[u][n]]
        tables[u] = [r for r in split_space(merge(rs))]
    return tables


def split_space(ranges):
    """U+0020 (Zs) is printable: take it out."""
    for a, b in ranges:
        if a <= 0x20 <= b:
            if a < 0x20:
                yield (a, 0x1f)
            if b > 0x20:
                yield (0x21, b)
        else:
            yield (a, b)


def python_nonprintable():
    out = ranges_of(lambda c: not chr(c).isprintable())
    for c in range(MAX_CP + 1):
        by_category = unicodedata.category(chr(c)) in NONPRINTABLE_CATEGORIES and c != 0x20
        assert by_category == (not chr(c).isprintable()), hex(c)
    return out


def digit_runs():
    """Runs of consecutive decimal digits whose values increase by one."""
    out = []
    for c in range(MAX_CP + 1):
        ch = chr(c)
        if not ch.isdecimal():
            continue
        value = unicodedata.decimal(ch)
        assert 0 <= value <= 9 and int(ch) == value, hex(c)
        if out and out[-1][1] == c - 1 and out[-1][2] + (c - out[-1][0]) == value:
            out[-1] = (out[-1][0], c, out[-1][2])
        else:
            out.append((c, c, value))
    return out


def space_ranges():
    return ranges_of(lambda c: chr(c).isspace())


def count(ranges):
    return sum(b - a + 1 for a, b in ranges)


def differing(a, b):
    """How many code points are in exactly one of two range lists."""
    sa = {c for x, y in a for c in range(x, y + 1)}
    sb = {c for x, y in b for c in range(x, y + 1)}
    return len(sa ^ sb)


HEADER = """/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Generated by tools/gen-unicode-tables.py: printability from the npm packages
 * @unicode/unicode-{14.0.0,15.0.0,15.1.0,16.0.0} (General_Category), decimal
 * digits and white space from Python 3.11's unicodedata (Unicode 14.0.0).
 * Do not edit; re-run the script. */
"""

H_BODY = """#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct SbxUnicodeRange {
        uint32_t first, last;
} SbxUnicodeRange;

/* A run of decimal digits: code point c in [first, last] has the value
 * value + (c - first). */
typedef struct SbxUnicodeDigitRun {
        uint32_t first, last;
        uint8_t value;
} SbxUnicodeDigitRun;

/* The code points Python's str.isprintable() rejects (repr() escapes them) in
 * one Python version's Unicode database. Ranges sorted, disjoint, non-adjacent. */
typedef struct SbxUnicodeNonprintable {
        const char *python;             /* "3.11" */
        const char *unicode;            /* "14.0.0" */
        const SbxUnicodeRange *ranges;
        size_t n_ranges;
} SbxUnicodeNonprintable;

#define SBX_UNICODE_N_VERSIONS %d

/* In the order of SbxPythonVersion. */
extern const SbxUnicodeNonprintable sbx_unicode_nonprintable[SBX_UNICODE_N_VERSIONS];
extern const SbxUnicodeDigitRun sbx_unicode_decimal[];       /* str.isdecimal(), Python 3.11 */
extern const size_t sbx_unicode_decimal_len;
extern const SbxUnicodeRange sbx_unicode_space[];            /* str.isspace(), Python 3.11 */
extern const size_t sbx_unicode_space_len;
"""


def ident(unicode_version):
    return "nonprintable_" + "_".join(unicode_version.split(".")[:2])


def render_ranges(name, rs, storage="const"):
    lines = [f"{storage} SbxUnicodeRange {name}[] = {{"]
    lines += [f"        {{ 0x{a:06x}, 0x{b:06x} }}," for a, b in rs]
    lines += ["};", ""]
    return "\n".join(lines)


def render_nonprintable(unicode_version, rs):
    return render_ranges(ident(unicode_version), rs, "static const")


def render_decimal():
    runs = digit_runs()
    lines = ["const SbxUnicodeDigitRun sbx_unicode_decimal[] = {"]
    lines += [f"        {{ 0x{a:06x}, 0x{b:06x}, {v} }}," for a, b, v in runs]
    lines += ["};", f"const size_t sbx_unicode_decimal_len = {len(runs)};", ""]
    return "\n".join(lines)


def render_space():
    rs = space_ranges()
    return render_ranges("sbx_unicode_space", rs) + f"const size_t sbx_unicode_space_len = {len(rs)};\n"


def render_c(tables):
    parts = [HEADER, '#include "unicode-tables.h"', ""]
    base = tables[BASE_UNICODE]
    for python, u in VERSIONS:
        note = "" if u == BASE_UNICODE else \
            f" (differs from {BASE_UNICODE} in {differing(base, tables[u])} code points)"
        parts.append(f"/* Python {python}: Unicode {u}, {count(tables[u])} code points{note}. */")
        parts.append(render_nonprintable(u, tables[u]))
    parts.append("const SbxUnicodeNonprintable sbx_unicode_nonprintable[SBX_UNICODE_N_VERSIONS] = {")
    for python, u in VERSIONS:
        parts.append(f'        {{ "{python}", "{u}", {ident(u)}, sizeof({ident(u)}) / sizeof({ident(u)}[0]) }},')
    parts += ["};", ""]
    parts.append(render_decimal())
    parts.append(render_space())
    return "\n".join(parts)


def python_parts():
    """The parts of the generated C that Python 3.11 itself decides."""
    return [render_nonprintable(BASE_UNICODE, python_nonprintable()), render_decimal(), render_space()]


def need_base_python():
    if unicodedata.unidata_version != BASE_UNICODE:
        sys.exit(f"this Python has Unicode {unicodedata.unidata_version}; run /usr/bin/python3 "
                 f"(Python 3.11, Unicode {BASE_UNICODE})")


def check(outdir):
    path = f"{outdir}/unicode-tables.c"
    with open(path, encoding="utf-8") as f:
        text = f.read()
    stale = [p.split("[", 1)[0] for p in python_parts() if p not in text]
    if stale:
        sys.exit(f"{path}: out of date against Python {sys.version_info[0]}.{sys.version_info[1]}: "
                 + "; ".join(stale) + " (re-run tools/gen-unicode-tables.py --npm DIR src/core)")
    print(f"Unicode {BASE_UNICODE}: the Python 3.11 tables are current")


def copy_data(npm_dir, dest):
    for _, u in VERSIONS:
        os.makedirs(f"{dest}/{u}", exist_ok=True)
        for name in NONPRINTABLE_CATEGORIES.values():
            shutil.copyfile(f"{npm_dir}/node_modules/@unicode/unicode-{u}/General_Category/{name}/ranges.mjs",
                            f"{dest}/{u}/{name}.mjs")


def generate(npm_dir, outdir, data_dir):
    tables = npm_nonprintable(npm_dir)
    assert tables[BASE_UNICODE] == python_nonprintable(), "npm's Unicode 14.0.0 is not Python 3.11's"
    c = render_c(tables)
    assert all(p in c for p in python_parts())
    with open(f"{outdir}/unicode-tables.h", "w", encoding="utf-8") as f:
        f.write(HEADER + H_BODY % len(VERSIONS))
    with open(f"{outdir}/unicode-tables.c", "w", encoding="utf-8") as f:
        f.write(c)
    if data_dir:
        copy_data(npm_dir, data_dir)
    for python, u in VERSIONS:
        print(f"Python {python} (Unicode {u}): {count(tables[u])} non-printable code points, "
              f"{differing(tables[BASE_UNICODE], tables[u])} differ from {BASE_UNICODE}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true")
    p.add_argument("--npm")
    p.add_argument("--copy-data")
    p.add_argument("outdir")
    args = p.parse_args()
    need_base_python()
    if args.check:
        check(args.outdir)
    elif args.npm:
        generate(args.npm, args.outdir, args.copy_data)
    else:
        p.error("give --npm DIR to generate, or --check")


if __name__ == "__main__":
    main()
