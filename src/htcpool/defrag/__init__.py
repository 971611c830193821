"""condor_defrag's decisions: which machines to drain, how, and when to stop (docs/defrag.md).

A sans-I/O core: nothing here reads the clock, sleeps or does I/O. The API, for the live
driver (``runtime/defrag_service.py``) and the simulator alike::

    settings = settings_from_config(config, host)          # every DEFRAG_* knob; .problems
    core = Defrag(settings, now, last_poll=parse_state(text_of_DEFRAG_STATE_FILE), seed=0)
    core.startup_lines()                                    # LogLine actions about the knobs
    core.next_deadline(now)                                 # when to call handle_timer next
    core.handle_timer(now)          # -> [UpdateAd(Defrag ad)], [SaveState, QueryAds(...)]
    core.handle(now, AdList(ads))   # the startd ads asked for -> SendCancel, SendDrain, LogLine
    core.handle(now, AdsUnavailable(reason))  # the collector did not answer: the poll does nothing
    core.handle(now, DrainAnswer(machine, accepted, reason))  # each SendDrain's outcome
    core.evaluate(now, ads)         # one whole poll in one call (no QueryAds round trip)
    core.ad(now)                    # the Defrag ad; core.daemon_attrs adds the driver's own
    core.reconfigure(settings)

Actions (``actions``): ``QueryAds`` and ``UpdateAd`` (``htcpool.protocol``), ``SendDrain``
and ``SendCancel`` (a ``protocol.startd.Drain``/``CancelDrain`` for the startd at
``address``), ``SaveState`` (text for DEFRAG_STATE_FILE) and ``LogLine`` (for
DefragLog). Modules: ``settings`` (knobs), ``rate`` (machines per poll), ``survey`` (one
pass over the ads), ``stats`` (the ad's statistics), ``core`` (the poll).
"""

from htcpool.defrag.actions import (
    Action,
    AdsUnavailable,
    DrainAnswer,
    LogLevel,
    LogLine,
    SaveState,
    SendCancel,
    SendDrain,
)
from htcpool.defrag.core import BASE_CONSTRAINT, Defrag, Phase, check_expr, parse_state, state_text
from htcpool.defrag.rate import DrainRate, prorate
from htcpool.defrag.settings import (
    DefragSettings,
    Expression,
    Knob,
    Problem,
    parse_knob,
    settings_from_config,
)
from htcpool.defrag.stats import DefragStats, DrainingCost
from htcpool.defrag.survey import Survey, machine_of, survey

__all__ = [
    "BASE_CONSTRAINT", "Action", "AdsUnavailable", "DefragSettings", "DefragStats", "Defrag", "DrainAnswer", "DrainRate", "Expression",
    "Knob", "LogLevel", "LogLine", "Phase", "Problem", "SaveState", "SendCancel", "SendDrain", "Survey",
    "check_expr", "DrainingCost", "machine_of", "parse_knob", "parse_state", "prorate", "settings_from_config",
    "state_text", "survey",
]
