-- Deploy scirag:schema/answer
-- Prompt templates and intent guidance for grounded answers, as rows: a deployment
-- edits them with UPDATE, no code change. The shipped defaults are the files in
-- domain/prompts/, read here by psql (sqitch runs from the repository root).
BEGIN;

CREATE TABLE scirag.prompt_templates (
  name        text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('answer', 'judge_grounding', 'judge_correctness', 'compress')),
  system_text text NOT NULL,
  template    text NOT NULL,
  description text NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (kind, name),
  -- The contract of each kind, enforced where the rows live (DESIGN.md section 9):
  CONSTRAINT answer_slots CHECK (kind <> 'answer'
    OR (strpos(template, '$SOURCES') > 0 AND strpos(template, '$QUESTION') > 0)),
  -- the grounding judge is blind: no template can ever show it the reference answer
  CONSTRAINT grounding_is_blind CHECK (kind <> 'judge_grounding'
    OR (strpos(template, '$QUESTION') > 0 AND strpos(template, '$ANSWER') > 0 AND strpos(template, '$SOURCES') > 0
        AND strpos(template || system_text, '$REFERENCE') = 0)),
  -- the correctness judge sees the answer and the reference only
  CONSTRAINT correctness_sees_answer_and_reference CHECK (kind <> 'judge_correctness'
    OR (strpos(template, '$ANSWER') > 0 AND strpos(template, '$REFERENCE') > 0
        AND strpos(template || system_text, '$SOURCES') = 0 AND strpos(template || system_text, '$QUESTION') = 0)),
  CONSTRAINT compress_slots CHECK (kind <> 'compress'
    OR (strpos(template, '$QUESTION') > 0 AND strpos(template, '$PASSAGE') > 0)),
  CONSTRAINT not_blank CHECK (btrim(template) <> '' AND btrim(system_text) <> '')
);
ALTER TABLE scirag.prompt_templates OWNER TO scirag_owner;
COMMENT ON TABLE scirag.prompt_templates IS
  'Prompt templates (string.Template text with $SLOTS) for answers, compression and the two judge passes. The row named default of each kind ships from domain/prompts/; scirag.answer(options => {"template": name}) picks another answer template. CHECK constraints keep each kind''s slot contract: the grounding judge can never be shown the reference answer.';
COMMENT ON COLUMN scirag.prompt_templates.name IS 'template name (default ships with scirag)';
COMMENT ON COLUMN scirag.prompt_templates.kind IS 'answer ($QUESTION $SOURCES $INTENT $GUIDANCE $N_SOURCES), judge_grounding ($QUESTION $ANSWER $SOURCES), judge_correctness ($ANSWER $REFERENCE), compress ($QUESTION $PASSAGE)';
COMMENT ON COLUMN scirag.prompt_templates.system_text IS 'system instruction sent with the prompt (for answers: the three standing orders)';
COMMENT ON COLUMN scirag.prompt_templates.template IS 'the prompt body with $SLOTS';
COMMENT ON COLUMN scirag.prompt_templates.description IS 'what the template is for';
COMMENT ON COLUMN scirag.prompt_templates.updated_at IS 'when the row was last written';

CREATE TABLE scirag.answer_intents (
  intent   text PRIMARY KEY CHECK (intent ~ '^[A-Z_]+$'),
  priority int NOT NULL,
  cues     text[] NOT NULL DEFAULT '{}',
  guidance text NOT NULL CHECK (btrim(guidance) <> '')
);
ALTER TABLE scirag.answer_intents OWNER TO scirag_owner;
COMMENT ON TABLE scirag.answer_intents IS
  'Question intents (VulcanLab augmentation: DEFINITION, MECHANISM, COMPARISON, APPLICATION, STUDY_DETAIL, CRITIQUE; plus QUANTITY and the GENERAL fallback) with the cue patterns that classify a question and the guidance the answer prompt carries for it.';
COMMENT ON COLUMN scirag.answer_intents.intent IS 'intent name, upper case';
COMMENT ON COLUMN scirag.answer_intents.priority IS 'lower is tried first; the intent without cues is the fallback';
COMMENT ON COLUMN scirag.answer_intents.cues IS 'case-insensitive regular expressions (Python re syntax) matched against the question';
COMMENT ON COLUMN scirag.answer_intents.guidance IS 'instruction added to the answer prompt for questions of this intent';

-- Shipped defaults, from the files in domain/prompts/.
\set answer_system `cat domain/prompts/answer.system.txt`
\set answer_body `cat domain/prompts/answer.txt`
\set grounding_system `cat domain/prompts/judge_grounding.system.txt`
\set grounding_body `cat domain/prompts/judge_grounding.txt`
\set correctness_system `cat domain/prompts/judge_correctness.system.txt`
\set correctness_body `cat domain/prompts/judge_correctness.txt`
\set compress_system `cat domain/prompts/compress.system.txt`
\set compress_body `cat domain/prompts/compress.txt`
\set intents `cat domain/prompts/intents.json`

SELECT length(:'answer_body') > 0 AND length(:'grounding_body') > 0 AND length(:'intents') > 0 AS prompts_read \gset
\if :prompts_read
\else
DO $$ BEGIN RAISE EXCEPTION 'domain/prompts/*.txt could not be read: run sqitch from the repository root'; END $$;
\endif

INSERT INTO scirag.prompt_templates (name, kind, system_text, template, description) VALUES
  ('default', 'answer', :'answer_system', :'answer_body',
   'numbered sources, the three standing orders, intent guidance (domain/prompts/answer*.txt)'),
  ('default', 'judge_grounding', :'grounding_system', :'grounding_body',
   'blind grounding pass: question, answer and the sources shown to the answerer; never the reference'),
  ('default', 'judge_correctness', :'correctness_system', :'correctness_body',
   'correctness pass: answer against the expert reference, without the sources'),
  ('default', 'compress', :'compress_system', :'compress_body',
   'question-aware summary of one source with a relevance score');

INSERT INTO scirag.answer_intents (intent, priority, cues, guidance)
SELECT x.intent, x.priority, ARRAY(SELECT jsonb_array_elements_text(x.cues)), x.guidance
FROM jsonb_to_recordset(:'intents'::jsonb) AS x(intent text, priority int, cues jsonb, guidance text);

ALTER TABLE scirag.prompt_templates ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.prompt_templates FORCE ROW LEVEL SECURITY;
ALTER TABLE scirag.answer_intents ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.answer_intents FORCE ROW LEVEL SECURITY;
-- Templates are configuration, not evidence: every scirag role reads them; the loader
-- (which installs domain prompts) writes them; readers cannot change what answers say.
CREATE POLICY read_all ON scirag.prompt_templates FOR SELECT TO scirag_reader, scirag_loader USING (true);
CREATE POLICY loader_all ON scirag.prompt_templates FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
CREATE POLICY read_all ON scirag.answer_intents FOR SELECT TO scirag_reader, scirag_loader USING (true);
CREATE POLICY loader_all ON scirag.answer_intents FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
REVOKE ALL ON scirag.prompt_templates, scirag.answer_intents FROM PUBLIC;
GRANT SELECT ON scirag.prompt_templates, scirag.answer_intents TO scirag_reader, scirag_loader;
GRANT INSERT, UPDATE, DELETE ON scirag.prompt_templates, scirag.answer_intents TO scirag_loader;
COMMIT;
