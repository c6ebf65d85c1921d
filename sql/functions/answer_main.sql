-- Deploy scirag:functions/answer_main
-- Split (issue 28): scirag.answer and scirag.answer_text, moved out of functions/answer (sql/functions/answer.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- with the reader wall's settings declared where the function is defined (the released
-- script left them to scirag.apply_reader_wall()); a later change to it copies this script
-- only: after a tag, `sqitch rework functions/answer_main` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.answer(question text, options jsonb DEFAULT '{}')
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
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
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT a->>'answer' || coalesce(E'\n\n' || (
           SELECT string_agg(format('[%s] %s', c->>'n', coalesce(c->>'cite', c->>'title')), E'\n' ORDER BY (c->>'n')::int)
           FROM jsonb_array_elements(a->'citations') AS c), '')
  FROM scirag.answer(question, options) AS a
$$;
COMMENT ON FUNCTION scirag.answer_text(text, jsonb) IS
  'scirag.answer as plain text for psql: the answer followed by its numbered citations.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.answer(text, jsonb) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.answer(text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.answer(text, jsonb) TO scirag_loader, scirag_reader;
ALTER FUNCTION scirag.answer_text(text, jsonb) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.answer_text(text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.answer_text(text, jsonb) TO scirag_loader, scirag_reader;
COMMIT;
