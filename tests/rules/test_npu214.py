"""NPU214 two-producers-of-one-tag: its fixture cases, and what they do not say."""

from __future__ import annotations

from tests.fixture_support import audit
from tests.rules.support import fixture_tests, got

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU214")


def _producer(name: str, tags: str, images: str = "ghcr.io/org/app", on: str = "push:\n    branches: [main]") -> str:
    return (
        f"name: {name}\non:\n  {on}\njobs:\n  image:\n    runs-on: ubuntu-latest\n    steps:\n"
        f"      - id: meta\n        uses: docker/metadata-action@v5\n        with:\n          images: {images}\n"
        f"          tags: {tags}\n"
        "      - uses: docker/build-push-action@v6\n        with:\n          push: true\n"
        "          tags: ${{ steps.meta.outputs.tags }}\n"
    )


def test_a_mirror_of_the_same_repository_is_the_same_image() -> None:
    files = {
        ".github/workflows/a2.yml": _producer("a2", "type=ref,event=branch"),
        ".github/workflows/a3.yml": _producer("a3", "type=ref,event=branch", images="mirror.example.cn/org/app"),
    }
    assert got(audit(files), "NPU214") == [
        (
            ".github/workflows/a2.yml",
            13,
            "warning",
            "This rule tags `org/app` as `<branch>` like `.github/workflows/a3.yml` job `image`: the variants "
            "overwrite each other's image under one tag. Give each variant its own suffix.",
        ),
        (
            ".github/workflows/a3.yml",
            13,
            "warning",
            "This rule tags `org/app` as `<branch>` like `.github/workflows/a2.yml` job `image`: the variants "
            "overwrite each other's image under one tag. Give each variant its own suffix.",
        ),
    ]


def test_a_flavor_suffix_tells_variants_apart_and_branch_filters_that_never_meet_are_silent() -> None:
    a3 = _producer("a3", "type=ref,event=branch").replace(
        "          tags:", "          flavor: suffix=-a3\n          tags:"
    )
    release = _producer("rel", "type=ref,event=branch", on="push:\n    branches: ['releases/v*']")
    files = {
        ".github/workflows/a2.yml": _producer("a2", "type=ref,event=branch"),
        ".github/workflows/a3.yml": a3,
        ".github/workflows/release.yml": release,
    }
    assert got(audit(files), "NPU214") == []


def test_two_raw_tags_collide_whatever_the_events() -> None:
    files = {
        ".github/workflows/a2.yml": _producer("a2", "type=raw,value=nightly", on="schedule:\n    - cron: '0 1 * * *'"),
        ".github/workflows/310p.yml": _producer("310p", "type=raw,value=nightly", on="workflow_dispatch:"),
    }
    assert [(p, n, s) for p, n, s, _ in got(audit(files), "NPU214")] == [
        (".github/workflows/310p.yml", 12, "warning"),
        (".github/workflows/a2.yml", 13, "warning"),
    ]


def test_the_colliding_rules_of_one_image_are_one_cause() -> None:
    """shaowenchen/xpu-benchmark 5ac62bf9 and e30c03f4 (rs-r30): a GPU and an NPU image workflow, each with four tag
    rules and no suffix per variant, got one comment per rule. One missing suffix: one comment."""
    tags = "|\n            type=ref,event=branch\n            type=sha\n"
    files = {
        ".github/workflows/gpu.yml": _producer("gpu", tags),
        ".github/workflows/npu.yml": _producer("npu", tags),
    }
    found = [f for f in audit(files).findings if f.rule == "NPU214"]
    assert [(f.path, f.line) for f in found] == [
        (".github/workflows/gpu.yml", 14),
        (".github/workflows/gpu.yml", 15),
        (".github/workflows/npu.yml", 14),
        (".github/workflows/npu.yml", 15),
    ]
    assert len({f.cause for f in found}) == 1


def test_a_build_that_pushes_tags_of_its_own_does_not_push_the_metadata_tags() -> None:
    """shaowenchen/xpu-benchmark 5ac62bf9 (rs-r30, judged false twelve times): each job computes metadata tags but
    its build pushes `app:${{ matrix.tags }}-${{ github.sha }}` and takes only the metadata labels. Nothing pushes
    the metadata tags, so nothing collides; a build taking them (the release job) alone collides with nobody."""
    own = _producer("gpu", "type=ref,event=branch").replace(
        "tags: ${{ steps.meta.outputs.tags }}",
        "tags: ghcr.io/org/app:gpu-${{ github.sha }}\n          labels: ${{ steps.meta.outputs.labels }}",
    )
    files = {
        ".github/workflows/gpu.yml": own,
        ".github/workflows/npu.yml": own.replace("gpu", "npu"),
        ".github/workflows/release.yml": _producer("release", "type=ref,event=branch"),
    }
    assert got(audit(files), "NPU214") == []
