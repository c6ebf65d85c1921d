-- Verify scirag:schema/campaign_eligibility
DO $$
BEGIN
  ASSERT (SELECT relrowsecurity AND relforcerowsecurity FROM pg_class
          WHERE oid = 'scirag.eligibility_decisions'::regclass), 'eligibility_decisions: row-level security not forced';
  ASSERT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'scirag.eligibility_decisions'::regclass
                 AND tgname = 'eligibility_decisions_append_only'), 'eligibility_decisions: not append-only';
  ASSERT NOT has_table_privilege('scirag_reader', 'scirag.eligibility_decisions', 'SELECT'),
         'readers must not see eligibility decisions';
  ASSERT has_table_privilege('scirag_loader', 'scirag.campaign_current_eligibility', 'SELECT'),
         'loaders read the current eligibility';
END $$;
