-- Deploy scirag:schema/campaign_embeddings
-- MiniLM features in the campaign screener (issue 24): a campaign may screen with the
-- records' MiniLM embeddings beside TF-IDF (campaigns.screen_minilm, their weight; 0
-- = TF-IDF only). The embeddings are computed once per record, by the project's one
-- embedder, and stored here; append-only and owned like every campaign table.
BEGIN;

ALTER TABLE scirag.campaigns ADD COLUMN screen_minilm real NOT NULL DEFAULT 0
  CHECK (screen_minilm >= 0 AND screen_minilm <= 4);
COMMENT ON COLUMN scirag.campaigns.screen_minilm IS
  'weight of the records'' MiniLM embeddings beside their TF-IDF features in the active-learning screener (0: TF-IDF only)';

CREATE TABLE scirag.campaign_record_embeddings (
  record_id   bigint NOT NULL REFERENCES scirag.campaign_records (id),
  campaign_id bigint NOT NULL REFERENCES scirag.campaigns (id),
  model       text NOT NULL CHECK (length(model) BETWEEN 1 AND 200),
  embedding   vector(384) NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (record_id, model)
);
CREATE INDEX campaign_record_embeddings_campaign ON scirag.campaign_record_embeddings (campaign_id);

-- An embedding belongs to a record of its own campaign (checked with the inserting
-- role's rights: it must see the record).
CREATE FUNCTION scirag.campaign_embedding_check()
RETURNS trigger
LANGUAGE plpgsql
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM scirag.campaign_records r WHERE r.id = NEW.record_id AND r.campaign_id = NEW.campaign_id) THEN
    RAISE EXCEPTION 'campaign embedding: record % is not in campaign %', NEW.record_id, NEW.campaign_id
      USING ERRCODE = '23503';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION scirag.campaign_embedding_check() IS
  'Trigger: a stored screening embedding belongs to a record of its campaign';
REVOKE ALL ON FUNCTION scirag.campaign_embedding_check() FROM PUBLIC;
CREATE TRIGGER campaign_embedding_check BEFORE INSERT ON scirag.campaign_record_embeddings
  FOR EACH ROW EXECUTE FUNCTION scirag.campaign_embedding_check();

ALTER TABLE scirag.campaign_record_embeddings OWNER TO scirag_owner;
REVOKE ALL ON scirag.campaign_record_embeddings FROM PUBLIC;
ALTER TABLE scirag.campaign_record_embeddings ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.campaign_record_embeddings FORCE ROW LEVEL SECURITY;
GRANT SELECT, INSERT ON scirag.campaign_record_embeddings TO scirag_loader;
CREATE TRIGGER campaign_record_embeddings_append_only BEFORE UPDATE OR DELETE ON scirag.campaign_record_embeddings
  FOR EACH ROW EXECUTE FUNCTION scirag.campaign_append_only();
CREATE TRIGGER campaign_record_embeddings_no_truncate BEFORE TRUNCATE ON scirag.campaign_record_embeddings
  FOR EACH STATEMENT EXECUTE FUNCTION scirag.campaign_append_only();
CREATE POLICY owner_members ON scirag.campaign_record_embeddings FOR ALL TO scirag_loader
  USING (EXISTS (SELECT 1 FROM scirag.campaigns c WHERE c.id = campaign_id))
  WITH CHECK (EXISTS (SELECT 1 FROM scirag.campaigns c WHERE c.id = campaign_id));

COMMENT ON TABLE scirag.campaign_record_embeddings IS
  'MiniLM embeddings of campaign records (title + abstract), computed once for the screener (append-only)';
COMMENT ON COLUMN scirag.campaign_record_embeddings.record_id IS 'the record embedded';
COMMENT ON COLUMN scirag.campaign_record_embeddings.campaign_id IS 'its campaign';
COMMENT ON COLUMN scirag.campaign_record_embeddings.model IS 'embedder version (model/dimension)';
COMMENT ON COLUMN scirag.campaign_record_embeddings.embedding IS 'unit-length 384-d embedding of title and abstract';
COMMENT ON COLUMN scirag.campaign_record_embeddings.created_at IS 'when it was computed';

COMMIT;
