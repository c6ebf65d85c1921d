-- Deploy scirag:functions/scope_documents_scan
-- Asking one paper (issue 23) spent about 30 ms an answer in scope_documents(): one
-- scirag.answer scoped to a paper evaluates it about 26 times (every statement over an
-- evidence table runs each scope_filter policy's initplans), at about 1.1 ms each. Two
-- changes, the same results:
-- * scope_filter_settings() reads the five positive filters in one place, and
--   scope_filtered() says whether any is set, so a policy can ask that cheaply and call
--   scope_documents() once, not twice (policies/scope_filters_once);
-- * scope_documents() matches the named keys with one scan of document_keys (a hashed
--   semi-join instead of a nested loop of every key against every name): about 1.1 ->
--   0.7 ms a call on 888 documents. It scans, never probes an index, whatever the
--   planner would prefer (enable_indexscan and friends off for the call): through the
--   external_id index a hidden document's key would cost a heap fetch more than an absent
--   one, and a reader may call this function as often as it likes to time the difference.
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

CREATE OR REPLACE FUNCTION scirag.scope_documents()
RETURNS bigint[]
LANGUAGE plpgsql STABLE
SECURITY DEFINER
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
COMMENT ON FUNCTION scirag.scope_documents() IS
  'Document ids the positive filters admit (scirag.documents: manifest or numeric ids, comma-separated; scirag.years: years and ranges; scirag.authors and scirag.journals: case-insensitive name parts, semicolon-separated; scirag.dois: comma-separated), all of them at once, among the documents the caller sees; NULL when no filter is set (scope_filtered() false). Bad values raise 22023 naming the setting. Reads its tables by scanning them, so a hidden document costs what an absent one does.';

ALTER FUNCTION scirag.scope_documents() OWNER TO scirag_api;
ALTER FUNCTION scirag.scope_filter_settings() OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.scope_filter_settings(), scirag.scope_filtered() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.scope_filter_settings(), scirag.scope_filtered()
  TO scirag_reader, scirag_api, scirag_loader, scirag_owner;
COMMIT;
