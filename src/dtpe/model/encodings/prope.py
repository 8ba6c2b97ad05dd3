"""k: p-RoPE (Barbero et al. 2025, "Round and round we go! What makes rotary positional encodings
useful?"): RoPE on the fastest fraction p of each head's frequencies only; the slowest 1 - p are
not rotated at all. Their argument: the slowest frequencies barely turn within a training
window, so a model uses them as channels of content, and beyond training they turn at last and
the content they carry drifts; removing them leaves that content to unrotated channels, as NoPE
keeps all of it. p = 1 is RoPE; p = 0 is NoPE. RoPE's scalings (`for_context`) act on the
frequencies that are kept.

Frequencies are counted in pairs (d_head / 2 of them, as rope.py pairs halves); a fraction that
does not fall on a pair keeps the nearest whole number of pairs (round half to even)."""

from __future__ import annotations

from dtpe.model.encodings.base import register
from dtpe.model.encodings.rope import Rope


@register("k", "prope", "closed form: rope.py's angles with the slowest (1 - p) pairs at 0")
class PartialRope(Rope):
    options = {"p": 0.0}

    def __init__(self, cfg):
        super().__init__(cfg)
        p = float(cfg.options["k"]["p"])
        if p > 1:
            raise ValueError(f"prope: p is the fraction of frequencies kept, in [0, 1]; got {p}")
        self.kept = round(p * self.head_dim / 2)
        """how many of the fastest frequency pairs rotate"""

    def angles(self, positions):
        angle, factor = super().angles(positions)
        angle = angle.clone()
        angle[:, self.kept :] = 0.0  # the slowest pairs: rope's inv_freq falls with the index
        return angle, factor
