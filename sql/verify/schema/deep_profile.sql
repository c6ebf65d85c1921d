-- Verify scirag:schema/deep_profile
DO $$
BEGIN
  ASSERT (SELECT config->'layers' FROM scirag.retrieval_profiles WHERE name = 'deep')
         = '["vector", "keyword", "graph", "community"]'::jsonb, 'deep profile: vector, keyword, graph, community';
  ASSERT (SELECT config->>'keyword_scale' FROM scirag.retrieval_profiles WHERE name = 'deep') = 'auto',
    'deep profile: keyword_scale auto';
END $$;
