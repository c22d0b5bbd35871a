"""head, tail, cut, awk `{print $N}`, sed `s///` and xargs applied to a known text, as a pipeline stage would."""

from __future__ import annotations

import re


def filter_text(cmd: str, args: list[str], text: str) -> str | None:
    """head/tail/cut/awk/sed/tr on a known text; None for anything not modelled."""
    lines = text.splitlines()
    if cmd in ("head", "tail"):
        count = 10
        rest = list(args)
        while rest:
            a = rest.pop(0)
            if a == "-n" and rest:
                a = "-" + rest.pop(0)
            elif a.startswith("-n"):
                a = "-" + a[2:]
            if re.fullmatch(r"-\d+", a):
                count = int(a[1:])
            else:
                return None
        picked = lines[:count] if cmd == "head" else lines[-count:] if count else []
        return "".join(ln + "\n" for ln in picked)
    if cmd == "cut":
        delim, fields = "\t", None
        rest = list(args)
        while rest:
            a = rest.pop(0)
            if a.startswith("-d"):
                delim = a[2:] if len(a) > 2 else (rest.pop(0) if rest else "")
            elif a.startswith("-f"):
                spec = a[2:] if len(a) > 2 else (rest.pop(0) if rest else "")
                if not spec.isdigit():
                    return None
                fields = int(spec)
            else:
                return None
        if fields is None or len(delim) != 1:
            return None
        out = []
        for ln in lines:
            parts = ln.split(delim)
            out.append(ln if len(parts) == 1 else (parts[fields - 1] if fields <= len(parts) else ""))
        return "".join(o + "\n" for o in out)
    if cmd == "awk" and len(args) == 1:
        m = re.fullmatch(r"\{\s*print\s+\$(\d+)\s*\}", args[0].strip())
        if not m:
            return None
        n = int(m.group(1))
        out = []
        for ln in lines:
            parts = ln.split()
            out.append(parts[n - 1] if 0 < n <= len(parts) else (ln if n == 0 else ""))
        return "".join(o + "\n" for o in out)
    if cmd == "sed" and len(args) == 1:
        return _sed(args[0], lines)
    if cmd == "xargs" and not args:
        return " ".join(text.split()) + "\n"
    return None


def _sed(expr: str, lines: list[str]) -> str | None:
    if len(expr) < 4 or expr[0] != "s":
        return None
    sep = expr[1]
    parts = expr[2:].split(sep)
    if len(parts) != 3 or parts[2] not in ("", "g"):
        return None
    pattern = _bre_to_re(parts[0])
    if pattern is None:
        return None
    repl = re.sub(r"\\(\d)", r"\\g<\1>", parts[1].replace("\\&", "\0amp")).replace("&", r"\g<0>").replace("\0amp", "&")
    count = 0 if parts[2] == "g" else 1
    try:
        return "".join(pattern.sub(repl, ln, count=count) + "\n" for ln in lines)
    except (re.error, IndexError):
        return None


def _bre_to_re(bre: str) -> re.Pattern[str] | None:
    out = []
    i = 0
    while i < len(bre):
        c = bre[i]
        if c == "\\" and i + 1 < len(bre):
            n = bre[i + 1]
            out.append(n if n in "(){}|+?" else "\\" + n)
            i += 2
            continue
        out.append("\\" + c if c in "(){}|+?" else c)
        i += 1
    try:
        return re.compile("".join(out))
    except re.error:
        return None
