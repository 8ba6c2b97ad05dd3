"""What a training job asks a cluster for (Snakemake's `mem_mb` and `runtime` resources, the
SLURM executor's memory and time limits), from the model's size and the windows it trains on."""

from __future__ import annotations

from dtpe.params import Params, split_sizes

CALIBRATION_WIDTH_X_DEPTH = 128 * 3
"""d_model x n_layers of the calibration model: about 6 minutes for 20 epochs of 3,500
training episodes on 2 cores"""
CALIBRATION_WINDOWS = 20 * 3500


def model_size(params: Params) -> float:
    """Width x depth relative to the calibration model: 0.5 for params.yaml, 6.7 at the
    study's scale."""
    return params.model.d_model * params.model.n_layers / CALIBRATION_WIDTH_X_DEPTH


def train_resources(params: Params) -> dict:
    """4 GB (torch, the data, a CUDA context) plus 1 GB per unit of size, and 15 minutes per
    unit of size per 70,000 training windows (one per training episode per epoch), at least an
    hour: ample on a GPU."""
    size = model_size(params)
    train = split_sizes(params.data.episodes, params.data.split)["train"]
    windows = params.train.epochs * train / CALIBRATION_WINDOWS
    return {
        "mem_mb": 4000 + round(1000 * size),
        "runtime": max(60, round(15 * size * windows)),
    }
