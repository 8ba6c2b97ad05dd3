"""The statistical methods in one sentence each, as the statistics stage ran them: written to
results/stats/methods.json for the captions and the report, which show them as written."""

from __future__ import annotations

from dtpe.analysis.group_sequential import SPENDING_NAMES
from dtpe.analysis.inference import MAX_EXACT_PERMUTATIONS, POWER


def sentences(sp, verdict) -> dict:
    """The methods in one sentence each, for captions and the report."""
    claim = verdict.claim_alpha(sp.alpha)
    split = (
        f" Each kind of claim spends α = {claim:g}, half the run's {sp.alpha:g}, so that the "
        "family's rejections and equivalences together err at most that."
        if claim != sp.alpha
        else ""
    )
    if verdict.sequential:
        decided = (
            "Each hypothesis compares two variants' per-seed success averaged over its grid "
            "sizes. Seeds are added in interims of "
            f"{verdict.sequential['seeds_per_interim']} (at most "
            f"{verdict.sequential['interims']}) by a group-sequential Welch test per hypothesis "
            f"with Lan-DeMets {SPENDING_NAMES[verdict.sequential['spending']]} spending of "
            f"α = {claim:g} / the declared hypotheses (Bonferroni), boundaries computed from "
            "the design alone (analysis/group_sequential.py); a decided hypothesis stops, and a "
            "variant in no open hypothesis trains no more seeds. Estimates after a stop: stagewise "
            "median-unbiased, with its interval, beside the naive mean difference. Undecided at "
            "the cap: equivalent where Welch's two one-sided tests against the declared margin "
            "pass at α after Holm over the hypotheses tested for equivalence, else undecided."
            + split
        )
    elif verdict.declared():
        decided = (
            "Each hypothesis compares two variants' per-seed success averaged over its grid "
            "sizes: exact permutation test over seed labels, Holm over the declared family; "
            "not rejected: equivalent where Welch's two one-sided tests against the declared "
            "margin pass at α after Holm over the hypotheses tested for equivalence, else "
            "undecided." + split
        )
    else:
        decided = "No hypotheses declared: the primary family is every pair at every grid size."
    return {
        "verdict": decided,
        "aggregates": (
            "rliable's aggregates (Agarwal et al. 2021) over the grid sizes beyond training taken "
            "as tasks: the IQM of every seed × grid score (25 % trimmed mean) and the performance "
            "profile (the share of scores above each threshold), with a stratified bootstrap "
            f"({sp.bootstrap_resamples} resamples; each grid's seeds resampled on their own: "
            "scipy.stats.bootstrap, one sample per grid, percentile)."
        ),
        "unit": "the training seed; every model of a grid size plays the same layouts.",
        "bootstrap": (
            f"{100 * (1 - sp.alpha):g} % percentile interval of a two-level bootstrap "
            f"({sp.bootstrap_resamples} resamples, scipy.stats.bootstrap): the seeds of each "
            "variant resampled independently, the shared layouts resampled jointly."
        ),
        "permutation": (
            "two-sided permutation test of the difference of mean success over seed labels "
            "(scipy.stats.permutation_test, exact up to "
            f"{MAX_EXACT_PERMUTATIONS} relabellings); p_min is the smallest p the design allows."
        ),
        "holm": (
            "the pairwise comparisons are exploratory and unadjusted: the correction covers the "
            "declared hypotheses only (Verdict)."
            if verdict.declared()
            else "Holm's step-down adjustment over the primary family: every pair of variants "
            "at every grid size at the training context."
        ),
        "prob_improvement": (
            "P(a seed of a beats a seed of b), ties counted half: Mann-Whitney U / (n_a n_b)."
        ),
        "iqm": "interquartile mean of per-seed success (scipy.stats.trim_mean, 25 %).",
        "cohens_d": "difference of per-seed mean success over the pooled seed SD (ddof 1).",
        "ranking": (
            "per grid size at the training context, variants ordered by mean success; each "
            "one's gap to the first with the bootstrap interval of that difference (unadjusted: "
            "Holm p in the comparisons); the leading group is the first and every variant whose "
            "gap interval covers 0 (no group with one seed: the intervals are undefined)."
        ),
        "power": (
            f"two-sample t approximation: the difference detectable at {POWER:.0%} power with "
            "the seeds used, from the pooled seed SD of the grid size. Chance gap: the "
            f"difference that {sp.study_seeds} seeds per variant (the study's count) exceed "
            f"by chance in {100 * sp.alpha:g} % of comparisons of two equal variants, at the "
            "grid size's pooled seed SD (normal seeds)."
        ),
        "study_seeds": sp.study_seeds,
        "alpha": sp.alpha,
        "claim_alpha": claim,
        "confidence": 1 - sp.alpha,
        "floor_pct": sp.floor_pct,
    }
