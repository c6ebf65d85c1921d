-- Revert scirag:functions/scope_documents_scan: scope_documents() as functions/scope_filters made it
BEGIN;

CREATE OR REPLACE FUNCTION scirag.scope_documents()
RETURNS bigint[]
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_docs text := nullif(btrim(coalesce(scirag.scope_setting('scirag.documents', 65536), '')), '');
  v_years text := nullif(btrim(coalesce(scirag.scope_setting('scirag.years', 1024), '')), '');
  v_authors text := nullif(btrim(coalesce(scirag.scope_setting('scirag.authors', 4096), '')), '');
  v_journals text := nullif(btrim(coalesce(scirag.scope_setting('scirag.journals', 4096), '')), '');
  v_dois text := nullif(btrim(coalesce(scirag.scope_setting('scirag.dois', 65536), '')), '');
  v_year_ranges int4range[];
  v_author_names text[];
  v_journal_names text[];
  v_doi_list text[];
BEGIN
  IF v_docs IS NULL AND v_years IS NULL AND v_authors IS NULL AND v_journals IS NULL AND v_dois IS NULL THEN
    RETURN NULL;  -- no positive filter: the other scope rules alone decide
  END IF;
  v_year_ranges := scirag.scope_years(v_years);
  v_author_names := scirag.parse_name_list(v_authors);
  v_journal_names := scirag.parse_name_list(v_journals);
  v_doi_list := ARRAY(SELECT DISTINCT lower(regexp_replace(x, '^(https?://(dx\.)?doi\.org/|doi:)', '', 'i'))
                FROM unnest(scirag.parse_list(v_dois)) AS x);
  -- A filter set to only separators ("," or ";") names nothing: fail closed, not open.
  -- The documents table is read as the caller sees it (its policy does not use this
  -- function, so there is no recursion), hence hidden documents never match.
  RETURN (
    SELECT coalesce(array_agg(d.id ORDER BY d.id), '{}')
    FROM scirag.documents d
    WHERE (v_docs IS NULL OR d.id IN (
             SELECT k.id FROM unnest(scirag.parse_list(v_docs)) AS x
             JOIN scirag.document_keys k
               ON k.external_id = x OR k.id = CASE WHEN x ~ '^[0-9]{1,18}$' THEN x::bigint END))
      AND (v_years IS NULL OR EXISTS (SELECT 1 FROM unnest(v_year_ranges) r WHERE r @> d.year))
      AND (v_authors IS NULL OR EXISTS (
             SELECT 1 FROM unnest(d.authors) a, unnest(v_author_names) w
             WHERE strpos(lower(a), w) > 0))
      AND (v_journals IS NULL OR EXISTS (
             SELECT 1 FROM unnest(v_journal_names) w WHERE strpos(lower(coalesce(d.journal, '')), w) > 0))
      AND (v_dois IS NULL OR lower(d.doi) = ANY (v_doi_list)));
END $$;
COMMENT ON FUNCTION scirag.scope_documents() IS
  'Document ids the positive filters admit (scirag.documents: manifest or numeric ids, comma-separated; scirag.years: years and ranges; scirag.authors and scirag.journals: case-insensitive name parts, semicolon-separated; scirag.dois: comma-separated), all of them at once, among the documents the caller sees; NULL when no filter is set. Bad values raise 22023 naming the setting.';
ALTER FUNCTION scirag.scope_documents() OWNER TO scirag_api;
DROP FUNCTION IF EXISTS scirag.scope_documents_kept();
DROP FUNCTION IF EXISTS scirag.scope_documents_resolve();
DROP FUNCTION IF EXISTS scirag.scope_filtered();
DROP FUNCTION IF EXISTS scirag.scope_filter_settings();
COMMIT;
