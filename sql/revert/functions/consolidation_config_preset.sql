-- Revert scirag:functions/consolidation_config_preset: scirag.consolidation_config as
-- the split change functions/consolidation_config defines it.
\ir ../../functions/consolidation_config.sql
