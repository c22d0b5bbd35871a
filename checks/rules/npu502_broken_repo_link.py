"""NPU502: a link in the Ascend docs points to a repository file that does not exist at head, or a reference is
left pointing at a file the change deletes or renames."""

from __future__ import annotations

import bisect
import dataclasses
import difflib
import posixpath
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from npu_review.checks import globs, lazyre
from npu_review.checks.analysis.references import (
    GITIGNORES,
    doc_names_ascend,
    git_ignored,
    links_a_copy,
    norm_name,
    own_names,
    start_folders,
    vendored_root,
    word_replaced,
)
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts.schema import Facts, RepoLinks
from npu_review.checks.kinds import DOCS, SHELL, WORKFLOW, host_of_folder, workflow_folder_host
from npu_review.checks.model import ChangeStatus, Related, Severity
from npu_review.checks.parsers.markdown import Document, Link, Target, resolve
from npu_review.checks.rule import Hit, Rule

_MAX_LISTED = 8
# Folders a guide's reader fills (downloads, datasets, outputs; a repository may keep one empty with a `.keep`): a
# missing file in one is the reader's to make, not the repository's to hold.
_READER_FOLDERS = frozenset(
    {"data", "dataset", "datasets", "input", "inputs", "output", "outputs", "out", "result", "results", "log", "logs"}
    | {"ckpt", "ckpts", "checkpoint", "checkpoints", "weights", "cache", "tmp", "build", "download", "downloads"}
)
# The text of a link that switches the page's language (`中文|[English](README.md)`).
_LANGUAGE = lazyre.compile(r"(?i)\s*(?:english|en|英文|中文|简体中文|chinese|zh|zh[-_]cn)\s*")
# Without a profile, the links judged are those to files a repository holds rather than makes: docs, scripts,
# notebooks, patches, images, Dockerfiles. A guide also links what its own steps produce (a log, an exported model,
# a generated config, an output folder), which no tree has.
# A line that says what it links is still to be written: a link to a page to come, on purpose.
_TO_COME = lazyre.compile(
    r"(?i)\b(?:TBD|coming soon|to be (?:added|written|completed|done)|work in progress"
    r"|not yet (?:merged|available|released|published|uploaded|in the repo(?:sitory)?)|pending (?:merge|review))\b"
    r"|待补充|待完善|待编写|敬请期待|待合入|暂未上仓|未上仓|尚未合入|待上传"
)
# A template doc (`operator-readme-template.md`, `templates/API_REPORT.md`): a skill or generator fills it in
# elsewhere (another repository's `ops/<op>/README.md`), where its relative links resolve.
_TEMPLATE = lazyre.compile(r"(?i)(?:^|/)templates?/|(?:^|/|[-_.])template(?:[-_.][^/]*)?\.[a-z]+$")
# A title with a placeholder to fill in (`# {算子名称}算子`, `# {operator_name} on Ascend`): the doc is a template
# whatever its name (hicann/ops-sparse's readme_develop_guide.md, copied to src/<op>/README.md; rs-r31, judged false).
_PLACEHOLDER_TITLE = lazyre.compile(r"^#{1,2}[ \t].*(?<!\$)\{[^{}\s$]{1,40}\}")


def _titled_as_template(src: SourceFile) -> bool:
    """The doc's title (its first heading, in the first lines) holds a placeholder in braces."""
    for line in src.lines[:15]:
        if line.startswith("#"):
            return _PLACEHOLDER_TITLE.match(line) is not None
    return False


# A template section of a doc: the lines between `<template_contributing>` and `</template_contributing>` (an agent's
# prompt giving the text it is to write into another project's CONTRIBUTING.md; yangboxin/ascend-agent, rs-r58,
# judged false), each tag alone on its line.
_TEMPLATE_TAG = lazyre.compile(r"(?im)^[ \t]*<(\w*template\w*)(?:\s[^<>]*)?>[ \t]*$")


def _template_lines(src: SourceFile) -> frozenset[int]:
    """The 1-based lines inside the doc's template sections (a tag whose name says template, to its closing tag)."""
    text = src.text
    if "template" not in text.lower():
        return frozenset()
    out: set[int] = set()
    for m in _TEMPLATE_TAG.finditer(text):
        close = re.search(rf"(?im)^[ \t]*</{re.escape(m.group(1))}>[ \t]*$", text[m.end() :])
        if close is None:
            continue
        first = text.count("\n", 0, m.start()) + 1
        last = first + text.count("\n", m.start(), m.end() + close.start())
        out.update(range(first, last + 1))
    return frozenset(out)


_SOURCE_NAME = lazyre.compile(r"(?i)\.(?:md|rst|sh|bash|py|ipynb|patch|png|jpe?g|gif|svg)$|(?:^|/)Dockerfile[^/]*$")
# Characters that may sit in a repository path (a mention is only a reference when bounded by others).
_PATH_CHARS = lazyre.compile(r"[A-Za-z0-9_./-]")
# A line of a directory sketch up to the name it lists (`|- README.md`, `├── LICENSE`, `` `-- setup.py ``): a
# picture of a tree at some time, which readers do not follow as a path (Ascend/ascend-deployer's README listed
# the README.md a change deleted, DrivingSDK's the LICENSE one moved).
_SKETCH = lazyre.compile(r"(?:^|\s)(?:[|│├└`+][-─]+|[├└]|│)\s*$")
# A row of a directory sketch (`├─ compose/   compose.yml / compose.ascend.yml`, `|   `-- x.sh`): what it names is
# in the sketch's folders, not at the root (502022240018/MomentSeek's ARCHITECTURE.md, rs-r53, judged false).
_SKETCH_ROW = lazyre.compile(r"\s*(?:[│|][ \t]+)*(?:[├└`+][-─]+|[├└])[ \t]")


@dataclass(frozen=True)
class _Ref:
    path: str
    line: int
    link: Link | None  # None for a plain mention of the path (code block, workflow)
    start: int
    end: int


