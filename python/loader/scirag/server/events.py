"""An answer as a stream of typed events, and the aggregate of such a stream.

POST /v1/answer in JSON mode returns ``aggregate(answer_events(result))`` and in SSE
mode sends the same events, so the two modes cannot disagree (a test compares them).
scirag.answer returns the whole answer at once, so the stream carries it in parts
rather than as model tokens arrive.

Event types (``event:`` field of SSE; ``data:`` is JSON):
  answer.delta  {"text": "..."}           the answer text, a sentence at a time
  citation      {"item": {...}}           one numbered citation
  evidence      {"item": {...}}           one retrieved chunk (the evidence list, per-layer ranks)
  source        {"item": {...}}           one numbered source shown to the answerer
  field         {"name": k, "value": v}   any other part (abstained, intent, checks, trace, ...)
  done          {"request_id": ...}       the last event
  error         problem+json body         instead of done when the call failed
"""

from __future__ import annotations

import json

from scirag_helpers import text as text_rules

LIST_EVENTS = {"citations": "citation", "retrieval": "evidence", "sources": "source"}
ITEM_KEYS = {v: k for k, v in LIST_EVENTS.items()}
FIRST = ("answer", "abstained", "citations", "answerer", "intent")
LAST = ("retrieval", "sources", "trace")


def answer_events(result: dict):
    """Yields (event, data) pairs that aggregate back to ``result``: the answer and its
    citations first, the evidence next, the trace last."""
    first = [k for k in FIRST if k in result]
    last = [k for k in LAST if k in result]
    middle = [k for k in result if k not in FIRST and k not in LAST]
    for key in first + middle + last:
        value = result[key]
        if key == "answer" and isinstance(value, str) and value:
            for piece in answer_pieces(value):
                yield "answer.delta", {"text": piece}
        elif key in LIST_EVENTS and isinstance(value, list) and value:
            for item in value:
                yield LIST_EVENTS[key], {"item": item}
        else:
            yield "field", {"name": key, "value": value}


def answer_pieces(answer: str) -> list[str]:
    """The answer cut where the one sentence splitter (scirag_helpers.text) starts a
    sentence; each piece keeps the whitespace after it, so the pieces join back to
    the answer exactly."""
    cuts = [0, *(a for a, _ in text_rules.sentence_spans(answer)[1:]), len(answer)]
    return [answer[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]


def aggregate(events) -> dict:
    """The inverse of answer_events (ignores done/error/unknown events)."""
    out: dict = {}
    for event, data in events:
        if event == "answer.delta":
            out["answer"] = out.get("answer", "") + data["text"]
        elif event in ITEM_KEYS:
            out.setdefault(ITEM_KEYS[event], []).append(data["item"])
        elif event == "field":
            out[data["name"]] = data["value"]
    return out


def sse(event: str, data) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, default=str, separators=(',', ':'))}\n\n".encode()


def parse_sse(text: str) -> list[tuple[str, dict]]:
    """Parses an SSE body into (event, data) pairs (for clients and tests)."""
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        event, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
        if data:
            out.append((event, json.loads("\n".join(data))))
    return out
