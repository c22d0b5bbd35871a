"""NPU504: an install guide (or a README) states a component's version in one place and installs or names
another elsewhere."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace

from npu_review.checks import lazyre
from npu_review.checks.analysis.guides import Guide, Said, agree, cann_line, guide_stack, reference
from npu_review.checks.analysis.stacks import Tables, public_version, tables, torch_npu_build
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import DOCS
from npu_review.checks.model import Related, Severity
from npu_review.checks.rule import Hit, Rule

_SHOWN = 4
_INSTALL_LINK = lazyre.compile(r"(?i)install|setup|安装|get_?start|quick_?start")
_BRANCH_TORCH = lazyre.compile(r"^v(\d+\.\d+\.\d+)(?:[-.]|$)")


class InstallGuideVersionsDisagree(Rule):
    """An install guide states a component's version in one place and installs or names another elsewhere.

    Why: an install guide says its stack twice: in a version table (the release the reader should have) and in
    the commands of its code blocks (what actually gets installed). A release bump edits one and forgets the
    other, and readers who follow the table and readers who follow the commands end up on two stacks, or on a
    pairing that never worked:
    * MindSpeed-RL moved its install steps to torch/torch_npu 2.7.1 and vLLM `releases/v0.11.0` while the
      guide's dependency table kept torch 2.5.1 and vLLM `main` (fixed in 52614169), and moved Megatron to
      `core_v0.12.1` while the version table's master row kept Core 0.8.0 (fixed in b455893);
    * its README's dependency table kept torch 2.5.1 on CANN 8.1.RC1 after the install guide it links moved to
      2.6.0 on 8.2.RC1 (fixed in 0fbfaf4);
    * Ascend/pytorch's compatibility table paired PyTorch 1.11.0 with torch_npu 1.8.1.post2 and branch
      `v1.8.1-5.0.rc2` (fixed in be4e96e), and listed torch_npu 2.10.0, the CANN 9.0.0 build, for CANN 9.1.0
      (fixed in c255c00), and gave torch_npu 2.1.0 (TorchNPU 5.0's release, for CANN 7.0.0) for branch
      `v2.1.0-5.0.rc3`, whose release is 2.1.0rc1 (fixed in d0edf57);
    * vllm-ascend's README required CANN 9.0.0 and linked the release notes of CANN 8.3.RC2 (fixed in 8f5962b).

    Checked, in Markdown and reST docs about Ascend:
    * the current row of a release table (the row labelled master/main/latest, or its only row) and the
      dependency tables (a component per row, HTML `rowspan` cells included), against the versions the guide's
      commands install: `pip install x==v` (a commented-out `# pip install` counts when it is the only one),
      wheel files (`torch_npu-2.7.1.*.whl`), `git clone -b <branch>` and `git checkout <ref>` of a known
      repository (vLLM, vLLM-Ascend, Megatron-LM, MindSpeed, ...), `pip install git+…@<ref>`, and CANN
      installers (`Ascend-cann-toolkit_8.2.RC1_linux-aarch64.run`). torch, torch_npu, torchvision, CANN and
      Python are compared by full release (`2.7.1` is not `2.7.0`; `2.7.1.post2` is `2.7.1`), other components
      by major.minor (a table's `Core 0.12.0` names the line `core_v0.12.1` is on);
    * a README's dependency table against the install guide it links (a link whose name or line says
      install, setup or quick start);
    * each row of a table with its own cells: torch_npu built for another torch than the row's PyTorch (its
      version, or its `v<torch>-<release>` branch), or, in a table that names torch_npu builds (`.postN`), a
      build the release facts place on another CANN than the row's while that CANN has its own build, or a
      torch_npu of a torch line later than the one after the newest that CANN release has (torch-npu 2.7.1 on
      CANN 8.0.0, whose torch_npu lines end at 2.4.0: a later line needs a later CANN; the next line, whose
      release candidates often came out for the CANN before, and an older line on a newer CANN are left alone),
      or, in such a table, a build of another TorchNPU line than the row's `v<torch>-<release>` branch: each
      release line of Ascend/pytorch has its own branch and its own builds (the facts' `torch_npu_releases`,
      from its mapping table and the version.txt of its release tags and branches), so `2.1.0`, TorchNPU 5.0's,
      is no release of branch `v2.1.0-5.0.rc3` (2.1.0rc1); a build the facts do not know may be a later patch
      of that branch and is left alone;
      a bounds table's recommended column (`| Requirement | Minimum | Recommend |`) is such a row;
    * a line that states a CANN version and links the hiascend.com documentation of another CANN release;
    * on a change, commands moved to a commit (`git checkout 5bc1ad6`) while the table still names the release
      the old commands installed.

    A table is compared with the commands of its own part of the guide (the section above its heading): another
    backend's install section may pin another Megatron on purpose. The same statement in two docs (a README
    and its translation) is one finding.

    Not reported: release rows other than the current one (they describe their own releases), tables under a
    "History" heading, components the commands install in two versions (two paths, e.g. per architecture),
    commits and unpinned installs (unknown), ranges (`>=8.5.0`), a CANN patch release next to its line's
    documentation (9.0.1 with the 9.0.0 notes), torch_npu builds the facts do not know, and docs that say
    nothing about Ascend.

    Bad (`docs/install_guide.md`):
        | Release | Megatron   | PyTorch | torch_npu | CANN    |
        |---------|------------|---------|-----------|---------|
        | master  | Core 0.8.0 | 2.5.1   | 2.5.1     | 8.1.RC1 |

        ```shell
        pip install torch-2.7.1-cp310-cp310-*.whl
        pip install torch_npu-2.7.1.*.manylinux2014_*.whl
        git clone https://github.com/NVIDIA/Megatron-LM.git
        cd Megatron-LM
        git checkout core_v0.12.1
        ```

    Good:
        | Release | Megatron    | PyTorch | torch_npu | CANN    |
        |---------|-------------|---------|-----------|---------|
        | master  | Core 0.12.1 | 2.7.1   | 2.7.1     | 8.3.RC1 |

    Fix: bring the table and the commands to one version (and the README to its guide); in a compatibility
    table, pair each torch_npu with the torch and CANN it is built for.
    """

    id = "NPU504"
    name = "install-guide-versions-disagree"
    severity = Severity.WARNING
    title = "Install guide or README states one version of a component and installs or links another"
    kinds = frozenset({DOCS})
    context_kinds = frozenset({DOCS})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        guide = guide_stack(ctx, src)
        if guide is None:
            return
        hits = [*_tables_vs_commands(ctx, guide), *_rows(ctx, guide), *_cann_links(guide)]
        if not ctx.audit:
            hits += _moved_commands(ctx, src, guide)
        if hits:
            yield from _not_in_primary(ctx, src, _one_per_cause(ctx, hits))
        # A README's dependency table against the install guide it links: said from the README's side, unless
        # the change touches only the guide.
        if _is_readme(src.path):
            yield from _linked_guides(ctx, guide, guide.links)
        elif not ctx.audit:
            for readme in _readmes_above(ctx, src.path):
                other = ctx.source(readme)
                linking = guide_stack(ctx, other) if other is not None else None
                if linking is not None and src.path in linking.links:
                    yield from _linked_guides(ctx, linking, [src.path])


def _is_readme(path: str) -> bool:
    return posixpath.basename(path).lower().startswith("readme")


def _readmes_above(ctx: Context, path: str) -> Iterator[str]:
    """The READMEs of the folders above a doc (its own and each parent), that the change leaves alone."""
    folder = posixpath.dirname(path)
    while True:
        for name in ("README.md", "readme.md", "README.rst"):
            candidate = posixpath.join(folder, name) if folder else name
            if candidate != path and not ctx.touched(candidate) and ctx.changeset.head.exists(candidate):
                yield candidate
        if not folder:
            return
        folder = posixpath.dirname(folder)


_TRANSLATION = lazyre.compile(r"(?i)[._-](?:zh|cn|zh[_-]cn)(?=\.[a-z]+$)")


def _not_in_primary(ctx: Context, src: SourceFile, hits: list[Hit]) -> Iterator[Hit]:
    """A translation (`README.zh.md`) says what its primary (`README.md`) says: a statement both make is the
    primary's finding, one cause."""
    primary = _TRANSLATION.sub("", src.path)
    other = ctx.source(primary) if primary != src.path else None
    guide = guide_stack(ctx, other) if other is not None else None
    if guide is None:
        yield from hits
        return
    theirs = {_cause(h) for h in [*_tables_vs_commands(ctx, guide), *_rows(ctx, guide), *_cann_links(guide)]}
    yield from (h for h in hits if _cause(h) not in theirs)


