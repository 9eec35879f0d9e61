"""The app's shared UI: URL-bound widgets and pickers, cached wrappers around `core`, chart builders and
formatting. Pages import from here; `core` never imports Streamlit."""
