"""HTCondor's configuration language, read as HTCondor 25 reads it.

Read files with :func:`read_config` (``CONDOR_CONFIG``, local files and directories,
includes, metaknobs, ``_CONDOR_`` environment overrides) or text with
:meth:`Config.from_text`; then ask the :class:`Config` for typed values::

    config = Config.from_text("use POLICY : Desktop\\nMINUTE = 60\\n", subsystem="STARTD")
    config.get_expr("START")          # expanded text of the START expression
    config.get_int("NEGOTIATOR_INTERVAL")  # 60, from the parameter table
    config.provenance("START")        # file and line, or "default"

Numbers and booleans are converted as HTCondor's ``param_integer``/``param_double``/
``param_boolean`` do (``SCHEDD_INTERVAL = 5*60`` is 300); :func:`integer_value`,
:func:`real_value` and :func:`boolean_value` do the same for a knob's text held elsewhere.

Pipeline: :mod:`lines` (continuations, comments) -> :mod:`parser` (statements,
``include``, ``@=``) with :mod:`conditions` (``if``) and :mod:`metaknobs` (``use``) ->
:mod:`macro_set` (definitions with provenance) -> lookups in :mod:`lookup` and lazy
expansion in :mod:`macros`/:mod:`functions` -> typed conversion in :mod:`typed`.
The parameter table and templates are generated data (:mod:`_param_table`).
"""

from htcpool.config.config import Config, Provenance
from htcpool.config.errors import (
    ConfigError,
    ConfigExpansionError,
    ConfigIncludeError,
    ConfigInputError,
    ConfigMetaknobError,
    ConfigRecursionError,
    ConfigSyntaxError,
    ConfigUsageError,
    ConfigValueError,
)
from htcpool.config.files import FileLoader, find_root_config, read_config
from htcpool.config.lookup import Context
from htcpool.config.macro_set import Definition
from htcpool.config.probe import MachineFacts, fake_machine, probe_machine
from htcpool.config.table import ParamInfo, param_info
from htcpool.config.typed import boolean_value, integer_value, real_value

__all__ = [
    "Config",
    "ConfigError",
    "ConfigExpansionError",
    "ConfigIncludeError",
    "ConfigInputError",
    "ConfigMetaknobError",
    "ConfigRecursionError",
    "ConfigSyntaxError",
    "ConfigUsageError",
    "ConfigValueError",
    "Context",
    "Definition",
    "FileLoader",
    "MachineFacts",
    "ParamInfo",
    "Provenance",
    "boolean_value",
    "fake_machine",
    "find_root_config",
    "integer_value",
    "param_info",
    "probe_machine",
    "read_config",
    "real_value",
]
