"""htcpool: a pure-Python implementation of HTCondor's high-throughput scheduling system."""

__version__ = "0.1.0"
