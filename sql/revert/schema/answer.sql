-- Revert scirag:schema/answer
BEGIN;
DROP TABLE scirag.answer_intents;
DROP TABLE scirag.prompt_templates;
COMMIT;
