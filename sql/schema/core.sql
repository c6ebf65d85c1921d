-- Deploy scirag:schema/core
-- Extensions, the scirag schema, settings and per-role scope ceilings.
BEGIN;
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS plpython3u;

CREATE SCHEMA scirag AUTHORIZATION scirag_owner;
COMMENT ON SCHEMA scirag IS 'scirag: retrieval-augmented question answering over scientific documents';
REVOKE ALL ON SCHEMA scirag FROM PUBLIC;
GRANT USAGE ON SCHEMA scirag TO scirag_loader, scirag_reader;
-- PUBLIC has no USAGE on the schema, so nothing in it is reachable without a grant;
-- `scirag db init` also revokes EXECUTE on every scirag function from PUBLIC after each
-- deploy (per-schema default privileges can only add privileges, and a database-wide
-- default would also strip other extensions' functions, pgTAP's among them).

CREATE DOMAIN scirag.license_class AS text
  CHECK (VALUE IN ('public', 'open_commercial', 'open_noncommercial', 'restricted', 'unknown'));
COMMENT ON DOMAIN scirag.license_class IS
  'Redistribution class of a document; unknown is never external-safe';

CREATE TABLE scirag.settings (
  key         text PRIMARY KEY,
  value       text NOT NULL,
  description text NOT NULL
);
ALTER TABLE scirag.settings OWNER TO scirag_owner;
COMMENT ON TABLE scirag.settings IS
  'Database-wide knobs (BM25 k1/b, embedding model, python path). Only the admin writes them: unlike session settings, a reader cannot change them.';
COMMENT ON COLUMN scirag.settings.key IS 'setting name';
COMMENT ON COLUMN scirag.settings.value IS 'setting value as text';
COMMENT ON COLUMN scirag.settings.description IS 'what the setting does';

INSERT INTO scirag.settings (key, value, description) VALUES
  ('embedding_dim', :'dim', 'dimension of chunks.embedding, fixed at deploy time'),
  ('embedding_model', 'all-MiniLM-L6-v2-int8', 'embedder used for chunks and queries (offline default)'),
  ('bm25_k1', '0.9', 'BM25 term-frequency saturation'),
  ('bm25_b', '0.4', 'BM25 length normalisation'),
  ('bm25_proximity', '0.3', 'BM25 proximity bonus: neighbouring question terms found as a phrase in a chunk add this times their mean IDF (0 turns it off)'),
  ('python_path', '', 'colon-separated folders PL/Python adds to sys.path (the venv site-packages and python/plpy_helpers); written by scirag db init');

CREATE TABLE scirag.role_ceilings (
  role_name name PRIMARY KEY,
  licenses  text[] NOT NULL,
  sources   text[],
  note      text
);
ALTER TABLE scirag.role_ceilings OWNER TO scirag_owner;
COMMENT ON TABLE scirag.role_ceilings IS
  'The most a database role may ever see. Session settings (scirag.licenses, scirag.sources) can only narrow it: effective scope = request intersected with the ceiling of every role the caller is a member of. A role with no ceiling sees nothing.';
COMMENT ON COLUMN scirag.role_ceilings.role_name IS 'database role the ceiling applies to (and to its members)';
COMMENT ON COLUMN scirag.role_ceilings.licenses IS 'license classes the role may see';
COMMENT ON COLUMN scirag.role_ceilings.sources IS 'sources the role may see; NULL means any source';
COMMENT ON COLUMN scirag.role_ceilings.note IS 'why the ceiling is what it is';

INSERT INTO scirag.role_ceilings (role_name, licenses, sources, note) VALUES
  ('scirag_reader', ARRAY['public', 'open_commercial', 'open_noncommercial'], NULL,
   'default reader: everything that may be shown outside the lab'),
  ('scirag_loader', ARRAY['public', 'open_commercial', 'open_noncommercial', 'restricted', 'unknown'], NULL,
   'the loader sees what it writes');

-- RESET of a custom setting yields '' (which means "nothing"); give the database a
-- default so that RESET returns to the external-safe default instead.
DO $$ BEGIN
  EXECUTE format('ALTER DATABASE %I SET scirag.licenses = %L', current_database(), 'default');
END $$;
COMMIT;
