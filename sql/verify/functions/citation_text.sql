-- Verify scirag:functions/citation_text
DO $$
DECLARE
  d scirag.documents;
  c scirag.chunks;
BEGIN
  d.id := 1; d.title := 'Bitcoin: A Peer-to-Peer Electronic Cash System'; d.authors := ARRAY['Satoshi Nakamoto'];
  d.license := 'public';
  c.id := 1; c.line_start := 9; c.line_end := 9;
  ASSERT scirag.citation(d, c) ->> 'cite' = 'Satoshi Nakamoto, Bitcoin: A Peer-to-Peer Electronic Cash System, line 9',
    format('cite without a year: %s', scirag.citation(d, c) ->> 'cite');
  d.authors := '{}'; d.year := 2008; c.line_end := 12;
  ASSERT scirag.citation(d, c) ->> 'cite' = '(2008), Bitcoin: A Peer-to-Peer Electronic Cash System, lines 9-12',
    format('cite without authors: %s', scirag.citation(d, c) ->> 'cite');
END $$;
