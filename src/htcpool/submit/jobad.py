"""Building one job ClassAd from the submit hash, the way condor_submit does.

``JobBuilder.build(cluster, proc)`` runs a fixed tuple of passes (``PASSES``;
the universe and container image passes are in ``universe``, the file and
argument passes in ``jobfiles``, the GPU commands in ``gpus``, accounting,
deferral and policy in ``jobpolicy``),
each reading commands through the hash (which counts their use) and writing
attributes: base counters (with the administrator's ``SUBMIT_ATTRS``), universe
and image, files, arguments and environment, simple commands, resource
requests and GPU limits, accounting group, job status, deferral and cron,
policy expressions, forced attributes (``SUBMIT_ATTRS``' ``+Name``, then the
file's ``+Attr``/``MY.Attr``), ``RequireGPUs`` and, last, the generated
Requirements. Problems with a command raise ``SubmitFileError``
naming the submit file, the command's line and the command; warnings are
collected in ``warnings`` (each once).
"""

from __future__ import annotations

from collections.abc import Callable

from htcpool.classad import ClassAd, ExprTree
from htcpool.classad.errors import ClassAdParseError
from htcpool.classad.nodes import Literal, Node
from htcpool.classad.parser import parse_expression
from htcpool.submit import gpus, jobfiles, jobpolicy, universe
from htcpool.submit.errors import SubmitError, SubmitFileError
from htcpool.submit.hash import SubmitHash
from htcpool.submit.resources import (
    KNOWN_REQUESTS,
    RESERVED_REQUESTS,
    RequirementInputs,
    machine_references,
    requirements_clauses,
    scaled_request,
)
from htcpool.submit.settings import SubmitSettings
from htcpool.submit.tables import (
    BASE_ATTRIBUTES,
    CRON_COMMANDS,
    NOTIFICATION,
    SIMPLE_COMMANDS,
    signal_name,
)
from htcpool.submit.universe import Topping
from htcpool.submit.world import FileSystemView, SubmitHost

HOLD_SUBMITTED_ON_HOLD = 15


