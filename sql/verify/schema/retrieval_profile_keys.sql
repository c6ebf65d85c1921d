-- Verify scirag:schema/retrieval_profile_keys
DO $$
DECLARE bad text;
BEGIN
  SELECT name INTO bad FROM scirag.retrieval_profiles
  WHERE NOT config ?& ARRAY['layers', 'depth', 'fusion', 'weights', 'rrf_k', 'keyword_scale', 'deadline_ms', 'optional_layers']
     OR NOT config->'weights' ?& ARRAY['vector', 'keyword', 'graph', 'community', 'hyde']
  LIMIT 1;
  ASSERT bad IS NULL, format('retrieval profile %s lacks a key or a layer weight', bad);
END $$;
