"""Built-in ClassAd functions: lists (being written)."""
