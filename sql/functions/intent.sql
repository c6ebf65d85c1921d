-- Deploy scirag:functions/intent
-- Reworked (issue 16): one intent classifier. scirag.classify_intent runs
-- scirag_helpers.prompts.classify_intent over the scirag.answer_intents rows (shipped
-- from domain/prompts/intents.json): the same rules, classes and order the answerer
-- uses for its prompt guidance, now also for the reranker's intent bias. (It was a
-- separate SQL rule set with other classes, no QUANTITY, and another order.)
BEGIN;

CREATE OR REPLACE FUNCTION scirag.classify_intent(query text)
RETURNS text
LANGUAGE plpython3u STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
if query is not None and len(query) > 4000:
    plpy.error(f"scirag.classify_intent: the question is {len(query)} characters long, at most 4000 allowed",
               sqlstate="22023")
plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers import prompts
intents = prompts.load_intents(plpy)
if not intents:
    # no rules visible (row-level security, an emptied table): say so, never guess GENERAL
    who = plpy.execute("SELECT current_user AS u")[0]["u"]
    plpy.error(f"scirag.classify_intent: scirag.answer_intents holds no intents readable by {who}",
               sqlstate="55000")
return prompts.classify_intent(query or '', intents).intent
$$;
COMMENT ON FUNCTION scirag.classify_intent(text) IS
  'Question intent by the rules of scirag.answer_intents (first class by priority whose cue matches; GENERAL when none does): CRITIQUE, COMPARISON, DEFINITION, QUANTITY, MECHANISM, APPLICATION, STUDY_DETAIL, GENERAL as shipped. The same classifier as the answerer (scirag_helpers.prompts); drives intent bias in scirag.rerank. Questions over 4000 characters are refused (22023).';

REVOKE ALL ON FUNCTION scirag.classify_intent(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.classify_intent(text) TO scirag_reader, scirag_loader;
COMMIT;
