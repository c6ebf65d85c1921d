-- Verify scirag:schema/campaigns
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['campaigns', 'campaign_queries', 'campaign_pages', 'campaign_records',
                           'screening_decisions', 'oa_resolutions', 'campaign_downloads'] LOOP
    ASSERT (SELECT relrowsecurity AND relforcerowsecurity FROM pg_class WHERE oid = ('scirag.' || t)::regclass),
           format('%s: row-level security not forced', t);
    ASSERT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = ('scirag.' || t)::regclass AND tgname = t || '_append_only'),
           format('%s: not append-only', t);
  END LOOP;
  ASSERT NOT has_table_privilege('scirag_reader', 'scirag.campaigns', 'SELECT'), 'readers must not see campaigns';
END $$;
