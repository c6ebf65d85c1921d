-- Deploy scirag:functions/reader_wall_scope_filter
-- scope_filter_settings() (functions/scope_documents_scan) joins the reader API list: it
-- runs as scirag_api, as every function a reader may run whose body names scirag.documents.
BEGIN;
CREATE OR REPLACE FUNCTION scirag.reader_wall_functions()
RETURNS text[]
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT ARRAY[
    -- entry points
    'retrieve', 'retrieve_config', 'search_vector', 'search_keyword', 'search_hyde', 'search_graph',
    'search_community', 'search_community_chunks', 'rerank', 'consolidate', 'enrich_chunks',
    'enrichment_metrics', 'mmr_select', 'answer', 'answer_text', 'references', 'cited_by',
    'current_scope', 'embed_query', 'corpus_fingerprint', 'corpus_fingerprint_full',
    'documents_visible', 'chunk_get', 'chunk_neighbours', 'document_outline', 'entities_visible', 'documents_all_visible',
    'external_ids_all_visible',
    -- helpers a reader may call directly that read evidence or settings
    'scope_ceiling', 'scope_excluded_documents', 'scope_documents', 'scope_filter_settings', 'plpy_bootstrap', 'hyde_passage',
    'graph_question_entities', 'graph_seed_entities', 'section_chain', 'consolidation_groups',
    'consolidation_render', 'retrieve_rerank', 'retrieve_rows',
    -- PL/Python that reads only settings (python_path), through plpy_bootstrap
    'text_units', 'classify_intent']
$$;
COMMENT ON FUNCTION scirag.reader_wall_functions() IS
  'Names of the reader API functions: SECURITY DEFINER, owned by scirag_api, search_path pinned (policies/reader_wall).';
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
