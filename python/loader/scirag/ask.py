"""`scirag ask`: SELECT scirag.answer(...) as the reader role, printed with its numbered
sources, the mechanical checks and the (content-free) trace."""

from __future__ import annotations

import json
import sys
import textwrap
import threading
import time
from contextlib import contextmanager

from scirag import db, routing


@contextmanager
def progress(message: str, stream=sys.stderr):
    """A ticking status line on a terminal (answers with a model can take a while);
    one line otherwise."""
    if not stream.isatty():
        print(message, file=stream, flush=True)
        yield
        return
    stop = threading.Event()
    t0 = time.monotonic()

    def tick():
        frames = "|/-\\"
        i = 0
        while not stop.wait(0.2):
            stream.write(f"\r{frames[i % 4]} {message} {time.monotonic() - t0:4.1f}s")
            stream.flush()
            i += 1

    th = threading.Thread(target=tick, daemon=True)
    th.start()
    try:
        yield
    finally:
        stop.set()
        th.join()
        stream.write("\r" + " " * (len(message) + 12) + "\r")
        stream.flush()


def ask(
    question: str, options: dict, dsn: str | None = None, licenses: str | None = None, settings: dict | None = None
) -> dict:
    """scirag.answer as the reader role (on a standby when SCIRAG_READ_DSN names one);
    ``settings`` are more scirag.* scope settings (the positive filters), which can only narrow."""
    with routing.connect_reader(dsn, role=db.READER_ROLE, autocommit=True) as conn:
        if licenses is not None:
            conn.execute("SELECT set_config('scirag.licenses', %s, false)", (licenses,))
        for name, value in (settings or {}).items():
            conn.execute("SELECT set_config(%s, %s, false)", (name, value))
        with progress("retrieving and answering"):
            return conn.execute("SELECT scirag.answer(%s, %s)", (question, json.dumps(options))).fetchone()[0]


def format_answer(question: str, result: dict, width: int = 100) -> str:
    lines = [f"Q: {question}", ""]
    for para in result["answer"].split("\n"):
        lines.extend(textwrap.wrap(para, width) or [""])
    lines.append("")
    cited = {c["n"] for c in result.get("citations") or []}
    if result.get("sources"):
        lines.append("Sources (* = cited):")
        for s in result["sources"]:
            mark = "*" if s["n"] in cited else " "
            shown = "" if s.get("shown", "full") == "full" else f"  [{s['shown']}]"
            cite = s.get("cite") or s.get("title")
            lines.extend(textwrap.wrap(f"{mark}[{s['n']}] {cite}{shown}", width, subsequent_indent="     "))
    else:
        lines.append("Sources: none in your scope")
    lines.append("")
    lines.append(checks_line(result))
    conf = confidence_line(result)
    if conf:
        lines.append(conf)
    if result.get("withheld"):
        lines.append(
            "withheld (no sentence passed the supports check): "
            + textwrap.shorten(result["withheld"]["answer"], width - 10)
        )
    lines.append(
        f"answerer: {result.get('answerer')}  intent: {result.get('intent')}"
        + (f"  coverage: {result['evidence']['coverage']}" if result.get("evidence") else "")
    )
    comp = result.get("compression") or {}
    if comp.get("enabled"):
        lines.append(
            f"compression: {comp.get('summariser')} summaries, {comp.get('summarised')} summarised, "
            f"{comp.get('dropped')} dropped, {comp.get('failures')} failed; tokens "
            f"{comp.get('tokens_before')} -> {comp.get('tokens_after')}"
        )
    trace = result.get("trace") or {}
    stages = [
        f"{s['stage']} {s['status']} {s['ms']}ms" + (f" n={s['candidates']}" if s.get("candidates") else "")
        for s in trace.get("stages", [])
    ]
    rstages = [
        f"{s['stage']}:{s['status']}"
        for s in ((trace.get("retrieve") or {}).get("stages") or [])
        if s["status"] != "disabled"
    ]
    lines.append(
        f"trace: {', '.join(stages)}; total {trace.get('ms')}ms"
        + (f" (retrieve: {' '.join(rstages)})" if rstages else "")
    )
    return "\n".join(lines)


def checks_line(result: dict) -> str:
    """The mechanical checks as what each one verified, never as a verdict: an answer
    can pass all three and still be wrong (it may not answer the question asked)."""
    chk = result.get("checks") or {}
    n_numbers, n_claims = chk.get("numbers", 0), chk.get("claims", 0)
    said = [
        "every [n] names a source listed above"
        if chk.get("citations_ok")
        else f"citations that name no listed source: {chk.get('invalid_citations')}",
        (f"the cited text contains the answer's {n_numbers} number(s)" if n_numbers else "the answer states no number")
        if chk.get("numbers_ok")
        else f"numbers NOT in the cited text: {', '.join(chk.get('ungrounded_numbers') or [])}",
        (
            f"each of {n_claims} claim(s) has its key terms in one sentence or row of a source it cites"
            if chk.get("supports_ok")
            else "claim sentence(s) NOT found in one sentence of a source they cite: "
            + ", ".join(str(x) for x in chk.get("unsupported") or [])
        ),
    ]
    if result.get("abstained"):
        said.append("the answer abstains")
    return "checked (not a verdict on correctness): " + "; ".join(said)


def confidence_line(result: dict) -> str | None:
    """How sure the offline answerer is that the answer addresses the question (the
    checks say only that it is grounded); None when there is no estimate."""
    from scirag_helpers.answer_forms import LOW_CONFIDENCE

    conf = result.get("confidence")
    if conf is None or result.get("abstained"):
        return None
    if conf < LOW_CONFIDENCE:
        return f"confidence {conf:.2f}: low, the answer may not address what was asked"
    return f"confidence {conf:.2f}"