class JobBuilder:
    """Makes job ads from a ``SubmitHash``; one builder serves every job of a submit file."""

    def __init__(self, hash: SubmitHash, settings: SubmitSettings, host: SubmitHost,
                 fs: FileSystemView, submit_file: str = "") -> None:
        self.hash = hash
        self.settings = settings
        self.host = host
        self.fs = fs
        self.submit_file = submit_file
        self.warnings: list[str] = []
        self.ad = ClassAd()
        self.universe = 5
        self.topping = Topping.NONE
        #: a container image condor_submit sends with the input files (``universe.images``)
        self.container_transfer: str | None = None
        self.iwd = host.cwd
        self.requirement_inputs: RequirementInputs | None = None

    # -- helpers
    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def fail(self, message: str, *keys: str) -> SubmitFileError:
        for key in keys:
            entry = self.hash.entries.get(key.lower())
            if entry is not None:
                return SubmitFileError(message, self.submit_file, entry.line, entry.name)
        return SubmitFileError(message, self.submit_file)

    def get(self, *keys: str) -> str | None:
        try:
            return self.hash.get(*keys)
        except SubmitError as e:
            raise self.fail(str(e), *keys) from None

    def expr(self, text: str, *keys: str) -> Node:
        try:
            return parse_expression(text)
        except ClassAdParseError:
            name = keys[0] if keys else "expression"
            raise self.fail(f"Parse error in expression: {name} = {text}", *keys) from None

    def set_expr(self, attr: str, text: str, *keys: str) -> Node:
        node = self.expr(text, *keys)
        self.ad.insert_node(attr, node)
        return node

    def get_bool(self, key: str, default: bool = False) -> bool:
        value = self.get(key)
        if value is None or value == "":
            return default
        low = value.lower()
        if low in ("true", "yes", "t", "y", "1"):
            return True
        if low in ("false", "no", "f", "n", "0"):
            return False
        raise self.fail(f"{key} must be a boolean, not '{value}'", key)

    # -- the passes
    def build(self, cluster: int, proc: int) -> ClassAd:
        self.ad = ClassAd()
        self.ad["ClusterId"] = cluster
        self.ad["ProcId"] = proc
        for step in PASSES:
            step(self)
        return self.ad

    def base(self) -> None:
        ad, h = self.ad, self.host
        ad["QDate"] = h.now
        ad["EnteredCurrentStatus"] = h.now
        ad.insert_node("Owner", self.expr("undefined"))
        ad["MyType"] = "Job"
        ad["TargetType"] = "Machine"
        ad["CondorVersion"] = h.condor_version
        ad["SubmitVersion"] = h.condor_version
        ad["CondorPlatform"] = h.condor_platform
        ad["JobSubmitMethod"] = 0
        if self.submit_file:
            ad["JobSubmitFile"] = self.submit_file
        for name, value in BASE_ATTRIBUTES:
            ad[name] = value
        for name, text in self.settings.submit_attrs:
            self._admin_attr(name, text, "SUBMIT_ATTRS")

    def _admin_attr(self, name: str, text: str, knob: str) -> None:
        try:
            self.ad.insert_node(name, parse_expression(text))
        except ClassAdParseError:
            self.warn(f"{knob} names {name}, whose value {text} is not a ClassAd expression "
                      "(is a string value missing its quotes?); it is left out of the job")

    def forced_submit_attrs(self) -> None:
        """SUBMIT_ATTRS' ``+Name`` entries: set over the file's commands, under its ``+Attr``."""
        for name, text in self.settings.forced_submit_attrs:
            self._admin_attr(name, text, "SUBMIT_ATTRS")

    def simple(self) -> None:
        for key, attr, kind in SIMPLE_COMMANDS:
            value = self.get(key, attr)
            if value is None or (value == "" and kind != "string"):
                continue
            if kind == "string":
                self.ad[attr] = value
            elif kind == "signal":
                self.ad[attr] = signal_name(value)
            elif kind == "unquoted":
                text = value.strip()
                self.ad[attr] = text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text
            elif kind == "bool":
                self.ad[attr] = self.get_bool(key)
            else:
                self.set_expr(attr, value, key, attr)
        if "KillSig" not in self.ad and self.universe != 5:
            self.ad["KillSig"] = "SIGTERM"
        if "JobPrio" not in self.ad:
            self.ad["JobPrio"] = 0
        if "JobLeaseDuration" not in self.ad and self.universe in (5, 10, 11, 13):
            self.set_expr("JobLeaseDuration", self.settings.job_default_lease_duration)
        lease = self.ad._exprs.get("jobleaseduration")
        if isinstance(lease, Literal) and isinstance(lease.value, int) and 0 < lease.value < 20:
            self.warn("JobLeaseDuration less than 20 seconds is not allowed, using 20 instead")
            self.ad["JobLeaseDuration"] = 20
        notification = (self.get("notification", "JobNotification")
                        or self.settings.job_default_notification or "never").lower()
        if notification not in NOTIFICATION:
            raise self.fail(f"Notification must be 'Never', 'Always', 'Complete', 'Start', or 'Error', "
                            f"not '{notification}'", "notification")
        self.ad["JobNotification"] = NOTIFICATION[notification]
        self.set_expr("LeaveJobInQueue", self.get("leave_in_queue", "LeaveJobInQueue") or "false",
                      "leave_in_queue")
        limits = self.get("concurrency_limits", "ConcurrencyLimits")
        if limits:
            names = sorted({n.strip().lower() for n in limits.replace(" ", ",").split(",") if n.strip()})
            self.ad["ConcurrencyLimits"] = ",".join(names)
        rank = self.get("rank", "preferences", "Rank")
        s = self.settings
        vanilla = self.universe == 5
        default_rank = (s.default_rank_vanilla if vanilla else "") or s.default_rank
        append_rank = (s.append_rank_vanilla if vanilla else "") or s.append_rank
        rank = rank or default_rank
        if rank and append_rank:
            rank = f"({rank}) + ({append_rank})"
        self.set_expr("Rank", rank or append_rank or "0.0", "rank")

    def requests(self) -> None:
        s = self.settings
        cpus = self.get("request_cpus", "RequestCpus")
        if self.hash.raw("request_cpu") is not None:
            raise self.fail("request_cpu is not a valid submit command; did you mean request_cpus?",
                            "request_cpu")
        # a knob's default counts only when SUBMIT_ATTRS did not already put the attribute in
        for attr, text, unit, key, default in (
                ("RequestCpus", cpus, None, "request_cpus", s.job_default_request_cpus),
                ("RequestMemory", self.get("request_memory", "RequestMemory"), "M", "request_memory",
                 s.job_default_request_memory),
                ("RequestDisk", self.get("request_disk", "RequestDisk"), "K", "request_disk",
                 s.job_default_request_disk),
                ("RequestGPUs", self.get("request_gpus", "RequestGPUs"), None, "request_gpus",
                 s.job_default_request_gpus)):
            if not text and attr in self.ad:
                continue
            if text or default:
                self._request(attr, text or default, unit, key)
        for low, entry in list(self.hash.entries.items()):
            if not low.startswith("request_"):
                continue
            tag = entry.name[len("request_"):]
            if tag.lower() in KNOWN_REQUESTS or tag.lower() in RESERVED_REQUESTS:
                continue
            if len(tag) < 2 or tag.startswith("_"):
                raise self.fail(f"invalid resource request name '{tag}'", entry.name)
            value = self.get(entry.name)
            if value:
                self.set_expr("Request" + tag, value, entry.name)
            require = self.get("require_" + tag)
            if require:
                self.set_expr("Require" + tag, require, "require_" + tag)

    def _request(self, attr: str, text: str, unit: str | None, key: str) -> None:
        if text.lower() == "undefined":
            return
        if unit is not None:
            try:
                scaled = scaled_request(text, unit)
            except ValueError as e:
                raise self.fail(f"{key}: {e}", key) from None
            if scaled is not None:
                if unit == "M":
                    gpus.missing_units(self, key, text, "megabytes", "K, M, G or T")
                else:
                    gpus.missing_units(self, key, text, "kilobytes", "K, M, or B")
                self.ad[attr] = scaled
                return
        self.set_expr(attr, text, key)

    def status(self) -> None:
        if self.get_bool("hold"):
            self.ad["JobStatus"] = 5
            self.ad["HoldReasonCode"] = HOLD_SUBMITTED_ON_HOLD
            self.ad["HoldReason"] = "submitted on hold at user's request"
        else:
            self.ad["JobStatus"] = 1

    def forced(self) -> None:
        for low, entry in list(self.hash.entries.items()):
            if low.startswith("+"):
                attr = entry.name[1:]
            elif low.startswith("my."):
                attr = entry.name[3:]
            elif low.startswith("-"):
                entry.used = True
                self.ad.insert_node(entry.name[1:], self.expr("undefined"))
                continue
            else:
                continue
            value = self.get(entry.name) or "undefined"
            self.set_expr(attr, value, entry.name)

    def requirements(self) -> None:
        ad = self.ad
        user = self.get("requirements")
        forced = ad._exprs.get("requirements")
        if forced is not None:
            if user:
                self.warn("+Requirements overrides the requirements command")
            return
        user_node = self.expr(user, "requirements") if user else None
        requires = {k[len("require"):] for k in ad._exprs if k.startswith("require") and k != "requirements"}
        s = self.settings
        inputs = RequirementInputs(
            universe=self.universe,
            topping_clauses=self._topping_clauses(user_node),
            user_expr=user_node,
            append=s.append_req_vanilla if self.universe == 5 and s.append_req_vanilla else s.append_requirements,
            arch=self.host.arch,
            opsys=self.host.opsys,
            request_disk=ad._exprs.get("requestdisk"),
            request_memory=ad._exprs.get("requestmemory"),
            request_cpus=ad._exprs.get("requestcpus"),
            custom_requests={ad._names[k][len("request"):]: v for k, v in ad._exprs.items()
                             if k.startswith("request") and (k[7:] == "gpus" or k[7:] not in KNOWN_REQUESTS)
                             and len(k) > 8 and k[7] != "_"},
            requires=requires,
            should_transfer=str(ad["ShouldTransferFiles"]),
            deferral="deferraltime" in ad._exprs or "cronminute" in ad._exprs
            or any(attr.lower() in ad._exprs for _, attr in CRON_COMMANDS),
        )
        if not s.submit_generate_custom_resource_requirements:
            inputs.custom_requests = {t: v for t, v in inputs.custom_requests.items() if t.lower() == "gpus"}
        if user_node is not None and "requirements" in {
                r.lower() for r in ClassAd().externalRefs(_wrap(user_node))}:
            raise self.fail("Circular reference: Requirements refers to itself", "requirements")
        clauses, warnings = requirements_clauses(inputs)
        for w in warnings:
            self.warn(w)
        self.set_expr("Requirements", " && ".join(clauses), "requirements")

    def _topping_clauses(self, user_node: Node | None) -> list[str] | None:
        """Container and docker jobs: Arch and the runtime's machine attributes replace Arch and
        OpSys (None for other jobs)."""
        if self.topping is Topping.NONE:
            return None
        refs = machine_references(user_node) if user_node is not None else set()
        arch = "" if "arch" in refs else f'(TARGET.Arch == "{self.host.arch}")'
        return universe.requirement_clauses(self, arch)


def _wrap(node: Node) -> ExprTree:
    return ExprTree._wrap(node)


PASSES: tuple[Callable[[JobBuilder], None], ...] = (
    JobBuilder.base,
    universe.universe_pass,
    universe.images,
    jobfiles.files,
    jobfiles.arguments,
    JobBuilder.simple,
    JobBuilder.requests,
    gpus.gpu_commands,
    jobpolicy.accounting,
    JobBuilder.status,
    jobpolicy.deferral,
    jobpolicy.policy,
    JobBuilder.forced_submit_attrs,
    JobBuilder.forced,
    gpus.complete_require_gpus,
    JobBuilder.requirements,
)
