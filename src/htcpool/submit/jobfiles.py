"""The file and argument passes of the job builder: where the job runs and what it runs.

``files`` sets ``Iwd``, ``Cmd`` (made absolute against ``initialdir``), the
sizes condor_submit measures (``ExecutableSize``, ``ImageSize``,
``DiskUsage``, ``TransferInputSizeMB``, all in KiB or MiB rounded up, read
through the ``FileSystemView``), standard streams and the file-transfer
attributes (``should_transfer_files`` defaults to the administrator's
``SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES`` when that is a valid value, else
IF_NEEDED; a container image sent with the job joins ``TransferInput``).
``arguments`` writes ``Arguments`` (new syntax) or ``Args`` (old
syntax) and ``Environment``, merging ``getenv`` with ``environment``
(``getenv = true`` is refused when ``SUBMIT_ALLOW_GETENV`` is false). Both are
passes of ``JobBuilder`` (``htcpool.submit.jobad``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcpool.submit import argsenv
from htcpool.submit.errors import SubmitFileError

if TYPE_CHECKING:
    from htcpool.submit.jobad import JobBuilder


TRANSFER_CHOICES = ("YES", "NO", "IF_NEEDED")


def _kib(size: int | None) -> int:
    return 0 if size is None else -(-size // 1024)


def files(b: JobBuilder) -> None:
    ad = b.ad
    initialdir = b.get("initialdir", "initial_dir", "Iwd")
    b.iwd = b.host.absolute(initialdir) if initialdir else b.host.cwd
    ad["Iwd"] = b.iwd
    exe = b.get("executable", "Cmd")
    if not exe:
        raise SubmitFileError("No 'executable' parameter was provided", b.submit_file)
    cmd = b.host.absolute(exe, b.iwd)
    ad["Cmd"] = cmd
    exe_kib = 0
    if b.get_bool("transfer_executable", True):
        size = b.fs.size(cmd)
        if size is None:
            raise b.fail(f"Executable file {cmd} does not exist", "executable")
        exe_kib = _kib(size)
    ad["ExecutableSize"] = exe_kib
    ad["ImageSize"] = exe_kib
    ad["DiskUsage"] = exe_kib
    for key, alias, attr, transfer, stream in (("input", "stdin", "In", "TransferIn", ""),
                                               ("output", "stdout", "Out", "TransferOut", "StreamOut"),
                                               ("error", "stderr", "Err", "TransferErr", "StreamErr")):
        value = b.get(key, alias, attr) or "/dev/null"
        ad[attr] = value
        if value == "/dev/null":
            ad[transfer] = False
        elif stream:
            ad[stream] = b.get_bool("stream_" + key)
    log = b.get("log", "UserLog")
    if log:
        ad["UserLog"] = b.host.absolute(log, b.iwd)
    default_stf = b.settings.submit_default_should_transfer_files.strip().upper()
    if default_stf not in TRANSFER_CHOICES:
        default_stf = "IF_NEEDED"  # an invalid default is ignored, as condor_submit does
    stf = (b.get("should_transfer_files", "ShouldTransferFiles") or default_stf).upper()
    if stf not in TRANSFER_CHOICES:
        raise b.fail(f"should_transfer_files must be YES, NO or IF_NEEDED, not {stf}",
                        "should_transfer_files")
    ad["ShouldTransferFiles"] = stf
    if stf != "YES":
        ad["FileSystemDomain"] = b.host.file_system_domain
    when = (b.get("when_to_transfer_output", "WhenToTransferOutput") or "ON_EXIT").upper()
    ad["WhenToTransferOutput"] = when
    input_kib = 0
    inputs = b.get("transfer_input_files", "TransferInput")
    names = [n.strip() for n in (inputs or "").split(",") if n.strip()]
    if b.container_transfer is not None:
        names.append(b.container_transfer)
    if names:
        ad["TransferInput"] = ",".join(names)
        input_kib = sum(_kib(b.fs.size(b.host.absolute(n, b.iwd))) for n in names)
    outputs = b.get("transfer_output_files", "TransferOutput")
    if outputs is not None:
        ad["TransferOutput"] = ",".join(n.strip() for n in outputs.split(",") if n.strip())
    ad["TransferInputSizeMB"] = -(-(exe_kib + input_kib) // 1024)


def arguments(b: JobBuilder) -> None:
    getenv = b.get("getenv") or ""
    if not b.settings.submit_allow_getenv and getenv.strip().lower() in ("true", "yes", "t", "y", "1"):
        raise b.fail("getenv = true command not allowed because administrator has set "
                     "SUBMIT_ALLOW_GETENV = false", "getenv")
    try:
        attr, value = argsenv.arguments_attribute(b.get("arguments", "Args", "Arguments"))
        env = argsenv.getenv_entries(getenv, b.host.environ)
        env.update(argsenv.parse_environment(b.get("environment", "env", "Environment") or ""))
    except argsenv.SyntaxProblem as e:
        raise b.fail(str(e), "arguments", "environment") from None
    b.ad[attr] = value
    b.ad["Environment"] = argsenv.environment_attribute(env)
