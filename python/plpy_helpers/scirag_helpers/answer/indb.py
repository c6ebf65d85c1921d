"""Inside PostgreSQL: the adapter scirag.answer runs (scope, retraction exclusion, retrieve, presets)."""

from __future__ import annotations

import json
import os
import time

from scirag_helpers import prompts, text as text_rules
from scirag_helpers.answer.compose import _json, _ms, abstention_without_evidence, answer_question
from scirag_helpers.answer.options import AnswerError, parse_options
from scirag_helpers.answer.sources import body_of
from scirag_helpers.words import one_edit


UNKNOWN_WORDS_SQL = """
SELECT coalesce(array_agg(DISTINCT w), '{}') AS words
FROM regexp_split_to_table($1, '[^[:alnum:]]+') AS w
WHERE w <> ''
  AND cardinality(tsvector_to_array(to_tsvector('english', w))) > 0
  AND NOT EXISTS (SELECT 1 FROM unnest(tsvector_to_array(to_tsvector('english', w))) AS l
                  JOIN scirag.kw_term_stats s ON s.lexeme = l)
"""


# a word one edit away from a word of the caller's documents is taken for a typo of
# it: $1 the unknown words, $2 their one-edit variants, $3 which word each variant is of
NEAR_MISS_SQL = """
SELECT coalesce(array_agg(DISTINCT ($1::text[])[c.i]), '{}') AS typos
FROM unnest($2::text[], $3::int[]) AS c(v, i),
     unnest(tsvector_to_array(to_tsvector('english', c.v))) AS l
WHERE EXISTS (SELECT 1 FROM scirag.kw_term_stats s WHERE s.lexeme = l)
"""
# only letters, and long enough that one edit rarely turns one real word into another
TYPO_MIN_LETTERS = 5
TYPO_MAX_LETTERS = 30  # the edits grow with the word: a longer "word" is no typo
TYPO_MAX_WORDS = 4  # a question's unknown words checked for typos (about 54 variants a letter each)


def unknown_words_in_db(plpy, question: str) -> set:
    """Words of the question that no document in the caller's scope contains, less the
    ones one edit away from a word that one does ("algorihm", "appart": a typo is not
    a thing the sources lack). The keyword statistics are under row-level security, so
    this reveals nothing beyond the caller's scope."""
    rows = plpy.execute(plpy.prepare(UNKNOWN_WORDS_SQL, ["text"]), [question])
    unknown = set(rows[0]["words"] or []) if rows else set()
    candidates = sorted(w for w in unknown if w.isalpha() and TYPO_MIN_LETTERS <= len(w) <= TYPO_MAX_LETTERS)[
        :TYPO_MAX_WORDS
    ]
    if candidates:
        variants = [(v, i) for i, w in enumerate(candidates, 1) for v in sorted(one_edit(w))]
        plan = plpy.prepare(NEAR_MISS_SQL, ["text[]", "text[]", "int[]"])
        rows = plpy.execute(plan, [candidates, [v for v, _ in variants], [i for _, i in variants]])
        unknown -= set(rows[0]["typos"] or [])
    return unknown


def apply_preset(plpy, opts: dict, explicit: set) -> dict:
    """A named preset (scirag.presets), resolved by scirag.preset_resolve (the one place
    a preset's keys are read), once per answer: its answer options (max_sources,
    profile, and the evidence stages enrich, consolidate, min_sentences when it turns
    them on) apply unless the call gave them, and its name is passed on to
    scirag.retrieve. The resolution is returned: scirag.retrieve_evidence hands it to
    scirag.retrieve, whose retrieve_config takes the preset's retrieve options from it
    instead of resolving the preset a second time."""
    if not plpy.execute("SELECT to_regprocedure('scirag.preset_resolve(text)') IS NOT NULL AS ok")[0]["ok"]:
        raise AnswerError("option preset: this database has no presets (scirag.preset_resolve)")
    resolved = json.loads(
        plpy.execute(plpy.prepare("SELECT scirag.preset_resolve($1)::text AS c", ["text"]), [opts["preset"]])[0]["c"]
    )
    for key, value in resolved["answer"].items():
        if key not in explicit:
            opts[key] = value
    opts["retrieve"] = {"preset": opts["preset"], **opts["retrieve"]}
    opts["k"] = max(opts["k"], opts["max_sources"])
    return resolved


