-- Deploy scirag:functions/scope_documents_memo
-- One answer scoped to a paper still resolved the positive filters 16 times
-- (functions/scope_documents_scan): every statement over an evidence table runs the
-- scope_filter policies' initplans anew. The resolution scans documents and their keys
-- on purpose (a hidden key must cost what an absent one does), so its price grows with
-- the library, and 16 scans an answer would make a large library slow to ask.
-- scope_documents() now keeps its answer for the rest of the top-level statement:
-- - the key is the statement's start time, the scope role and every setting the scope
--   rules read, so a setting changed inside the statement (scirag.answer turns
--   scirag.exclude_retracted on for its call) resolves again;
-- - the memo lives in the backend's PL/Python GD, which no reader can read or write,
--   and holds one entry: nothing outlives the statement, so nothing is there to time
--   across statements or callers;
-- - it can only ever narrow: the scope_filter policies are restrictive, ANDed with the
--   licence, source, exclusion and retraction policies each statement evaluates itself,
--   so even a list resolved earlier in the statement admits no row those hide.
-- The resolution itself moves, unchanged, to scope_documents_resolve(), the memo is
-- scope_documents_kept() (both SECURITY INVOKER, for scirag_api only: they run inside
-- scope_documents, as scirag_api), and scope_documents() answers NULL without
-- entering Python when no filter is set.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.scope_documents_resolve()
RETURNS bigint[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
SET enable_indexscan = off
SET enable_indexonlyscan = off
SET enable_bitmapscan = off
AS $$
DECLARE
  f record := scirag.scope_filter_settings();
  v_keys text[];
  v_ids bigint[];
  v_year_ranges int4range[];
  v_author_names text[];
  v_journal_names text[];
  v_doi_list text[];
BEGIN
  IF num_nonnulls(f.documents, f.years, f.authors, f.journals, f.dois) = 0 THEN
    RETURN NULL;  -- no positive filter: the other scope rules alone decide
  END IF;
  v_keys := scirag.parse_list(f.documents);
  v_ids := ARRAY(SELECT x::bigint FROM unnest(v_keys) AS x WHERE x ~ '^[0-9]{1,18}$');
  v_year_ranges := scirag.scope_years(f.years);
  v_author_names := scirag.parse_name_list(f.authors);
  v_journal_names := scirag.parse_name_list(f.journals);
  v_doi_list := ARRAY(SELECT DISTINCT lower(regexp_replace(x, '^(https?://(dx\.)?doi\.org/|doi:)', '', 'i'))
                FROM unnest(scirag.parse_list(f.dois)) AS x);
  -- A filter set to only separators ("," or ";") names nothing: fail closed, not open.
  -- The documents table is read as the caller sees it (its policy does not use this
  -- function, so there is no recursion), hence hidden documents never match.
  RETURN (
    SELECT coalesce(array_agg(d.id ORDER BY d.id), '{}')
    FROM scirag.documents d
    WHERE (f.documents IS NULL OR d.id IN (
             SELECT k.id FROM scirag.document_keys k WHERE k.external_id = ANY (v_keys) OR k.id = ANY (v_ids)))
      AND (f.years IS NULL OR EXISTS (SELECT 1 FROM unnest(v_year_ranges) r WHERE r @> d.year))
      AND (f.authors IS NULL OR EXISTS (
             SELECT 1 FROM unnest(d.authors) a, unnest(v_author_names) w
             WHERE strpos(lower(a), w) > 0))
      AND (f.journals IS NULL OR EXISTS (
             SELECT 1 FROM unnest(v_journal_names) w WHERE strpos(lower(coalesce(d.journal, '')), w) > 0))
      AND (f.dois IS NULL OR lower(d.doi) = ANY (v_doi_list)));
END $$;
COMMENT ON FUNCTION scirag.scope_documents_resolve() IS
  'What scope_documents() returns, resolved anew: the documents the positive filters admit among those the caller sees, by scanning documents and document_keys (never an index). Internal: scope_documents_kept() calls it once per statement and settings.';
REVOKE ALL ON FUNCTION scirag.scope_documents_resolve() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.scope_documents_resolve() TO scirag_api;

CREATE OR REPLACE FUNCTION scirag.scope_documents_kept()
RETURNS bigint[]
LANGUAGE plpython3u STABLE
SET search_path = pg_catalog, pg_temp
AS $$
# The inputs of the resolution within this statement (statement_timestamp() is the
# top-level statement's start, the same for every query an answer runs).
plans = GD.get('scirag_scope_documents_plans')
if plans is None:
    plans = GD.setdefault('scirag_scope_documents_plans', (
        plpy.prepare(
            "SELECT ARRAY[statement_timestamp()::text, scirag.scope_role()::text, session_user::text, "
            + ", ".join("current_setting('scirag.%s', true)" % s for s in (
                'documents', 'years', 'authors', 'journals', 'dois', 'licenses', 'sources',
                'exclude_documents', 'exclude_retracted'))
            + "] AS k"),
        plpy.prepare('SELECT scirag.scope_documents_resolve() AS v')))
key = tuple(plans[0].execute([])[0]['k'])
kept = GD.get('scirag_scope_documents')
if kept is not None and kept[0] == key:
    return kept[1]
value = plans[1].execute([])[0]['v']
GD['scirag_scope_documents'] = (key, value)
return value
$$;
COMMENT ON FUNCTION scirag.scope_documents_kept() IS
  'scope_documents_resolve(), kept in the backend''s PL/Python GD (one entry, out of any caller''s reach) for the rest of the top-level statement while the scope role and scope settings stay the same. Internal: scope_documents() calls it when a positive filter is set.';
REVOKE ALL ON FUNCTION scirag.scope_documents_kept() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.scope_documents_kept() TO scirag_api;

-- No positive filter (most calls): NULL without entering Python.
CREATE OR REPLACE FUNCTION scirag.scope_documents()
RETURNS bigint[]
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF NOT scirag.scope_filtered() THEN
    RETURN NULL;  -- no positive filter: the other scope rules alone decide
  END IF;
  RETURN scirag.scope_documents_kept();
END $$;
COMMENT ON FUNCTION scirag.scope_documents() IS
  'Document ids the positive filters admit (scirag.documents: manifest or numeric ids, comma-separated; scirag.years: years and ranges; scirag.authors and scirag.journals: case-insensitive name parts, semicolon-separated; scirag.dois: comma-separated), all of them at once, among the documents the caller sees; NULL when no filter is set (scope_filtered() false). Bad values raise 22023 naming the setting. Resolved by scope_documents_resolve() once per top-level statement, scope role and scope settings (scope_documents_kept()).';
ALTER FUNCTION scirag.scope_documents() OWNER TO scirag_api;
COMMIT;
