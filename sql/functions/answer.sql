-- Deploy scirag:functions/answer
-- Grounded answers with numbered citations (DESIGN.md section 9). The PL/Python body
-- is thin: scirag_helpers.answer does the work and is tested without a database.
-- Reworked (issue 11): the options hint names the evidence stages (enrich,
-- consolidate, min_sentences) and the comment the supports check and table-cell answers.
-- Reworked (issue 13): scirag.answer is PL/pgSQL and bounds the question
-- (scirag.check_question, SQLSTATE 22023) before the PL/Python answerer
-- (scirag.answer_generate) sees it; k and depth are bounded by retrieve_config.
BEGIN;

-- The PL/Python answerer, reached only through scirag.answer (which bounds the
-- question first): readers cannot call it.
CREATE OR REPLACE FUNCTION scirag.answer_generate(question text, options jsonb)
RETURNS jsonb
LANGUAGE plpython3u VOLATILE
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
# SECURITY INVOKER: retrieval runs through scirag.retrieve as the caller of
# scirag.answer, so row-level security decides what evidence exists. The call can only
# narrow scope: it turns scirag.exclude_retracted on for its own retrieval and restores
# the previous value.
import json
plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.answer import answer_in_db, AnswerError
from scirag_helpers.prompts import PromptError
from scirag_helpers.llm import LLMError
HINT = ('options: k, profile, retrieve, max_sources, answerer (auto|extractive|model), template, compress, '
        'include_retracted, max_sentences, min_coverage, max_unknown_share, include_content, preset, enrich, '
        'consolidate, min_sentences')
try:
    result = answer_in_db(plpy, GD, question, options)
except (AnswerError, PromptError) as exc:
    # bad input: SQLSTATE 22023 (invalid_parameter_value), so a client can tell it from a failure
    plpy.error(f'scirag.answer: {exc}', hint=HINT, sqlstate='22023')
except LLMError as exc:
    plpy.error(f'scirag.answer: {exc}', hint=HINT)
return json.dumps(result, default=str)
$$;
COMMENT ON FUNCTION scirag.answer_generate(text, jsonb) IS
  'The PL/Python body of scirag.answer (scirag_helpers.answer.answer_in_db). Not callable by readers: scirag.answer bounds the question before it runs.';

CREATE OR REPLACE FUNCTION scirag.answer(question text, options jsonb DEFAULT '{}')
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- The one question bound, raised from SQL so the message reads as every other
  -- entry point's ("scirag.answer: the question is N characters long ..."), before
  -- any Python text routine sees the question. k and depth: retrieve_config.
  PERFORM scirag.check_question(question, 'scirag.answer');
  RETURN scirag.answer_generate(question, coalesce(options, '{}'));
END $$;
COMMENT ON FUNCTION scirag.answer(text, jsonb) IS
  'Grounded answer with numbered citations: retrieves as the caller (row-level security applies; retracted documents excluded unless options.include_retracted), builds the evidence (optional stages from options or the preset: min_sentences filter, consolidation by scirag.consolidate, parent enrichment by scirag.enrich_chunks), numbers the top sources ([S1] Source: title > section (document, position) blocks), answers with the configured model (server env SCIRAG_LLM_PROVIDER) or the offline extractive answerer (a table cell named by row and column, else the sentences that name the question''s entities and asked-for attribute), and returns jsonb: answer, abstained, answerer, intent, citations (n -> document, chunk, title, section path, page or lines), sources, retrieval (the complete evidence view), prompt_sources (exactly what the answerer saw), checks (citations, numbers, supports: each claim held by its cited source in one sentence or table row; abstention), withheld (a drafted answer no sentence of which passed supports, replaced by an abstention), compression, trace (content-free). An empty scope abstains without any retrieval or model call. A question over 4,000 characters is refused (SQLSTATE 22023).';

CREATE OR REPLACE FUNCTION scirag.answer_text(question text, options jsonb DEFAULT '{}')
RETURNS text
LANGUAGE sql VOLATILE
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT a->>'answer' || coalesce(E'\n\n' || (
           SELECT string_agg(format('[%s] %s', c->>'n', coalesce(c->>'cite', c->>'title')), E'\n' ORDER BY (c->>'n')::int)
           FROM jsonb_array_elements(a->'citations') AS c), '')
  FROM scirag.answer(question, options) AS a
$$;
COMMENT ON FUNCTION scirag.answer_text(text, jsonb) IS
  'scirag.answer as plain text for psql: the answer followed by its numbered citations.';

REVOKE ALL ON FUNCTION scirag.answer(text, jsonb), scirag.answer_text(text, jsonb),
  scirag.answer_generate(text, jsonb) FROM PUBLIC;
-- scirag_api runs scirag.answer for readers (policies/reader_wall); readers never reach
-- answer_generate on their own
GRANT EXECUTE ON FUNCTION scirag.answer_generate(text, jsonb) TO scirag_loader, scirag_api;
GRANT EXECUTE ON FUNCTION scirag.answer(text, jsonb), scirag.answer_text(text, jsonb) TO scirag_reader, scirag_loader;
COMMIT;
