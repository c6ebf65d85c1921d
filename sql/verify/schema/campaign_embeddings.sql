-- Verify scirag:schema/campaign_embeddings
DO $$
BEGIN
  ASSERT (SELECT relrowsecurity AND relforcerowsecurity FROM pg_class
          WHERE oid = 'scirag.campaign_record_embeddings'::regclass), 'campaign_record_embeddings: row-level security not forced';
  ASSERT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'scirag.campaign_record_embeddings'::regclass
                 AND tgname = 'campaign_record_embeddings_append_only'), 'campaign_record_embeddings: not append-only';
  ASSERT NOT has_table_privilege('scirag_reader', 'scirag.campaign_record_embeddings', 'SELECT'),
         'readers must not see campaign embeddings';
  ASSERT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'scirag.campaigns'::regclass
                 AND attname = 'screen_minilm' AND NOT attisdropped), 'campaigns.screen_minilm missing';
END $$;
