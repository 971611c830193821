"""The gpu package's errors: one base, and the bad-input kinds the callers report.

``DiscoveryOptionError`` is a command line that condor_gpu_discovery refuses (an
unknown option, a ``-simulate`` index out of the table, a missing argument); its
message is the text the tool prints. ``InventoryError`` is discovery output the
startd cannot use (no ``Detected<tag>`` line, a line that is not an attribute).
"""

from __future__ import annotations


class GpuError(Exception):
    """Base of every error the gpu package raises."""


class DiscoveryOptionError(GpuError):
    """The discovery command line is refused; ``str(e)`` is what the tool prints first."""


class InventoryError(GpuError):
    """Discovery output that does not describe a resource inventory."""
