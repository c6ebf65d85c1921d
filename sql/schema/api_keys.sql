-- Deploy scirag:schema/api_keys to pg
-- API keys of the HTTP and MCP doors (issue 15). A key maps to a database role: the
-- server runs each request as that role (SET ROLE), so the role's ceiling and row-level
-- security decide what the caller sees, exactly as from psql. Only a SHA-256 of the key
-- is stored (keys are 256-bit random tokens, so a fast hash is enough; no salt needed).
-- Readable by the owner role and superusers only: no reader or loader ever sees key
-- hashes, key names or which role a key maps to.
BEGIN;

CREATE TABLE scirag.api_keys (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name            text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
  key_prefix      text NOT NULL CHECK (length(key_prefix) BETWEEN 8 AND 16),
  key_hash        bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
  role_name       name NOT NULL,
  role_oid        oid NOT NULL,
  byo_llm         boolean NOT NULL DEFAULT false,
  rate_per_minute integer NOT NULL DEFAULT 120 CHECK (rate_per_minute BETWEEN 1 AND 1000000),
  created_at      timestamptz NOT NULL DEFAULT now(),
  revoked_at      timestamptz,
  note            text CHECK (length(note) <= 500)
);
ALTER TABLE scirag.api_keys OWNER TO scirag_owner;
REVOKE ALL ON scirag.api_keys FROM PUBLIC;
-- Forced row-level security with one policy for the owner role: superusers (the
-- server's admin login) and scirag_owner read and write keys; nobody else sees a row.
ALTER TABLE scirag.api_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.api_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON scirag.api_keys TO scirag_owner USING (true) WITH CHECK (true);
COMMENT ON TABLE scirag.api_keys IS
  'API keys of the HTTP/MCP server (scirag keys add|list|revoke). Each maps to a database role the request runs as; the key itself is never stored, only its SHA-256. The owner role and superusers only (forced row-level security).';
COMMENT ON COLUMN scirag.api_keys.id IS 'key id (the server''s rate-limit bucket)';
COMMENT ON COLUMN scirag.api_keys.created_at IS 'when `scirag keys add` made the key';
COMMENT ON COLUMN scirag.api_keys.name IS 'human label, unique (what `scirag keys revoke` takes)';
COMMENT ON COLUMN scirag.api_keys.key_prefix IS 'first characters of the key, to recognise it in listings; too short to guess the rest';
COMMENT ON COLUMN scirag.api_keys.key_hash IS 'SHA-256 of the whole key';
COMMENT ON COLUMN scirag.api_keys.role_name IS 'database role the request runs as (SET ROLE)';
COMMENT ON COLUMN scirag.api_keys.role_oid IS 'OID of that role when the key was made: a key never passes to a new role that reuses the name';
COMMENT ON COLUMN scirag.api_keys.byo_llm IS 'may the caller send its own model key for a request (X-LLM-API-Key header)';
COMMENT ON COLUMN scirag.api_keys.rate_per_minute IS 'requests per minute (token bucket per key, per server process)';
COMMENT ON COLUMN scirag.api_keys.revoked_at IS 'set by `scirag keys revoke`; a revoked key is refused';
COMMENT ON COLUMN scirag.api_keys.note IS 'what the key is for';

CREATE OR REPLACE FUNCTION scirag.api_keys_check_role()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE r pg_roles;
BEGIN
  SELECT * INTO r FROM pg_roles WHERE rolname = NEW.role_name;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'scirag.api_keys: role "%" does not exist', NEW.role_name
      USING ERRCODE = '42704', HINT = 'create the role (and its ceiling in scirag.role_ceilings) first';
  END IF;
  -- A key must never run as a role that row-level security does not bind.
  IF r.rolsuper OR r.rolbypassrls OR r.rolname = 'scirag_owner'
     OR pg_has_role(r.oid, 'scirag_owner', 'MEMBER') THEN
    RAISE EXCEPTION 'scirag.api_keys: role "%" is a superuser, bypasses RLS or owns the tables', NEW.role_name
      USING ERRCODE = '42501', HINT = 'map keys to reader-like roles such as scirag_reader';
  END IF;
  NEW.role_oid := r.oid;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION scirag.api_keys_check_role() IS
  'Row trigger: the role of a key exists, is bound by row-level security (no superuser, BYPASSRLS or scirag_owner member), and its OID is remembered';
CREATE TRIGGER api_keys_check_role BEFORE INSERT OR UPDATE OF role_name, role_oid ON scirag.api_keys
  FOR EACH ROW EXECUTE FUNCTION scirag.api_keys_check_role();
REVOKE ALL ON FUNCTION scirag.api_keys_check_role() FROM PUBLIC;

COMMIT;
