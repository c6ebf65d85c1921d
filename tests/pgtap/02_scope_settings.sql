-- Scope semantics (docs/threat-model.md): session settings only narrow the role's
-- ceiling; unset means the external-safe default; '' means nothing; unknown is never
-- external-safe. Each function-level assertion is paired with what a reader then
-- actually sees in scirag.documents, so the policies are checked too.
BEGIN;
SELECT plan(39);
\ir helpers/fixtures.psql

-- What the current role sees of the fixture documents.
CREATE FUNCTION tests.visible_docs() RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT coalesce(array_agg(external_id::text ORDER BY external_id), '{}')
  FROM scirag.documents WHERE external_id LIKE 'ss-%'
$$;
GRANT EXECUTE ON FUNCTION tests.visible_docs() TO PUBLIC;
-- Readers have no privilege on documents (policies/reader_wall): read as the reader API
-- does, so these assertions check the policies themselves, keyed on the caller.
SELECT tests.through_api('tests.visible_docs()') AS _ \gset

SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('ss-pub',  'public',             'src_a', ARRAY['public text']) AS pub \gset
SELECT tests.add_doc('ss-oc',   'open_commercial',    'src_a', ARRAY['open commercial text']) AS oc \gset
SELECT tests.add_doc('ss-onc',  'open_noncommercial', 'src_b', ARRAY['open noncommercial text']) AS onc \gset
SELECT tests.add_doc('ss-res',  'restricted',         'src_a', ARRAY['restricted text']) AS res \gset
SELECT tests.add_doc('ss-unk',  'unknown',            'src_c', ARRAY['unknown text']) AS unk \gset
SELECT tests.add_doc('ss-retr', 'public',             'src_b', ARRAY['retracted text'], retracted => true) AS retr \gset

-- A login user in the reader group.
SELECT tests.login_role('reader', 'scirag_reader') AS reader \gset
-- A login user with no ceiling row at all (but the privileges to ask).
SELECT tests.login_role('noceil') AS noceil \gset
-- A login user whose ceiling also restricts sources.
SELECT tests.login_role('srcceil') AS srcceil \gset
SELECT tests.as_role(NULL);
INSERT INTO scirag.role_ceilings (role_name, licenses, sources, note)
VALUES (:'srcceil', ARRAY['public', 'open_noncommercial'], ARRAY['src_a', 'src_b'], 'test: source-limited ceiling');
-- both may read and call what a reader may, without getting the reader's ceiling
SELECT tests.grant_like('scirag_reader', :'noceil') AS _g1, tests.grant_like('scirag_reader', :'srcceil') AS _g2 \gset

-- ---------------------------------------------------------------- licenses, as a reader
SELECT tests.as_role(:'reader');

SELECT is(scirag.scope_licenses(), ARRAY['open_commercial', 'public'],
  'nothing set in the session: the external-safe default public, open_commercial');
SELECT is(tests.visible_docs(), ARRAY['ss-oc', 'ss-pub', 'ss-retr'],
  'by default a reader sees public and open_commercial documents only');

