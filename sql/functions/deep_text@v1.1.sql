-- Deploy scirag:functions/deep_text
-- Reworked (issue 13): text_units scans with bounded windows (linear in the body;
-- it was quadratic) and refuses bodies over 2,000,000 characters.
-- Text primitives shared by parent enrichment and consolidation: a chunk's body
-- without its title/section-path prefix, word counts, finding one text inside
-- another (whitespace-insensitive), and the sliding window that cuts a long
-- parent down to a word budget on sentence boundaries. Plain SQL and PL/pgSQL,
-- so the deep stages run where PL/Python is not offered.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.word_count(t text)
RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  -- A word is a whitespace-separated token holding a letter or digit: table rules
  -- ("|"), dashes and omission marks do not count.
  SELECT coalesce(regexp_count(t, '\S*\w\S*'), 0)
$$;
COMMENT ON FUNCTION scirag.word_count(text) IS
  'Words in a text: whitespace-separated tokens that contain a letter or digit (the unit of min_word_count / max_word_count).';

CREATE OR REPLACE FUNCTION scirag.chunk_body(content text, title text, section_path text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  -- The loader prepends "title\nsection path\n\n" (the path without a leading
  -- copy of the title) to every chunk; enrichment and consolidation measure and
  -- join the text itself, not the repeated prefix.
  WITH h AS (
    SELECT concat_ws(E'\n', nullif(btrim(title), ''),
             nullif(CASE WHEN btrim(title) <> ''
                          AND (section_path = btrim(title) OR starts_with(section_path, btrim(title) || ' > '))
                         THEN substr(section_path, length(btrim(title)) + 4)
                         ELSE section_path END, '')) AS head)
  SELECT CASE WHEN h.head <> '' AND starts_with(content, h.head || E'\n\n')
              THEN substr(content, length(h.head) + 3)
              ELSE content END
  FROM h
$$;
COMMENT ON FUNCTION scirag.chunk_body(text, text, text) IS
  'A chunk''s text without the "title / section path" prefix the loader prepends (the content itself when the prefix does not match).';

CREATE OR REPLACE FUNCTION scirag.locate_text(haystack text, needle text, from_pos int DEFAULT 1)
RETURNS int[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  n text := btrim(needle, E' \t\r\n');
  p int;
  words text[];
  nw int;
  pat_head text;
  pat_tail text;
  s int;
  e int;
  tail_len int;
BEGIN
  IF n IS NULL OR n = '' OR haystack IS NULL OR from_pos < 1 THEN
    RETURN NULL;
  END IF;
  p := strpos(substr(haystack, from_pos), n);
  IF p > 0 THEN
    RETURN ARRAY[from_pos + p - 1, from_pos + p - 1 + length(n)];
  END IF;
  -- Not verbatim: a paragraph split into sentence pieces is re-joined with single
  -- spaces where the parent keeps line breaks. Match on words, any whitespace
  -- between them: the first 12 words give the start, the last 12 the end.
  words := regexp_split_to_array(n, '\s+');
  nw := cardinality(words);
  pat_head := array_to_string(ARRAY(
    SELECT regexp_replace(w, '([^[:alnum:]])', '\\\1', 'g') FROM unnest(words[1:least(12, nw)]) AS w), '\s+');
  s := regexp_instr(haystack, pat_head, from_pos);
  IF s = 0 THEN
    RETURN NULL;
  END IF;
  IF nw <= 12 THEN
    RETURN ARRAY[s, regexp_instr(haystack, pat_head, s, 1, 1)];
  END IF;
  pat_tail := array_to_string(ARRAY(
    SELECT regexp_replace(w, '([^[:alnum:]])', '\\\1', 'g') FROM unnest(words[nw - 11:nw]) AS w), '\s+');
  tail_len := length(array_to_string(words[nw - 11:nw], ' '));
  -- Start the tail search past half of the text before it, so that a phrase the
  -- needle repeats cannot end the match early.
  e := regexp_instr(haystack, pat_tail, s + greatest(0, (length(n) - tail_len) / 2), 1, 1);
  IF e = 0 OR e - s < length(n) / 2 OR e - s > length(n) * 2 THEN
    RETURN NULL;
  END IF;
  RETURN ARRAY[s, e];
END $$;
COMMENT ON FUNCTION scirag.locate_text(text, text, int) IS
  'Where needle occurs in haystack at or after from_pos, as {start, end} character positions (1-based, end exclusive), ignoring differences in whitespace; NULL when absent.';

CREATE OR REPLACE FUNCTION scirag.text_blocks(t text)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  blocks text[] := '{}';
  sup text;
BEGIN
  -- substr(t, i, n) costs O(i) for a multi-byte encoding (it copies and walks the
  -- prefix); cut once into 1024-character blocks (through 32768-character pieces, so
  -- that the cutting itself stays near-linear). A caller then reads substr(t, a, n)
  -- from the blocks it spans, by element (blocks[i]), in O(n + 1024). Written inline:
  -- passing the array to a function, or slicing it (blocks[i:j]), copies the whole
  -- array on every call, which is the quadratic cost again.
  FOR i IN 0 .. (greatest(length(t), 1) - 1) / 32768 LOOP
    sup := substr(t, i * 32768 + 1, 32768);
    FOR j IN 0 .. (greatest(length(sup), 1) - 1) / 1024 LOOP
      blocks := blocks || substr(sup, j * 1024 + 1, 1024);
    END LOOP;
  END LOOP;
  RETURN blocks;
END $$;
COMMENT ON FUNCTION scirag.text_blocks(text) IS 'A text cut into 1024-character blocks, so that text_units and window_text read any substring in time linear in its length.';

CREATE OR REPLACE FUNCTION scirag.text_units(body text, headings text[] DEFAULT '{}')
RETURNS TABLE (unit_no int, para_no int, s int, e int, words int, is_heading boolean)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
  -- The loader's list (python/loader/scirag/chunk.py): a full stop after these is not a sentence end.
  abbrevs CONSTANT text[] := ARRAY['e.g', 'i.e', 'al', 'fig', 'figs', 'eq', 'eqs', 'tab', 'no', 'nos', 'vs',
    'cf', 'approx', 'ca', 'dr', 'mr', 'mrs', 'ms', 'prof', 'st', 'sec', 'ref', 'refs', 'vol', 'pp', 'resp',
    'incl', 'dept', 'univ', 'est', 'min', 'max', 'avg', 'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug',
    'sep', 'sept', 'oct', 'nov', 'dec', 'inc', 'ltd', 'co', 'corp', 'etc.,'];
  pos int := 1;          -- where the current paragraph starts in body
  raw text;
  pstart int;
  para text;
  plen int;
  line text;
  lpos int;
  m int;
  mend int;
  sstart int;
  send int;
  word text;
  u int := 0;
  pno int := 0;
  win CONSTANT int := 512;
  tail CONSTANT int := 64;
  scan int;
  r int;
  chunk text;
  piece text;
  blocks text[];
BEGIN
  IF length(body) > 2000000 THEN
    RAISE EXCEPTION 'scirag.text_units: the body is % characters long, at most 2000000 allowed', length(body)
      USING ERRCODE = '22023';
  END IF;
  -- Paragraphs are separated by a blank line (the loader joins parts with
  -- "\n\n"). Regular expressions run on one paragraph at a time: PostgreSQL
  -- converts the whole subject string on every call.
  FOREACH raw IN ARRAY string_to_array(coalesce(body, ''), E'\n\n') LOOP
    pstart := pos;
    pos := pos + length(raw) + 2;
    CONTINUE WHEN btrim(raw, E' \t\r\n') = '';
    pno := pno + 1;
    pstart := pstart + length(raw) - length(ltrim(raw, E' \t\r\n'));
    para := btrim(raw, E' \t\r\n');
    plen := length(para);
    blocks := scirag.text_blocks(para);

    IF para = ANY (headings) OR para ~ '^#{1,6}\s' THEN
      u := u + 1;
      unit_no := u; para_no := pno; s := pstart; e := pstart + plen;
      words := scirag.word_count(para); is_heading := true;
      RETURN NEXT;
    ELSIF NOT para ~ '(^|\n)[^|\n]*(\n|$)' THEN
      -- A table (every line carries a cell separator): each row is a unit.
      lpos := pstart;
      FOREACH line IN ARRAY string_to_array(para, E'\n') LOOP
        IF btrim(line) <> '' THEN
          u := u + 1;
          unit_no := u; para_no := pno;
          s := lpos + length(line) - length(ltrim(line));
          e := lpos + length(rtrim(line));
          words := scirag.word_count(line); is_heading := false;
          RETURN NEXT;
        END IF;
        lpos := lpos + length(line) + 1;
      END LOOP;
    ELSE
      -- Prose: sentences, with the loader's rules (abbreviations, initials and
      -- decimals do not end a sentence; the next one starts with a capital,
      -- a digit, a quote or a bracket). Positions inside para are 1-based.
      -- Linear (issue 13): every regular expression runs on a window of at most
      -- `win` characters from the scan position, never on the whole paragraph (which
      -- PostgreSQL would convert in full on each call: 2,000 sentences took 5.5 s).
      -- A sentence boundary is a few characters long; a window ends `tail` characters
      -- early unless it reaches the paragraph's end, so no boundary is cut in two.
      sstart := 1;
      mend := 1;
      scan := 1;
      LOOP
        m := 0;
        LOOP
          chunk := substr(blocks[(scan - 1) / 1024 + 1] || coalesce(blocks[(scan - 1) / 1024 + 2], ''), (scan - 1) % 1024 + 1, win);
          r := regexp_instr(chunk, '[.!?]["''”’)\]]*\s+[[:upper:][:digit:]"''“‘(\[]');
          IF r > 0 AND (r <= win - tail OR scan + win > plen) THEN
            m := scan + r - 1;
            EXIT;
          END IF;
          EXIT WHEN scan + win > plen;           -- the paragraph's end: no more boundaries
          scan := scan + CASE WHEN r > 0 THEN r - 1 ELSE win - tail END;
        END LOOP;
        EXIT WHEN m = 0;
        chunk := substr(blocks[(m - 1) / 1024 + 1] || coalesce(blocks[(m - 1) / 1024 + 2], ''), (m - 1) % 1024 + 1, win);
        mend := m + regexp_instr(chunk, '[.!?]["''”’)\]]*\s+', 1, 1, 1) - 1;
        scan := mend;
        IF substr(chunk, 1, 1) = '.' THEN
          -- the word before the full stop (an abbreviation is short: look back `tail` at most)
          word := lower(ltrim(coalesce(substring(substr(blocks[(greatest(sstart, m - tail) - 1) / 1024 + 1] || coalesce(blocks[(greatest(sstart, m - tail) - 1) / 1024 + 2], ''), (greatest(sstart, m - tail) - 1) % 1024 + 1, m - greatest(sstart, m - tail))
                                                 FROM '(\S+)$'), ''), '(["''“'));
          IF word = ANY (abbrevs) OR (length(word) = 1 AND word ~ '^[[:alpha:]]$') THEN
            mend := m + 1;
            scan := mend;
            CONTINUE;
          END IF;
        END IF;
        send := m + regexp_instr(chunk, '[.!?]["''”’)\]]*', 1, 1, 1) - 1;
        u := u + 1;
        unit_no := u; para_no := pno; s := pstart + sstart - 1; e := pstart + send - 1;
        piece := '';   -- substr(text, sstart, send - sstart) from the blocks it spans
        FOR j IN (sstart - 1) / 1024 + 1 .. (sstart + (send - sstart) - 2) / 1024 + 1 LOOP piece := piece || blocks[j]; END LOOP;
        piece := substr(piece, (sstart - 1) % 1024 + 1, send - sstart);
        words := scirag.word_count(piece); is_heading := false;
        RETURN NEXT;
        sstart := mend;
      END LOOP;
      IF sstart <= plen THEN
        u := u + 1;
        unit_no := u; para_no := pno; s := pstart + sstart - 1; e := pstart + plen;
        piece := '';   -- substr(text, sstart, plen - sstart + 1) from the blocks it spans
        FOR j IN (sstart - 1) / 1024 + 1 .. (sstart + (plen - sstart + 1) - 2) / 1024 + 1 LOOP piece := piece || blocks[j]; END LOOP;
        piece := substr(piece, (sstart - 1) % 1024 + 1, plen - sstart + 1);
        words := scirag.word_count(piece); is_heading := false;
        RETURN NEXT;
      END IF;
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION scirag.text_units(text, text[]) IS
  'Splits a chunk body into the units the sliding window keeps or drops: heading paragraphs (listed in headings, or markdown #), table rows, and prose sentences. Positions are 1-based, e exclusive.';

CREATE OR REPLACE FUNCTION scirag.window_text(body text, keep_from int, keep_to int, max_words int,
                                              headings text[] DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  us record;
  n int;
  ss int[] := '{}';
  es int[] := '{}';
  ws int[] := '{}';
  ps int[] := '{}';
  hs boolean[] := '{}';
  keep boolean[] := '{}';
  total int := 0;
  lo int;
  hi int;
  left_i int;
  right_i int;
  left_blocked boolean := false;
  right_blocked boolean := false;
  i int;
  prev int;
  parts text[] := '{}';
  piece text;
  blocks text[];
BEGIN
  IF body IS NULL OR scirag.word_count(body) <= max_words THEN
    RETURN body;
  END IF;
  FOR us IN SELECT * FROM scirag.text_units(body, headings) ORDER BY unit_no LOOP
    ss := ss || us.s; es := es || us.e; ws := ws || us.words; ps := ps || us.para_no; hs := hs || us.is_heading;
  END LOOP;
  n := cardinality(ss);
  IF n = 0 THEN
    RETURN body;
  END IF;
  blocks := scirag.text_blocks(body);   -- linear reassembly (see text_blocks)
  -- Mandatory: every heading (the structure) and every unit of the original chunk.
  FOR i IN 1..n LOOP
    keep := keep || (hs[i] OR (ss[i] < keep_to AND es[i] > keep_from));
    IF keep[i] THEN
      total := total + ws[i];
      IF NOT hs[i] THEN
        lo := least(lo, i);
        hi := greatest(hi, i);
      END IF;
    END IF;
  END LOOP;
  IF lo IS NULL THEN
    -- The original span holds no unit (empty): grow from where it would be.
    lo := coalesce((SELECT min(x.i) FROM generate_subscripts(ss, 1) AS x(i) WHERE ss[x.i] >= keep_from), n + 1);
    hi := lo - 1;
  END IF;
  -- Grow outwards, one whole sentence at a time, alternating before and after,
  -- while the budget allows; a side stops at the first sentence that does not fit
  -- (skipping would leave a hole in the middle of the context).
  left_i := lo - 1;
  right_i := hi + 1;
  WHILE NOT (left_blocked AND right_blocked) LOOP
    IF NOT left_blocked THEN
      WHILE left_i >= 1 AND keep[left_i] LOOP left_i := left_i - 1; END LOOP;
      IF left_i < 1 OR total + ws[left_i] > max_words THEN
        left_blocked := true;
      ELSE
        keep[left_i] := true; total := total + ws[left_i]; left_i := left_i - 1;
      END IF;
    END IF;
    IF NOT right_blocked THEN
      WHILE right_i <= n AND keep[right_i] LOOP right_i := right_i + 1; END LOOP;
      IF right_i > n OR total + ws[right_i] > max_words THEN
        right_blocked := true;
      ELSE
        keep[right_i] := true; total := total + ws[right_i]; right_i := right_i + 1;
      END IF;
    END IF;
  END LOOP;
  -- Reassemble in document order; an omission is marked with [...] ("…").
  FOR i IN 1..n LOOP
    CONTINUE WHEN NOT keep[i];
    IF prev IS NULL THEN
      IF i > 1 THEN
        parts := parts || ('[…]' || CASE WHEN ps[i - 1] = ps[i] THEN ' ' ELSE E'\n\n' END);
      END IF;
    ELSIF prev = i - 1 THEN
      piece := '';   -- substr(text, es[prev], ss[i] - es[prev]) from the blocks it spans
      FOR j IN (es[prev] - 1) / 1024 + 1 .. (es[prev] + (ss[i] - es[prev]) - 2) / 1024 + 1 LOOP piece := piece || blocks[j]; END LOOP;
      piece := substr(piece, (es[prev] - 1) % 1024 + 1, ss[i] - es[prev]);
      parts := parts || piece;
    ELSE
      parts := parts || CASE WHEN ps[prev] = ps[i] THEN ' […] ' ELSE E'\n\n[…]\n\n' END;
    END IF;
    piece := '';   -- substr(text, ss[i], es[i] - ss[i]) from the blocks it spans
    FOR j IN (ss[i] - 1) / 1024 + 1 .. (ss[i] + (es[i] - ss[i]) - 2) / 1024 + 1 LOOP piece := piece || blocks[j]; END LOOP;
    piece := substr(piece, (ss[i] - 1) % 1024 + 1, es[i] - ss[i]);
    parts := parts || piece;
    prev := i;
  END LOOP;
  IF prev < n THEN
    parts := parts || CASE WHEN ps[prev + 1] = ps[prev] THEN ' […]' ELSE E'\n\n[…]' END;
  END IF;
  RETURN array_to_string(parts, '');   -- (appending to one text would copy it per part)
END $$;
COMMENT ON FUNCTION scirag.window_text(text, int, int, int, text[]) IS
  'VulcanLab''s sliding window: cuts body to at most max_words words, keeping every heading and the span [keep_from, keep_to) (the original chunk) intact and adding whole sentences around it, alternately before and after; omissions are marked "[…]". A body within budget is returned unchanged.';

REVOKE ALL ON FUNCTION scirag.text_blocks(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.text_blocks(text) TO scirag_reader, scirag_loader;
REVOKE ALL ON FUNCTION scirag.word_count(text), scirag.chunk_body(text, text, text),
  scirag.locate_text(text, text, int), scirag.text_units(text, text[]),
  scirag.window_text(text, int, int, int, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.word_count(text), scirag.chunk_body(text, text, text),
  scirag.locate_text(text, text, int), scirag.text_units(text, text[]),
  scirag.window_text(text, int, int, int, text[]) TO scirag_reader, scirag_loader;
COMMIT;
