-- Verify scirag:schema/interactive_rerank_narrow
DO $$
BEGIN
  ASSERT (SELECT config->'rerank' @> '{"reranker": "cross_encoder", "paragraphs": 2, "narrow_only": true}'
          FROM scirag.retrieval_profiles WHERE name = 'interactive'),
         'interactive profile: the cross-encoder reranks a narrow scope''s pool';
END $$;