class BrokenRepoLink(Rule):
    """A link in the Ascend docs points to a file of this repository that does not exist.

    Why: the Ascend tutorial and `docker/ascend/supported_tags.md` point readers at Dockerfiles, scripts and
    other docs. Files move often (the tutorial was reorganised three times in 2026, Dockerfiles are renamed
    with every CANN bump, #7338), and a link left behind sends a user to a 404 or to the wrong image recipe.

    Checked: relative links (`[x](../../scripts/install_vllm_mcore_npu.sh)`, `` `x <dockerfile_build_guidance.rst>`_ ``,
    toctree entries, `:doc:`, `.. image::`) and absolute links to this repository on `main`
    (`https://github.com/verl-project/verl/blob/main/<path>`, also the old `volcengine/verl` spelling) in
    `docs/ascend_tutorial/**` and `docker/ascend/*.md` (the docs verl's profile names; vllm-ascend's names
    none), and with no project profile in every doc that speaks of Ascend (it names Ascend, the NPU, CANN or
    HCCL, or the repository is Ascend's as a whole), there its links to the kinds of file a repository holds
    (docs, scripts, notebooks, patches, images, Dockerfiles: not the logs, models and outputs a guide's steps
    make): the path must exist in the head tree (file or directory). Without a profile, a broken link an audit
    finds is a notice (the project lives with it); the change that writes one gets the warning. Not checked:
    anchors (`#section`), other refs (`blob/release/v0.7.0/...`, unknown here),
    other repositories (`verl-project/verl-recipe`, vLLM-Ascend), external sites, links inside code blocks,
    absolute paths into a machine's file system (`/home/workspace/hccl/README.md`, `/usr/local/Ascend/...`).

    Also, when the change deletes or renames a file, any doc (all of `docs/`, READMEs) or workflow that still
    names it: links, `paths:` filters, `-f docker/ascend/...` arguments. Such a reference is reported on its own
    line when the change adds that line, otherwise on a line the change adds for the renamed file (or that
    names the new path), listing the stale places; all the lines a change leaves naming the files it moves or
    deletes are one cause, one comment. A doc line whose lines just above link the file's copy at a
    ref (`# script: https://gitcode.com/Ascend/X/blob/26.0.0/examples/a.sh` over `bash examples/a.sh`) points
    the reader at a release on purpose: not reported. A path inside a link is judged as the link resolves, from
    the doc's own folder (a guide moved into `legacy/` with the folders its `./docs/x.md` links point into still
    links them), and a name in a directory sketch (`|- README.md`, `├── LICENSE`) is a picture of the tree, not
    a reference. A bare name that a move keeps (`Megatron-LM-250328` moved into `backends/megatron/`) is the
    thing's name in a doc's prose ("the patch fits `Megatron-LM-250328`") and a stale path in a command
    (`cd Megatron-LM-250328`, in a code block), unless the move put it in the doc's own folder (a README's
    `pip install -r requirements.txt` beside the file), or the command runs after the doc's steps `cd` into a
    folder that is not a clone of this repository (`cd pytorch`, then `python3 setup.py bdist_wheel`: that
    folder's file). A renamed file's own text naming itself by its old name (a licence's "a file named LICENSE",
    now LICENSE.md) is the document speaking of itself, and a licence's text (`LICENSE*`, `COPYING*`, `NOTICE*`)
    is legal boilerplate: only its links are judged. A bare name without an extension (`License`, renamed
    `LICENSE`) in a doc's prose, outside code and links, is a word ("## License"), unless written in capitals
    ("the terms are in LICENSE"). The text of a link to a file that is there (an image's alt
    text, `![old_name.png](new_name_en.png)`) is a label, not a reference. A deleted file and an added one whose
    names carry different language markers (`README_en.md`, `README_zh.md`) are a translation, not a rename; the
    one added file of a deleted file's name in another folder, still much its text, is the file moved and edited
    (`bolt.cmake` -> `common/cmakes/bolt.cmake`). The
    lines of a changelog, release notes, a dated doc (`plans/2026-06-26-log-center.md`) or an `archive/` folder
    record what was: only their links are judged, not the names they mention.
    A doc naming the old path from a folder above it, where the file is (a tree split into self-contained
    copies, `910/` and `910b/`, each readme naming its own `scripts/env/Dockerfile`), names that file: not stale.
    A name right after words that say the text came from there ("content migrated from `x.md`", `迁移自`) records
    where a moved or copied text came from: not a reference.
    A deleted bare name (`cce`, a submodule) is named as a path only where it is used as one (`cce/x.md`, `./cce`,
    `cd cce`), not as a word or a value (`kubernetes.io/ingress.class: cce`). A rename whose new name lost the `.`
    before its extension (`x.md` -> `xmd`) is taken for the name it meant (`x.md`), which the advice names.
    A line the change writes that names (not links) a file the same change deletes, and says it is deleted,
    removed, dropped, ignored, deprecated or replaced, describes the deletion. A
    Docusaurus site serves its `static/` folder at its root: `/img/x.png` in its docs is `<site>/static/img/x.png`.
    A docsify site (an `index.html` that loads docsify, `relativePath` left false) reads its docs' links from the
    site's root: `ascend/x.md` in `docs/ascend/README.md` is `docs/ascend/x.md` there.
    A decorative image the facts name (the admonition icons of Huawei's documentation converter,
    `public_sys-resources/icon-note.gif`) is a notice when missing: the page reads the same without it.
    A doc of a vendored project (`external/<project>/`, `third_party/<project>/`, or a project unpacked from its
    forge's archive, `models-master/`) that links out of that project's folder points into the tree the project
    comes from: not judged; a broken link within that project is the other project's to fix: a notice.
    A link whose line says the page is still to be written or merged (`TBD`, `coming soon`, `not yet merged`,
    `待补充`, `待合入`) links a page to come on purpose: not reported.
    A link to an agent's instruction file (`CLAUDE.md`, `AGENTS.md`, a file under `.claude/`) that the repository
    keeps elsewhere (`setups/x/CLAUDE.md`) is written for where a setup step installs the doc: not reported.
    A link into a folder a Sphinx `conf.py` above the doc copies in at build time (`shutil.copytree` of
    `../../model_cards`) works on the built site: not reported.
    A template (`*-template.md`, a doc under `templates/`, a doc titled with a placeholder, `# {算子名称}算子`, a
    section between tags that say so, `<template_contributing>` … `</template_contributing>` in an agent's prompt)
    is filled in elsewhere, where its links resolve: its links are not judged.
    A link to a file the repository's `.gitignore` files ignore (a folder a script unpacks, a local notes
    folder) names a file made on the reader's machine, never committed: not reported.
    A coding agent's instruction file (a skill's `SKILL.md` under `.claude/`, `.codex/`, `.cursor/`, an
    `AGENTS.md`) is read by an agent at the repository root: a link there that resolves from the root works.

    Bad (the Dockerfile was renamed to Dockerfile.ascend_9.1.0_a2; the script link is one `../` short):
        # docker/ascend/README.md
        [Dockerfile.ascend_9.1.0_a2](https://github.com/verl-project/verl/blob/main/docker/ascend/Dockerfile.ascend_9.0.0_a2)
        # docs/ascend_tutorial/get_start/install_guidance.rst
        `安装脚本 <../../scripts/install_vllm_mcore_npu.sh>`_

    Good:
        # docker/ascend/README.md
        [Dockerfile.ascend_9.1.0_a2](https://github.com/verl-project/verl/blob/main/docker/ascend/Dockerfile.ascend_9.1.0_a2)
        [8.3.rc1 (v0.7.0)](https://github.com/verl-project/verl/blob/release/v0.7.0/docker/ascend/Dockerfile.ascend_8.3.rc1_a2)
        # docs/ascend_tutorial/get_start/install_guidance.rst
        `安装脚本 <../../../scripts/install_vllm_mcore_npu.sh>`_

    A broken relative link that resolves from the folder above the doc's (a `../` missing), two above, or the
    repository root says so, and the links of a change written from such another folder are one cause, one
    comment, wherever they point. The broken links of one doc are one cause, one comment naming them all (a new
    index linking docs never committed, a table pasted from another project); a twin doc whose first broken link
    is written alike (a translation beside it) joins it.

    A "did you mean" names a file of the same folder with a close name in the same language, where no word
    of the name is replaced by another (`support_dcu_model_list.md` is not `support_xpu_model_list.md`
    misspelled, nor `guide_en.md` the Chinese `guide.md`): a typo, a dropped letter, a version bump, another
    extension, or a language marker the name gained (`guide.md` -> `guide_zh.md`); the same name in another case
    (`runstopped.PNG` for `runstopped.png`) first.

    When the only close file differs by an invisible character in its own name, the advice is to rename the
    file (NPU501 reports it), never to copy the invisible character into the link.

    Fix: point the link at the file's current path, or at a release tag (`blob/release/vX.Y.Z/...`) for a file
    that only exists in an old release. When a file is renamed in this change, the suggestion rewrites the link
    (except in a workflow the change adds naming the workflow it was copied from: that is most likely its own
    trigger, and the message names both choices).
    """

    id = "NPU502"
    name = "broken-repo-link"
    severity = Severity.WARNING
    title = "Doc link to a repository file that does not exist (or that this change deletes or renames)"
    kinds = frozenset({DOCS})
    context_kinds = frozenset({DOCS, WORKFLOW})
    reads_moved_files = True  # a deleted file and a similar added one are a rename (_renames)

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        # A link into what the repository ignores names no missing file (git_ignored); a docs site's `conf.py` may
        # copy a folder in at build time (_copied_by_docs_build).
        return (
            *GITIGNORES,
            "docs/**/conf.py",
            "*/docs/**/conf.py",
            "index.html",
            "docs/index.html",
            "*/index.html",
            # A VitePress site's config may move its source folder (`srcDir`): _vitepress_resolves.
            ".vitepress/config.*",
            "*/.vitepress/config.*",
        )

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        kb = ctx.facts.repo_links
        lived_with = _links_checked(ctx, src, kb)
        if lived_with is None or _TEMPLATE.search(src.path) or _titled_as_template(src):
            return  # a template's links are written for where it is filled in (the doc it becomes), not here
        doc = ctx.document(src)
        if doc is None:
            return
        moved = _renames(ctx, with_deleted=True)
        renamed = {k: v for k, v in moved.items() if v is not None}
        seen: set[tuple[int, str]] = set()
        # One cause, one comment: the broken links of one doc are one cause, named by the first the change writes
        # (a new index linking ten docs never committed, a table pasted from another project), so twin docs
        # carrying the same links join it too.
        found: list[Hit] = []
        template: frozenset[int] | None = None
        for link in doc.links:
            if link.line in doc.code:
                continue
            if template is None:
                template = _template_lines(src)
            if link.line in template:
                continue  # a template's text, written where it is filled in (another project's doc)
            if link.target.startswith(("(", "<")):
                continue  # `[x]((https://…))`: a URL written in a second pair of brackets, not a path
            target = _resolve(ctx, src.path, link, kb)
            if target is None or target.kind != "repo" or _exists(ctx, target, link, kb, src.path):
                continue
            if _machine_path(ctx, link.target):
                continue  # `/home/workspace/hccl/...`: a file on the machine the doc is read on, not in the repository
            if _leaves_vendored(src.path, target.path):
                continue  # a vendored project's doc linking into that project's own tree, not this repository's
            if _installed_agent_file(ctx, target.path):
                continue  # an agent's instruction file, linked from where a setup step installs the doc
            if git_ignored(ctx, target.path):
                continue  # made on the reader's machine (the repository ignores it): never committed
            if _copied_by_docs_build(ctx, src.path, target.path):
                continue  # the site's build copies that folder in (Sphinx `conf.py`): the link works where it is read
            if _docsify_resolves(ctx, src.path, link.target):
                continue  # a docsify site resolves its links from the site's root: the link works where it is read
            if _vitepress_resolves(ctx, src.path, link.target):
                continue  # a VitePress site's route, served from a locale folder (the link works on the site)
            if _TO_COME.search(src.line(link.line)):
                continue  # the line says the page is still to be written (`（待补充）`, `TBD`): a link to come
            if lived_with and _left_alone(ctx, src, link, target.path):
                continue
            if (link.line, target.path) in seen:
                continue  # `[url](url)`: the text and the target are the same link
            seen.add((link.line, target.path))
            written_from = None if target.ref else _written_from(ctx, src.path, link)
            hit = _broken(ctx, src, link, target, renamed.get(target.path), written_from)
            if any(re.search(pattern, target.path) for pattern in kb.decorative_images):
                hit = dataclasses.replace(hit, severity=Severity.NOTICE)  # an admonition's icon: no content lost
            if (root := vendored_root(src.path)) is not None and target.path not in moved:
                # Another project's doc, copied in (a synced skill set, an unpacked archive): its own broken link is
                # that project's to fix (rs-r82, rs-r81: judged noise three times).
                hit = dataclasses.replace(
                    hit,
                    severity=Severity.NOTICE,
                    message=f"{hit.message} This doc is a copy of another project's (`{root}/`): fix it there.",
                )
            if target.path in moved:
                # A link to a file the change moves or deletes: the same cause as the other lines it leaves
                # naming such files (`_stale`), one comment for the change.
                hit = dataclasses.replace(hit, cause=_STALE)
                yield hit.unless_introduced(ctx) if lived_with else hit
                continue
            # Links written into the same folder that does not hold them (the same wrong link copied into twin
            # docs, a guide's links written from the wrong base folder) are one mistake wherever they point.
            folder = posixpath.normpath(posixpath.dirname(link.target.split("#", 1)[0]) or ".")  # `./docs`: `docs`
            cause = f"links written from {written_from[0]}" if written_from else f"links into {folder}"
            hit = dataclasses.replace(hit, cause=cause)
            found.append(hit.unless_introduced(ctx) if lived_with else hit)
        lead = next((h for h in found if h.severity is not Severity.NOTICE), found[0] if found else None)
        for hit in found:
            yield dataclasses.replace(hit, cause=lead.cause) if lead is not None else hit

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        if ctx.audit:
            return
        gone = {old: new for old, new in _renames(ctx, with_deleted=True).items() if not ctx.changeset.head.exists(old)}
        if not gone:
            return
        kb = ctx.facts.repo_links
        refs = _references(ctx, gone, kb)
        for old, places in refs.items():
            yield from _stale(ctx, old, gone[old], places, kb)


