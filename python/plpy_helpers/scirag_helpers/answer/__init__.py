"""Grounded answers: numbered sources, optional question-aware compression, a model
answerer (google-genai or an OpenAI-compatible endpoint, through llm.get_llm()) and
the offline default, an extractive answerer that quotes the sentences (and table
rows) that best answer the question, cites each, and abstains when the evidence is
too weak.

``answer_question`` is pure: it takes retrieval rows, templates, intents and an LLM
client (or None), so tests/py exercise it without a database. ``answer_in_db`` is
the thin adapter the PL/Python function ``scirag.answer`` calls: scope check,
retraction exclusion, ``scirag.retrieve`` as the caller, template rows.

Traces are content-free: stage, status, duration, counts; never question or text.

The parts (the word normaliser and stop words are scirag_helpers.words, shared with
the checks, HyDE and graph resolution):

* ``options``: Options of scirag.answer: defaults, validation, the abstention texts, and when the answer form may answer.
* ``sources``: The numbered sources shown to the answerer: a chunk's text and the source list.
* ``units``: Evidence units: the sentences of prose and the rows of tables, and how much of the question they cover.
* ``question``: Question analysis: what the question names (entities, sizes, a defined term) and what it asks for.
* ``tables``: Table-cell answers: the cell of a table that the question's row and column name.
* ``sentences``: Sentence answers: the offline extractive answerer that quotes, cites and abstains.
* ``compress``: Compression (optional): question-aware summaries of the sources before answering.
* ``compose``: The answer object: generation (model or offline), the answer form, the checks, the result.
* ``indb``: Inside PostgreSQL: the adapter scirag.answer runs (scope, retraction exclusion, retrieve, presets).
"""

from __future__ import annotations

from scirag_helpers.answer.options import (  # noqa: F401
    AnswerError,
    CONSOLIDATE_KEYS,
    DEFAULTS,
    ENRICH_KEYS,
    form_may_answer,
    MAX_QUESTION_CHARS,
    NAMED_GAPS,
    NO_SOURCES,
    NOT_ANSWERED,
    parse_options,
    UNSUPPORTED,
    WEAK_MATCH_FORMS,
)
from scirag_helpers.answer.sources import (  # noqa: F401
    body_of,
    make_sources,
)
from scirag_helpers.words import (  # noqa: F401
    _CHANGE,
    _PHRASES,
    stem as _stem,
    _WORD,
    _WORD_SYNONYMS,
    STOP,
    surface_words,
    terms,
)
from scirag_helpers.answer.units import (  # noqa: F401
    _coverage,
    _LABEL,
    _NUM,
    _QUANT,
    _REFS,
    _ROW,
    _row_text,
    _weights,
    Extract,
    strip_refs,
    table_rows,
    Unit,
    units_of,
)
from scirag_helpers.answer.question import (  # noqa: F401
    _ATTR_END,
    _CONTRAST,
    _DEF_Q,
    _defines,
    _ENTITY_SUFFIX,
    _ENTITY_TOKEN,
    _MAG_WORDS,
    _MAGNITUDE,
    _negated,
    _NEGATION,
    _norm_entity,
    _WH,
    allowed_missing,
    asked_attribute,
    contrast_terms,
    defined_term,
    entity_in,
    literal_numbers,
    question_entities,
    size_in,
    sizes_in_question,
)
from scirag_helpers.answer.tables import (  # noqa: F401
    _abbrev_match,
    _abbreviated,
    Cell,
    table_cell_answer,
)
from scirag_helpers.answer.sentences import (  # noqa: F401
    extractive_answer,
)
from scirag_helpers.answer.compress import (  # noqa: F401
    compress_sources,
)
from scirag_helpers.answer.compose import (  # noqa: F401
    _json,
    _ms,
    abstention_without_evidence,
    answer_question,
    citation_entry,
    llm_label,
    with_form,
)
from scirag_helpers.answer.indb import (  # noqa: F401
    answer_in_db,
    apply_preset,
    build_evidence,
    sentence_count,
    unknown_words_in_db,
    UNKNOWN_WORDS_SQL,
)
