"""NPU215: a CI matrix entry names a test config file (`config_file_path` under `config_base_path`) that does not
exist."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from checks.context import Context, SourceFile
from checks.kinds import WORKFLOW, YAML
from checks.model import Severity
from checks.parsers.yamlmarks import parse as parse_yaml
from checks.rule import Hit, Rule

FILE_KEY = "config_file_path"
BASE_KEY = "config_base_path"


class CiTestConfigMissing(Rule):
    """A CI test entry points at a config file that is not in the repository.

    Why: nightly and weekly test matrices (vLLM-Ascend's `.github/workflows/configs/*_config.yaml`, or a
    workflow's `strategy.matrix.include`) name each case's config as `config_file_path` inside
    `config_base_path`. When the file was renamed, moved to another base directory or misspelled (paths are
    case-sensitive on the runner), the job fails only when the schedule runs it, after the runner and the
    model download were paid for. vllm-ascend shipped such entries twice in a month
    (`Kimi-K2.6-W4A8-64k-1k-TPOT50-PD.yaml` under the weekly base path exists only under the nightly one).

    Bad:
        - name: Kimi-K2.6-W4A8-64k-1k-TPOT50-PD
          config_file_path: Kimi-K2.6-W4A8-64k-1k-TPOT50-PD.yaml
          config_base_path: tests/e2e/weekly/multi_node/external_dp/config   # the file is under nightly/

    Good:
        - name: Kimi-K2.6-W4A8-64k-1k-TPOT50-PD
          config_file_path: Kimi-K2.6-W4A8-64k-1k-TPOT50-PD.yaml
          config_base_path: tests/e2e/nightly/multi_node/external_dp/config

    Fix: point the entry at the file as it is named at head (the message lists where a file of that name is).

    Not reported: entries whose base path comes from elsewhere (a reusable workflow's input default: not
    resolved), values with `${{ }}` expressions, and entries whose path cannot be read as a repository path.
    """

    id = "NPU215"
    name = "ci-test-config-missing"
    severity = Severity.WARNING
    title = "CI test config file named by a matrix entry does not exist"
    kinds = frozenset({YAML, WORKFLOW})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if FILE_KEY not in src.text or BASE_KEY not in src.text:
            return
        doc = ctx.parsed("yamlmarks", src, parse_yaml)
        if doc.root is None:
            return
        for _, node in doc.root.walk():
            if not node.is_map:
                continue
            name_node, base_node = node.get(FILE_KEY), node.get(BASE_KEY)
            if name_node is None or base_node is None or not name_node.is_scalar or not base_node.is_scalar:
                continue
            name, base = name_node.value.strip(), base_node.value.strip()
            if not name or not base or "${{" in name + base or name.startswith("/") or base.startswith("/"):
                continue
            path = posixpath.normpath(posixpath.join(base, name))
            if path.startswith("..") or ctx.exists_at_head(path):
                continue
            leaf = posixpath.basename(path)
            elsewhere = [p for p in ctx.head_paths() if posixpath.basename(p) == leaf][:3]
            other_case = [p for p in ctx.head_paths() if p.lower() == path.lower()][:1]
            if other_case:
                hint = f" A file differs only in case: `{other_case[0]}` (paths are case-sensitive)."
            elif elsewhere:
                hint = " A file of that name is at " + ", ".join(f"`{p}`" for p in elsewhere) + ": wrong base path?"
            else:
                hint = ""
            yield Hit(
                src.path,
                name_node.line,
                f"`{path}` does not exist: this test entry's job fails when it runs.{hint}",
            )
