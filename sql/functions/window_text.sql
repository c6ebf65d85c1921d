-- Deploy scirag:functions/window_text
-- Split (issue 28): scirag.window_text, moved out of functions/deep_text (sql/functions/deep_text.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/window_text` (docs/releasing.md, "One object per change").
BEGIN;

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
  'the sliding window: cuts body to at most max_words words, keeping every heading and the span [keep_from, keep_to) (the original chunk) intact and adding whole sentences around it, alternately before and after; omissions are marked "[…]". A body within budget is returned unchanged.';

REVOKE ALL ON FUNCTION scirag.window_text(text, int, int, int, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.window_text(text, int, int, int, text[]) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