def _cause(hit: Hit) -> str:
    return re.sub(r"\(?\blines? \d+(?:-\d+)?\)?", "", hit.message)


def _one_per_cause(ctx: Context, hits: list[Hit]) -> list[Hit]:
    """The same statement in two docs (a README and its translation, a guide copied per language) is one cause:
    one finding, on a changed line when there is one, naming the other places."""
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        groups.setdefault(_cause(hit), []).append(hit)
    out: list[Hit] = []
    for same in groups.values():
        first = next((h for h in same if ctx.is_added_line(h.path, h.line)), same[0])
        others = tuple(Related(h.path, h.line, "the same") for h in same if h is not first)
        out.append(replace(first, related=first.related + others) if others else first)
    return out


def _said(s: Said) -> str:
    return f"{s.component} {s.shown}"


def _cann(version: str) -> str:
    """A normalised CANN version as CANN writes it: `8.3.rc2` -> `8.3.RC2`."""
    return re.sub(r"\.rc(\d)", r".RC\1", version)


def _listed(items: list[str]) -> str:
    if len(items) > _SHOWN:
        return ", ".join(items[:_SHOWN]) + f" and {len(items) - _SHOWN} more"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _place(ctx: Context, path: str, lines: list[int]) -> int:
    return ctx.first_added(path, lines)


