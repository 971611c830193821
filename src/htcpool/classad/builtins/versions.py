"""Built-in ClassAd functions: versions (being written)."""
