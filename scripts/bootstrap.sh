#!/usr/bin/env bash
# Sets up .venv with the pinned versions (requirements.lock) and the package in editable mode.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet -c requirements.lock -e ".[dev]"
