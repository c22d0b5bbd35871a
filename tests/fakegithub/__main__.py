"""Run the fake GitHub as its own process: `python -m tests.fakegithub --port 0 --app-id 1 --public-key k.pem`."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path

from .control import apply_seed
from .server import FakeGitHub


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.fakegithub", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 = a free port (printed on stdout)")
    parser.add_argument("--app-id", type=int, required=True)
    parser.add_argument("--public-key", type=Path, required=True, help="PEM file of the App's public key")
    parser.add_argument("--app-slug", default="npu-review")
    parser.add_argument("--token-lifetime", type=float, default=3600.0)
    parser.add_argument("--state-file", type=Path, help="JSON seed (see tests/fakegithub/control.py apply_seed)")
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    fake = FakeGitHub(
        args.app_id,
        args.public_key.read_text(encoding="utf-8"),
        app_slug=args.app_slug,
        token_lifetime=args.token_lifetime,
    )
    made = apply_seed(fake, json.loads(args.state_file.read_text(encoding="utf-8"))) if args.state_file else {}
    url = await fake.start(args.host, args.port)
    # One line the parent reads to learn where the fake listens and what the seed made.
    sys.stdout.write(json.dumps({"url": url, "seeded": made}) + "\n")
    sys.stdout.flush()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await fake.close()


def main(argv: list[str] | None = None) -> None:
    asyncio.run(serve(parse_args(argv)))


if __name__ == "__main__":
    main()
