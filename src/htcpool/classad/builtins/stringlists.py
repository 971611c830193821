"""Built-in ClassAd functions: stringlists (being written)."""
