#!/usr/bin/env bash
# Sets up .venv with the pinned versions (requirements.lock) and the package in editable mode.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet -c requirements.lock -e ".[dev]"
# tsai's ConvTran classes are the tests' oracle for tAPE and eRPE; its own requirements (fastai,
# which wants torchvision) do not install beside the pinned torch, and the oracle needs none.
.venv/bin/pip install --quiet --no-deps tsai==1.0.1
