"""The App names the reviewed repository's owner in NPU212's fork guard (from the webhook's repository), also for
a pull request from a fork, when the project's own guards name no owner."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.app_harness import AppProcess, settle, start_app, wait_completed
from tests.conftest import FAKE_APP_ID, FAKE_WEBHOOK_SECRET
from tests.fakegithub import FakeGitHub, KeyPair

# The project keeps its Ascend jobs out of forks without naming its owner.
UNIT = (
    "name: unit\n"
    "on: [push]\n"
    "jobs:\n"
    "  unit_npu:\n"
    "    if: ${{ !github.event.repository.fork }}\n"
    "    runs-on: linux-aarch64-a2b3-8\n"
    "    steps:\n"
    "      - run: pytest tests/unit\n"
)
E2E = "name: e2e\non:\n  push:\n    branches: [main]\njobs:\n  e2e_npu:\n    runs-on: linux-aarch64-a2b3-8\n"
BASE = {".github/workflows/unit.yml": UNIT, "README.md": "# serve\n"}
HEAD = {**BASE, ".github/workflows/e2e.yml": E2E}


@pytest.fixture
async def app(fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path) -> AsyncIterator[AppProcess]:
    proc = await start_app(fake_github, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path)
    yield proc
    await proc.session.close()
    await proc.stop()


async def test_the_guard_names_the_base_repositorys_owner_for_a_fork_pr(
    fake_github: FakeGitHub, app: AppProcess
) -> None:
    fake = fake_github
    repo = fake.add_repo("octo-org/serve", files=BASE)
    fork = fake.add_repo("contributor/serve", files=BASE, installed=False)
    pull = fake.add_pull(repo, head_files=HEAD, head_repo=fork, title="[ci] add e2e on NPU")
    status, _ = await app.post(
        fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
    )
    assert status == 202
    run = await wait_completed(fake, pull)
    await settle(app)
    assert [(a["path"], a["start_line"], a["annotation_level"], a["title"]) for a in run.annotations] == [
        (".github/workflows/e2e.yml", 7, "failure", "NPU212 missing-fork-guard")
    ]
    message = run.annotations[0]["message"]
    assert "Add `if: github.repository_owner == 'octo-org'`." in message and "contributor" not in message
    (review_call,) = fake.calls("pulls/create-review")
    (comment,) = review_call.body["comments"]
    assert (comment["path"], comment["line"]) == (".github/workflows/e2e.yml", 7)
    assert (
        "```suggestion\n    if: github.repository_owner == 'octo-org'\n    runs-on: linux-aarch64-a2b3-8\n```"
        in (comment["body"])
    )
    assert fake.violations == []