# -- links in the checked docs --------------------------------------------------------------------------------------


def _resolve(ctx: Context, doc_path: str, link: Link, kb: RepoLinks) -> Target | None:
    repos, refs = list(kb.repos), list(kb.head_refs)
    target = link.target
    if link.syntax in ("doc", "toctree") and target.startswith("/"):
        # Sphinx: an absolute document name starts at the source directory (the one with conf.py).
        root = _site_folder(ctx, doc_path, ("conf.py",))
        if root is None:
            return None
        target = posixpath.join("/", root, target.lstrip("/"))
    # Invisible format characters are NPU501's finding; judge the link as it reads. (None is ASCII.)
    if not target.isascii():
        target = "".join(ch for ch in target if unicodedata.category(ch) != "Cf")
    t = resolve(doc_path, target, repos, refs)
    if t.kind == "repo" and link.syntax in ("doc", "toctree"):
        return Target("repo", t.path, t.ref, exact=False)
    return t


def _site_folder(ctx: Context, doc_path: str, configs: tuple[str, ...]) -> str | None:
    """The nearest folder up from the doc's that holds one of `configs` (a Sphinx source directory's `conf.py`, a
    Docusaurus site's `docusaurus.config.*`), else None."""
    d = posixpath.dirname(doc_path)
    while True:
        if any(ctx.changeset.head.exists(posixpath.join(d, c) if d else c) for c in configs):
            return d
        if not d:
            return None
        d = posixpath.dirname(d)


def _exists(ctx: Context, target: Target, link: Link, kb: RepoLinks, doc_path: str) -> bool:
    if ctx.exists_at_head(target.path):
        return True
    if not target.exact:
        return any(ctx.changeset.head.exists(target.path + s) for s in kb.doc_suffixes)
    if _AGENT_FILE.search(doc_path) and not link.target.startswith(("/", "../")):
        # A coding agent's instruction file (a skill's SKILL.md, AGENTS.md) is read by an agent working at the
        # repository root, which takes its paths from there (RLinf's `.claude/skills/x/SKILL.md` links
        # `.claude/skills/x/driver.py`).
        root = posixpath.normpath(link.target.split("#", 1)[0])
        if root and not root.startswith("..") and ctx.exists_at_head(root):
            return True
    if link.target.startswith("/"):
        # A site generator serves its static folder at the site's root: Docusaurus' `/img/x.png` is
        # `<site>/static/img/x.png` (vllm-project/semantic-router's blog).
        site = _site_folder(ctx, doc_path, _SITE_CONFIGS)
        if site is not None and ctx.exists_at_head(posixpath.join(site, "static", target.path)):
            return True
    return False


# The top folders of a Linux file system (the Filesystem Hierarchy Standard's): a link that starts at one of them
# (`/home/workspace/hccl/README.md`, `/usr/local/Ascend/...`) names a file on a machine, not in the repository.
_MACHINE_ROOTS = frozenset({"home", "root", "usr", "opt", "tmp", "mnt", "var", "etc", "media", "srv"})


def _machine_path(ctx: Context, written: str) -> bool:
    """The link is an absolute path into a machine's file system: it starts at one of its top folders, which the
    repository does not have at its root (an agent's instruction file linking the checkouts of the machine it
    works on; sugarlxn/hccl_reduce_scatter's AGENTS.md, rs-r80, judged false)."""
    if not written.startswith("/") or written.startswith("//"):
        return False
    top = written.lstrip("/").split("/", 1)[0]
    return top in _MACHINE_ROOTS and not ctx.exists_at_head(top)


def _leaves_vendored(doc_path: str, target: str) -> bool:
    """The doc sits in a vendored project (`external/<project>/...`: references.vendored_root) and the link leaves
    that project's folder (`../../../../models/x.py` from `external/cannbot/ops/...`): it points into the tree the
    project comes from."""
    root = vendored_root(doc_path)
    return root is not None and not target.startswith(root + "/")


# The instruction files coding agents read at a project's root: a command or skill file that a setup step
# installs (`setups/x/commands/run.md` into `.claude/commands/`) links them from where it is installed.
_AGENT_ROOT_FILES = frozenset({"AGENTS.md", "CLAUDE.md", "GEMINI.md"})


def _installed_agent_file(ctx: Context, target: str) -> bool:
    """The link names an agent's instruction file (or a file in an agent's folder, `.claude/agents/x.md`) that is
    not there, and the repository keeps one of that name elsewhere, for a setup step to put in place
    (AscendOpGenAgent's `setups/autoresearch/CLAUDE.md`, linked as `../../CLAUDE.md` by a command file installed
    under `.claude/commands/`; rs-r82, judged false)."""
    name = posixpath.basename(target)
    if name in _AGENT_ROOT_FILES:
        return any(p != target for p in ctx.paths_named(name))
    # A file of an agent's folder: kept outside every agent folder (`setups/x/agents/a.md`), for the setup to copy.
    # One kept in an agent folder is where the link should reach (RLinf's skill linked from docs/: broken).
    return bool(_AGENT_FILE.search(target)) and any(not _AGENT_FILE.search(p) for p in ctx.paths_named(name))


# The instruction files of coding agents: their own folders (Claude Code's, Codex's, Cursor's, Gemini's, ...) and
# the files the agents read at the root (AGENTS.md, CLAUDE.md, GEMINI.md).
_AGENT_FILE = lazyre.compile(
    r"(?:^|/)\.(?:claude|codex|cursor|agents?|gemini|windsurf|kiro|roo|clinerules|continue)/"
    r"|^\.github/(?:instructions|prompts|agents)/|(?:^|/)(?:AGENTS|CLAUDE|GEMINI)\.md\Z"
)
_SITE_CONFIGS = ("docusaurus.config.js", "docusaurus.config.ts", "docusaurus.config.mjs")


