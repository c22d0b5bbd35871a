#!/usr/bin/env bash
# The action's review step: what to review comes from the event GitHub wrote to $GITHUB_EVENT_PATH.
#   pull_request, pull_request_target: base.sha..head.sha; push: before..after; anything else: the whole tree.
# Prints the findings as workflow commands (annotations), writes SARIF, exits as `npu-review check` does.
set -euo pipefail
workspace="${GITHUB_WORKSPACE:?}"
event="${GITHUB_EVENT_NAME:-}"
sarif="${INPUT_SARIF_FILE:-npu-review.sarif}"
case "$sarif" in /*) ;; *) sarif="$workspace/$sarif" ;; esac

field() {  # a value of the event payload by its dotted path, "" when absent
    python3 -c 'import json, sys
value = json.load(open(sys.argv[1]))
for key in sys.argv[2].split("."):
    value = value.get(key) if isinstance(value, dict) else None
print(value if isinstance(value, str) else "")' "${GITHUB_EVENT_PATH:?}" "$1"
}

have() { git -C "$workspace" cat-file -e "$1^{commit}" 2>/dev/null; }
ensure() {  # a shallow checkout may lack the commit: fetch just it
    have "$1" || git -C "$workspace" fetch --quiet --no-tags --depth=1 origin "$1"
}

base="" head=""
case "$event" in
    pull_request | pull_request_target)
        base="$(field pull_request.base.sha)"
        head="$(field pull_request.head.sha)"
        ;;
    push)
        base="$(field before)"
        head="$(field after)"
        # A new branch has no "before" (all zeros): review its head commit against its parent.
        if [[ "$base" =~ ^0+$ ]]; then base="$head~1"; fi
        ;;
esac

args=(check --repo "$workspace" --format github --fail-on "${INPUT_FAIL_ON:-error}" --sarif "$sarif")
if [ -n "${INPUT_CONFIG:-}" ]; then args+=(--config "$INPUT_CONFIG"); fi
if [ -n "$base" ] && [ -n "$head" ]; then
    ensure "$head"
    ensure "${base%~1}"
    if [[ "$base" == *~1 ]]; then
        base="$(git -C "$workspace" rev-parse --verify --quiet "$base^{commit}" || true)"
    fi
fi
if [ -n "$base" ] && [ -n "$head" ]; then
    echo "npu-review: reviewing ${base:0:12}..${head:0:12} ($event)"
    args+=(--base "$base" --head "$head")
else
    echo "npu-review: reviewing the whole tree ($event)"
    args+=(--all)
fi

status=0
npu-review "${args[@]}" || status=$?
if [ -f "$sarif" ]; then
    count="$(python3 -c 'import json, sys; print(sum(len(r["results"]) for r in json.load(open(sys.argv[1]))["runs"]))' "$sarif")"
    echo "sarif-file=$sarif" >>"${GITHUB_OUTPUT:?}"
    echo "findings=$count" >>"$GITHUB_OUTPUT"
    echo "npu-review: $count finding(s); SARIF in $sarif"
fi
exit "$status"
