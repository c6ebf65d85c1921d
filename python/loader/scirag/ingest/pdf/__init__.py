"""PDF reading: ``layout`` (the default engine: fonts, captions, columns), ``meta``
(citation fields from the first page and the information dictionary) and ``repair``
(a file cut short, rebuilt from the objects before the cut)."""
