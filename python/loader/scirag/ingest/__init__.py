"""Ingestion: files and manifests in, stored documents out.

- ``discover``, ``manifest``, ``licenses``: what a run loads (manifest lines, files and
  folders as manifest entries) and under which rights;
- ``blocks``: the block model every parser produces (``ParsedDocument`` of ``Block``);
- ``parse`` (text, Markdown, HTML; the entry point for every format) and ``pdf/`` (the
  PDF engines, the layout engine, metadata, repair of truncated files);
- ``parse_guard``: every parse in a worker process within a time and memory budget;
- ``chunk``: blocks into sized, section-aware chunks;
- ``pipeline``: parse -> chunk -> deduplicate -> embed -> store, one report row a line.
"""
