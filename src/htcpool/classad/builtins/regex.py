"""Built-in ClassAd functions: regex (being written)."""
