-- Verify scirag:schema/deep_profile_rerank on pg
DO $$
BEGIN
  ASSERT coalesce((SELECT config ? 'rerank' FROM scirag.retrieval_profiles WHERE name = 'deep'), true),
    'deep profile: a rerank stage over its pool';
  ASSERT NOT (SELECT config ? 'rerank' FROM scirag.retrieval_profiles WHERE name = 'interactive'),
    'interactive profile: no rerank stage';
  -- the options retrieve will run with are within their bounds
  PERFORM scirag.retrieve_config('deep', 10, '{}');
END $$;
