"""The physical floor of a whole-tree audit: what any tool reading the same files must pay, as one process.

    python bench/floor.py REPO [--rev HEAD]

It lists the tree at REV (`git ls-tree -r`), reads every blob through one `git cat-file --batch`, composes every
YAML file with PyYAML's C safe loader (`yaml.CSafeLoader`) and parses every Python file with `ast.parse`, and
prints what it read. Timed as a whole process beside `npu-review check --repo REPO --all` (alternating runs, e.g.
with `/usr/bin/time -v` or hyperfine), the two give npu-review's ratio to the floor (bench/engine.py --floor).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import subprocess
import sys
import threading

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML = (".yml", ".yaml")


def floor(repo: str, rev: str = "HEAD") -> dict[str, int]:
    listing = subprocess.run(
        ["git", "-C", repo, "ls-tree", "-r", "-z", "--format=%(objecttype) %(objectname) %(path)", rev],
        capture_output=True,
        check=True,
    ).stdout
    blobs: list[tuple[str, str]] = []
    for entry in listing.split(b"\0"):
        kind, _, rest = entry.partition(b" ")
        if kind != b"blob":
            continue
        sha, _, path = rest.partition(b" ")
        blobs.append((sha.decode(), path.decode("utf-8", "replace")))
    counts = {"blobs": 0, "bytes": 0, "yaml": 0, "python": 0}
    proc = subprocess.Popen(["git", "-C", repo, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    # Fed from a thread: with more than a pipe's worth of names (~1,600 at 64 KiB), writing them all before reading
    # leaves git blocked on its full stdout and this process on git's full stdin.
    names = "".join(f"{sha}\n" for sha, _ in blobs).encode()
    stdin = proc.stdin

    def feed() -> None:
        stdin.write(names)
        stdin.close()

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    for _sha, path in blobs:
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)  # the newline after the contents
        counts["blobs"] += 1
        counts["bytes"] += size
        if b"\0" in data[:8000]:
            continue  # binary
        if path.endswith(_YAML):
            with contextlib.suppress(yaml.YAMLError):
                yaml.compose(data, Loader=_LOADER)
            counts["yaml"] += 1
        elif path.endswith(".py"):
            with contextlib.suppress(SyntaxError, ValueError):
                ast.parse(data)
            counts["python"] += 1
    feeder.join()
    proc.wait()
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo")
    ap.add_argument("--rev", default="HEAD")
    args = ap.parse_args(argv)
    counts = floor(args.repo, args.rev)
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
