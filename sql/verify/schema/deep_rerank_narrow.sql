-- Verify scirag:schema/deep_rerank_narrow
DO $$
BEGIN
  ASSERT (SELECT config->'rerank' @> '{"reranker": "cross_encoder", "narrow_only": true}' AND (config->>'pool')::int = 20
          FROM scirag.retrieval_profiles WHERE name = 'deep'),
         'deep profile: the cross-encoder reranks a narrow scope''s pool of 20';
END $$;
