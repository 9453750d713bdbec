"""
A first integer program for decision trees: the Günlük et al. categorical-subset model
======================================================================================

Run it with ``python examples/01_gunluk_teaching.py``. It walks through one model on Quinlan's 14-day
"play tennis" table:

1. build the IP (8) of Günlük, Kalagnanam, Li, Menickelly and Scheinberg on a balanced depth-2 tree,
2. print the model (the constraint names and ``doc`` strings cite the paper's equations),
3. solve its LP relaxation and see why it is weak (it claims every day is classified correctly),
4. solve the integer program cold, then warm-started from the dynamic-programming optimum,
5. read the optimal tree, draw it, and check it against the DP.

Known optimum: 2 misclassified days at depth 2 (12 of 14 correct); the LP relaxation claims 14 of 14.
"""

import pandas as pd

import odtmip
from odtmip import Dataset
from odtmip.dp import solve_dp
from odtmip.models import gunluk, lp_relaxation, model_statistics

ROWS = """\
sunny    hot  high   weak   no
sunny    hot  high   strong no
overcast hot  high   weak   yes
rain     mild high   weak   yes
rain     cool normal weak   yes
rain     cool normal strong no
overcast cool normal strong yes
sunny    mild high   weak   no
sunny    cool normal weak   yes
rain     mild normal weak   yes
sunny    mild normal strong yes
overcast mild high   strong yes
overcast hot  normal weak   yes
rain     mild high   strong no"""


def play_tennis() -> tuple[pd.DataFrame, pd.Series]:
    """Quinlan's play-tennis table: four categorical features and the label ``play``."""
    frame = pd.DataFrame([line.split() for line in ROWS.splitlines()],
                         columns=["outlook", "temperature", "humidity", "wind", "play"])
    return frame.drop(columns="play").astype("category"), frame["play"]


def main(verbose: bool = True) -> dict:
    """Run the walk-through; returns the numbers it prints (the test suite checks them)."""
    say = print if verbose else (lambda *a, **k: None)
    X, y = play_tennis()
    data = Dataset(X, y)  # categorical columns become one-hot groups: outlook={overcast, rain, sunny}, ...
    options = gunluk.GunlukOptions(topology="depth2")

    # 1-2. The model reads like the paper: sets K, B, I, G, J; variables v, z, c; constraints (1), (2), (11), ...
    m = gunluk.build_model(data, options)
    say(f"data: {data.describe()}")
    say(f"model: {model_statistics(m)}")
    if verbose:
        m.one_group_per_node.pprint()  # (1): sum_g v[g,k] == 1 at every decision node k
        m.anchor.pprint()  # (13): at the root, the anchor column of the chosen group goes left
        # (11) for day 0 (a "no" day, so only c at the negative leaf 1 exists, by (14)): sum_j a_j z_j,1 is L(0, 1)
        say(f"left_branch[0, 1]: {m.left_branch[0, 1].expr}")

    # 3. LP relaxation: z = 1/2 everywhere sends every sample half left, half right, and c = 1/2 puts half of
    #    each sample in a correct leaf on each side, so the LP "classifies everything correctly" ([GKLMS] §4.3).
    lp_value = lp_relaxation(m)
    say(f"LP relaxation of (8a): {lp_value:g} correct of {data.n_samples} -- the LP bound is trivial")

    # 4. Solve cold, then warm-started from the DP optimum over the same splits.
    cold = odtmip.solve(data, "gunluk", options=options, warm_start="none")
    warm = odtmip.solve(data, "gunluk", options=options, warm_start="dp")
    say(f"cold start: {cold.status.value}, {cold.objective:g} misclassified, {cold.stats['nodes']} B&B nodes")
    say(f"warm start: accepted={warm.stats['warm_start_accepted']}, {warm.objective:g} misclassified, "
        f"{warm.stats['nodes']} B&B nodes")

    # 5. The tree, in the original feature names, and the DP's verdict.
    say(warm.tree.to_text())
    dp = solve_dp(data, max_depth=2)
    say(f"DP optimum over one-hot columns: {dp.objective:g} misclassified (the MIP agrees: "
        f"{dp.objective == warm.objective})")
    figure = warm.tree.plot().figure  # the same tree, drawn (matplotlib: the ``plot`` extra)
    return {"lp_value": lp_value, "cold": cold.objective, "warm": warm.objective, "dp": dp.objective,
            "accepted": warm.stats["warm_start_accepted"], "figure": figure}


if __name__ == "__main__":
    import matplotlib.pyplot as plt

    main()
    plt.show()