def _renames(ctx: Context, with_deleted: bool = False) -> dict[str, str | None]:
    """Old path -> new path of the files the change renames; with `with_deleted`, deleted files too (-> None).

    A diff without rename detection shows a rename as a deletion plus an addition: an added file of the same
    directory whose text is mostly the deleted one's (after the licence header both open with) is taken as its
    new name.
    """

    def load() -> dict[str, str | None]:
        changes = ctx.changeset.changes.values()
        out: dict[str, str | None] = {
            c.old_path: c.path for c in changes if c.status == ChangeStatus.RENAMED and c.old_path is not None
        }
        added = [c.path for c in changes if c.status == ChangeStatus.ADDED]
        deleted = [c.path for c in changes if c.status == ChangeStatus.DELETED and not ctx.exists_at_head(c.path)]
        # (a deleted path still there as a folder: a submodule replaced by the project's files, rs-r48, false)
        for path in deleted:
            out[path] = None
        if len(deleted) * len(added) > _PAIRING_LIMIT:
            # As git does past its rename limit ("exhaustive rename detection was skipped due to too many files"):
            # the deletions stay deletions. Pairing each with the added files by their texts costs their product
            # (PTO-ISA/pto-spec a7f9aab, 1,143 deleted and 1,151 added pages: 430 s and 1.27 GB; rs-r74).
            return out
        paired: set[str] = set()
        added_in: dict[str, list[str]] = {}
        for a in added:
            added_in.setdefault(posixpath.dirname(a), []).append(a)
        deleted_names = Counter(posixpath.basename(path) for path in deleted)
        for path in deleted:
            name = posixpath.basename(path)
            candidates = [
                a
                for a in added_in.get(posixpath.dirname(path), ())
                if a not in paired
                and difflib.SequenceMatcher(None, posixpath.basename(a), name).ratio() >= 0.6
                and not _other_language(path, a)  # `README_en.md` deleted, `README_zh.md` added: a translation
            ]
            new = _paired(ctx, path, candidates)
            if new is None:
                # Moved into another folder and edited on the way (huawei-noah/bolt's `bolt.cmake` ->
                # `common/cmakes/bolt.cmake`, 42% alike; rs-r67, judged false as a deletion): the one added file of
                # the same name, when no other deleted file has it, and what it holds is still much the old text.
                same = [a for a in added if posixpath.basename(a) == name and a not in paired]
                if len(same) == 1 and deleted_names[name] == 1:
                    new = _paired(ctx, path, same, least=0.3)
            if new is not None:
                out[path] = new
                paired.add(new)
        return out

    found = ctx.memo(("npu502-renames", "", ""), load)
    return found if with_deleted else {k: v for k, v in found.items() if v is not None}


# Past this many (deleted, added) pairs a change's deletions are not paired with its additions by their texts.
_PAIRING_LIMIT = 200 * 200


def _paired(ctx: Context, old: str, candidates: list[str], least: float = 0.5) -> str | None:
    base = ctx.source(old, "base")
    if base is None or not candidates:
        return None
    best, score = None, 0.0
    # (the licence header every file of a project opens with is no sign of one file moved: compared without it)
    body = _body(base.lines)
    for path in candidates:
        new = ctx.source(path)
        if new is None:
            continue
        matcher = difflib.SequenceMatcher(None, body, _body(new.lines), autojunk=False)
        # The cheap upper bounds first: a pair that cannot beat the best so far, or reach `least`, is not compared.
        if any(bound < least or bound <= score for bound in (matcher.real_quick_ratio(), matcher.quick_ratio())):
            continue
        ratio = matcher.ratio()
        if ratio > score:
            best, score = path, ratio
    return best if score >= least else None


_HEADER_LINE = lazyre.compile(r"\s*(?:/\*|\*|//|#!|# |<!--)")


def _body(lines: list[str]) -> list[str]:
    """A file's lines after the comment block it opens with (a licence header), blank lines left out."""
    i = 0
    while i < len(lines) and (not lines[i].strip() or _HEADER_LINE.match(lines[i])):
        i += 1
    return [line for line in lines[i:] if line.strip()]


_COPIES = lazyre.compile(r"\b(?:shutil\.)?(?:copytree|copyfile|copy2?|symlink)\s*\(")


def _copied_by_docs_build(ctx: Context, doc: str, target: str) -> bool:
    """The doc sits in a Sphinx source folder whose `conf.py` copies files in at build time (`shutil.copytree` of
    `../../model_cards` into the source folder) and names the target's first missing folder: the link resolves
    on the built site."""
    confs = ((f, f"{f}/conf.py" if f else "conf.py") for f in reversed(start_folders(posixpath.dirname(doc))))
    folder, conf = next(((f, c) for f, c in confs if ctx.changeset.head.exists(c)), ("", ""))
    if not conf:
        return False
    src = ctx.source(conf)
    if src is None or not _COPIES.search(src.text) or not target.startswith(f"{folder}/" if folder else ""):
        return False
    missing = target[len(folder) + 1 :] if folder else target
    parts = missing.split("/")
    first = next(
        (p for k, p in enumerate(parts[:-1]) if not ctx.exists_at_head("/".join([folder, *parts[: k + 1]]))), None
    )
    name = first or parts[-1]
    return re.search(rf"['\"/]{re.escape(name)}['\"/]", src.text) is not None


_DOCSIFY = lazyre.compile(r"\$docsify\b|docsify(?:@[\w.]+)?/lib/docsify")
_RELATIVE = lazyre.compile(r"relativePath\s*:\s*true")
_IMAGE = lazyre.compile(r"(?i)\.(?:png|jpe?g|gif|svg|webp|bmp)$")


def _docsify_resolves(ctx: Context, doc: str, link_target: str) -> bool:
    """The doc is in a docsify site (a folder above it, or its own, has the `index.html` that loads docsify) that
    keeps docsify's default `relativePath: false`, and the link, read from the site's root as docsify reads it,
    names a file there: jianzhnie/llmtech's `docs/ascend/README.md` links `ascend/x.md`, which is `docs/ascend/x.md`
    on its site (rs-r45, eleven judged false)."""
    for folder in reversed(start_folders(posixpath.dirname(doc))):
        page = f"{folder}/index.html" if folder else "index.html"
        if not ctx.changeset.head.exists(page):
            continue
        src = ctx.source(page)
        if src is None or not _DOCSIFY.search(src.text):
            continue
        if _RELATIVE.search(src.text):
            return False  # links resolve from each doc's own folder, as on GitHub
        path = unquote(link_target.split("#", 1)[0]).lstrip("/")
        if _IMAGE.search(path):
            return False  # an image is read from the page's own folder (the judges of rs-r45 found two missing so)
        return bool(path) and ctx.exists_at_head(posixpath.normpath(posixpath.join(folder, path)))
    return False


_VITEPRESS_CONFIGS = tuple(f".vitepress/config.{e}" for e in ("mts", "ts", "mjs", "js", "cts", "cjs"))
_SRC_DIR = lazyre.compile(r"""\bsrcDir\s*:\s*['"]([^'"]+)['"]""")
# A folder of a site's translations, named by its language (`zh`, `en`, `zh-CN`, `pt_BR`).
_LOCALE = lazyre.compile(r"[a-z]{2}(?:[-_][A-Za-z]{2,4})?")


def _vitepress_resolves(ctx: Context, doc: str, link_target: str) -> bool:
    """The doc is in a VitePress site (a folder above it, or the root, holds `.vitepress/config.*`) and the link is
    a route from the site's root (`/guide_cloud/quick-start.md`) that names a page of the site's source folder or
    of one of its language folders: VitePress serves a language folder at the root when the site's locales or
    rewrites say so (SwanHubX/SwanLab-Docs rewrites `zh/` to `/`), which is code the rule cannot run; the page is
    there either way (rs-r54, six judged false)."""
    if not link_target.startswith("/") or link_target.startswith("//"):
        return False
    path = unquote(link_target.split("#", 1)[0].split("?", 1)[0]).strip("/")
    if not path:
        return False
    folder = _site_folder(ctx, doc, _VITEPRESS_CONFIGS)
    if folder is None:
        return False
    names = (f"{folder}/{n}" if folder else n for n in _VITEPRESS_CONFIGS)
    config = next(c for c in names if ctx.changeset.head.exists(c))
    src = ctx.source(config)
    m = _SRC_DIR.search(src.text) if src is not None else None
    root = posixpath.normpath(posixpath.join(folder, m.group(1))) if m else folder
    root = "" if root == "." else root
    prefix = f"{root}/" if root else ""
    languages = sorted(
        d[len(prefix) :] + "/" for d in ctx.head_dirs() if d.startswith(prefix) and _LOCALE.fullmatch(d[len(prefix) :])
    )
    for locale in ["", *languages]:
        base = f"{prefix}{locale}{path}"
        for candidate in (base, f"{base}.md", f"{base}/index.md", re.sub(r"\.html$", ".md", base)):
            if ctx.changeset.head.exists(candidate):
                return True
    return False


