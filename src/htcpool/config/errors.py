"""The configuration package's exceptions.

One base, :class:`ConfigError`, and two branches: :class:`ConfigInputError` when the
configuration text (a file, a metaknob argument, an include) is wrong, and
:class:`ConfigUsageError` when the caller misused the API (an unknown template asked
for by name, a bad argument). Input errors carry the source name and line of the
offending statement or definition and put them at the front of the message, the way
HTCondor prints ``Error "file", Line N: ...``.
"""

from __future__ import annotations


class ConfigError(Exception):
    """Base of every error raised by :mod:`htcpool.config`."""


class ConfigUsageError(ConfigError, ValueError):
    """The caller asked for something the API does not offer."""


class ConfigInputError(ConfigError):
    """The configuration itself is wrong; ``source`` and ``line`` say where.

    ``line`` is 0 when the place is not a line of a file (the defaults table, the
    environment, a detected value).
    """

    def __init__(self, message: str, source: str = "", line: int = 0) -> None:
        self.message = message
        self.source = source
        self.line = line
        super().__init__(self._located())

    def _located(self) -> str:
        if self.source and self.line:
            return f'"{self.source}", line {self.line}: {self.message}'
        if self.source:
            return f'"{self.source}": {self.message}'
        return self.message


class ConfigSyntaxError(ConfigInputError):
    """A statement that cannot be parsed (bad name, unclosed block, bad condition...)."""


class ConfigIncludeError(ConfigInputError):
    """An ``include`` (or a local configuration file) that cannot be read or run."""


class ConfigMetaknobError(ConfigInputError):
    """A ``use CATEGORY : TEMPLATE`` naming no template, or an ``error`` inside one."""


class ConfigExpansionError(ConfigInputError):
    """A ``$(...)`` or ``$FUNC(...)`` reference that cannot be expanded."""


class ConfigRecursionError(ConfigExpansionError):
    """A macro whose expansion refers back to itself, which would never end."""


class ConfigValueError(ConfigInputError):
    """A value that does not convert to the type asked for (``get_int`` of ``abc``)."""
