"""The collector core: every daemon's ads, by type and name, with lifetimes and queries.

Sans-I/O like every core: the driver passes ``now`` into ``AdStore.update``, ``expire`` and
``query``, and arms a timer for ``next_deadline()``. ``store`` holds the ads and their
lifetimes, ``query`` the constraint, projection and private-attribute handling, ``errors`` the
exceptions.
"""

from htcpool.collector.errors import (
    CollectorError,
    CollectorQueryError,
    CollectorUpdateError,
    CollectorUsageError,
)
from htcpool.collector.query import Constraint, compile_constraint, project, with_private
from htcpool.collector.store import (
    ANY_TYPE,
    DEFAULT_ABSENT_LIFETIME,
    DEFAULT_CLASSAD_LIFETIME,
    AbsentPolicy,
    AdKey,
    AdStore,
    ad_key,
)

__all__ = [
    "ANY_TYPE",
    "DEFAULT_ABSENT_LIFETIME",
    "DEFAULT_CLASSAD_LIFETIME",
    "AbsentPolicy",
    "AdKey",
    "AdStore",
    "CollectorError",
    "CollectorQueryError",
    "CollectorUpdateError",
    "CollectorUsageError",
    "Constraint",
    "ad_key",
    "compile_constraint",
    "project",
    "with_private",
]
