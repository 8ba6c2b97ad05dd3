"""One colour per encoding, the same in every figure of every run, and one line style per RoPE
scaling. A variant `<k>` takes its k encoding's colour, a `<k>-t_<t>` variant its t encoding's
(the t family shares rope's k), and a scaled variant (`rope+yarn`) its variant's colour with
the scaling's line style. The encodings of the first committed runs keep the colours they were
drawn in (FIRST, in order), so a run of three variants and a run of twenty-one draw rope alike
and an encoding added later (a submission's) moves no committed figure: the registries' other
names take the colours after them in sorted order, and a name no registry holds (a test's)
after those."""

from __future__ import annotations

from matplotlib import colormaps

from dtpe.model import catalog

LINE_STYLES = {"": "-", "linear": "--", "ntk": ":", "yarn": "-."}
"""a scaling's line style; "" the trained encoding itself"""
_COLOURS = [
    c
    for name in ("tab10", "Dark2", "Set1", "tab20b")
    for c in colormaps[name].colors
    # grey is the reference's in a panel of others (analysis/panels.py); yellow fades into white
    if len(set(c)) > 1 and 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2] < 0.75
]
"""Saturated colours, none grey, none so light that a line of it fades into the white"""


FIRST = (
    *("alibi", "cope", "dape", "erpe", "fire", "kerple", "learned", "learnedlong", "nope"),
    *("rope", "shaw", "sinusoidal", "t5", "tape", "tupe", "tuper", "xpos"),
    *("t_learned", "t_none", "t_randomized", "t_sinusoidal", "t_tpe"),
)
"""the colour keys of the encodings the committed figures were drawn with, in colour order"""


def key(variant: str) -> str:
    """The encoding a variant's colour stands for: its k encoding, or `t_<t>` where its t is not
    the default; a scaling and a name no registry reads keep the name."""
    name = variant.partition("+")[0]
    try:
        parsed = catalog.variant(name)
    except ValueError:
        return name
    return parsed.k if parsed.t == catalog.DEFAULT_T else f"t_{parsed.t}"


def colours(variants) -> dict[str, tuple]:
    """{variant: colour} for `variants` (scaled ones included)."""
    registered = catalog.encodings()
    known = [*sorted(registered["k"]), *(f"t_{t}" for t in sorted(registered["t"]))]
    keys = list(dict.fromkeys([*FIRST, *known, *(key(v) for v in variants)]))
    return {v: _COLOURS[keys.index(key(v)) % len(_COLOURS)] for v in variants}


def line_style(variant: str) -> str:
    """A scaled variant's line style (LINE_STYLES), solid for the trained encoding."""
    return LINE_STYLES.get(variant.partition("+")[2], "-")
