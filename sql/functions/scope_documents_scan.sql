-- Deploy scirag:functions/scope_documents_scan
-- Asking one paper (issue 23) spent about 30 ms an answer in scope_documents(): one
-- scirag.answer scoped to a paper evaluated it about 26 times (every statement over an
-- evidence table runs the scope_filter policies' initplans anew, and each policy named
-- it twice), at about 1.1 ms each on 888 documents. The same results, now:
-- * scope_filter_settings() reads the five positive filters in one place, and
--   scope_filtered() says whether any is set, so a policy can ask that cheaply and name
--   scope_documents() once (policies/scope_filters_once);
-- * scope_documents_resolve() matches the named keys with one scan of document_keys (a
--   hashed semi-join instead of a nested loop of every key against every name): about
--   1.1 -> 0.7 ms. It scans, never probes an index, whatever the planner would prefer
--   (enable_indexscan and friends off for the call): through the external_id index a
--   hidden document's key would cost a heap fetch more than an absent one, and a reader
--   may call scope_documents() as often as it likes to time the difference. The price
--   is a scan that grows with the library, so:
-- * scope_documents() keeps the resolved list for the rest of the top-level statement
--   (scope_documents_kept()):
--   - the key is the statement's start time, the scope role, the session user and
--     every setting the scope rules read, so a setting changed inside the statement
--     (scirag.answer turns scirag.exclude_retracted on for its call) resolves again;
--   - the list lives in the backend's PL/Python GD, which no reader can read or write,
--     and one entry is kept: nothing outlives the statement, so nothing is there to
--     time across statements or callers;
--   - it can only ever narrow: the scope_filter policies are restrictive, ANDed with the
--     licence, source, exclusion and retraction policies each statement evaluates
--     itself, so even a list resolved earlier in the statement admits no row those hide.
--   With no filter set, scope_documents() answers NULL without entering Python.
-- scope_documents_resolve() and scope_documents_kept() are SECURITY INVOKER and for
-- scirag_api only: they run inside scope_documents(), as scirag_api.
BEGIN;

-- On the reader wall (functions/reader_wall_scope_filter) like every function a reader
-- may run that names an evidence relation: it names none, but the setting
-- scirag.documents reads like the table to the wall's sweep, and running as scirag_api
-- costs nothing here (session settings are the caller's whoever runs).
CREATE OR REPLACE FUNCTION scirag.scope_filter_settings(OUT documents text, OUT years text, OUT authors text,
                                                        OUT journals text, OUT dois text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  documents := nullif(btrim(coalesce(scirag.scope_setting('scirag.documents', 65536), '')), '');
  years := nullif(btrim(coalesce(scirag.scope_setting('scirag.years', 1024), '')), '');
  authors := nullif(btrim(coalesce(scirag.scope_setting('scirag.authors', 4096), '')), '');
  journals := nullif(btrim(coalesce(scirag.scope_setting('scirag.journals', 4096), '')), '');
  dois := nullif(btrim(coalesce(scirag.scope_setting('scirag.dois', 65536), '')), '');
END $$;
COMMENT ON FUNCTION scirag.scope_filter_settings() IS
  'The positive scope filters as set (scirag.documents, years, authors, journals, dois), blank ones NULL; an overlong value raises 22023 naming its setting. Read by scope_filtered() and scope_documents().';

CREATE OR REPLACE FUNCTION scirag.scope_filtered()
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT num_nonnulls(s.documents, s.years, s.authors, s.journals, s.dois) > 0
  FROM scirag.scope_filter_settings() AS s
$$;
COMMENT ON FUNCTION scirag.scope_filtered() IS
  'Whether any positive scope filter is set: exactly when scirag.scope_documents() is not NULL, without resolving it (the scope_filter policies ask this first).';

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
ALTER FUNCTION scirag.scope_filter_settings() OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.scope_filter_settings(), scirag.scope_filtered() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.scope_filter_settings(), scirag.scope_filtered()
  TO scirag_reader, scirag_api, scirag_loader, scirag_owner;
COMMIT;
