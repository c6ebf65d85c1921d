-- Verify scirag:schema/interactive_rerank_pool
DO $$
BEGIN
  ASSERT (SELECT config->>'pool' = '20' AND config->'rerank' @> '{"paragraphs": 4, "narrow_only": true}'
          FROM scirag.retrieval_profiles WHERE name = 'interactive'),
         'interactive profile: a narrow scope''s pool of 20 reranked at four paragraph openings';
END $$;
