"""File-name parts for ``$F<flags>(...)``, ``$BASENAME()`` and ``$DIRNAME()``.

Flags, combinable: ``p`` the directory with its trailing separator, ``d`` the parent
directory (repeat for more levels), ``n`` the base name without extension, ``x`` the
extension with its dot, ``f`` make a relative path absolute against the reading
directory first, ``b`` bare (no trailing separator on ``p``/``d``, no dot on ``x``),
``q`` wrap in double quotes (``a`` with it: single quotes), ``w``/``u`` convert
separators to ``\\`` or ``/``. Without ``q`` surrounding quotes are removed. The rules,
including what an empty selection returns, follow HTCondor's ``$F`` implementation.
"""

from __future__ import annotations


def _unquote(text: str) -> str:
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _basename_index(path: str) -> int:
    cut = max(path.rfind("/"), path.rfind("\\"))
    return cut + 1


def _extension_index(path: str, start: int) -> int:
    dot = path.rfind(".", start)
    return dot if dot >= 0 else len(path)


def filename_parts(value: str, flags: str, cwd: str = "") -> str:
    """Apply ``$F`` ``flags`` (letters, any case) to the path ``value``."""
    parts = 0
    num_dirs = 0
    quoted = bare = arg_quote = full_path = False
    to_sep = ""
    for flag in flags.lower():
        if flag == "x":
            parts |= 1
        elif flag == "n":
            parts |= 2
        elif flag == "p":
            parts |= 4
        elif flag == "d":
            parts |= 8
            num_dirs += 1
        elif flag == "a":
            arg_quote = True
        elif flag == "b":
            bare = True
        elif flag == "f":
            full_path = True
        elif flag == "w":
            to_sep = "\\"
        elif flag == "u":
            to_sep = "/"
        elif flag == "q":
            quoted = True
    path = _unquote(value)
    if full_path and cwd and not path.startswith("/"):
        base = cwd[:-1] if cwd.endswith("/") else cwd
        if len(path) > 2 and path.startswith("./"):
            path = path[2:]
        path = f"{base}/{path}"
    if to_sep:
        path = path.replace("\\" if to_sep == "/" else "/", to_sep)
    name_at = _basename_index(path)
    ext_at = _extension_index(path, name_at)
    end = len(path)
    if name_at == 0 and parts & 3:
        parts &= ~(4 | 8)
    selection = parts & 0xF
    if selection == 1:
        start = ext_at + (1 if bare and ext_at < end else 0)
    elif selection == 3:
        start = name_at
    elif selection == 2:
        start, end = name_at, ext_at
    elif selection in (0, 7, 5):
        start = 0
    elif selection == 4:
        start, end = 0, name_at
        if bare and name_at > 0:
            end = name_at - 1
    elif selection == 6:
        start, end = 0, ext_at
    elif name_at > 0:
        seps = [i + 1 for i, ch in enumerate(path) if ch in "/\\"]
        kept = seps[: len(seps) - num_dirs] if num_dirs < len(seps) else []
        start = kept[-1] if kept else 0
        if parts & 3 == 2:
            end = ext_at
        elif parts & 3 == 0:
            end = name_at - 1 if bare else name_at
    else:
        start = end = 0
    result = path[start:end]
    if quoted:
        mark = "'" if arg_quote else '"'
        result = mark + result + mark
    return result