def _reader_made(ctx: Context, path: str) -> bool:
    """`path` lies in a folder named for what a guide's reader fills (`data/`, `outputs/`), whether the tree lacks
    it or keeps it empty for the reader (a `.keep` in `data/`). A figure in `docs/figures/` does not."""
    return any(part.lower() in _READER_FOLDERS for part in path.split("/")[:-1])


def _language_switch(line: str, link: Link) -> bool:
    """An inline link whose text names a language: a page's switch to its translation."""
    if link.syntax != "inline" or link.start < 2:
        return False
    before = line[: link.start - 2]
    return _LANGUAGE.fullmatch(before[before.rfind("[") + 1 :]) is not None


def _written_from(ctx: Context, doc_path: str, link: Link) -> tuple[str, str] | None:
    """Where a relative link that does not resolve from its doc's folder does: (the folder above the doc's, two
    folders above, or the repository root; the path there). Links written from another folder than the doc's (a
    skill's `query/SKILL.md` meant as `../query/SKILL.md`, a draft's links written from the root) are one
    mistake, however many links it breaks."""
    raw = link.target.split("#", 1)[0].split("?", 1)[0]
    if not raw or raw.startswith("/") or "://" in raw:
        return None
    here = posixpath.dirname(doc_path)
    for up in range(1, 3):
        parts = here.split("/") if here else []
        if len(parts) < up:
            break
        base = "/".join(parts[: len(parts) - up])
        found = posixpath.normpath(posixpath.join(base, raw))
        if not found.startswith("..") and found != "." and ctx.exists_at_head(found):
            return ("the folder above this doc's" if up == 1 else "two folders above this doc's", found)
    if here and not raw.startswith(".."):
        found = posixpath.normpath(raw)
        if found != "." and ctx.exists_at_head(found):
            return ("the repository root", found)
    return None


def _broken(
    ctx: Context,
    src: SourceFile,
    link: Link,
    target: Target,
    renamed_to: str | None,
    written_from: tuple[str, str] | None = None,
) -> Hit:
    where = "on `main`" if target.ref else "relative to this file"
    message = f"The link `{link.target}` points to `{target.path}` ({where}), which does not exist in this tree."
    suggestion = None
    if renamed_to is not None:
        message += f" This change renames it to `{renamed_to}`."
        new_target = _rewrite(link.target, target.path, renamed_to, src.path, target.ref is not None)
        if new_target is not None:
            line = src.line(link.line)
            suggestion = line[: link.start] + new_target + line[link.end :]
    else:
        guess = _guess(ctx, target.path)
        if guess == src.path:
            guess = None  # the doc itself (V4's page linking V3): a link to its own page is no fix (rs-r46, false)
        if guess and _visible(guess) == _visible(target.path):
            # The link is spelled right: the file's own name carries an invisible character (NPU501 says so on
            # the file). Pointing the link at that name would spread the character; renaming the file fixes both.
            message += (
                f" The file exists as `{_visible_marked(guess)}`, whose name carries an invisible character: "
                "rename the file (`git mv`) rather than the link."
            )
            return Hit(src.path, link.line, message)
        if guess and posixpath.basename(guess).lower() == posixpath.basename(target.path).lower():
            message += f" Did you mean `{guess}`? The names differ in case only, which GitHub and Linux do not ignore."
        elif guess:
            message += f" Did you mean `{guess}`?"
        elif written_from is not None:
            message += (
                f" From {written_from[0]}, the same link reaches `{written_from[1]}`, which exists: it was written "
                "from there."
            )
    message += " Point it at the current path, or at a release tag for a file that only exists in an old release."
    return Hit(src.path, link.line, message, suggestion=suggestion)


def _links_checked(ctx: Context, src: SourceFile, kb: RepoLinks) -> bool | None:
    """Whether check_file reads the doc's links: None, no; False, as a doc the profile names; True, as a doc that
    speaks of Ascend in a project with no profile (a broken link an audit finds is one the project lives with)."""
    if kb.check_paths or not kb.ascend_docs_by_content:
        return False if globs.match_any(src.path, kb.check_paths) else None
    # (Issue and pull request templates are read on other pages, their links from there.)
    return None if src.path.startswith(".github/") or not doc_names_ascend(ctx, src) else True


def _left_alone(ctx: Context, src: SourceFile, link: Link, target: str) -> bool:
    """A broken link of a doc with no profile that is no reference to a file of the repository."""
    return (
        not _SOURCE_NAME.search(target)  # what a guide's steps make (`./outputs/config.json`, `x.log`)
        or _reader_made(ctx, target)  # an image the reader downloads into `data/`
        or _language_switch(src.line(link.line), link)  # `中文|[English](README.md)`: a translation to come
    )


def _visible(text: str) -> str:
    """`text` without format characters (zero-width, bidirectional marks: Unicode category Cf)."""
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def _visible_marked(text: str) -> str:
    return "".join(f"<U+{ord(ch):04X}>" if unicodedata.category(ch) == "Cf" else ch for ch in text)


def _guess(ctx: Context, path: str) -> str | None:
    """A file of the same directory with a close name (a typo or a version bump), when there is one; once per
    missing path and run (many docs may link the same one, and a folder may hold hundreds of names)."""

    def find() -> str | None:
        folders = _folders(ctx)
        names = folders.get(posixpath.dirname(path), {})
        name = posixpath.basename(path)
        stem = posixpath.splitext(path)[0]
        if stem != path and any(f == stem or f.startswith(stem + "/") for f in _folder_names(ctx, folders, stem)):
            return None  # the page became a folder of that name (`x.md` -> `x/x_v2.md`): no other file is meant
        # The same name in another case first (`runstopped.png` for `runstopped.PNG`): a close name of another file
        # (`runstop.png`) would be the wrong picture (Atlas200dk/sample-handposeRCcar, rs-r71, judged false).
        same = next((p for n, p in names.items() if n.lower() == name.lower()), None)
        if same is not None:
            return same
        close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.85)
        return next((names[c] for c in close if _plausible(name, c)), None)

    return ctx.memo(("npu502-guess", "head", path), find)


# A doc's language marker: `guide_en.md` is not `guide.md` (the Chinese one) misspelled.
_LANGUAGES = frozenset({"en", "zh", "cn", "ch", "ja", "jp", "ko", "english", "chinese"})


_WORD = lazyre.compile(r"[A-Za-z0-9]+")


def _languages(name: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(posixpath.splitext(posixpath.basename(name))[0])} & _LANGUAGES


def _other_language(a: str, b: str) -> bool:
    """Both names carry a language marker, and not the same one (`README_en.md`, `README_zh.md`)."""
    x, y = _languages(a), _languages(b)
    return bool(x) and bool(y) and x != y


def _plausible(missing: str, candidate: str) -> bool:
    """`candidate` may be the file `missing` meant: no other language (a name without a language marker may have
    gained one: `guide.md` -> `guide_zh.md`), and no word of the name replaced by another (`support_dcu_model_list`
    is not `support_xpu_model_list` misspelled; `lassification` is `classification`; a changed number is a version
    bump; the extension may change, `.md` -> `.rst`)."""
    marked = _languages(missing)
    if marked and marked != _languages(candidate):
        return False
    return (
        not word_replaced(missing, candidate)
        and not _identifier_changed(missing, candidate)
        and not _word_added(missing, candidate)
    )


def _word_added(missing: str, candidate: str) -> bool:
    """The candidate is the missing name with a word of letters added (`TINSERT_FP_zh.md` for `TINSERT_zh.md`:
    another instruction, insert with a scale; `asc_copy_l12l0a_mx.md`): a variant, not the file meant
    (hw-native-sys/pto-isa, rs-r55, judged false). A language marker (`guide_zh.md`) or a version (`guide_v2.md`)
    added is still a guess."""
    wa = [w.lower() for w in _WORD.findall(posixpath.splitext(missing)[0])]
    wb = [w.lower() for w in _WORD.findall(posixpath.splitext(candidate)[0])]
    if len(wb) <= len(wa):
        return False
    extra: list[str] = []
    k = 0
    for w in wb:
        if k < len(wa) and w == wa[k]:
            k += 1
        else:
            extra.append(w)
    return k == len(wa) and any(w.isalpha() and w not in _LANGUAGES for w in extra)