# -- a table against the guide's own commands ----------------------------------------------------------------


def _tables_vs_commands(ctx: Context, guide: Guide) -> Iterator[Hit]:
    stale: dict[int, list[tuple[Said, Said]]] = {}  # table line -> (table value, what the commands install)
    for said in guide.tables:
        # The commands of the part of the guide the table speaks for (not another backend's section).
        ref = reference([c for c in guide.commands if said.covers(c)], said.component, ctx)
        if ref is not None and agree(ctx, said.component, said.value, ref.value) is False:
            stale.setdefault(said.line, []).append((said, ref))
    for line, pairs in sorted(stale.items()):
        table = pairs[0][0]
        cmds = [c for _, c in pairs]
        where = _place(ctx, guide.path, [line, *(c.line for c in cmds)])
        says = _listed([_said(t) for t, _ in pairs])
        installs = _listed([f"{c.component} {c.shown} ({c.how}, line {c.line})" for c in cmds])
        related = [Related(guide.path, line, "the table")] if where != line else []
        related += [Related(guide.path, c.line, "the command") for c in cmds if c.line != where]
        yield Hit(
            guide.path,
            where,
            f"{table.how[0].upper()}{table.how[1:]} says {says}, but the guide's commands install {installs}: "
            "a reader who follows the table and one who follows the commands set up two different stacks. "
            "One of them is stale; bring them to one version.",
            related=tuple(related),
        )


# -- a row that contradicts itself ------------------------------------------------------------------------------


def _final(cann: str) -> str:
    """A CANN pre-release's final version (`8.0.0.alpha002` -> `8.0.0`): the torch_npu releases are the final's."""
    return re.sub(r"\.(?:alpha|beta)\d*$", "", cann)


# A torch_npu pre-release (`2.12.0rc1`, `.dev20260101`, `a1`, `b1`): a build made for the next torch ahead of the
# published pairings the facts list, on the CANN of its day (torch_npu 2.12.0rc1 on CANN 9.0.0 and 9.0.0-beta.1, the
# projects' own CI stacks: rs-r45, rs-r50, judged false).
_PRE_RELEASE = lazyre.compile(r"(?i)\d(?:rc|a|b|\.?dev)\d")


def _release3(value: str) -> tuple[int, ...]:
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", value)
    return tuple(int(x) for x in m.groups()) if m else ()


