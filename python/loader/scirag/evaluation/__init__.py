"""Evaluation: ``runs`` (eval_runs bookkeeping), ``metrics``, the retrieval and answer
harnesses (``qa``, ``pdf``) and benchmark loaders (``beir``, ``scitab``, ``qasper``,
``qasper_data``, ``pubmedqa``), and the HTML ``report``."""
