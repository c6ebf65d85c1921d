-- Revert scirag:functions/answer_generate_bootstrap: scirag.answer_generate as functions/answer defines it
-- (answer.sql), calling scirag.plpy_bootstrap() on every call.
BEGIN;

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

REVOKE ALL ON FUNCTION scirag.answer_generate(text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.answer_generate(text, jsonb) TO scirag_loader, scirag_api;
COMMIT;
