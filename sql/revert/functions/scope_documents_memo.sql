-- Revert scirag:functions/scope_documents_memo: scope_documents() as functions/scope_documents_scan made it
BEGIN;

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
DROP FUNCTION IF EXISTS scirag.scope_documents_kept();
DROP FUNCTION IF EXISTS scirag.scope_documents_resolve();
COMMIT;
