-- Verify scirag:schema/interactive_rerank_narrow
DO $$
BEGIN
  -- (how many openings is schema/interactive_rerank_pool's to say: 2 here, 4 after it)
  ASSERT (SELECT config->'rerank' @> '{"reranker": "cross_encoder", "narrow_only": true}'
                 AND (config #>> '{rerank,paragraphs}')::int BETWEEN 1 AND 8
          FROM scirag.retrieval_profiles WHERE name = 'interactive'),
         'interactive profile: the cross-encoder reranks a narrow scope''s pool';
END $$;
