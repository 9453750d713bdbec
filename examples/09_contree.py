"""
Continuous features: ConTree against binarisation
=================================================

Run it with ``python examples/09_contree.py`` (a few seconds). A dynamic program over binary columns is only as
good as its columns. Cutting every numeric column into decile buckets makes a small search, but the "optimal" tree
is then optimal over bucket-membership tests only, and on the bundled breast-cancer data it loses to greedy CART.
Encoding every midpoint between consecutive values as a column is exact but makes thousands of columns.

ConTree (Brița, van der Linden, Demirović, "Optimal classification trees for continuous feature data using
dynamic programming with branch-and-bound", AAAI 2025) searches the thresholds of the raw columns directly: a
lower bound from the children's cached bounds (Eq. 3) prunes whole ranges of thresholds (the neighbourhood,
interval and sub-interval rules), and a specialised depth-two routine (Alg. 2) scans each column's sorted rows
once. It is odtmip's default for numeric columns (``numeric="auto"``).

The script fits depth-2 trees to breast-cancer (569 rows, 30 numeric columns) four ways and prints the split
space each optimum is over:

* the DP on decile buckets (``numeric="buckets"``);
* scikit-learn's CART (greedy, every threshold);
* ConTree on the raw columns;
* the MurTree DP on one binary column per midpoint (``numeric="thresholds"``), the same split space as ConTree.

Known results (the test suite checks them): 98 training errors on buckets, 33 for CART, 22 for ConTree and for
the DP on every midpoint -- the optimum over all thresholds, which no greedy tree beats.
"""

import time

import numpy as np
from sklearn.tree import DecisionTreeClassifier

import odtmip
from odtmip.core.datasets import load

DEPTH = 2


def main(verbose: bool = True) -> dict:
    """Fit the four trees; returns their training errors and times (the test suite checks the errors)."""
    say = print if verbose else (lambda *a, **k: None)
    X, y = load("breast-cancer")
    errors, seconds = {}, {}

    buckets = odtmip.Dataset(X, y, numeric="buckets")
    res = odtmip.solve(buckets, "dp", max_depth=DEPTH)
    errors["DP, decile buckets"], seconds["DP, decile buckets"] = res.objective, res.seconds
    say(f"DP on {buckets.n_binary} bucket columns: {res.objective:g} errors, optimal over "
        f"{res.stats['split_space']}")

    t = time.perf_counter()
    cart = DecisionTreeClassifier(max_depth=DEPTH, random_state=0).fit(X, y)
    errors["CART (greedy)"] = float(np.sum(cart.predict(X) != np.asarray(y)))
    seconds["CART (greedy)"] = time.perf_counter() - t
    say(f"CART: {errors['CART (greedy)']:g} errors (greedy, every threshold)")

    raw = odtmip.Dataset(X, y)  # numeric="auto": ConTree on the raw columns
    res = odtmip.solve(raw, "contree", max_depth=DEPTH)
    errors["ConTree"], seconds["ConTree"] = res.objective, res.seconds
    say(f"ConTree: {res.objective:g} errors in {res.seconds:.2f} s, optimal over {res.stats['split_space']}")
    say(res.tree.to_text())

    midpoints = odtmip.Dataset(X, y, numeric="thresholds")
    res = odtmip.solve(midpoints, "dp", max_depth=DEPTH)
    errors["DP, every midpoint"], seconds["DP, every midpoint"] = res.objective, res.seconds
    say(f"DP on {midpoints.n_binary} midpoint columns: {res.objective:g} errors in {res.seconds:.2f} s")
    return {"errors": errors, "seconds": seconds, "figure": plot(errors)}


def plot(errors):
    """Training errors of the four depth-2 trees."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3))
    names = list(errors)
    ax.barh(names, [errors[n] for n in names], color=["tab:gray", "tab:orange", "tab:blue", "tab:blue"])
    for i, n in enumerate(names):
        ax.annotate(f"{errors[n]:g}", (errors[n], i), xytext=(3, 0), textcoords="offset points", va="center")
    ax.invert_yaxis()
    ax.set_xlabel(f"training errors of a depth-{DEPTH} tree (breast-cancer, 569 rows)")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    import matplotlib.pyplot as plt

    main()
    plt.show()
