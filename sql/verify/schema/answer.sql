-- Verify scirag:schema/answer
DO $$
BEGIN
  ASSERT to_regclass('scirag.prompt_templates') IS NOT NULL, 'prompt_templates missing';
  ASSERT to_regclass('scirag.answer_intents') IS NOT NULL, 'answer_intents missing';
  ASSERT (SELECT count(*) FROM scirag.prompt_templates WHERE name = 'default') = 4,
         'the four default prompt templates are not all there';
  ASSERT (SELECT strpos(system_text, 'Cite every claim') > 0 FROM scirag.prompt_templates
          WHERE kind = 'answer' AND name = 'default'), 'default answer template lacks the standing orders';
  ASSERT (SELECT count(*) FROM scirag.answer_intents WHERE cues = '{}') = 1,
         'exactly one intent must be the cue-less fallback';
  ASSERT (SELECT relforcerowsecurity FROM pg_class WHERE oid = 'scirag.prompt_templates'::regclass),
         'prompt_templates: row-level security not forced';
END $$;
