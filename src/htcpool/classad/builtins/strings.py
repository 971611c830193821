"""Built-in ClassAd functions: strings (being written)."""
