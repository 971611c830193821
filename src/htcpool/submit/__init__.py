"""condor_submit's submit description language: submit files → job ClassAds.

``submit_description(text, file=..., host=..., fs=..., settings=..., cluster_id=...)``
runs a submit description and returns a ``SubmitResult`` (job ads and
warnings); ``format_dry_run`` prints them as ``condor_submit -dry-run`` does.
Everything condor_submit would learn from the machine comes in through a
``SubmitHost`` (user, directory, time, environment, platform strings) and a
``FileSystemView``; configuration knobs through ``SubmitSettings``. A description with
``max_materialize`` or ``max_idle`` may be a late-materialization factory: its recipe
(``SubmitDigest``) lets the schedd build each job later with a ``Materializer``.
"""

from htcpool.submit.dryrun import format_dry_run
from htcpool.submit.errors import SubmitError, SubmitFileError, SubmitUsageError
from htcpool.submit.materialize import (
    DigestError,
    FactoryLimits,
    Materializer,
    RecordingEnviron,
    RecordingFileSystem,
    SubmitDigest,
    digest_from_json,
    digest_to_json,
    recorded_digest,
)
from htcpool.submit.session import SubmitResult, submit_description
from htcpool.submit.settings import SubmitSettings, settings_from_config
from htcpool.submit.world import FileSystemView, MemoryFileSystem, SubmitHost

__all__ = [
    "DigestError",
    "FactoryLimits",
    "Materializer",
    "RecordingEnviron",
    "RecordingFileSystem",
    "SubmitDigest",
    "digest_from_json",
    "digest_to_json",
    "recorded_digest",
    "FileSystemView",
    "MemoryFileSystem",
    "SubmitError",
    "SubmitFileError",
    "SubmitHost",
    "SubmitResult",
    "SubmitSettings",
    "SubmitUsageError",
    "format_dry_run",
    "settings_from_config",
    "submit_description",
]
