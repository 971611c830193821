"""Built-in ClassAd functions: timefns (being written)."""
