-- Deploy scirag:functions/intent
-- Rule-based question intent (VulcanLab's six classes), offline and in plain SQL,
-- so intent bias and prompt guidance need neither a model nor PL/Python.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.classify_intent(query text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  -- Order matters: the more specific cue wins ("what are the limitations of the
  -- study" is a critique, "what is the difference between" a comparison).
  SELECT CASE
    WHEN q ~ '\m(compare[sd]?|comparing|comparison|versus|vs\.?|differ(s|ence|ences|ent)?|contrast(s|ed)?|better than|worse than|relative to|outperform(s|ed)?|trade-?offs?)\M'
      THEN 'COMPARISON'
    WHEN q ~ '\m(critique|criticism|criticisms|criticized|criticised|limitation|limitations|weakness|weaknesses|drawbacks?|flaws?|flawed|shortcomings?|caveats?|biase?s?|biased|concerns?|problems? with|uncertaint(y|ies)|valid(ity)?|reliab(le|ility)|trustworth(y|iness))\M'
      THEN 'CRITIQUE'
    WHEN q ~ '\m(when should|should (i|we|one|you)|how (can|could|should|do) (i|we|one|you)|how to|use[sd]? (for|to|in)|apply|applying|application|applications|practical|in practice|recommend(ed|ation|ations)?|best way|implement(ed|ation)?|deploy|case stud(y|ies))\M'
      THEN 'APPLICATION'
    WHEN q ~ '\m(how does|how do|how did|how is|how are|why does|why do|why did|why is|why are|mechanisms?|process(es)?|pathways?|causes?|caused|leads? to|results? in|affects?|effects? of|influences?|works?|happens?|role of)\M'
         AND q !~ '\m(how (much|many|large|high|long)|what (yield|amount|percentage|fraction|rate|ratio|value|level|threshold|cost|price))\M'
      THEN 'MECHANISM'
    WHEN q ~ '\m(stud(y|ies)|trial|trials|experiment(s|al)?|findings?|found|results?|sample|participants|cohort|measured|reported|survey(ed)?|et al|table [0-9]+|figure [0-9]+|how (much|many|large|high|long)|what (yield|amount|percentage|fraction|rate|ratio|value|level|threshold|cost|price)|[0-9]{4})\M'
      THEN 'STUDY_DETAIL'
    WHEN q ~ '\m(define|definition|defined|meaning of|stand for|stands for)\M'
      OR q ~ '^what (is|are) (an? |the )?[^ ]+( [^ ]+){0,3}\?*$'
      OR q ~ '^what does .+ mean\?*$'
      THEN 'DEFINITION'
    ELSE 'GENERAL'
  END
  FROM (SELECT lower(btrim(coalesce(query, ''))) AS q) AS t
$$;
COMMENT ON FUNCTION scirag.classify_intent(text) IS
  'Rule-based question intent: DEFINITION, MECHANISM, COMPARISON, APPLICATION, STUDY_DETAIL or CRITIQUE (VulcanLab''s classes), GENERAL when no cue matches. Offline and deterministic; drives intent bias in scirag.rerank.';

REVOKE ALL ON FUNCTION scirag.classify_intent(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.classify_intent(text) TO scirag_reader, scirag_loader;
COMMIT;
