-- Deploy scirag:functions/answer
-- Grounded answers with numbered citations (DESIGN.md section 9). The PL/Python body
-- is thin: scirag_helpers.answer does the work and is tested without a database.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.answer(question text, options jsonb DEFAULT '{}')
RETURNS jsonb
LANGUAGE plpython3u VOLATILE
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
# SECURITY INVOKER: retrieval runs through scirag.retrieve as the caller, so row-level
# security decides what evidence exists. The call can only narrow scope: it turns
# scirag.exclude_retracted on for its own retrieval and restores the previous value.
import json
plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.answer import answer_in_db, AnswerError
from scirag_helpers.prompts import PromptError
from scirag_helpers.llm import LLMError
try:
    result = answer_in_db(plpy, GD, question, options)
except (AnswerError, PromptError, LLMError) as exc:
    plpy.error(f'scirag.answer: {exc}',
               hint='options: k, profile, retrieve, max_sources, answerer (auto|extractive|model), template, '
                    'compress, include_retracted, max_sentences, min_coverage, max_unknown_share, include_content')
return json.dumps(result, default=str)
$$;
COMMENT ON FUNCTION scirag.answer(text, jsonb) IS
  'Grounded answer with numbered citations: retrieves as the caller (row-level security applies; retracted documents excluded unless options.include_retracted), numbers the top sources, answers with the configured model (server env SCIRAG_LLM_PROVIDER) or the offline extractive answerer, and returns jsonb: answer, abstained, answerer, intent, citations (n -> document, chunk, title, section path, page or lines), sources, retrieval (the complete evidence view), prompt_sources (exactly what the answerer saw), checks (citation, number and abstention checks), compression, trace (content-free). An empty scope abstains without any retrieval or model call.';

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

REVOKE ALL ON FUNCTION scirag.answer(text, jsonb), scirag.answer_text(text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.answer(text, jsonb), scirag.answer_text(text, jsonb) TO scirag_reader, scirag_loader;
COMMIT;