def sentence_count(text: str) -> int:
    return len(text_rules.paragraph_sentences(text))


def build_evidence(plpy, rows: list[dict], opts: dict, trace: dict) -> list[dict]:
    """The evidence the answerer sees, from the retrieval rows (rank order), through the
    optional stages a preset or the options turn on:

    * min_sentences: prose chunks with fewer sentences are dropped (tables kept);
    * consolidate: scirag.consolidate turns the rows into context groups (coverage
      replacement by the parent section, adjacent merging, growth of short groups),
      ordered by their best-ranked member; a group cites its best member's chunk and
      the group's line span;
    * enrich: a row (or single-chunk group) under min_word_count words takes its
      enclosing section's text (scirag.enrich_chunks, sliding window to max_word_count).

    Every read runs as the caller (row-level security decides what a parent or a
    neighbour may add)."""
    if opts["min_sentences"]:
        t0 = time.perf_counter()
        before = len(rows)
        rows = [r for r in rows if r.get("is_table") or sentence_count(body_of(r)) >= opts["min_sentences"]]
        trace["stages"].append(
            {"stage": "sentence_filter", "status": "ok", "ms": _ms(t0), "candidates": before, "kept": len(rows)}
        )
    if opts["consolidate"]["enabled"] and rows:
        t0 = time.perf_counter()
        co = {k: v for k, v in opts["consolidate"].items() if k != "enabled"}
        plan = plpy.prepare(
            "SELECT group_no, document_id, chunk_ids, replaced_by, section_path, content, "
            "line_start, line_end FROM scirag.consolidate($1, $2::jsonb) ORDER BY group_no",
            ["bigint[]", "text"],
        )
        groups = plpy.execute(plan, [[r["chunk_id"] for r in rows], json.dumps(co)])
        by_id = {r["chunk_id"]: r for r in rows}
        out = []
        for g in groups:
            members = [by_id[c] for c in g["chunk_ids"] if c in by_id]
            if not members:
                continue
            best = min(members, key=lambda r: r["rank"])
            cit = dict(best.get("citation") or {})
            if g["line_start"] is not None and g["line_end"] is not None:
                cit["lines"] = f"{g['line_start']}-{g['line_end']}"
            pages = sorted(
                {
                    p
                    for m in members
                    for p in str((m.get("citation") or {}).get("pages") or "").split("-")
                    if p.isdigit()
                },
                key=int,
            )
            if pages:
                cit["pages"] = pages[0] if pages[0] == pages[-1] else f"{pages[0]}-{pages[-1]}"
            cit["chunk_ids"] = list(g["chunk_ids"])
            out.append(
                {
                    **best,
                    "rank": len(out) + 1,
                    "section_path": g["section_path"] or best.get("section_path"),
                    "content": g["content"],
                    "body": g["content"],
                    "citation": cit,
                    "is_table": all(m.get("is_table") for m in members),
                    "group": {"members": list(g["chunk_ids"]), "replaced_by": g["replaced_by"]},
                }
            )
        trace["stages"].append(
            {"stage": "consolidate", "status": "ok", "ms": _ms(t0), "candidates": len(rows), "groups": len(out)}
        )
        rows = out
    if opts["enrich"]["enabled"] and rows:
        t0 = time.perf_counter()
        single = [r["chunk_id"] for r in rows if len((r.get("group") or {}).get("members") or [r["chunk_id"]]) == 1]
        plan = plpy.prepare(
            "SELECT chunk_id, content, body, enriched FROM scirag.enrich_chunks($1, $2, $3)",
            ["bigint[]", "int4", "int4"],
        )
        got = {
            e["chunk_id"]: e
            for e in plpy.execute(plan, [single, opts["enrich"]["min_word_count"], opts["enrich"]["max_word_count"]])
        }
        n = 0
        for r in rows:
            e = got.get(r["chunk_id"])
            if e and e["enriched"] and r["chunk_id"] in single:
                r["content"], r["body"] = e["content"], e["body"]
                n += 1
        trace["stages"].append(
            {"stage": "enrich", "status": "ok", "ms": _ms(t0), "candidates": len(single), "enriched": n}
        )
    return rows


