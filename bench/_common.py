"""Shared by the benchmark scripts: the machine's description, percentiles, a plain table, JSON output."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VERL = Path("/work/.mirror/verl-project+verl/repo")

if str(ROOT) not in sys.path:  # the fake GitHub lives in tests/, the App in bot/
    sys.path.insert(0, str(ROOT))


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        free = subprocess.run(["free", "-h"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        free = ""
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory": free,
        "python": platform.python_version(),
        "loadavg_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "platform": platform.platform(),
    }


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def load_note(started: tuple[float, float, float]) -> str:
    """The machine's load at the start and end of a benchmark: other work on these cores skews every number."""
    now = os.getloadavg()
    return f"load average (1 min) at start {started[0]:.2f}, at end {now[0]:.2f} on {os.cpu_count()} CPUs" + (
        "  <- other work was running: numbers are pessimistic" if max(started[0], now[0]) > 1.5 else ""
    )


def write_json(path: str | None, data: dict[str, Any], started: tuple[float, float, float] | None = None) -> None:
    if path:
        info = machine()
        if started is not None:
            info["loadavg_at_start"] = [round(x, 2) for x in started]
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps({"machine": info, **data}, indent=2, default=str) + "\n")
        print(f"wrote {path}")
