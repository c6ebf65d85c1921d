"""Recover the readable part of a truncated PDF.

A PDF cut short (an interrupted download, a full disk) loses its end, and
with it the cross-reference table or stream, the trailer and often the
catalog: every reader then refuses the whole file.  The objects before the
cut are intact, though, including the pages whose content streams survived.
repair_truncated() keeps the bytes up to the last complete object and appends
a new page tree (every page object found, also inside compressed object
streams), a catalog and a trailer; pdfminer's fallback scan then finds every
object by its 'N 0 obj' header.  Pages whose content or fonts were lost read
as empty or fail alone, and the caller reports the document as partial.
"""

from __future__ import annotations

import re
import zlib

_OBJ = re.compile(rb"(\d+)\s+(\d+)\s+obj\b")
_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_MEDIABOX = re.compile(rb"/MediaBox\s*\[([^\]]*)\]")


def looks_truncated(data: bytes) -> bool:
    """No end-of-file marker in the last kilobyte: the file was cut short."""
    return b"%%EOF" not in data[-1024:]


def _object_streams(body: bytes):
    """(object number, text) of the objects stored inside /ObjStm streams."""
    for m in re.finditer(rb"<<(?:(?!>>\s*stream).)*?/Type\s*/ObjStm(?:(?!>>\s*stream).)*?>>\s*stream\r?\n", body, re.S):
        head = m.group(0)
        n = re.search(rb"/N\s+(\d+)", head)
        first = re.search(rb"/First\s+(\d+)", head)
        end = body.find(b"endstream", m.end())
        if not n or not first or end < 0 or b"/FlateDecode" not in head:
            continue
        try:
            raw = zlib.decompressobj().decompress(body[m.end() : end])
        except zlib.error:
            continue
        numbers = raw[: int(first.group(1))].split()
        pairs = [(int(numbers[i]), int(numbers[i + 1])) for i in range(0, len(numbers) - 1, 2)]
        for k, (objnum, offset) in enumerate(pairs[: int(n.group(1))]):
            start = int(first.group(1)) + offset
            stop = int(first.group(1)) + pairs[k + 1][1] if k + 1 < len(pairs) else len(raw)
            yield objnum, raw[start:stop]


def repair_truncated(data: bytes) -> tuple[bytes, int] | None:
    """(repaired PDF bytes, pages found), or None when no page survived."""
    end = data.rfind(b"endobj")
    if end < 0:
        return None
    body = data[: end + len(b"endobj")]
    pages: dict[int, bytes] = {}
    starts = list(_OBJ.finditer(body))
    for k, m in enumerate(starts):
        stop = starts[k + 1].start() if k + 1 < len(starts) else len(body)
        text = body[m.end() : stop]
        head = text.split(b"stream", 1)[0]
        if _PAGE.search(head):
            pages[int(m.group(1))] = head
    for objnum, text in _object_streams(body):
        if _PAGE.search(text):
            pages[objnum] = text
    if not pages:
        return None
    box = next((mb.group(1) for t in pages.values() for mb in [_MEDIABOX.search(t)] if mb), b"0 0 612 792")
    top = max(int(m.group(1)) for m in starts) + 1
    kids = b" ".join(b"%d 0 R" % n for n in sorted(pages))
    tail = (
        b"\n%d 0 obj\n<< /Type /Pages /Kids [%s] /Count %d /MediaBox [%s] >>\nendobj\n"
        b"%d 0 obj\n<< /Type /Catalog /Pages %d 0 R >>\nendobj\n"
        b"trailer\n<< /Size %d /Root %d 0 R >>\n%%%%EOF\n"
        % (top, kids, len(pages), box, top + 1, top, top + 2, top + 1)
    )
    return body + tail, len(pages)
