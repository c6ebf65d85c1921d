-- Deploy scirag:functions/deep_text
-- Reworked (issue 16): text_units is PL/Python over scirag_helpers.text, the one
-- sentence splitter the loader's chunker, the answer checks and the graph extractor
-- use (it was a PL/pgSQL copy of the loader's rules); still linear and still capped
-- at 2,000,000 characters (SQLSTATE 22023). chunk_body stays only as the rule that
-- filled chunks.body for rows written before the column (schema/chunk_body).
-- Reworked (issue 13): linear text_units and window_text, body length capped.
-- Text primitives shared by parent enrichment and consolidation: word counts,
-- finding one text inside another (whitespace-insensitive), and the sliding window
-- that cuts a long parent down to a word budget on sentence boundaries.
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
  'The rule that filled chunks.body for rows written without it (schema/chunk_body): a chunk''s content without the "title / section path" prefix the loader prepends (the content itself when the prefix does not match). Readers use chunks.body.';

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
LANGUAGE plpython3u IMMUTABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
# The length bound is checked before any import or text work.
if body is not None and len(body) > 2000000:
    plpy.error(f"scirag.text_units: the body is {len(body)} characters long, at most 2000000 allowed",
               sqlstate="22023")
plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.text import units
# Python offsets are 0-based; SQL positions 1-based (e exclusive in both).
return [(u.unit_no, u.para_no, u.start + 1, u.end + 1, u.words, u.is_heading)
        for u in units(body or '', headings or ())]
$$;
COMMENT ON FUNCTION scirag.text_units(text, text[]) IS
  'Splits a chunk body into the units the sliding window keeps or drops: heading paragraphs (listed in headings, or markdown #), table rows, and prose sentences (scirag_helpers.text.units, the loader''s splitter). Positions are 1-based, e exclusive; bodies over 2,000,000 characters are refused (22023).';

CREATE OR REPLACE FUNCTION scirag.window_text(body text, keep_from int, keep_to int, max_words int,
                                              headings text[] DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL RESTRICTED   -- text_units runs PL/Python with the server's module path
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
