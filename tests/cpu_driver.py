"""The tiny rope seed-1 model's train, evaluate and attention steps through the CLI in one
process, printing the sha256 of each output as JSON: tests/test_cpus.py runs it once per
emulated CPU and mode, as Python and torch take ~8 s to start under the emulator.

Usage: python tests/cpu_driver.py PARAMS DATA OUT [--train-only]. Nothing here imports torch
before the CLI: it pins the numerics first (compute.numerics of PARAMS), as a pipeline step does.
A step that fails stops the driver with the CLI's exit code, its error on stderr."""

import hashlib
import json
import sys
from pathlib import Path

from dtpe import cli

params, data, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
model = ["--params", params, "--data", data, "--variant", "rope", "--seed", "1"]
evals = {sweep: out / f"{sweep}.csv" for sweep in ("test", "grid", "context")}
steps = [
    ["train", "--out", out / "model", "--metrics", out / "metrics", "--resume-dir", out / "r"],
    ["evaluate", "--model", out / "model"]
    + [a for s, p in evals.items() for a in (f"--out-{s}", p)],
    ["attention", "--model", out / "model", "--out", out / "attention.json"],
]
for step in steps[:1] if "--train-only" in sys.argv else steps:
    if code := cli.main([step[0], *model, *map(str, step[1:])]):
        sys.exit(code)
hashes = {"model": hashlib.sha256((out / "model" / "model.safetensors").read_bytes()).hexdigest()}
if "--train-only" in sys.argv:
    print(json.dumps(hashes))
    sys.exit()

# The CSVs hold success and steps only, which a model this small never changes (it fails every
# episode at the cap): the test split played again, traced, holds each action's probabilities.
from dtpe import params as params_mod  # noqa: E402
from dtpe.model import checkpoint  # noqa: E402
from dtpe.steps import dataset, rollout  # noqa: E402

p = params_mod.load(params)
lay, _ = dataset.load_split_layouts(data, "test", p.env)
trained, ev, episodes = checkpoint.load(out / "model"), p.evaluate, hashlib.sha256()
for i in range(0, len(lay), ev.batch_size):  # the evaluation's batches: its GEMMs' shapes
    part = lay.subset(slice(i, i + ev.batch_size))
    played = rollout.rollout(
        trained, part, p.env, p.model.context, ev.target_return, ev.precision, trace=True
    )
    episodes.update(played["actions"].tobytes() + played["probs"].tobytes())
for name, path in {**evals, "attention": out / "attention.json"}.items():
    hashes[name] = hashlib.sha256(path.read_bytes()).hexdigest()
print(json.dumps({**hashes, "episodes": episodes.hexdigest()}))
