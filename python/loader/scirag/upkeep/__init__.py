"""Keeping a corpus healthy: ``doctor`` (checks), ``gc`` (derived data left behind),
``enrich`` (Crossref metadata, retractions, citations) and ``maint`` (deduplicate,
re-embed stale chunks, retracted documents)."""
