-- Deploy scirag:schema/campaigns
-- Literature campaigns (issue 24): a topic goes to a screened, rights-checked set of
-- papers with a record of every decision. Every step writes rows and never rewrites
-- them: a screening decision is superseded by a later row, a fetched page of search
-- results is committed together with its records, so a step killed at any moment
-- continues from what is committed, with nothing lost and nothing duplicated.
--
-- A campaign belongs to a role (owner_role, by default the role that created it);
-- only members of that role see the campaign and anything under it (row-level
-- security on every table). Readers hold no privilege on these tables at all.
BEGIN;

CREATE TABLE scirag.campaigns (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name              text NOT NULL CHECK (length(name) BETWEEN 1 AND 200 AND name !~ '[[:cntrl:]]'),
  owner_role        name NOT NULL DEFAULT current_user,
  query             text NOT NULL CHECK (length(query) BETWEEN 1 AND 2000),
  year_from         int CHECK (year_from BETWEEN 1000 AND 3000),
  year_to           int CHECK (year_to BETWEEN 1000 AND 3000),
  max_records       int NOT NULL DEFAULT 2000 CHECK (max_records BETWEEN 1 AND 100000),
  mailto            text CHECK (mailto ~ '^[^@[:space:]]+@[^@[:space:]]+$' AND length(mailto) <= 254),
  sources           text[] NOT NULL DEFAULT ARRAY['openalex', 'crossref', 'arxiv']
                    CHECK (sources <@ ARRAY['openalex', 'crossref', 'arxiv'] AND cardinality(sources) >= 1),
  exclusion_reasons text[] NOT NULL DEFAULT ARRAY['wrong topic', 'wrong population', 'wrong study design',
                    'not primary research', 'not in language', 'other']
                    CHECK (cardinality(exclusion_reasons) BETWEEN 1 AND 50),
  criteria          text CHECK (length(criteria) <= 5000),
  created_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (owner_role, name),
  CHECK (year_from IS NULL OR year_to IS NULL OR year_from <= year_to)
);

CREATE TABLE scirag.campaign_queries (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  campaign_id bigint NOT NULL REFERENCES scirag.campaigns (id),
  source      text NOT NULL CHECK (source IN ('openalex', 'crossref', 'arxiv')),
  query       text NOT NULL CHECK (length(query) BETWEEN 1 AND 2000),
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (campaign_id, source)
);

CREATE TABLE scirag.campaign_pages (
  query_id    bigint NOT NULL REFERENCES scirag.campaign_queries (id),
  campaign_id bigint NOT NULL REFERENCES scirag.campaigns (id),
  page_no     int NOT NULL CHECK (page_no >= 1),
  cursor      text CHECK (length(cursor) <= 2000),
  next_cursor text CHECK (length(next_cursor) <= 2000),
  n_records   int NOT NULL CHECK (n_records >= 0),
  fetched_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (query_id, page_no)
);

CREATE TABLE scirag.campaign_records (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  campaign_id  bigint NOT NULL REFERENCES scirag.campaigns (id),
  query_id     bigint NOT NULL REFERENCES scirag.campaign_queries (id),
  source       text NOT NULL CHECK (source IN ('openalex', 'crossref', 'arxiv')),
  source_id    text NOT NULL CHECK (length(source_id) BETWEEN 1 AND 500),
  doi          text CHECK (doi = lower(doi) AND length(doi) <= 300),
  title        text NOT NULL CHECK (length(title) <= 2000),
  abstract     text CHECK (length(abstract) <= 50000),
  authors      text CHECK (length(authors) <= 10000),
  year         int CHECK (year BETWEEN 1000 AND 3000),
  venue        text CHECK (length(venue) <= 1000),
  norm_title   text NOT NULL,
  oa           jsonb NOT NULL DEFAULT '{}' CHECK (octet_length(oa::text) <= 20000),
  duplicate_of bigint REFERENCES scirag.campaign_records (id),
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (campaign_id, source, source_id)
);
CREATE INDEX campaign_records_doi ON scirag.campaign_records (campaign_id, doi) WHERE doi IS NOT NULL;
CREATE INDEX campaign_records_title ON scirag.campaign_records (campaign_id, norm_title, year);

