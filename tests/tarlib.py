# SPDX-License-Identifier: LGPL-2.1-or-later
"""Tar archives for the tests of the copy filter (tests/test_tar_filter.py, and the
e2e copies through sandbox_helpers.module()), made by Python's tarfile."""

import io
import tarfile


def archive(entries, fmt=tarfile.PAX_FORMAT):
    """The bytes of an archive of entries: (TarInfo fields as a dict, data or None)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for fields, data in entries:
            fields = dict(fields)
            info = tarfile.TarInfo(fields.pop("name"))
            for k, v in fields.items():
                setattr(info, k, v)
            if data is not None:
                info.size = len(data)
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()
