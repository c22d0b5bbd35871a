#!/usr/bin/env bash
# The action's install step: npu-review into the Python on PATH (actions/setup-python's).
#   INPUT_VERSION  empty: the action's own checkout ($GITHUB_ACTION_PATH); 1.2.3: that release from PyPI;
#                  anything else: a pip requirement as given (a path to a wheel, a URL, "npu-review>=0.2").
set -euo pipefail
version="${INPUT_VERSION:-}"
if [ -z "$version" ]; then
    spec="${GITHUB_ACTION_PATH:?}"
elif [[ "$version" =~ ^[0-9]+(\.[0-9]+)*([a-z]+[0-9]*)?$ ]]; then
    spec="npu-review==$version"
else
    spec="$version"
fi
python3 -m pip install --quiet --disable-pip-version-check "$spec"
npu-review rules >/dev/null  # installed and runnable
echo "npu-review installed from $spec"
