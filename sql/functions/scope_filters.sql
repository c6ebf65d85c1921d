-- Deploy scirag:functions/scope_filters
-- Positive scope filters (issue 23): scirag.documents, scirag.years, scirag.authors,
-- scirag.journals and scirag.dois narrow what a session sees to chosen papers ("ask
-- this paper"). Like every other scope setting they can only narrow: they are read
-- by restrictive policies (policies/scope_filters) on top of the licence, source,
-- exclusion and retraction rules, so no value can widen anyone's rights.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.scope_years(value text)
RETURNS int4range[]
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  item text;
  out int4range[] := '{}';
  m text[];
BEGIN
  FOREACH item IN ARRAY scirag.parse_list(value) LOOP
    m := regexp_match(item, '^([0-9]{4})?\s*(-)?\s*([0-9]{4})?$');
    IF m IS NULL OR (m[1] IS NULL AND m[3] IS NULL) OR (m[2] IS NULL AND m[3] IS NOT NULL) THEN
      RAISE EXCEPTION 'scirag.years: invalid value "%"', left(item, 64)
        USING ERRCODE = '22023', HINT = 'use years and ranges separated by commas, e.g. 2019, 2015-2018, -2010, 2020-';
    END IF;
    IF m[2] IS NULL THEN
      out := out || int4range(m[1]::int, m[1]::int, '[]');
    ELSE
      IF m[1] IS NOT NULL AND m[3] IS NOT NULL AND m[1]::int > m[3]::int THEN
        RAISE EXCEPTION 'scirag.years: range "%" runs backwards', left(item, 64)
          USING ERRCODE = '22023', HINT = 'write the earlier year first, e.g. 2015-2018';
      END IF;
      out := out || int4range(m[1]::int, m[3]::int, '[]');
    END IF;
  END LOOP;
  RETURN out;
END $$;
COMMENT ON FUNCTION scirag.scope_years(text) IS
  'Parses a scirag.years value ("2019, 2015-2018, -2010, 2020-") into year ranges; anything else raises 22023 naming the setting.';

CREATE OR REPLACE FUNCTION scirag.parse_name_list(value text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  -- names hold commas ("Vaswani, Ashish"), so these lists are separated by semicolons
  SELECT coalesce(array_agg(DISTINCT lower(btrim(x))) FILTER (WHERE btrim(x) <> ''), '{}')
  FROM unnest(string_to_array(value, ';')) AS x
$$;
COMMENT ON FUNCTION scirag.parse_name_list(text) IS
  'Splits a semicolon-separated name setting (scirag.authors, scirag.journals) into trimmed, lower-cased, de-duplicated names.';

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

-- Behind the reader wall like every function a reader may call that reads evidence:
-- it runs as scirag_api, where row-level security is keyed on the caller
-- (scirag.scope_role()), so a reader calling it directly learns only its own scope.
ALTER FUNCTION scirag.scope_documents() OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.scope_documents(), scirag.scope_years(text), scirag.parse_name_list(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.scope_documents(), scirag.scope_years(text), scirag.parse_name_list(text)
  TO scirag_reader, scirag_api, scirag_loader, scirag_owner;
COMMIT;