CREATE TABLE scirag.screening_decisions (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  campaign_id   bigint NOT NULL REFERENCES scirag.campaigns (id),
  record_id     bigint NOT NULL REFERENCES scirag.campaign_records (id),
  decision      text NOT NULL CHECK (decision IN ('include', 'exclude', 'unsure', 'human_review')),
  reason        text CHECK (length(reason) <= 500),
  decider       text NOT NULL CHECK (decider IN ('human', 'model', 'llm')),
  decided_by    text NOT NULL DEFAULT current_user CHECK (length(decided_by) <= 200),
  model         text CHECK (length(model) <= 200),
  training_size int CHECK (training_size >= 0),
  score         real,
  supersedes    bigint REFERENCES scirag.screening_decisions (id),
  decided_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK (decision <> 'exclude' OR reason IS NOT NULL)
);
CREATE INDEX screening_decisions_record ON scirag.screening_decisions (campaign_id, record_id, id);

CREATE TABLE scirag.oa_resolutions (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  campaign_id   bigint NOT NULL REFERENCES scirag.campaigns (id),
  record_id     bigint NOT NULL REFERENCES scirag.campaign_records (id),
  source        text NOT NULL CHECK (source IN ('openalex', 'unpaywall', 'arxiv', 'crossref', 'none')),
  url           text CHECK (length(url) <= 2000 AND url ~ '^https?://'),
  is_pdf        boolean NOT NULL DEFAULT false,
  license_text  text CHECK (length(license_text) <= 200),
  license       scirag.license_class NOT NULL DEFAULT 'unknown',
  version       text CHECK (length(version) <= 100),
  resolved_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oa_resolutions_record ON scirag.oa_resolutions (campaign_id, record_id);

CREATE TABLE scirag.campaign_downloads (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  campaign_id   bigint NOT NULL REFERENCES scirag.campaigns (id),
  record_id     bigint NOT NULL REFERENCES scirag.campaign_records (id),
  resolution_id bigint REFERENCES scirag.oa_resolutions (id),
  url           text NOT NULL CHECK (length(url) <= 2000),
  status        text NOT NULL CHECK (status IN ('ok', 'failed')),
  http_status   int,
  content_type  text CHECK (length(content_type) <= 200),
  bytes         bigint CHECK (bytes >= 0),
  sha256        text CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  pages         int CHECK (pages >= 0),
  path          text CHECK (length(path) <= 500 AND path !~ '(^/|\.\.)'),
  license       scirag.license_class NOT NULL DEFAULT 'unknown',
  error         text CHECK (length(error) <= 1000),
  fetched_at    timestamptz NOT NULL DEFAULT now(),
  CHECK (status <> 'ok' OR (sha256 IS NOT NULL AND path IS NOT NULL AND pages IS NOT NULL))
);
CREATE INDEX campaign_downloads_record ON scirag.campaign_downloads (campaign_id, record_id);

CREATE VIEW scirag.campaign_current_decisions WITH (security_invoker = true) AS
SELECT DISTINCT ON (d.campaign_id, d.record_id)
       d.campaign_id, d.record_id, d.id AS decision_id, d.decision, d.reason, d.decider, d.decided_by,
       d.model, d.training_size, d.decided_at
FROM scirag.screening_decisions d
ORDER BY d.campaign_id, d.record_id, d.id DESC;

-- Append-only: rows are added, never changed or removed.
CREATE FUNCTION scirag.campaign_append_only()
RETURNS trigger
LANGUAGE plpgsql
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RAISE EXCEPTION 'scirag.%: rows are append-only (% refused); add a superseding row instead', TG_TABLE_NAME, TG_OP
    USING ERRCODE = '42501';
END $$;
COMMENT ON FUNCTION scirag.campaign_append_only() IS
  'Trigger: campaign tables are append-only; an UPDATE, DELETE or TRUNCATE raises (a decision is superseded by a later row, never rewritten)';
REVOKE ALL ON FUNCTION scirag.campaign_append_only() FROM PUBLIC;

-- A decision names a record of its own campaign; an exclusion a reason from the campaign's list.
CREATE FUNCTION scirag.screening_decision_check()
RETURNS trigger
LANGUAGE plpgsql
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE reasons text[];
BEGIN
  IF NOT EXISTS (SELECT 1 FROM scirag.campaign_records r WHERE r.id = NEW.record_id AND r.campaign_id = NEW.campaign_id) THEN
    RAISE EXCEPTION 'screening decision: record % is not in campaign %', NEW.record_id, NEW.campaign_id
      USING ERRCODE = '23503';
  END IF;
  IF NEW.decision = 'exclude' THEN
    SELECT exclusion_reasons INTO reasons FROM scirag.campaigns WHERE id = NEW.campaign_id;
    IF NOT (NEW.reason = ANY (reasons)) THEN
      RAISE EXCEPTION 'screening decision: exclusion reason "%" is not one of the campaign''s: %',
        NEW.reason, array_to_string(reasons, ', ') USING ERRCODE = '23514';
    END IF;
  END IF;
  IF NEW.supersedes IS NOT NULL AND NOT EXISTS (
       SELECT 1 FROM scirag.screening_decisions s WHERE s.id = NEW.supersedes AND s.record_id = NEW.record_id) THEN
    RAISE EXCEPTION 'screening decision: supersedes % which is not a decision on record %', NEW.supersedes, NEW.record_id
      USING ERRCODE = '23503';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION scirag.screening_decision_check() IS
  'Trigger: a screening decision names a record of its campaign, an exclusion carries a reason from the campaign''s list, a superseded decision is on the same record';
REVOKE ALL ON FUNCTION scirag.screening_decision_check() FROM PUBLIC;
CREATE TRIGGER screening_decision_check BEFORE INSERT ON scirag.screening_decisions
  FOR EACH ROW EXECUTE FUNCTION scirag.screening_decision_check();

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['campaigns', 'campaign_queries', 'campaign_pages', 'campaign_records',
                           'screening_decisions', 'oa_resolutions', 'campaign_downloads'] LOOP
    EXECUTE format('ALTER TABLE scirag.%I OWNER TO scirag_owner', t);
    EXECUTE format('REVOKE ALL ON scirag.%I FROM PUBLIC', t);
    EXECUTE format('ALTER TABLE scirag.%I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE scirag.%I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('GRANT SELECT, INSERT ON scirag.%I TO scirag_loader', t);
    EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE OR DELETE ON scirag.%I FOR EACH ROW EXECUTE FUNCTION scirag.campaign_append_only()',
                   t || '_append_only', t);
    EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON scirag.%I FOR EACH STATEMENT EXECUTE FUNCTION scirag.campaign_append_only()',
                   t || '_no_truncate', t);
    IF t = 'campaigns' THEN
      -- through pg_roles: pg_has_role(name) raises for a role dropped since, which would
      -- make the table unreadable for everyone; a dropped owner's campaigns are simply unseen
      CREATE POLICY owner_members ON scirag.campaigns FOR ALL TO scirag_loader
        USING (EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
                       WHERE r.rolname = owner_role AND pg_has_role(current_user, r.oid, 'MEMBER')))
        WITH CHECK (EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
                            WHERE r.rolname = owner_role AND pg_has_role(current_user, r.oid, 'MEMBER')));
    ELSE
      EXECUTE format($p$CREATE POLICY owner_members ON scirag.%I FOR ALL TO scirag_loader
        USING (EXISTS (SELECT 1 FROM scirag.campaigns c WHERE c.id = campaign_id))
        WITH CHECK (EXISTS (SELECT 1 FROM scirag.campaigns c WHERE c.id = campaign_id))$p$, t);
    END IF;
  END LOOP;
