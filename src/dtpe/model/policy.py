"""The Decision Transformer as a policy of batched episodes (steps/rollout.py plays it): it keeps
what the model is given, each state encoded once when it is observed, and picks the greedy
action. The window is the last `context` timesteps, re-indexed k = 0..w-1 at every step (aligned
at its first timestep, as in training). A context that holds the whole episode (at least its cap)
never slides: every step runs its own tokens against the cached ones, a cost linear in the steps
so far."""

from __future__ import annotations

import numpy as np
import torch

from dtpe.model.transformer import TOKENS_PER_STEP, KVCache, autocast


class DecisionTransformerPolicy:
    """Greedy actions of `model` conditioned on `target_return`, the return-to-go falling by each
    reward observed. Raises NotApplicable if the model's k encoding cannot index `context`.
    `cached` False runs the whole window at every step: the reference the cache is tested
    against, whose step costs grow with the square of the window."""

    def __init__(
        self,
        model,
        context: int,
        target_return: float,
        precision: str = "fp32",
        cached: bool = True,
    ):
        model.k_encoding.check(torch.tensor([context - 1]))  # raises NotApplicable before any work
        self.model, self.context, self.cached = model, context, cached
        self.target_return, self.precision = target_return, precision
        self.dev = next(model.parameters()).device
        self.n_actions = model.vocabulary.n_actions

    def start(self, batch_size: int, cap: int) -> None:
        """Forgets any earlier episodes: room for `batch_size` episodes of up to `cap` steps."""
        model, dev, b = self.model, self.dev, batch_size
        self.state_emb = torch.zeros(b, cap, model.cfg.d_model, device=dev)
        self.rtg = torch.zeros(b, cap, device=dev)
        self.actions = torch.zeros(b, cap, dtype=torch.long, device=dev)
        self.timesteps = torch.arange(cap, device=dev)
        self.current_rtg = torch.full((b,), float(self.target_return), device=dev)
        # While the window grows from step 0, every token keeps its k and the cache is exact;
        # once it slides, each step re-indexes the window from k = 0 and the whole window runs
        # again. It never holds more than an episode: a whole-episode context far beyond the cap
        # of a small suite would otherwise reserve memory no step reaches.
        steps = min(self.context, cap)
        self.cache = KVCache(len(model.blocks), b, TOKENS_PER_STEP * steps) if self.cached else None
        self.t = 0

    @torch.no_grad()
    def act(self, obs: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Actions (B,) int64 for observations (B, H, W) and their softmax probabilities
        (B, n_actions) float32; rows not `active` (B,) bool get action 0 and probabilities 0."""
        model, dev, t = self.model, self.dev, self.t
        b = len(active)
        rows = torch.from_numpy(np.flatnonzero(active)).to(dev)
        lo = max(0, t + 1 - self.context)
        cache = self.cache if lo == 0 else None
        start = lo
        if cache is not None:
            cache.rows = rows
            # Only the steps the cache lacks are gathered: gathering the whole history at every
            # step would cost the square of the episode's length in copies.
            start = cache.tokens // TOKENS_PER_STEP
        with autocast(dev, self.precision):
            self.state_emb[rows, t] = model.encode_states(
                torch.from_numpy(obs).to(dev)[rows]
            ).float()
            self.rtg[rows, t] = self.current_rtg[rows]
            logits = model.next_action(
                self.rtg[rows, start : t + 1],
                self.state_emb[rows, start : t + 1],
                self.actions[rows, start : t + 1],
                self.timesteps[start : t + 1].expand(len(rows), -1),
                cache,
                start=0 if cache is None else start,
            )
        choice = torch.zeros(b, dtype=torch.long, device=dev)
        choice[rows] = logits.argmax(-1)
        self.actions[:, t] = choice
        probs = torch.zeros(b, self.n_actions)
        probs[rows.cpu()] = logits.float().softmax(-1).cpu()
        self.t += 1
        return choice.cpu().numpy(), probs.numpy()

    def observe(self, rewards: np.ndarray) -> None:
        """The rewards (B,) of the step just taken: the return-to-go falls by them, in float32."""
        self.current_rtg -= torch.from_numpy(rewards.astype(np.float32)).to(self.dev)
