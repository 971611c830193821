"""``param``, ``set_subsystem``, ``reload_config`` and ``RemoteParam``: the configuration.

``param`` is a mutable mapping over the configuration this process reads
(``CONDOR_CONFIG``, else the pool's ``condor_config`` in its local directory, else
HTCondor's standard places; docs/configuration.md), as a tool of the subsystem
``set_subsystem`` names (``TOOL`` until then). A lookup gives the expanded
value (``SUBSYS.NAME`` first, then ``NAME``, then the parameter table's default)
as text, as HTCondor's ``param`` does; assignments and deletions change this
process's view only. The configuration is read on first use and again after
``reload_config`` or ``set_subsystem``.

``RemoteParam(location)`` is the configuration a daemon of this pool runs with:
htcpool's daemons share the pool's configuration files, so it is read as that
daemon reads it (its subsystem from the location ad's ``MyType``); changing a
running daemon's configuration (``condor_config_val -set``) is not supported.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, MutableMapping
from typing import Any

from htcpool.htcondor2._enums import SubsystemType
from htcpool.htcondor2._errors import HTCondorException

_SUBSYSTEMS = {"DaemonMaster": "MASTER", "Scheduler": "SCHEDD", "Machine": "STARTD",
               "Collector": "COLLECTOR", "Negotiator": "NEGOTIATOR"}


def _root_config() -> str | None:
    if os.environ.get("CONDOR_CONFIG"):
        return None
    from htcpool.htcondor2._pool import pool_directory

    path = pool_directory() / "condor_config"
    return str(path) if path.exists() else None


class _Configuration(MutableMapping[str, str]):
    """The configuration as one subsystem sees it, with this process's own changes on top."""

    def __init__(self, subsystem: str = "TOOL") -> None:
        self._subsystem = subsystem
        self._config: Any = None
        self._root: str | None = None
        self._overrides: dict[str, str] = {}
        self._deleted: set[str] = set()

    def _read(self) -> Any:
        if self._config is None:
            from htcpool.config import ConfigError, read_config

            try:
                self._config = read_config(self._root or _root_config(), subsystem=self._subsystem)
            except ConfigError as e:
                raise HTCondorException(f"cannot read the configuration: {e}") from None
        return self._config

    def reload(self, root: str | None = None) -> None:
        self._root = root
        self._config = None

    def __getitem__(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError("key must be a string")
        upper = key.upper()
        if upper in self._overrides:
            return self._overrides[upper]
        if upper in self._deleted:
            raise KeyError(key)
        from htcpool.config import ConfigError

        config = self._read()
        try:
            value = config.get_str(key, self._subsystem)
        except ConfigError as e:
            raise HTCondorException(f"cannot expand {key}: {e}") from None
        if value is None:
            raise KeyError(key)
        return str(value)

    def __setitem__(self, key: str, value: str) -> None:
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError("param keys and values must be strings")
        self._overrides[key.upper()] = value
        self._deleted.discard(key.upper())

    def __delitem__(self, key: str) -> None:
        if key.upper() not in self:
            raise KeyError(key)
        self._overrides.pop(key.upper(), None)
        self._deleted.add(key.upper())

    def __iter__(self) -> Iterator[str]:
        seen: list[str] = []
        for definition in self._read().definitions():
            name = str(definition.name).upper()
            if name not in self._deleted and name not in seen:
                seen.append(name)
        seen.extend(name for name in self._overrides if name not in seen)
        return iter(seen)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        try:
            self[key]
        except KeyError:
            return False
        return True


param = _Configuration()


def set_subsystem(name: str, daemon_type: SubsystemType = SubsystemType.Auto) -> None:
    """Read the configuration as subsystem ``name`` from now on (``SCHEDD.X`` wins over ``X``)."""
    if not isinstance(name, str) or not name:
        raise ValueError("the subsystem name must be a non-empty string")
    param._subsystem = name.upper()
    param.reload(param._root)


def reload_config(root_config_file: str | None = None) -> None:
    """Read the configuration files again (``root_config_file`` instead of the usual ones)."""
    param.reload(root_config_file)


class RemoteParam(_Configuration):
    """The configuration of the daemon a location ad names (read from the pool's files)."""

    def __init__(self, location: Any) -> None:
        my_type = str(location.get("MyType", "")) if hasattr(location, "get") else ""
        super().__init__(_SUBSYSTEMS.get(my_type, "TOOL"))
        self._location = location

    def refresh(self) -> None:
        self.reload()

    def __setitem__(self, key: str, value: str) -> None:
        raise HTCondorException("changing a running daemon's configuration is not supported: edit the "
                                "pool's condor_config and send DaemonCommands.Reconfig")

    def __delitem__(self, key: str) -> None:
        raise HTCondorException("changing a running daemon's configuration is not supported: edit the "
                                "pool's condor_config and send DaemonCommands.Reconfig")
