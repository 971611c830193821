"""Pure text formatters for htcpool's HTCondor-compatible tools (placeholder, filled below)."""