END $$;
ALTER VIEW scirag.campaign_current_decisions OWNER TO scirag_owner;
REVOKE ALL ON scirag.campaign_current_decisions FROM PUBLIC;
GRANT SELECT ON scirag.campaign_current_decisions TO scirag_loader;

COMMENT ON TABLE scirag.campaigns IS 'A literature campaign: topic query, bounds, eligibility; owned by a role (only its members see it and its rows)';
COMMENT ON COLUMN scirag.campaigns.id IS 'campaign id';
COMMENT ON COLUMN scirag.campaigns.name IS 'campaign name, unique per owner role';
COMMENT ON COLUMN scirag.campaigns.owner_role IS 'role the campaign belongs to: only its members see the campaign';
COMMENT ON COLUMN scirag.campaigns.query IS 'search query (boolean syntax: AND, OR, parentheses, quoted phrases)';
COMMENT ON COLUMN scirag.campaigns.year_from IS 'first publication year searched (NULL = no bound)';
COMMENT ON COLUMN scirag.campaigns.year_to IS 'last publication year searched (NULL = no bound)';
COMMENT ON COLUMN scirag.campaigns.max_records IS 'most records discovery keeps per source';
COMMENT ON COLUMN scirag.campaigns.mailto IS 'contact e-mail sent to the APIs (polite pool)';
COMMENT ON COLUMN scirag.campaigns.sources IS 'discovery sources searched';
COMMENT ON COLUMN scirag.campaigns.exclusion_reasons IS 'the reasons an exclusion may give';
COMMENT ON COLUMN scirag.campaigns.criteria IS 'eligibility criteria in words (for reviewers and a model screener)';
COMMENT ON COLUMN scirag.campaigns.created_at IS 'when the campaign was created';
COMMENT ON TABLE scirag.campaign_queries IS 'One search of one source for a campaign';
COMMENT ON COLUMN scirag.campaign_queries.id IS 'query id';
COMMENT ON COLUMN scirag.campaign_queries.campaign_id IS 'campaign';
COMMENT ON COLUMN scirag.campaign_queries.source IS 'openalex, crossref or arxiv';
COMMENT ON COLUMN scirag.campaign_queries.query IS 'the query as sent to the source';
COMMENT ON COLUMN scirag.campaign_queries.created_at IS 'when the search started';
COMMENT ON TABLE scirag.campaign_pages IS 'Each result page fetched, committed with its records: a rerun resumes from the last page''s next cursor';
COMMENT ON COLUMN scirag.campaign_pages.query_id IS 'query';
COMMENT ON COLUMN scirag.campaign_pages.campaign_id IS 'campaign';
COMMENT ON COLUMN scirag.campaign_pages.page_no IS 'page number, from 1';
COMMENT ON COLUMN scirag.campaign_pages.cursor IS 'cursor or offset that fetched this page';
COMMENT ON COLUMN scirag.campaign_pages.next_cursor IS 'cursor of the next page; NULL when the source has no more (or --max is reached)';
COMMENT ON COLUMN scirag.campaign_pages.n_records IS 'records on the page';
COMMENT ON COLUMN scirag.campaign_pages.fetched_at IS 'when the page was fetched';
COMMENT ON TABLE scirag.campaign_records IS 'Candidate records found by discovery; a duplicate (same DOI, else same normalised title and year) points at the first record';
COMMENT ON COLUMN scirag.campaign_records.id IS 'record id';
COMMENT ON COLUMN scirag.campaign_records.campaign_id IS 'campaign';
COMMENT ON COLUMN scirag.campaign_records.query_id IS 'query that found it';
COMMENT ON COLUMN scirag.campaign_records.source IS 'source that found it';
COMMENT ON COLUMN scirag.campaign_records.source_id IS 'the source''s id (OpenAlex W-id, DOI, arXiv id)';
COMMENT ON COLUMN scirag.campaign_records.doi IS 'DOI, lower case, without resolver prefix';
COMMENT ON COLUMN scirag.campaign_records.title IS 'title';
COMMENT ON COLUMN scirag.campaign_records.abstract IS 'abstract (NULL when the source gives none)';
COMMENT ON COLUMN scirag.campaign_records.authors IS 'authors, semicolon-separated';
COMMENT ON COLUMN scirag.campaign_records.year IS 'publication year';
COMMENT ON COLUMN scirag.campaign_records.venue IS 'journal or venue';
COMMENT ON COLUMN scirag.campaign_records.norm_title IS 'title lower-cased, accents and punctuation removed (deduplication key with year)';
COMMENT ON COLUMN scirag.campaign_records.oa IS 'open-access locations the source stated (url, pdf_url, license, version)';
COMMENT ON COLUMN scirag.campaign_records.duplicate_of IS 'the first record of the same work; NULL for a unique record';
COMMENT ON COLUMN scirag.campaign_records.created_at IS 'when the record was found';
COMMENT ON TABLE scirag.screening_decisions IS 'Title/abstract screening decisions, append-only: the latest row per record is the current one';
COMMENT ON COLUMN scirag.screening_decisions.id IS 'decision id (later = newer)';
COMMENT ON COLUMN scirag.screening_decisions.campaign_id IS 'campaign';
COMMENT ON COLUMN scirag.screening_decisions.record_id IS 'record decided';
COMMENT ON COLUMN scirag.screening_decisions.decision IS 'include, exclude, unsure, or human_review (a model could not decide: a person must)';
COMMENT ON COLUMN scirag.screening_decisions.reason IS 'reason (required for exclude: one of the campaign''s exclusion reasons)';
COMMENT ON COLUMN scirag.screening_decisions.decider IS 'human, model (active-learning ranking) or llm (model screener)';
COMMENT ON COLUMN scirag.screening_decisions.decided_by IS 'role or model that decided';
COMMENT ON COLUMN scirag.screening_decisions.model IS 'ranking model that proposed the record';
COMMENT ON COLUMN scirag.screening_decisions.training_size IS 'decisions the ranking model was trained on';
COMMENT ON COLUMN scirag.screening_decisions.score IS 'the model''s score of the record when it was shown';
COMMENT ON COLUMN scirag.screening_decisions.supersedes IS 'the earlier decision on the record this one replaces';
COMMENT ON COLUMN scirag.screening_decisions.decided_at IS 'when';
COMMENT ON TABLE scirag.oa_resolutions IS 'Open-access locations resolved for included records (source none: nothing found)';
COMMENT ON COLUMN scirag.oa_resolutions.id IS 'resolution id';
COMMENT ON COLUMN scirag.oa_resolutions.campaign_id IS 'campaign';
COMMENT ON COLUMN scirag.oa_resolutions.record_id IS 'record';
COMMENT ON COLUMN scirag.oa_resolutions.source IS 'where the location came from';
COMMENT ON COLUMN scirag.oa_resolutions.url IS 'location URL';
COMMENT ON COLUMN scirag.oa_resolutions.is_pdf IS 'the source says the URL is a direct PDF';
COMMENT ON COLUMN scirag.oa_resolutions.license_text IS 'license as the source states it (cc-by, cc-by-nc, ...)';
COMMENT ON COLUMN scirag.oa_resolutions.license IS 'license class it maps to (unknown when none is stated)';
COMMENT ON COLUMN scirag.oa_resolutions.version IS 'version the source states (publishedVersion, acceptedVersion, ...)';
COMMENT ON COLUMN scirag.oa_resolutions.resolved_at IS 'when';
COMMENT ON TABLE scirag.campaign_downloads IS 'Download attempts of direct PDFs, with their verification';
COMMENT ON COLUMN scirag.campaign_downloads.id IS 'download id';
COMMENT ON COLUMN scirag.campaign_downloads.campaign_id IS 'campaign';
COMMENT ON COLUMN scirag.campaign_downloads.record_id IS 'record';
COMMENT ON COLUMN scirag.campaign_downloads.resolution_id IS 'the OA location tried';
COMMENT ON COLUMN scirag.campaign_downloads.url IS 'URL requested';
COMMENT ON COLUMN scirag.campaign_downloads.status IS 'ok (verified PDF written) or failed';
COMMENT ON COLUMN scirag.campaign_downloads.http_status IS 'final HTTP status';
COMMENT ON COLUMN scirag.campaign_downloads.content_type IS 'Content-Type of the response';
COMMENT ON COLUMN scirag.campaign_downloads.bytes IS 'bytes received';
COMMENT ON COLUMN scirag.campaign_downloads.sha256 IS 'SHA-256 of the file';
COMMENT ON COLUMN scirag.campaign_downloads.pages IS 'pages read from the PDF';
COMMENT ON COLUMN scirag.campaign_downloads.path IS 'file path relative to the campaign folder';
COMMENT ON COLUMN scirag.campaign_downloads.license IS 'license class written to the manifest';
COMMENT ON COLUMN scirag.campaign_downloads.error IS 'why it failed';
COMMENT ON COLUMN scirag.campaign_downloads.fetched_at IS 'when';
COMMENT ON VIEW scirag.campaign_current_decisions IS 'The current (latest) screening decision per record';
COMMENT ON COLUMN scirag.campaign_current_decisions.campaign_id IS 'campaign';
COMMENT ON COLUMN scirag.campaign_current_decisions.record_id IS 'record';
COMMENT ON COLUMN scirag.campaign_current_decisions.decision_id IS 'the decision row';
COMMENT ON COLUMN scirag.campaign_current_decisions.decision IS 'current decision';
COMMENT ON COLUMN scirag.campaign_current_decisions.reason IS 'its reason';
COMMENT ON COLUMN scirag.campaign_current_decisions.decider IS 'human, model or llm';
COMMENT ON COLUMN scirag.campaign_current_decisions.decided_by IS 'who';
COMMENT ON COLUMN scirag.campaign_current_decisions.model IS 'ranking model';
COMMENT ON COLUMN scirag.campaign_current_decisions.training_size IS 'training-set size';
COMMENT ON COLUMN scirag.campaign_current_decisions.decided_at IS 'when';
COMMIT;