def _identifier_changed(missing: str, candidate: str) -> bool:
    """A word of the names that identifies one of a series changed: a letter of a word of letters and digits
    (`asc_copy_l12l0a`, `asc_copy_l12l0c`: two APIs; `_a2`, `_a3`: two devices), or a number of three digits or
    more in two of its places or in its length (`api_07_1213_img_001`, `api_07_0251_img_001` or `_10018_`: another
    page's figure; a version or a year bumped changes one place). Another file, however close
    (CenZhihan/LLM4AscendC, duoduoyi6/ascendC_debug_agent, rs-r49: the guess linked another API's page and another
    page's figure, judged false)."""
    wa = [w.lower() for w in _WORD.findall(posixpath.splitext(missing)[0])]
    wb = [w.lower() for w in _WORD.findall(posixpath.splitext(candidate)[0])]
    # (Word by word from the start: `asc_copy_l12l0b` and `asc_copy_l12l0a_mx` differ in their third word.)
    for x, y in zip(wa, wb, strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            if max(len(x), len(y)) >= 3 and (len(x) != len(y) or sum(p != q for p, q in zip(x, y, strict=True)) >= 2):
                return True
            continue
        if (
            len(x) == len(y)
            and any(c.isdigit() for c in x + y)
            and any(p != q and (p.isalpha() or q.isalpha()) for p, q in zip(x, y, strict=True))
        ):
            return True
    return False


def _folder_names(ctx: Context, folders: dict[str, dict[str, str]], stem: str) -> list[str]:
    """The folders of the head tree that are `stem` or under it (the keys of `_folders`, found by bisection)."""
    keys = ctx.memo(("npu502-folder-keys", "head", ""), lambda: sorted(folders))
    k = bisect.bisect_left(keys, stem)
    out = []
    while k < len(keys) and (keys[k] == stem or keys[k].startswith(stem + "/")):
        out.append(keys[k])
        k += 1
    return out


def _folders(ctx: Context) -> dict[str, dict[str, str]]:
    """Folder -> {file name: path} of every file at head (in head_paths order), built once per run: _guess would
    otherwise scan the whole tree for each broken link."""

    def load() -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for p in ctx.head_paths():
            out.setdefault(posixpath.dirname(p), {})[posixpath.basename(p)] = p
        return out

    return ctx.memo(("npu502-folders", "head", ""), load)


def _rewrite(text: str, old: str, new: str, doc_path: str, absolute: bool) -> str | None:
    """The link text with the old path replaced by the new one, when the old path is spelled out exactly."""
    if absolute:
        return text.replace(old, new, 1) if text.count(old) == 1 else None
    rel_old = posixpath.relpath(old, posixpath.dirname(doc_path) or ".")
    rel_new = posixpath.relpath(new, posixpath.dirname(doc_path) or ".")
    for a, b in ((rel_old, rel_new), ("./" + rel_old, "./" + rel_new), ("/" + old, "/" + new)):
        if text.split("#", 1)[0] == a:
            return b + text[len(a) :]
    return None


# -- references to files the change deletes or renames ----------------------------------------------------------------


def _references(ctx: Context, gone: dict[str, str | None], kb: RepoLinks) -> dict[str, list[_Ref]]:
    out: dict[str, list[_Ref]] = {}
    # A path the repository's `.gitignore` now ignores is a file the reader makes (`opencode.json` renamed
    # `opencode.json.example`, the guide saying to copy it back and edit the copy): naming it is no stale reference
    # (cosdt/PyTorchInsight, rs-r41, judged false).
    gone = {old: new for old, new in gone.items() if not git_ignored(ctx, old)}
    if not gone:
        return out
    removed = set(gone)
    places = [
        p for p in ctx.head_paths() if p not in removed and (ctx.kindmap.has(p, DOCS) or ctx.kindmap.has(p, WORKFLOW))
    ]
    # The docs and workflows that name a removed file's name (each path holds its name), found by the tree's own
    # search where it has one instead of reading every doc of the tree.
    for path in ctx.paths_mentioning(sorted({posixpath.basename(g) for g in gone}), places):
        is_doc = ctx.kindmap.has(path, DOCS)
        src = ctx.source(path)
        if src is None:
            continue
        seen: set[tuple[str, int]] = set()
        # Where the doc's links are written (line -> target spans): a path inside a link's target is the link's to
        # judge, resolved from the doc's folder as a renderer does (a guide moved into `legacy/` with the folders
        # its `./docs/x.md` links point into still links them), never again as a path from the root.
        targets: dict[int, list[tuple[int, int]]] = {}
        # The text of the links that work (`![old_name.png](new_name_en.png)`): a label, not a reference.
        labels: dict[int, list[tuple[int, int]]] = {}
        doc = ctx.document(src) if is_doc else None
        if doc is not None:
            for link in doc.links:
                targets.setdefault(link.line, []).append((link.start, link.end))
                t = _resolve(ctx, path, link, kb)
                if t is None or t.kind != "repo":
                    continue
                label = _label(src.line(link.line), link) if link.syntax == "inline" else None
                if label is not None and _exists(ctx, t, link, kb, path):
                    labels.setdefault(link.line, []).append(label)
                hit = t.path if t.path in gone else None
                if hit is None and not t.exact:
                    hit = next((g for g in gone if g in (t.path + s for s in kb.doc_suffixes)), None)
                if hit is not None:
                    out.setdefault(hit, []).append(_Ref(path, link.line, link, link.start, link.end))
                    seen.add((hit, link.line))
        # A licence's text (LICENSE.md, COPYING) is legal boilerplate ("a file named LICENSE"): its links alone count.
        history = (is_doc and _HISTORY.search(path) is not None) or _LICENCE.match(posixpath.basename(path)) is not None
        doc_left_root = _left_root(ctx, src, doc) if doc is not None else None
        # Only the names the text holds can be mentioned on one of its lines (a move of 900 files, checked against
        # 1,000 docs line by line, took 90 s).
        for old in [g for g in gone if g in src.text]:
            if history:
                break  # a changelog's lines record what was (a PR's title naming `CHANGELOG.md`): its links alone count
            # A bare name the move keeps (`Megatron-LM-250328` moved into `backends/megatron/`) still names the
            # thing in a doc's prose ("the patch fits `Megatron-LM-250328`"); in a command (a code block) it is a
            # path from where the command runs, and stale.
            kept_name = "/" not in old and gone[old] is not None and posixpath.basename(gone[old] or "") == old
            if kept_name and is_doc and posixpath.dirname(gone[old] or "") == posixpath.dirname(path):
                continue  # moved into this doc's own folder: the doc names it from there (`pip install -r
                # requirements.txt` in basic_demo/README.md, the file now basic_demo/requirements.txt)
            if (
                "/" not in old
                and is_doc
                and posixpath.dirname(path)
                and ctx.exists_at_head(posixpath.join(posixpath.dirname(path), old))
            ):
                continue  # a bare name a file beside the doc has (`conf.yaml` deleted at the root, added beside the
                # README that names it: modelscope/ms-agent, rs-r72, judged false): the doc names that file
            if path == gone[old] and "/" not in old:
                continue  # the renamed file's own text naming itself by its old name (a licence's "a file named
                # LICENSE", moved to LICENSE.md): the same document, not a reference to another
            # A bare name in a command that runs after the doc's session left the root (`cd pytorch`, then
            # `python3 setup.py bdist_wheel`) names a file of that folder, another repository's as often as not.
            left_root = doc_left_root if kept_name else None
            if "/" in old and any(ctx.exists_at_head(f"{f}/{old}") for f in start_folders(posixpath.dirname(path))[1:]):
                # The doc names the path from a folder above it, where it is (a tree split into self-contained
                # copies, `910/` and `910b/`, each readme naming its own `scripts/env/Dockerfile`): not the old path.
                continue
            for n, line in enumerate(src.lines, start=1):
                if (old, n) in seen:
                    continue
                start = _mention(line, old)
                if start is not None and any(a <= start < b for a, b in targets.get(n, ())):
                    continue  # inside a link's target: judged above, from the doc's folder
                if start is not None and (_SKETCH.search(line, 0, start) or _SKETCH_ROW.match(line)):
                    continue  # a name in a directory sketch (an entry, or its note: `├─ compose/  compose.ascend.yml`)
                if start is not None and _PROVENANCE.search(line, 0, start):
                    continue  # where the text came from ("content migrated from `x.md`"): a record of the move
                if start is not None and _written_from_moved_folder(ctx, line, old, gone[old]):
                    continue  # the line writes its paths from the folder the file moved into: it names the file
                if start is not None and any(a <= start < b for a, b in labels.get(n, ())):
                    continue  # the text of a link to a file that is there
                if (
                    start is not None
                    and (kept_name or ("/" not in old and "." not in old and not old.isupper()))
                    and doc is not None
                    and n not in doc.code
                    and not any(old in line[a:b] for a, b in targets.get(n, ()))
                ):
                    # The thing's name in prose (no link of the line names it), not a path; a bare name without an
                    # extension, not in capitals (`License` renamed `LICENSE`), is a word there ("## License"); one
                    # in capitals is a file's name ("the terms are in LICENSE").
                    continue
                if (
                    start is not None
                    and gone[old] is None
                    and is_doc
                    and "/" not in old
                    and "." not in old
                    and not _used_as_path(line, start, old)
                ):
                    continue  # a deleted bare name (`cce`, a submodule) as a word or a value (`ingress.class: cce`)
                if start is not None and left_root is not None and left_root < n and doc is not None and n in doc.code:
                    continue  # a command run from the folder an earlier `cd` went to: not named from the root
                new = gone[old]
                if start is not None and new is not None and new in line:
                    continue  # the line names where the file went too (`[LICENSE](./docs/zh/LICENSE)`): updated
                if start is not None and is_doc and links_a_copy(src, n, (old,)):
                    continue  # the doc links the release copy of the file it names: a pointer kept on purpose
                if start is not None:
                    out.setdefault(old, []).append(_Ref(path, n, None, start, start + len(old)))
    return out


# What a command that takes a path is before it (`cd`, `ls -la`, `git submodule update --init`, `source`).
_PATH_COMMAND = lazyre.compile(
    r"(?:^|[\s;&|(`$])(?:cd|pushd|ls|cp|mv|rm|cat|source|\.|bash|sh|python3?|tar|du|find|chmod|chown|make|cmake"
    r"|git\s+(?:submodule(?:\s+\w+)?|add|rm|mv|clone\s+\S+))(?:\s+-\S+)*\s+\S*$"
)


def _used_as_path(line: str, start: int, name: str) -> bool:
    """The bare name at `start` is used as a path: a folder of a longer path (`cce/x.md`), written from here
    (`./cce`), or an argument of a command that takes one (`cd cce`, `git submodule update --init cce`); not a word
    of prose nor a value (`kubernetes.io/ingress.class: cce`, `cce:*:get`; huaweicloudDocs/cce, whose `cce`
    submodule the change deletes: rs-r61, judged false)."""
    if line[start + len(name) : start + len(name) + 1] == "/" or line[max(0, start - 2) : start] == "./":
        return True
    return _PATH_COMMAND.search(line[:start]) is not None


# A path written in a line: a word with a folder and a file name (`ascend/terminal/executor.py`).
_LINE_PATH = lazyre.compile(r"(?<![\w./-])[\w.-]+(?:/[\w.-]+)+\.\w+(?![\w/])")


def _written_from_moved_folder(ctx: Context, line: str, old: str, new: str | None) -> bool:
    """The file moved into a folder (`tests/x.py` -> `backend/tests/x.py`) and the line names another path that is
    that folder's and not the root's (`ascend/terminal/executor.py`, there only as `backend/ascend/...`): the line
    writes its paths from that folder, where the old name now is the file (Jedidiah-Zhang/Ascend, rs-r48, judged
    false)."""
    if new is None or not new.endswith("/" + old):
        return False
    folder = new[: -len(old) - 1]
    return any(
        m.group() != old and not ctx.exists_at_head(m.group()) and ctx.exists_at_head(f"{folder}/{m.group()}")
        for m in _LINE_PATH.finditer(line)
    )


_LICENCE = lazyre.compile(r"(?i)(?:licen[cs]e|copying|notice)(?:[._-][^/]*)?\Z")
_CD = lazyre.compile(r"(?:^|[;&|(]\s*|\bthen\s+|\bdo\s+)(?:cd|pushd)\s+([^\s;&|)]+)")


def _left_root(ctx: Context, src: SourceFile, doc: Document) -> int | None:
    """The first line of the doc's code blocks with a `cd` (or `pushd`) into a folder that is not a clone of this
    repository (`cd pytorch`, `cd build`), None when there is none: the commands after it run there."""
    own = own_names(ctx)
    for n in sorted(doc.code):
        for m in _CD.finditer(src.line(n).strip()):
            folder = m.group(1).strip("\"'").rstrip("/")
            if folder in ("", ".", "~", "-", "$HOME", "${HOME}") or norm_name(posixpath.basename(folder)) in own:
                continue
            return n
    return None


# Words that say a file is gone or going (a plan's "Delete `x.yml`", a map's "`.cursorrules` is ignored").
_REMOVAL = lazyre.compile(
    r"(?i)\b(?:delet|remov|drop|(?:git)?ignor|deprecat|retir|obsolete|no longer|replaced|in (?:the )?git history)"
    r"|删除|移除|废弃|弃用|替换"
)

# Words just before a path that say the text came from there (a copy's or a move's note of its origin).
_PROVENANCE = lazyre.compile(
    r"(?i)(?:\b(?:migrated|moved|copied|ported|renamed|extracted|split|taken|adapted)\s+from|迁移自|移自|复制自|拷贝自|"
    r"来源于|源自|摘自)[\s:：`'\"(（]*\Z"
)

# Docs that record history (a changelog, release notes): the names in their lines are what was, not references.
_HISTORY = lazyre.compile(
    r"(?i)(?:^|/)(?:changelog[^/]*|release[-_ ]?notes[^/]*|(?:history|changes)\.(?:md|rst|txt)"
    r"|news(?:\.(?:md|rst|txt))?|archived?|\d{4}-\d{2}-\d{2}[^/]*)(?:/|$)"
)


def _label(line: str, link: Link) -> tuple[int, int] | None:
    """The span of an inline link's text (`[text](target)`, an image's alt text), None when not written so."""
    close = link.start - 2
    if close < 1 or line[close : link.start] != "](":
        close = link.start - 3  # `](<target>)`
        if close < 1 or line[close : close + 3] != "](<":
            return None
    opened = line.rfind("[", 0, close)
    return None if opened < 0 else (opened + 1, close)


def _mention(line: str, path: str) -> int | None:
    """Column of `path` in the line when it stands as a whole path: not inside a longer one, whether the longer
    one adds a prefix (`verl/` + `single_controller/...` is another file) or a suffix (`..._a2_v0.8.0`)."""
    i = line.find(path)
    while i != -1:
        start = i
        while start > 0 and _PATH_CHARS.match(line[start - 1]):
            start -= 1
        prefix = line[start:i]
        rest = line[i + len(path) :]
        after = rest[:1] or " "
        if after == "." and not _PATH_CHARS.match(rest[1:2] or " "):
            after = " "  # the end of a sentence
        negated = start > 0 and line[start - 1] == "!"  # `!path` in a `paths:` filter excludes it: harmless
        if prefix in ("", "./") and not _PATH_CHARS.match(after) and not negated:
            return i
        i = line.find(path, i + 1)
    return None


# The lines a change leaves naming the files it moves or deletes are one cause, whichever files: one decision (a
# move of scripts into sub-folders) left undone in the docs, one comment, on the first, listing the others
# (alibaba/ChatLearn's move of its training scripts got one comment per script; the blind judges called every
# one after the first noise).
_STALE = "lines naming the files the change moves or deletes"


def _link_reported(ctx: Context, src: SourceFile, link: Link, old: str, kb: RepoLinks) -> bool:
    """check_file reports this link to a file the change moved or deleted as broken (on the same line, with the
    new path as its suggestion): the line's reference is said once."""
    lived_with = _links_checked(ctx, src, kb)
    if lived_with is None:
        return False
    if not lived_with:
        return True  # a doc the profile names
    doc = ctx.document(src)
    return not (doc is not None and link.line in doc.code) and not _left_alone(ctx, src, link, old)


def _under_removal_heading(ctx: Context, src: SourceFile, line: int) -> bool:
    """The doc's nearest heading above `line` says what follows was deleted or removed (a cleanup's record of what
    it deleted, BobbyWeng/cannbot-ascendc-vs-pypto's "### Removed (not moved — permanently deleted)": rs-r49,
    judged false)."""
    doc = ctx.document(src)
    if doc is None:
        return False
    above = [h for h in doc.headings if h.line < line]
    return bool(above) and _REMOVAL.search(above[-1].title) is not None


_NEW_ITEM = lazyre.compile(r"\s*(?:[-*+]\s|\d+[.)]\s|#|\||>|$)")


def _goes_on(line: str) -> bool:
    """The line goes on with the sentence or list item above it (indented, no list marker, heading or table row)."""
    return line[:1] in (" ", "\t") and _NEW_ITEM.match(line) is None


def _dot_dropped(old: str, new: str | None) -> str | None:
    """The name a rename most likely meant when its new name lost the `.` before the old extension
    (`CCE权限管理概述.md` -> `CCE权限说明md`: `CCE权限说明.md`), else None."""
    if new is None:
        return None
    base, old_base = posixpath.basename(new), posixpath.basename(old)
    ext = old_base.rpartition(".")[2] if "." in old_base.strip(".") else ""
    if not ext or "." in base or not base.endswith(ext) or len(base) <= len(ext):
        return None
    return new[: -len(ext)] + "." + ext


def _stale(ctx: Context, old: str, new: str | None, places: list[_Ref], kb: RepoLinks) -> Iterator[Hit]:
    what = f"renames `{old}` to `{new}`" if new else f"deletes `{old}`"
    written, meant = new, _dot_dropped(old, new)
    if meant is not None:
        # The new name lost its extension's dot (huaweicloudDocs/cce c1eda90, renamed again a minute later; rs-r61,
        # judged false when the advice named the misspelled file): the links go to the name it meant.
        what += f", a name without the `.` before `{meant.rpartition('.')[2]}` (`{meant}`, most likely)"
        new = meant
    leftover: list[_Ref] = []
    for ref in places:
        if not ctx.is_added_line(ref.path, ref.line):
            leftover.append(ref)
            continue
        src = ctx.source(ref.path)
        if (
            new is None
            and ref.link is None
            and src is not None
            # (a sentence may wrap, onto the next line, or from the line above when this one goes on with its list
            # item: "- The prototype has been deleted;" / "  see `docs/x.cc` in git history")
            and _REMOVAL.search(
                f"{src.line(ref.line - 1) if _goes_on(src.line(ref.line)) else ''} {src.line(ref.line)} "
                f"{src.line(ref.line + 1)}"
            )
        ):
            continue  # a line the change writes about the file it deletes: "Delete `x.yml`", "`.cursorrules` ignored"
        if new is None and ref.link is None and src is not None and _under_removal_heading(ctx, src, ref.line):
            continue  # a list of what was deleted ("### Removed (not moved: permanently deleted)"): a record
        if ref.link is not None and src is not None and _link_reported(ctx, src, ref.link, old, kb):
            continue  # check_file reports it, with a suggestion
        suggestion = None
        if new is not None and _own_trigger(ctx, ref.path, old):
            # A workflow this change adds, naming the workflow it was copied from: its own `paths:` trigger, most
            # likely, which should name the copy, not where the original went.
            yield Hit(
                ref.path,
                ref.line,
                f"This line still names `{old}`, but the change {what}. If it is this workflow's own trigger "
                f"(the file was copied from `{old}`), name `{ref.path}`; else `{new}`.",
                cause=_STALE,
            )
            continue
        if new is not None and src is not None and meant is None:
            line = src.line(ref.line)
            if ref.link is None and line.count(old) == 1:
                # (no line to paste where the new path alone may not run it: _runs_from_where_it_was)
                if not (_runs(line, ref) and _runs_from_where_it_was(ctx, old, new)):
                    suggestion = line.replace(old, new)
            elif ref.link is not None:
                rewritten = _rewrite(ref.link.target, old, new, ref.path, "://" in ref.link.target)
                if rewritten is not None:
                    suggestion = line[: ref.start] + rewritten + line[ref.end :]
        yield Hit(
            ref.path,
            ref.line,
            f"This line still names `{old}`, but the change {what}.",
            suggestion=suggestion,
            cause=_STALE,
            # The change's deletion or rename makes the line stale, whoever wrote it: a line the change only
            # re-formats (trailing blanks stripped) is reported as one it wrote.
            caused_by_change=True,
        )
    if not leftover:
        return
    anchor = _anchor(ctx, written)
    if anchor is None:
        return  # no added line to carry it (a pure deletion); see the rule's docs
    listed = ", ".join(f"{r.path}:{r.line}" for r in leftover[:_MAX_LISTED])
    more = f" and {len(leftover) - _MAX_LISTED} more" if len(leftover) > _MAX_LISTED else ""
    yield Hit(
        anchor[0],
        anchor[1],
        f"This change {what}, but {_count(len(leftover))} at the old path: {listed}{more}. "
        + (f"Update {'them' if len(leftover) > 1 else 'it'} to `{new}`." if new else "Update or remove them.")
        + (
            _moved_script_caveat(old, new)
            if new and _run_by_any(ctx, leftover) and _runs_from_where_it_was(ctx, old, new)
            else ""
        ),
        related=tuple(Related(r.path, r.line, f"still names {old}") for r in leftover),
        cause=_STALE,
    )


# A script that finds its own folder (`cd "$(dirname "$0")"`, `${BASH_SOURCE[0]}`, `$SCRIPT_DIR`): where it is
# run from does not change what its relative paths name.
_SELF_LOCATING = lazyre.compile(
    r"dirname\s+[\"']?\$(?:0|\{0\})|BASH_SOURCE|realpath\s+[\"']?\$0|readlink\s+-f\s+[\"']?\$0"
)


# A command that runs the script it names (`bash x.sh`, `sh -x x.sh`, `source x.sh`, `./x.sh`), not a mention of
# it (`See examples/x.sh`).
_RUNS_IT = lazyre.compile(r"(?:^|[\s;&|(`$])(?:(?:ba|z)?sh|source|\.)(?:\s+-\w+)*\s+\Z")


def _runs(line: str, ref: _Ref) -> bool:
    before = line[: ref.start]
    return bool(_RUNS_IT.search(before)) or line[ref.start : ref.start + 2] == "./" or before.endswith("./")


def _run_by_any(ctx: Context, refs: list[_Ref]) -> bool:
    for ref in refs:
        src = ctx.source(ref.path)
        if src is not None and ref.link is None and _runs(src.line(ref.line), ref):
            return True
    return False


def _runs_from_where_it_was(ctx: Context, old: str, new: str) -> bool:
    """The change moves a shell script to another folder, and the script does not find its own folder and names
    relative paths: they name files from where it is run, so the callers may have to run it from its new folder, not
    only name it there (drago1234/omni-npu moved `run_tests.sh` into `tests/`, which runs `pytest unit/`: run from
    the top folder as `tests/run_tests.sh` it fails; rs-r81, judged false)."""
    if posixpath.dirname(old) == posixpath.dirname(new) or not ctx.kindmap.has(new, SHELL):
        return False
    src = ctx.source(new)
    if src is None or _SELF_LOCATING.search(src.text) is not None:
        return False
    return any(
        _RELATIVE_PATH.search(line) for line in src.lines if not line.lstrip().startswith("#") and "://" not in line
    )


# A relative path in a script's command (`pytest unit/`, `./data`, `../configs/x.yaml`): not absolute, not a
# variable's, not a URL's.
_RELATIVE_PATH = lazyre.compile(r"(?:^|[\s=\"'(])(?:\.{1,2}/|[A-Za-z_][\w.-]*/)")


def _moved_script_caveat(old: str, new: str) -> str:
    was = f"`{posixpath.dirname(old)}`" if posixpath.dirname(old) else "the top folder"
    now = posixpath.dirname(new)
    return (
        f" The script moved from {was} to `{now}` and does not find its own folder: if it names files relative to "
        f"where it runs, its callers must run it from there (`cd {now} && bash {posixpath.basename(new)}`)."
    )


def _own_trigger(ctx: Context, path: str, old: str) -> bool:
    """`path` is a workflow the change adds and `old` another workflow (what a copied file's self-trigger names)."""
    change = ctx.changeset.changed(path)
    host = workflow_folder_host(path)
    return (
        change is not None
        and change.status is ChangeStatus.ADDED
        and host is not None
        and host_of_folder(posixpath.dirname(old)) is host
    )


def _count(n: int) -> str:
    return "1 reference still points" if n == 1 else f"{n} references still point"


def _anchor(ctx: Context, new: str | None) -> tuple[str, int] | None:
    """A line the change adds that belongs to the rename: in the renamed file, else one naming the new path."""
    if new is None:
        return None
    added = ctx.added_lines(new)
    if added:
        return new, min(added)
    base = posixpath.basename(new)
    for path, change in sorted(ctx.changeset.changes.items()):
        if change.status == ChangeStatus.DELETED or not change.added_lines:
            continue
        src = ctx.source(path)
        if src is None:
            continue
        for n in sorted(change.added_lines):
            if base in src.line(n):
                return path, n
    return None
