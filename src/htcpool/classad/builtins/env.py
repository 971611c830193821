"""Built-in ClassAd functions: env (being written)."""
