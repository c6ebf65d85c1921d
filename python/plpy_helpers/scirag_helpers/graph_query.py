"""Entity names in a question, found by a model, for scirag.search_graph.

Runs inside PostgreSQL (scirag.graph_question_entities) when the graph option
question_entities is 'model'. The names are only a proposal: search_graph seeds
the walk from a name only through a surface of evidence the caller may see, so a
model cannot widen what the walk reaches. Any failure returns [] and the SQL
surface matcher still seeds.
"""

from __future__ import annotations

from scirag_helpers.llm import LLMClient, LLMError, get_llm, parse_json_response

MAX_NAMES = 10
SYSTEM = "You find the named scientific entities in a question. Answer with JSON only."


def build_prompt(query: str) -> str:
    return (
        "List the entities the question names or refers to (crops, materials, places, organisations, "
        "processes, properties), each as a short noun phrase in the question's own words where possible.\n"
        f"Question: {query}\n\n"
        'Answer with JSON: {"entities": ["...", "..."]}'
    )


def parse_names(raw: str) -> list[str]:
    """Validated names from a model answer; anything malformed yields []."""
    try:
        data = parse_json_response(raw)
    except LLMError:
        return []
    items = data.get("entities") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    out = []
    for x in items:
        if isinstance(x, str) and x.strip() and len(x) <= 200 and x.strip() not in out:
            out.append(x.strip())
    return out[:MAX_NAMES]


def question_entities(plpy, gd: dict, query: str, client: LLMClient | None = None) -> list[str]:
    """Body of scirag.graph_question_entities. The client is cached per backend in GD."""
    if not query.strip():
        return []
    if client is None:
        if "scirag_graph_llm" not in gd:
            try:
                gd["scirag_graph_llm"] = get_llm()
            except LLMError:
                gd["scirag_graph_llm"] = None
        client = gd["scirag_graph_llm"]
    if client is None:
        return []
    try:
        raw = client.complete(
            build_prompt(query[:2000]), system=SYSTEM, temperature=0.0, json_mode=True, max_tokens=256
        )
    except LLMError:
        return []
    return parse_names(raw)