def _rows(ctx: Context, guide: Guide) -> Iterator[Hit]:
    known = tables(ctx)
    # Tables that name torch_npu builds (`2.7.1.post2`), not only the torch line they are for: a build of another
    # CANN there is a wrong pairing, where elsewhere `2.7.1` may just mean the 2.7.1 line.
    builds_named = {t for t, row in guide.rows if "post" in (row["torch-npu"].value if "torch-npu" in row else "")}
    all_lines = sorted({_release3(b) for builds in known.cann.values() for b in builds if _release3(b)})
    for table, row in guide.rows:
        npu = row.get("torch-npu")
        if npu is None:
            continue
        problems: list[str] = []
        torch = row.get("torch")
        base = _release3(npu.value)
        mine = _release3(torch.value) if torch is not None else ()
        # Same major only: a TorchNPU release number (`26.1.0`) is no torch version.
        if torch is not None and base and mine and base[0] == mine[0] and base != mine:
            problems.append(
                f"torch_npu {npu.shown} is built for torch {'.'.join(map(str, base))}, not the row's PyTorch "
                f"{torch.shown}"
            )
        branch = row.get("branch")
        m = _BRANCH_TORCH.match(branch.value) if branch is not None else None
        line_of = _release3(m.group(1)) if m else ()
        if branch is not None and m and torch is not None and _release3(torch.value) not in ((), line_of):
            problems.append(f"branch `{branch.shown}` is the torch {m.group(1)} line, not {torch.shown}")
        # The row's torch_npu against its branch's releases (the torch lines agree), in a table that names builds
        # (elsewhere `2.1.0` may mean the 2.1.0 line): said when no CANN problem below says it already (a build of
        # another CANN is the same mistake seen from the CANN column).
        of_branch = (
            _not_of_branch(ctx, known, npu, branch)
            if branch is not None and m and line_of == base and table in builds_named
            else []
        )
        cann = row.get("cann")
        builds_of_cann = known.cann.get(_final(cann.value)) if cann is not None else None
        torch_lines = sorted({_release3(b) for b in builds_of_cann or () if _release3(b)}, reverse=True)
        later = [t for t in all_lines if torch_lines and t > torch_lines[0]]
        if (
            cann is not None
            and base
            and later
            and base[0] == later[0][0]
            and base > later[0]
            and not _PRE_RELEASE.search(f"{npu.shown} {npu.value}")
        ):
            # A torch line later than the one after the newest torch_npu built for that CANN: torch_npu of a later
            # line needs a later CANN. The next line is left alone (its release candidates often came out for the
            # CANN before its own), and so is an older line on a newer CANN (CANN runs older torch_npu: a pairing
            # projects ship), and a TorchNPU product number (`26.0.0`), no torch version.
            problems.append(
                f"CANN {_cann(cann.value)} has no torch_npu for torch {'.'.join(map(str, base))} (its torch_npu "
                f"releases are for torch {', '.join('.'.join(map(str, t)) for t in torch_lines)})"
            )
        elif cann is not None and base and table in builds_named:
            builds = known.cann.get(cann.value)
            build = torch_npu_build(npu.value)
            same = [b for b in builds or () if _release3(b) == base]
            made = known.built_for(npu.value)
            # Only a build the facts place on another CANN: one they do not list may be a refresh of this one.
            if same and made is not None and made != cann.value:
                also = f" ({build} is the CANN {_cann(made)} build)"
                problems.append(
                    f"CANN {_cann(cann.value)}'s torch_npu for torch {'.'.join(map(str, base))} is {same[0]}, not "
                    f"{npu.shown}{also}"
                )
        if not problems:
            problems = of_branch
        if not problems:
            continue
        lines = sorted({npu.line, *(s.line for s in row.values())})
        yield Hit(
            guide.path,
            _place(ctx, guide.path, [npu.line, *lines]),
            (
                f"The recommended versions do not go together: {'; '.join(problems)}. A reader who installs what "
                "the table recommends gets packages that do not work together."
                if npu.how.startswith("the dependency table's recommended")
                else f"This row contradicts itself: {'; '.join(problems)}. A reader who installs this row's pair "
                "gets packages that do not go together."
            ),
            # The rows of one table that contradict themselves are one cause: the table was written from one wrong
            # source (every CANN 9.0.0 row one build behind), and is fixed at once.
            cause=None
            if npu.how.startswith("the dependency table's recommended")
            else f"rows of the table at {guide.path}:{table}",
        )


def _not_of_branch(ctx: Context, known: Tables, npu: Said, branch: Said) -> list[str]:
    """The row's torch_npu is a release of another TorchNPU line than its branch's (`2.1.0`, TorchNPU 5.0's, beside
    branch `v2.1.0-5.0.rc3`, whose release is 2.1.0rc1): one problem, or none. Only a release the facts place on
    another line's CANN: one they do not know may be a later patch of the branch."""
    named = known.rel.branch_name(branch.value.removeprefix("v").removeprefix("V"))
    if named is None or not named.builds:
        return []
    shown = {public_version(b) for b in named.builds}
    if public_version(npu.value) in shown:
        return []
    made = known.built_for(npu.value)
    line_cann = ctx.facts.torch_npu_releases.lines.get(named.line)
    if made is None or line_cann is None or made == line_cann.lower():
        return []
    return [
        f"branch `{branch.shown}` (TorchNPU {named.line}, CANN {_cann(line_cann.lower())}) released torch_npu "
        f"{_listed(list(named.builds))}, not {npu.shown} (the CANN {_cann(made)} release)"
    ]


# -- a CANN version next to another release's documentation ------------------------------------------------------


