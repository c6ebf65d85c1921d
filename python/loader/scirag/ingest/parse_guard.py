"""A parse budget per document (issue 26): every file is parsed in a worker process
with a memory limit (RLIMIT_AS) and a wall-clock limit that kills it, so a hostile
file (a deflate bomb, a pathological content stream) costs at most its budget and
becomes a failed report row; the run goes on with a fresh worker.

The worker is one long-lived child (``python -m scirag.ingest.parse_guard``), reused from
document to document, so the price of a process start is paid once per run and
again only after a kill. Requests and results travel as length-prefixed pickles
over its stdin and stdout. Inside the worker, every zlib stream pdfminer inflates is
capped (``MAX_INFLATED_BYTES``); pypdf has its own caps (75 MB per stream).

Budgets: ``SCIRAG_PARSE_SECONDS`` (default 300) and ``SCIRAG_PARSE_MEMORY_MB``
(default 2048), or ``scirag ingest --parse-seconds / --parse-memory-mb``.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from scirag.ingest.parse import ParseError, ParsedDocument

DEFAULT_SECONDS = 300.0
DEFAULT_MEMORY_MB = 2048
MAX_INFLATED_BYTES = 64 * 1024 * 1024  # one inflated PDF stream; a page's text is far below
INFLATE_MESSAGE = f"decompression limit: a compressed stream inflates past {MAX_INFLATED_BYTES >> 20} MB"
_HEADER = struct.Struct("!Q")


@dataclass(frozen=True)
class ParseBudget:
    seconds: float = DEFAULT_SECONDS
    memory_mb: int = DEFAULT_MEMORY_MB

    @classmethod
    def from_env(cls, seconds: float | None = None, memory_mb: int | None = None) -> ParseBudget:
        def pick(value, name, default, cast):
            if value is not None:
                return value
            raw = os.environ.get(name)
            if raw is None or raw == "":
                return default
            try:
                return cast(raw)
            except ValueError:
                raise ValueError(f"{name} must be a number (got {raw!r})") from None

        budget = cls(
            pick(seconds, "SCIRAG_PARSE_SECONDS", DEFAULT_SECONDS, float),
            pick(memory_mb, "SCIRAG_PARSE_MEMORY_MB", DEFAULT_MEMORY_MB, int),
        )
        if not 0 < budget.seconds <= 86_400:
            raise ValueError(f"parse seconds must be between 0 and 86400 (got {budget.seconds})")
        if not 256 <= budget.memory_mb <= 1_048_576:
            raise ValueError(f"parse memory must be between 256 and 1048576 MB (got {budget.memory_mb})")
        return budget


class BudgetExceeded(ParseError):
    """The document used up its parse budget (time or memory); the worker was stopped."""


class InflateLimit(Exception):
    """A compressed stream inflates past MAX_INFLATED_BYTES."""


def _write(fh, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    fh.write(_HEADER.pack(len(data)) + data)
    fh.flush()


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes | None:
    """n bytes from fd, or None at EOF; raises TimeoutError past deadline."""
    parts, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


class GuardedParser:
    """Parses files and texts in a worker process within a ParseBudget."""

    def __init__(self, budget: ParseBudget | None = None):
        self.budget = budget or ParseBudget.from_env()
        self._proc: subprocess.Popen | None = None
        self.exceeded: dict[str, str] = {}  # path -> why its budget ran out
        self.cpu_seconds = 0.0  # CPU the worker spent on the requests answered
        self.requests: Counter = Counter()  # requests sent, by kind ('file', 'meta', 'text')

    # -- the worker ---------------------------------------------------------
    def _start(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "scirag.ingest.parse_guard", str(self.budget.memory_mb)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
            )
        return self._proc

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        proc.stdout.close()

    def _kill(self) -> int | None:
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
        for fh in (proc.stdin, proc.stdout):
            try:
                fh.close()
            except OSError:
                pass
        return code

    # -- one document -------------------------------------------------------
    def _call(self, name: str, request: tuple) -> ParsedDocument:
        proc = self._start()
        self.requests[request[0]] += 1
        deadline = time.monotonic() + self.budget.seconds
        try:
            _write(proc.stdin, request)
            header = _read_exact(proc.stdout.fileno(), _HEADER.size, deadline)
            body = _read_exact(proc.stdout.fileno(), _HEADER.unpack(header)[0], deadline) if header else None
        except TimeoutError:
            self._kill()
            raise BudgetExceeded(
                f"{name}: parse budget exceeded: more than {self.budget.seconds:g} s (the parser was stopped)"
            ) from None
        except (BrokenPipeError, OSError):
            body = None
        if body is None:  # the worker died: the kernel refused memory, or a library crashed
            code = self._kill()
            why = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
            raise BudgetExceeded(
                f"{name}: the parser process died ({why}); its memory budget is {self.budget.memory_mb} MB"
            )
        status, payload = pickle.loads(body)
        if status == "ok":
            value, cpu = payload
            self.cpu_seconds += cpu
            return value
        if status == "memory":
            self._kill()  # a MemoryError may leave the worker in a poor state: start afresh
            raise BudgetExceeded(f"{name}: parse budget exceeded: more than {self.budget.memory_mb} MB of memory")
        raise ParseError(payload)

    def parse_file(self, path, meta: bool = False) -> ParsedDocument:
        """meta: the document's .meta holds the citation fields the file states
        (scirag.ingest.discover.read_file_metadata), read in the same parse."""
        key = str(path)
        if key in self.exceeded:  # its metadata read used up the budget already
            raise BudgetExceeded(self.exceeded[key])
        return self._call(key, ("file", key, meta))

    def metadata(self, path) -> dict:
        """scirag.ingest.discover.read_file_metadata(path) within the budget; {} when it fails
        (a file over its budget is remembered and fails its parse at once)."""
        key = str(path)
        try:
            return self._call(key, ("meta", key))
        except BudgetExceeded as exc:
            self.exceeded[key] = str(exc)
            return {}
        except ParseError:
            return {}

    def parse_text(self, text: str, fmt: str = "text", name: str = "<inline>") -> ParsedDocument:
        return self._call(name, ("text", text, fmt, name))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---------------------------------------------------------------------------
# Worker side
# ---------------------------------------------------------------------------


def _capped_zlib():
    """A stand-in for the zlib module inside pdfminer: decompress() stops at MAX_INFLATED_BYTES."""

    class Capped:
        hits = 0
        error = zlib.error
        decompressobj = staticmethod(zlib.decompressobj)
        MAX_WBITS = zlib.MAX_WBITS

        @staticmethod
        def decompress(data, wbits=zlib.MAX_WBITS, bufsize=zlib.DEF_BUF_SIZE):
            d = zlib.decompressobj(wbits)
            out = d.decompress(data, MAX_INFLATED_BYTES + 1)
            if len(out) > MAX_INFLATED_BYTES or d.unconsumed_tail:
                Capped.hits += 1  # pdfminer may swallow the error: the worker reports it
                raise InflateLimit(INFLATE_MESSAGE)
            return out + d.flush()

    return Capped


def _answer(request: tuple):
    """What one request asks for: ("file", path, with_meta), ("meta", path) or ("text", text, fmt, name)."""
    from scirag.ingest import parse
    from scirag.ingest.discover import read_file_metadata

    if request[0] == "file":
        value = parse.parse_file(request[1])
        if request[2]:  # the citation fields, from this same parse (discover.read_file_metadata)
            value.meta = read_file_metadata(Path(request[1]), value)
        return value
    if request[0] == "meta":
        return read_file_metadata(Path(request[1]))
    return parse.parse_text(*request[1:])


def _serve(memory_mb: int) -> None:
    import resource

    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    capped = _capped_zlib()
    try:
        import pdfminer.pdftypes as pdftypes

        pdftypes.zlib = capped
    except ImportError:
        pass
    from scirag.ingest import parse  # noqa: F401  (imported once, before the first request)

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when a worker ends
    rfd = sys.stdin.buffer
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # a library's print() must not corrupt the protocol
    while True:
        header = rfd.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        request = pickle.loads(rfd.read(_HEADER.unpack(header)[0]))
        capped.hits = 0
        name = request[1] if request[0] in ("file", "meta") else request[3]
        try:
            cpu = time.process_time()
            value = _answer(request)
            if capped.hits and isinstance(value, ParsedDocument):
                # what could be read is kept, and the report row says what was not
                value.partial = "; ".join(x for x in (value.partial, INFLATE_MESSAGE) if x)
            result = ("ok", (value, time.process_time() - cpu))
        except MemoryError:
            result = ("memory", None)
        except InflateLimit:
            result = ("error", f"{name}: {INFLATE_MESSAGE}")
        except ParseError as exc:
            result = ("error", f"{name}: {INFLATE_MESSAGE} ({exc})" if capped.hits else str(exc))
        except Exception as exc:  # reported as the document's failure
            result = ("error", f"{type(exc).__name__}: {str(exc)[:300]}")
        try:
            _write(out, result)
        except MemoryError:
            _write(out, ("memory", None))


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
