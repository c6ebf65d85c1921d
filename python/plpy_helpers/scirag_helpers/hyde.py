"""HyDE probe passages: what a document answering the question would say.

With a model configured (llm.get_llm()), the model writes the passage in the style
the domain profile gives the question's class. Offline, the passage is built by
pseudo-relevance feedback: the question, the sentences of the top keyword hits
that share most informative terms with it, and the hits' most informative terms
(a classical answer to the same vocabulary gap). Either way the passage is only a
search probe: never shown, never cited. Every read goes through the caller's
row-level security, so the probe is built from in-scope text only.
"""

from __future__ import annotations

import math
from collections import Counter

from scirag_helpers import text as text_rules
from scirag_helpers.llm import get_llm
from scirag_helpers.words import probe_terms

PRF_DOCS = 5  # keyword hits the passage is built from
PRF_SENTENCES = 3  # sentences taken from them
PRF_TERMS = 12  # expansion terms


MODEL_PROMPT = """Write the short passage (3 to 5 sentences) that a scientific document answering the
question below would contain. Write it as document text, with plausible specific terms, numbers and units;
do not address the reader and do not say that it is hypothetical.
{style}
Question: {question}"""


terms = probe_terms  # the probe's words: scirag_helpers.words (PROBE_STOP)


def prf_passage(question: str, hits: list[str], df: dict[str, int], n_docs: int) -> str:
    """Question + best-matching sentences of the hits + their most informative terms.
    ``hits`` are chunk bodies (chunks.body: no title/section prefix to strip)."""
    if not hits:
        return question
    idf = {t: math.log(1 + (n_docs - d + 0.5) / (d + 0.5)) for t, d in df.items()}
    q_terms = set(terms(question))
    scored = []
    for rank, body in enumerate(hits):
        for sent in text_rules.paragraph_sentences(body):
            st = set(terms(sent))
            if len(st) < 3:
                continue
            overlap = sum(idf.get(t, 1.0) for t in st & q_terms)
            # earlier hits are more likely relevant: a gentle rank discount
            scored.append((overlap / (1 + 0.25 * rank), sent.strip()))
    scored.sort(key=lambda x: -x[0])
    sentences = [s for score, s in scored[:PRF_SENTENCES] if score > 0]
    tf = Counter(t for body in hits for t in terms(body))
    expansion = sorted((t for t in tf if t not in q_terms), key=lambda t: -(tf[t] * idf.get(t, 0.0)))[:PRF_TERMS]
    return " ".join([question, *sentences, " ".join(expansion)]).strip()


def hyde_passage(plpy, question: str, styles: dict[str, str] | None = None, llm=None) -> tuple[str, str]:
    """Returns (passage, method) with method 'model' or 'prf'."""
    llm = llm if llm is not None else get_llm()
    if llm is not None:
        style = ""
        if styles:
            style = "Pick the style that fits the question:\n" + "\n".join(f"- {k}: {v}" for k, v in styles.items())
        return llm.complete(
            MODEL_PROMPT.format(style=style, question=question), temperature=0.0, max_tokens=300
        ).strip(), "model"
    rows = plpy.execute(
        plpy.prepare(
            "SELECT c.body FROM scirag.search_keyword($1, $2) k JOIN scirag.chunks c ON c.id = k.chunk_id "
            "ORDER BY k.rank",
            ["text", "int"],
        ),
        [question, PRF_DOCS],
    )
    hits = [r["body"] for r in rows]
    vocab = sorted({t for h in hits for t in terms(h)})
    df, n_docs = {}, 1
    if vocab:
        stats = plpy.execute(
            plpy.prepare(
                "SELECT s.lexeme, sum(s.df)::int AS df FROM scirag.kw_term_stats s "
                "WHERE s.lexeme = ANY (SELECT lexeme FROM unnest(to_tsvector('english', array_to_string($1, ' '))) u) "
                "GROUP BY s.lexeme",
                ["text[]"],
            ),
            [vocab],
        )
        stemmed = {r["lexeme"]: r["df"] for r in stats}
        n_docs = plpy.execute("SELECT coalesce(sum(n_chunks), 1)::int AS n FROM scirag.kw_class_stats")[0]["n"]
        stem = plpy.execute(
            plpy.prepare(
                "SELECT w, (SELECT string_agg(lexeme, ' ') FROM unnest(to_tsvector('english', w))) AS lx "
                "FROM unnest($1) AS w",
                ["text[]"],
            ),
            [vocab],
        )
        df = {r["w"]: stemmed.get(r["lx"], 1) for r in stem if r["lx"]}
    return prf_passage(question, hits, df, n_docs), "prf"