def answer_in_db(plpy, GD, question: str, options, llm_factory=None) -> dict:
    """What scirag.answer runs. Retrieval happens through scirag.retrieve (by
    scirag.retrieve_evidence, which adds each chunk's body) as the calling role, so
    row-level security decides what evidence exists; this function can only narrow the caller's scope (it turns retraction exclusion on for the call
    and restores the previous value), never widen it."""
    from scirag_helpers import llm as llm_mod

    t_all = time.perf_counter()
    # The question's length was checked by scirag.answer, the one caller (readers cannot
    # call scirag.answer_generate), before any text work; retrieve_layers bounds it again.
    raw = options if isinstance(options, dict) else json.loads(options or "{}")
    opts = parse_options(raw)
    resolved = None
    if opts["preset"]:
        resolved = apply_preset(plpy, opts, explicit=set(raw) if isinstance(raw, dict) else set())
    trace: dict = {"stages": [], "exclude_retracted": not opts["include_retracted"]}
    if not (question or "").strip():
        raise AnswerError("question is empty")
    if plpy.execute("SELECT scirag.scope_is_empty() AS e")[0]["e"]:
        # Fail closed: no retrieval, no embedding, no model call.
        trace.update(scope="empty", ms=_ms(t_all))
        trace["stages"].append({"stage": "scope", "status": "empty", "ms": 0, "candidates": 0})
        return abstention_without_evidence("empty scope", trace)
    trace["scope"] = "ok"

    old = plpy.execute("SELECT current_setting('scirag.exclude_retracted', true) AS v")[0]["v"]
    t0 = time.perf_counter()
    if not opts["include_retracted"]:
        plpy.execute("SELECT set_config('scirag.exclude_retracted', 'on', true)")
    try:
        # Prepared per call, not cached in GD: GD outlives SET ROLE and redeploys.
        # retrieve's rows with each chunk's stored body (never its content re-stripped),
        # in one statement: scirag.retrieve_evidence, with the preset resolved above (so
        # that retrieve does not resolve it again)
        plan = plpy.prepare(
            "SELECT rank, chunk_id, document_id, external_id, score, layers::text AS layers, title, "
            "section_path, content, is_table, citation::text AS citation, body "
            "FROM scirag.retrieve_evidence($1, $2, $3, $4::jsonb, $5::jsonb)",
            ["text", "int4", "text", "text", "text"],
        )
        args = [question, opts["k"], opts["profile"], json.dumps(opts["retrieve"]), resolved and json.dumps(resolved)]
        rows = [dict(r) for r in plpy.execute(plan, args)]
        rtrace = plpy.execute("SELECT scirag.last_trace()::text AS t")[0]["t"]
    finally:
        if not opts["include_retracted"]:
            plpy.execute(
                plpy.prepare("SELECT set_config('scirag.exclude_retracted', coalesce($1, ''), true)", ["text"]), [old]
            )
    for r in rows:
        r["layers"], r["citation"] = _json(r["layers"]), _json(r["citation"])
    trace["retrieve"] = json.loads(rtrace) if rtrace else None
    trace["stages"].append(
        {"stage": "retrieve", "status": "ok" if rows else "empty", "ms": _ms(t0), "candidates": len(rows)}
    )
    rows = build_evidence(plpy, rows, opts, trace)

    llm = None
    if opts["answerer"] != "extractive" or opts["compress"]["enabled"]:
        # A caller's own model key for this one call (the server sets it transaction-
        # locally): used on a copy of the environment, never stored, traced or echoed.
        key = plpy.execute("SELECT current_setting('scirag.llm_api_key', true) AS k")[0]["k"]
        if llm_factory is not None:
            llm = llm_factory()
        elif key:
            llm = llm_mod.get_llm({**os.environ, "GOOGLE_API_KEY": key, "SCIRAG_OPENAI_API_KEY": key})
        else:
            llm = llm_mod.get_llm()
    template = prompts.load_template(plpy, "answer", opts["template"])
    compress_template = prompts.load_template(plpy, "compress") if (opts["compress"]["enabled"] and llm) else None
    intents = prompts.load_intents(plpy)
    unknown = unknown_words_in_db(plpy, question) if rows else set()
    result = answer_question(
        question,
        rows,
        options=opts,
        template=template,
        intents=intents,
        llm=None if opts["answerer"] == "extractive" else llm,
        compress_llm=llm,
        compress_template=compress_template,
        trace=trace,
        unknown_words=unknown,
    )
    trace["ms"] = _ms(t_all)
    return result