def _cann_links(guide: Guide) -> Iterator[Hit]:
    for line, said, linked, raw in guide.cann_links:
        if cann_line(said) == cann_line(linked):
            continue  # one release line: 9.0.1's HDK notes are 9.0.0's
        yield Hit(
            guide.path,
            line,
            f"This line states CANN {_cann(said)} but links the hiascend.com documentation of CANN {_cann(linked)} "
            f"(`/{raw}/` in the URL): a reader checks the driver and firmware (HDK) of another release than the "
            f"CANN required. Link the {_cann(said)} documentation.",
        )


# -- a README against the install guide it links --------------------------------------------------------------


def _linked_guides(ctx: Context, doc: Guide, targets: list[str]) -> Iterator[Hit]:
    # A README's dependency table summarises the stack its install guide sets up; other docs link other
    # devices' or releases' guides (an A5 guide from the A2/A3 one), whose stacks differ on purpose.
    own = [s for s in doc.tables if s.how.startswith("the dependency table")]
    if not own:
        return
    for target in targets:
        other_src = ctx.source(target)
        if other_src is None or not _INSTALL_LINK.search(target + " " + _link_text(ctx, doc, target)):
            continue
        other = guide_stack(ctx, other_src)
        if other is None or not other.commands:
            continue
        pairs: list[tuple[Said, Said]] = []
        for mine in own:
            # What the guide's commands install, when they install it at all; its tables only otherwise.
            installed = any(s.component == mine.component for s in other.commands)
            theirs = reference(other.commands if installed else other.tables, mine.component, ctx)
            if theirs is not None and agree(ctx, mine.component, mine.value, theirs.value) is False:
                pairs.append((mine, theirs))
        if not pairs:
            continue
        places = [(doc.path, m.line) for m, _ in pairs] + [(other.path, t.line) for _, t in pairs]
        path, line = next(((p, n) for p, n in places if ctx.is_added_line(p, n)), places[0])
        by_line: dict[int, list[tuple[Said, Said]]] = {}
        for m, t in pairs:
            by_line.setdefault(m.line, []).append((m, t))
        listed = "; ".join(
            f"{_listed([m.component for m, _ in group])} {group[0][0].shown} (line {n}) where the guide has "
            f"{group[0][1].shown}"
            for n, group in by_line.items()
        )
        yield Hit(
            path,
            line,
            f"{doc.path}'s dependency table and the install guide it links ({other.path}) disagree: the table "
            f"says {listed}. Readers of the two set up different stacks; update the one that is stale.",
            related=tuple(Related(p, n, "") for p, n in dict.fromkeys(places) if (p, n) != (path, line)),
        )


def _link_text(ctx: Context, doc: Guide, target: str) -> str:
    src = ctx.source(doc.path)
    if src is None:
        return ""
    name = posixpath.basename(target)
    return " ".join(line for line in src.lines if name in line)


# -- a change that moves the commands to a commit and leaves the table ---------------------------------------------


def _moved_commands(ctx: Context, src: SourceFile, guide: Guide) -> list[Hit]:
    return list(_moved(ctx, src, guide))


def _moved(ctx: Context, src: SourceFile, guide: Guide) -> Iterator[Hit]:
    base_src = ctx.source(src.path, "base")
    if base_src is None or base_src.text == src.text:
        return
    before = guide_stack(ctx, base_src, rev="base")
    if before is None:
        return
    for table in guide.tables:
        comp = table.component
        if ctx.is_added_line(src.path, table.line):
            continue
        was = next((t for t in before.tables if t.component == comp and t.value == table.value), None)
        if was is None:
            continue
        old = [s for s in before.commands if s.component == comp and not s.commented and was.covers(s)]
        new = [s for s in guide.commands if s.component == comp and not s.commented and table.covers(s)]
        if not old or not new or old[-1].ref == new[-1].ref or not ctx.is_added_line(src.path, new[-1].line):
            continue
        if agree(ctx, comp, was.value, old[-1].value) is not True:
            continue
        if agree(ctx, comp, table.value, new[-1].value) is not None:
            continue  # a known disagreement is _tables_vs_commands' to report
        yield Hit(
            src.path,
            new[-1].line,
            f"This change moves {comp} from `{old[-1].ref}` to `{new[-1].ref}`, but {table.how} still says "
            f"{table.shown}, the release the old commands installed. Update the table to what "
            f"`{new[-1].ref}` is (or name the commit there).",
            related=(Related(src.path, table.line, "the table"),),
        )
