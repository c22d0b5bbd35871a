"""NPU220: a job or script pushes an image reference that nothing before it built or tagged, or tags a build with
a variable's name written without its `$`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.analysis.builds import Sequence, sequences_of
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW, DOCS, SHELL, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.values import WILD, wild_regex
from npu_review.checks.parsers.markdown import flavor_of
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.dockercli import DockerOp

_MAKES = ("build", "tag", "pull", "commit", "import", "load", "manifest")
_NAME = lazyre.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ImagePushedNotBuilt(Rule):
    """A job or script pushes an image reference that no earlier command in it made, or tags an image with a
    word that is a variable's name written without its `$`.

    Why: `docker push R` pushes a local image named R; when the build before it tagged another name (a tag
    renamed on one line and not the other, a registry prefix left out) the push fails with "An image does not
    exist locally with the tag", after the whole image was built. A variable written without `$` (`-t TAGS`
    for `-t "$TAGS"`) is taken literally: `TAGS` is not a valid repository name (they are lower case), so the
    build or the `imagetools create` fails. vllm-ascend's multi-arch merge step created its manifest with
    `-t TAGS` instead of the computed tags.

    Each job leg (matrix values put in), shell script and install doc is read in order: a push must follow a
    `docker build -t`/`buildx build -t`, `docker tag`, `docker pull`, `commit`/`import` that made its reference.

    Bad:
        docker build -t quay.io/ascend/app:a2 -f Dockerfile.a2 .
        docker push quay.io/ascend/app:latest-a2

    Good:
        docker build -t quay.io/ascend/app:a2 -f Dockerfile.a2 .
        docker tag quay.io/ascend/app:a2 quay.io/ascend/app:latest-a2
        docker push quay.io/ascend/app:latest-a2

    Fix: push the reference the build made (or `docker tag` it first); write variables with `$`.

    Not reported: a push whose reference is not known statically, or that follows a command which may make
    images nobody can see from here (`make`, another script, `docker load`, `docker compose`, an action other than
    checkout/login/setup/metadata/cache/artifacts); pushes in another job than the build (each job is a fresh
    runner, but a self-hosted one may hold the image: unknown); the sources of `imagetools create` and `manifest
    create`, which are read from the registry (pushed by other jobs, often by digest).
    """

    id = "NPU220"
    name = "image-pushed-not-built"
    severity = Severity.ERROR
    title = "An image is pushed that the job did not build or tag"
    kinds = frozenset({WORKFLOW, ASCEND_WORKFLOW, SHELL, DOCS})
    needles = ("docker push", "imagetools", "manifest", "docker build", "buildx build", "docker tag")

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        sequences = sequences_of(ctx, src)
        # What any job of the file makes: a push in one job of an image another job built is not judged (a
        # self-hosted runner keeps its images between jobs).
        anywhere = [v.text for seq in sequences for op in seq.ops if op.kind in _MAKES for v in op.targets]
        hits: dict[int, list[Hit]] = {}
        for seq in sequences:
            for hit in self._sequence(seq, anywhere):
                if ctx.is_added_line(hit.path, hit.line):
                    hits.setdefault(hit.line, []).append(hit)
        for _line, found in sorted(hits.items()):
            # One finding per line: the matrix legs of one command are one cause.
            first = found[0]
            legs = len({h.message for h in found})
            more = f" (the same in {legs - 1} more matrix leg(s))" if legs > 1 else ""
            yield Hit(first.path, first.line, first.message + more, suggestion=first.suggestion)

    def _sequence(self, seq: Sequence, anywhere: list[str]) -> Iterator[Hit]:
        made: list[str] = []  # references made so far (WILD where unknown)
        blind = False  # a command before that may have made anything
        where = f" in {seq.label}" if seq.label else ""
        for op in seq.ops:
            yield from self._literal_tags(seq, op)
            if op.kind == "opaque" or op.kind == "load":
                blind = True
                continue
            if op.kind == "push":
                if not blind:
                    yield from self._push(seq, op, made, where, anywhere)
                continue
            if op.kind in _MAKES:
                made.extend(v.text for v in op.targets)

    def _push(self, seq: Sequence, op: DockerOp, made: list[str], where: str, anywhere: list[str]) -> Iterator[Hit]:
        for v in op.sources:
            ref = v.text.strip()
            if not ref or WILD in ref or not v.known:
                continue
            if _made(ref, made) or _made(ref, anywhere):
                continue
            built = [m for m in made if WILD not in m]
            hint = f" Made before it: {', '.join(f'`{m}`' for m in built[:3])}." if built else ""
            yield Hit(
                seq.path,
                op.line,
                f"`docker push {ref}`{where} pushes a reference that no earlier build, tag or pull made, so the push "
                f"fails (no such local image).{hint} Push the reference the build tagged, or `docker tag` it first.",
            )

    def _literal_tags(self, seq: Sequence, op: DockerOp) -> Iterator[Hit]:
        if op.kind == "build" and "operands" in op.extra:
            return  # a template, not a command: `docker build -t Image name_OS architecture: Image tag .`
        names = {n for n in op.extra.get("var_tags", "").split(",") if n}
        for raw, line in op.tag_words:
            word = raw.strip("\"'")
            repo = word.rsplit(":", 1)[0] if ":" in word.rsplit("/", 1)[-1] else word
            if "$" in word or not repo or repo == repo.lower() or any(c in word for c in "[]<>{}"):
                continue  # a variable, lower case, or a placeholder (`[OPTIONS]`, `<IMAGE>`)
            if flavor_of(seq.path) is not None and all(
                _PLACEHOLDER_PART.fullmatch(part) for part in repo.split("/") if part != part.lower()
            ):
                # A guide's fill-in (`YOUR_REGISTRY/app:VERSION`, as `YOUR_RUNTIME_IMAGE` beside it): the reader
                # writes their own registry there (502022240018/MomentSeek, sweep-r23, judged false)
                continue
            if word in names or (_NAME.fullmatch(word) and word.isupper()):
                msg = (
                    f"`-t {word}` tags the image with the literal word `{word}`: the variable `{word}` is written "
                    f"without its `$`, and `{word}` is no valid repository name (they are lower case), so this "
                    f'fails. Write `"${word}"` (for a list of tags, one `-t` per tag).'
                )
            else:
                msg = (
                    f"`-t {word}`: a repository name must be lower case, so docker refuses this reference "
                    '("invalid reference format"). Write the repository in lower case.'
                )
            yield Hit(seq.path, line, msg)


# A part of a reference written as a fill-in: capitals, digits and underscores only (`YOUR_REGISTRY`, `NAMESPACE`).
_PLACEHOLDER_PART = lazyre.compile(r"[A-Z][A-Z0-9_]*")


def _made(ref: str, made: list[str]) -> bool:
    return any(m == ref or _same(m, ref) or (WILD in m and wild_regex(m).fullmatch(ref)) for m in made)


def _same(a: str, b: str) -> bool:
    """`app` and `app:latest`, `docker.io/library/app:x` and `app:x`: one reference."""

    def norm(r: str) -> str:
        name, _, tag = r.rpartition(":") if ":" in r.rsplit("/", 1)[-1] else (r, "", "latest")
        for prefix in ("docker.io/library/", "docker.io/", "index.docker.io/library/"):
            if name.startswith(prefix):
                name = name[len(prefix) :]
        return f"{name}:{tag or 'latest'}"

    return norm(a) == norm(b)
