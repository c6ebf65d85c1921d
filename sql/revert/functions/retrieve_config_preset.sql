-- Revert scirag:functions/retrieve_config_preset: scirag.retrieve_config as the split
-- change functions/retrieve_config defines it (mapping the preset's keys itself).
\ir ../../functions/retrieve_config.sql
