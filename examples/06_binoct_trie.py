"""
BinOCT's threshold trie and big-Ms
==================================

Run it with ``python examples/06_binoct_trie.py`` (a few seconds). In Verwer and Zhang's BinOCT ([VZ19]) a
branch node picks a feature with ``f[n,f]`` and one of that feature's T candidate thresholds with only
B = ceil(log2 T) binary digits ``t[n,k]``: the digits walk down a trie that halves the range of threshold
indices at every level (``t = 1``: the lower half). Each trie node ν then gives two big-M rows, "if this
feature is chosen and the digits select a threshold above (below) ν's middle, the rows of the lower (upper)
range may not go right (left)", with M the number of rows in the range. The model never has a variable per
(row, threshold), which is what keeps it small.

The script

1. prints the trie over T = 6 threshold indices, the digits of every index (:func:`~odtmip.models.binoct.encode_index`)
   and the split conditions of each trie node (:func:`~odtmip.models.binoct.split_conditions`);
2. checks the encoding exhaustively for T = 1..16: under every digit vector the rows forced left are exactly
   those below the decoded threshold and the rows forced right exactly those above it;
3. builds the depth-2 model of the 7-row counterexample of the module docstring and prints one big-M row of
   each kind (``lower_range_not_right``, ``upper_range_not_left``, ``outside_thresholds``);
4. solves it with every midpoint as a candidate and with the reference code's class-boundary shortcut
   (``thresholds="boundary"``), which drops the threshold the optimal tree needs, and checks both against the
   DP over the same thresholds (:func:`odtmip.solving.check.check`).

Known results (the test suite checks them): the trie over 6 indices has 5 nodes and depth 3; the encoding is
exact for every T from 1 to 16; the big-M of ``lower_range_not_right[1, 0, 0]`` is 4 (rows 1, 4, 5, 6 have
x0 in {1, 2}); with all midpoints the optimum is 0 errors (loss 0), with boundary thresholds 1 error
(loss 1/7); the DP agrees in both cases.
"""

import itertools

import numpy as np
import pyomo.environ as pyo

import odtmip
from odtmip.models import binoct
from odtmip.solving.check import check

#: [VZ19]'s boundary shortcut loses the optimum here: the root split x1 <= 1.5 lies between two class-1 values.
X = np.array([(3, 2), (1, 3), (0, 3), (3, 0), (2, 0), (2, 3), (1, 1)])
Y = [1, 0, 0, 0, 1, 1, 1]


def forced(conditions, bits) -> tuple[set[int], set[int]]:
    """The gaps (value ranges between thresholds) that the active conditions forbid left and right."""
    not_left, not_right = set(), set()
    for c in conditions:
        if all(bits[i] == 0 for i in c.zero_bits) and all(bits[i] == 1 for i in c.one_bits):
            if c.not_left:
                not_left.update(range(c.not_left[0], c.not_left[1] + 1))
            if c.not_right:
                not_right.update(range(c.not_right[0], c.not_right[1] + 1))
    return not_left, not_right


def encoding_is_exact(n_thresholds: int) -> bool:
    """Under every digit vector, gaps 0..j must go left and gaps j+1..T right, j the decoded index."""
    conditions = binoct.split_conditions(n_thresholds)
    for bits in itertools.product((0, 1), repeat=binoct.trie_depth(n_thresholds)):
        j = binoct.decode_index(bits, n_thresholds)
        not_left, not_right = forced(conditions, bits)
        if not_right != set(range(j + 1)) or not_left != set(range(j + 1, n_thresholds + 1)):
            return False
    return True


def main(verbose: bool = True) -> dict:
    """Run the walk-through; returns the numbers it prints (the test suite checks them)."""
    say = print if verbose else (lambda *a, **k: None)

    # 1. The trie over T = 6 threshold indices.
    T = 6
    trie = binoct.threshold_trie(T)
    say(f"trie over {T} threshold indices (depth {binoct.trie_depth(T)}):")
    for q, node in enumerate(trie):
        say(f"  node {q}: prefix {node.prefix}, [{node.low}, {node.high}] -> [{node.low}, {node.mid}] "
            f"| [{node.mid + 1}, {node.high}]")
    say("digits of each index (1 = lower half): "
        + ", ".join(f"{j}: {binoct.encode_index(j, T)}" for j in range(T)))
    for c in binoct.split_conditions(T):
        say(f"  {c}")

    # 2. The encoding, exhaustively.
    exact = {n: encoding_is_exact(n) for n in range(1, 17)}
    say(f"\nencoding exact for T = 1..16: {all(exact.values())}")

    # 3. The model of the counterexample and its big-M rows.
    data = odtmip.Dataset(X, Y)
    m = binoct.build_model(data, 2)
    say(f"\ncandidate thresholds: {[(f.name, f.thresholds) for f in m.bdata.features]}")
    if verbose:
        m.t.pprint()  # B = 2 digits per node for T = 3 thresholds
        say("lower_range_not_right[1, 0, 0]:", m.lower_range_not_right[1, 0, 0].expr)
        say("upper_range_not_left[1, 0, 0]: ", m.upper_range_not_left[1, 0, 0].expr)
        say("outside_thresholds[1, 0]:      ", m.outside_thresholds[1, 0].expr)
    # The row reads rows_in_range <= M (1 - f) + M t: its right-hand side is M, the number of rows in the range.
    big_m = float(pyo.value(m.lower_range_not_right[1, 0, 0].upper))

    # 4. All midpoints against the boundary shortcut, each checked against the DP over the same thresholds.
    out = {"trie_nodes": len(trie), "trie_depth": binoct.trie_depth(T), "exact": exact, "big_m": big_m,
           "loss": {}, "errors": {}, "verdict": {}}
    for thresholds in ("all", "boundary"):
        report = check(data, model="binoct", max_depth=2, thresholds=thresholds)
        r = report.mip
        out["loss"][thresholds] = r.objective
        out["errors"][thresholds] = int(round(r.objective * data.n_samples))
        out["verdict"][thresholds] = report.verdict
        say(f"\nthresholds={thresholds!r}: {r.status.value}, loss {r.objective:g}; DP verdict: {report.verdict}")
        say(r.tree.to_text())
    out["figure"] = plot(trie, T)
    return out


def plot(trie, n_thresholds: int):
    """The trie as nested index ranges: each node's range, split at its middle, one row per level."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 2.8))
    for node in trie:
        y = -node.level
        ax.barh(y, node.mid - node.low + 1, left=node.low - 0.5, height=0.6, color="tab:blue", alpha=0.6,
                edgecolor="black")
        ax.barh(y, node.high - node.mid, left=node.mid + 0.5, height=0.6, color="tab:orange", alpha=0.6,
                edgecolor="black")
        ax.text((node.low + node.high) / 2, y, f"t[k={node.level}]", ha="center", va="center", fontsize=8)
    ax.set_yticks([-k for k in range(binoct.trie_depth(n_thresholds))],
                  [f"level {k}" for k in range(binoct.trie_depth(n_thresholds))])
    ax.set_xticks(range(n_thresholds), [f"τ{j}" for j in range(n_thresholds)])
    ax.set_title(f"Trie over {n_thresholds} threshold indices", fontsize=10)
    ax.set_xlabel("blue: lower half (t = 1), orange: upper half (t = 0)")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    import matplotlib.pyplot as plt

    main()
    plt.show()
