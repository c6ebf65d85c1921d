-- Revert scirag:functions/search_graph
BEGIN;
DROP FUNCTION scirag.search_graph(text, int);
DROP FUNCTION scirag.graph_question_entities(text);
DROP FUNCTION scirag.graph_seed_entities(text, text[]);
DROP FUNCTION IF EXISTS scirag.kg_surface_entities(text, boolean);  -- an earlier deploy of this change had it
DROP FUNCTION scirag.graph_option_int(text, int, int, int);
DROP FUNCTION scirag.graph_option(text);
COMMIT;