SET LOCAL scirag.licenses = 'default';
SELECT is(scirag.scope_licenses(), ARRAY['open_commercial', 'public'], '''default'' is the external-safe default');

SET LOCAL scirag.licenses = '';
SELECT is(scirag.scope_licenses(), '{}'::text[], 'an explicitly empty list means nothing');
SELECT is(tests.visible_docs(), '{}'::text[], 'with an empty list a reader sees no document');
SELECT ok(scirag.scope_is_empty(), 'scope_is_empty() is true for an empty license list');

SET LOCAL scirag.licenses = 'restricted';
SELECT is(scirag.scope_licenses(), '{}'::text[], 'SET LOCAL above the ceiling (restricted) gives nothing');
SELECT is(tests.visible_docs(), '{}'::text[], 'SET LOCAL restricted shows no restricted document');

SELECT set_config('scirag.licenses', 'restricted', false) IS NOT NULL AS _ \gset
SELECT is(scirag.scope_licenses(), '{}'::text[], 'set_config above the ceiling gives nothing');

SET scirag.licenses = 'restricted, unknown';
SELECT is(scirag.scope_licenses(), '{}'::text[], 'session SET above the ceiling (restricted, unknown) gives nothing');

SET LOCAL scirag.licenses = 'restricted, public';
SELECT is(scirag.scope_licenses(), ARRAY['public'], 'a request is intersected with the ceiling: restricted drops out');
SELECT is(tests.visible_docs(), ARRAY['ss-pub', 'ss-retr'], '... and only the public documents are visible');

RESET scirag.licenses;
SELECT is(scirag.scope_licenses(), ARRAY['open_commercial', 'public'], 'RESET returns to the external-safe default');

SET LOCAL scirag.licenses = 'public, open_noncommercial';
SELECT is(scirag.scope_licenses(), ARRAY['open_noncommercial', 'public'], 'a list inside the ceiling is honoured');
SELECT is(tests.visible_docs(), ARRAY['ss-onc', 'ss-pub', 'ss-retr'], '... and exactly those classes are visible');

SET LOCAL scirag.licenses = ' PUBLIC ,public, ';
SELECT is(scirag.scope_licenses(), ARRAY['public'], 'case, spaces, duplicates and empty items are normalised');

SET LOCAL scirag.licenses = 'public, secret';
SELECT throws_ok($$SELECT scirag.scope_licenses()$$, 'P0001',
  'scirag.licenses: unknown license class "secret"',
  'an unknown license class raises an error naming it');
SELECT throws_ok($$SELECT count(*) FROM scirag.documents_visible()$$, 'P0001',
  'scirag.licenses: unknown license class "secret"',
  'a query under a malformed scope fails closed (error), it never shows everything');

SET LOCAL scirag.licenses = 'unknown';
SELECT is(scirag.scope_licenses(), '{}'::text[], 'unknown is above the reader ceiling');

-- ---------------------------------------------------------------- unknown is never a default
SELECT tests.as_role('scirag_loader');
RESET scirag.licenses;
SELECT ok(NOT ('unknown' = ANY (scirag.scope_licenses())) AND scirag.scope_licenses() = ARRAY['open_commercial', 'public'],
  'unknown is not in the default even for a role whose ceiling includes it');
SET LOCAL scirag.licenses = 'unknown';
SELECT is(scirag.scope_licenses(), ARRAY['unknown'], '... it must be asked for explicitly (the loader ceiling allows it)');
RESET scirag.licenses;

-- ---------------------------------------------------------------- a role without a ceiling
SELECT tests.as_role(:'noceil');
SET LOCAL scirag.licenses = 'public, open_commercial';
SELECT is(scirag.scope_licenses(), '{}'::text[], 'a role with no ceiling row gets no license class');
SELECT is(tests.visible_docs(), '{}'::text[], 'a role with no ceiling row sees no document');
SELECT ok(scirag.scope_is_empty(), 'a role with no ceiling row has an empty scope');
RESET scirag.licenses;

-- ---------------------------------------------------------------- sources
SELECT tests.as_role(:'reader');
SELECT is(scirag.scope_sources(), NULL::text[], 'reader, sources unset: any source (NULL)');
SET LOCAL scirag.sources = ' src_b , src_a ';
SELECT is(scirag.scope_sources(), ARRAY['src_a', 'src_b'], 'scirag.sources narrows to the listed sources');
SET LOCAL scirag.sources = 'src_b';
SELECT is(tests.visible_docs(), ARRAY['ss-retr'], '... and only documents from them are visible');
SET LOCAL scirag.sources = '';
SELECT is(scirag.scope_sources(), NULL::text[], 'an empty source list means no narrowing');
RESET scirag.sources;

SELECT tests.as_role(:'srcceil');
SELECT is(scirag.scope_sources(), ARRAY['src_a', 'src_b'], 'a source ceiling applies when nothing is asked');
SET LOCAL scirag.sources = 'src_b, src_c';
SELECT is(scirag.scope_sources(), ARRAY['src_b'], 'a source request is intersected with the source ceiling');
SET LOCAL scirag.sources = 'src_c';
SELECT ok(scirag.scope_sources() = '{}' AND scirag.scope_is_empty(),
  'asking only for a source above the ceiling gives an empty scope');
RESET scirag.sources;
SELECT is(tests.visible_docs(), ARRAY['ss-pub', 'ss-retr'],
  'a source-limited ceiling sees its classes in its sources only (not ss-oc: license; not ss-unk: source)');

-- ---------------------------------------------------------------- retracted and excluded documents
SELECT tests.as_role(:'reader');
SET LOCAL scirag.exclude_retracted = 'on';
SELECT ok(scirag.scope_exclude_retracted() AND tests.visible_docs() = ARRAY['ss-oc', 'ss-pub'],
  'exclude_retracted = on hides retracted documents');
RESET scirag.exclude_retracted;

SELECT set_config('scirag.exclude_documents', format('ss-pub, %s, no-such-doc', :oc), true) IS NOT NULL AS _ \gset
SELECT is(tests.try_text($$SELECT ARRAY(SELECT unnest(scirag.scope_excluded_documents()) ORDER BY 1)::text$$),
  format('{%s,%s}', :pub, :oc),
  'scope_excluded_documents() resolves manifest ids and numeric ids (unknown ids are ignored)');
SELECT is(tests.try_text($$SELECT tests.visible_docs()::text$$), '{ss-retr}', 'excluded documents are not visible');
SELECT is(tests.try_text($$SELECT scirag.current_scope()->>'excluded_documents'$$), '2',
  'current_scope() counts the excluded documents');
-- On a real corpus the resolver's join runs on the documents indexes (a BitmapOr of
-- external_id and id); disabling sequential scans gives this small table that plan.
SET LOCAL enable_seqscan = off;
SET LOCAL scirag.exclude_documents = 'ss-pub';
SELECT is(tests.try_text($$SELECT scirag.scope_excluded_documents()::text$$), format('{%s}', :pub),
  'a manifest id resolves (without raising) when the lookup uses the documents indexes');
RESET enable_seqscan;

-- The exclusion list must not become an oracle: resolving an id the caller cannot see
-- would tell it that a restricted document with that manifest id exists, and its id.
SELECT set_config('scirag.exclude_documents', format('ss-res, %s', :unk), true) IS NOT NULL AS _ \gset
SELECT is(tests.try_text($$SELECT scirag.scope_excluded_documents()::text$$), '{}',
  'scope_excluded_documents() does not reveal documents outside the caller''s scope (restricted, unknown)');
SELECT is(tests.try_text($$SELECT scirag.current_scope()->>'excluded_documents'$$), '0',
  'current_scope() does not count documents outside the caller''s scope');
RESET scirag.exclude_documents;

SELECT tests.as_role(NULL);
SELECT * FROM finish();
ROLLBACK;
