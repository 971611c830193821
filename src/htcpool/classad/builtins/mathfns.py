"""Built-in ClassAd functions: mathfns (being written)."""
