-- Deploy scirag:schema/campaign_eligibility
-- Full-text eligibility (issue 24): after a report (PDF) was retrieved, a person or a
-- model records whether the study is eligible, or excluded with one of the campaign's
-- reasons. Append-only like every campaign table; the latest row per record counts.
BEGIN;

CREATE TABLE scirag.eligibility_decisions (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  campaign_id   bigint NOT NULL REFERENCES scirag.campaigns (id),
  record_id     bigint NOT NULL REFERENCES scirag.campaign_records (id),
  download_id   bigint NOT NULL REFERENCES scirag.campaign_downloads (id),
  decision      text NOT NULL CHECK (decision IN ('eligible', 'exclude')),
  reason        text CHECK (length(reason) <= 500),
  decider       text NOT NULL CHECK (decider IN ('human', 'llm')),
  decided_by    text NOT NULL DEFAULT current_user CHECK (length(decided_by) <= 200),
  supersedes    bigint REFERENCES scirag.eligibility_decisions (id),
  decided_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK (decision <> 'exclude' OR reason IS NOT NULL)
);
CREATE INDEX eligibility_decisions_record ON scirag.eligibility_decisions (campaign_id, record_id, id);

CREATE VIEW scirag.campaign_current_eligibility WITH (security_invoker = true) AS
SELECT DISTINCT ON (e.campaign_id, e.record_id)
       e.campaign_id, e.record_id, e.id AS eligibility_id, e.download_id, e.decision, e.reason, e.decider,
       e.decided_by, e.decided_at
FROM scirag.eligibility_decisions e
ORDER BY e.campaign_id, e.record_id, e.id DESC;

-- An eligibility decision is on a retrieved report of its own campaign's record; an
-- exclusion carries a reason from the campaign's list.
CREATE FUNCTION scirag.eligibility_decision_check()
RETURNS trigger
LANGUAGE plpgsql
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE reasons text[];
BEGIN
  IF NOT EXISTS (SELECT 1 FROM scirag.campaign_downloads d
                 WHERE d.id = NEW.download_id AND d.record_id = NEW.record_id AND d.campaign_id = NEW.campaign_id
                   AND d.status = 'ok') THEN
    RAISE EXCEPTION 'eligibility decision: download % is no retrieved report of record % in campaign %',
      NEW.download_id, NEW.record_id, NEW.campaign_id USING ERRCODE = '23503';
  END IF;
  IF NEW.decision = 'exclude' THEN
    SELECT exclusion_reasons INTO reasons FROM scirag.campaigns WHERE id = NEW.campaign_id;
    IF NOT (NEW.reason = ANY (reasons)) THEN
      RAISE EXCEPTION 'eligibility decision: exclusion reason "%" is not one of the campaign''s: %',
        NEW.reason, array_to_string(reasons, ', ') USING ERRCODE = '23514';
    END IF;
  END IF;
  IF NEW.supersedes IS NOT NULL AND NOT EXISTS (
       SELECT 1 FROM scirag.eligibility_decisions s WHERE s.id = NEW.supersedes AND s.record_id = NEW.record_id) THEN
    RAISE EXCEPTION 'eligibility decision: supersedes % which is not a decision on record %', NEW.supersedes, NEW.record_id
      USING ERRCODE = '23503';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION scirag.eligibility_decision_check() IS
  'Trigger: a full-text eligibility decision is on a retrieved report (ok download) of a record of its campaign, an exclusion carries a reason from the campaign''s list, a superseded decision is on the same record';
REVOKE ALL ON FUNCTION scirag.eligibility_decision_check() FROM PUBLIC;
CREATE TRIGGER eligibility_decision_check BEFORE INSERT ON scirag.eligibility_decisions
  FOR EACH ROW EXECUTE FUNCTION scirag.eligibility_decision_check();

ALTER TABLE scirag.eligibility_decisions OWNER TO scirag_owner;
REVOKE ALL ON scirag.eligibility_decisions FROM PUBLIC;
ALTER TABLE scirag.eligibility_decisions ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.eligibility_decisions FORCE ROW LEVEL SECURITY;
GRANT SELECT, INSERT ON scirag.eligibility_decisions TO scirag_loader;
CREATE TRIGGER eligibility_decisions_append_only BEFORE UPDATE OR DELETE ON scirag.eligibility_decisions
  FOR EACH ROW EXECUTE FUNCTION scirag.campaign_append_only();
CREATE TRIGGER eligibility_decisions_no_truncate BEFORE TRUNCATE ON scirag.eligibility_decisions
  FOR EACH STATEMENT EXECUTE FUNCTION scirag.campaign_append_only();
CREATE POLICY owner_members ON scirag.eligibility_decisions FOR ALL TO scirag_loader
  USING (EXISTS (SELECT 1 FROM scirag.campaigns c WHERE c.id = campaign_id))
  WITH CHECK (EXISTS (SELECT 1 FROM scirag.campaigns c WHERE c.id = campaign_id));
ALTER VIEW scirag.campaign_current_eligibility OWNER TO scirag_owner;
REVOKE ALL ON scirag.campaign_current_eligibility FROM PUBLIC;
GRANT SELECT ON scirag.campaign_current_eligibility TO scirag_loader;

COMMENT ON TABLE scirag.eligibility_decisions IS 'Full-text eligibility decisions on retrieved reports (append-only; the latest row per record counts)';
COMMENT ON COLUMN scirag.eligibility_decisions.id IS 'decision id';
COMMENT ON COLUMN scirag.eligibility_decisions.campaign_id IS 'campaign';
COMMENT ON COLUMN scirag.eligibility_decisions.record_id IS 'record whose report was assessed';
COMMENT ON COLUMN scirag.eligibility_decisions.download_id IS 'the retrieved report (ok download) assessed';
COMMENT ON COLUMN scirag.eligibility_decisions.decision IS 'eligible or exclude';
COMMENT ON COLUMN scirag.eligibility_decisions.reason IS 'exclusion reason, one of the campaign''s';
COMMENT ON COLUMN scirag.eligibility_decisions.decider IS 'human or llm';
COMMENT ON COLUMN scirag.eligibility_decisions.decided_by IS 'role or model that decided';
COMMENT ON COLUMN scirag.eligibility_decisions.supersedes IS 'the earlier decision on the record this one replaces';
COMMENT ON COLUMN scirag.eligibility_decisions.decided_at IS 'when';
COMMENT ON VIEW scirag.campaign_current_eligibility IS 'The current (latest) full-text eligibility decision per record';
COMMENT ON COLUMN scirag.campaign_current_eligibility.campaign_id IS 'campaign';
COMMENT ON COLUMN scirag.campaign_current_eligibility.record_id IS 'record';
COMMENT ON COLUMN scirag.campaign_current_eligibility.eligibility_id IS 'the decision row';
COMMENT ON COLUMN scirag.campaign_current_eligibility.download_id IS 'the report assessed';
COMMENT ON COLUMN scirag.campaign_current_eligibility.decision IS 'eligible or exclude';
COMMENT ON COLUMN scirag.campaign_current_eligibility.reason IS 'its reason';
COMMENT ON COLUMN scirag.campaign_current_eligibility.decider IS 'human or llm';
COMMENT ON COLUMN scirag.campaign_current_eligibility.decided_by IS 'who';
COMMENT ON COLUMN scirag.campaign_current_eligibility.decided_at IS 'when';

COMMIT;
