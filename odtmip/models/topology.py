"""Fixed tree shapes (topologies) for the MIP models.

A topology is a full binary tree: every decision node has two decision-node children or two leaf children
([GKLMS] §2). Decision nodes are numbered 1.. in depth-first pre-order (left child first) and leaves 1.. from
left to right, as in Figures 2 and 3 of [GKLMS]. A shape is written as nested parentheses: ``"L"`` is a leaf and
``"(A B)"`` a decision node with subtrees A and B, e.g. ``"((L L) (L L))"`` is the balanced depth-2 tree.

Named topologies ([GKLMS] Figures 2–3): ``depth2``, ``depth2.5``, ``depth3``, ``imbalanced``, and
``balanced-D`` for any depth D >= 1.

References
----------
.. [GKLMS] O. Günlük, J. Kalagnanam, M. Li, M. Menickelly, K. Scheinberg, "Optimal decision trees for
   categorical data via integer programming", Journal of Global Optimization 81 (2021) 233–260.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from odtmip.core.exceptions import OptionError

NAMED = {
    "depth2": "((L L) (L L))",
    "depth2.5": "(((L L) (L L)) (L L))",
    "depth3": "(((L L) (L L)) ((L L) (L L)))",
    "imbalanced": "((((L L) (L L)) (L L)) (L L))",
}


@dataclass(frozen=True)
class Topology:
    """A fixed tree shape with [GKLMS]'s numbering.

    Attributes
    ----------
    shape : str
        The nested-parentheses form.
    children : dict
        ``children[k] = (left, right)`` for each decision node k; a child is ``("node", k')`` or ``("leaf", b)``.
    """

    shape: str
    children: dict

    @classmethod
    def parse(cls, text: str) -> Topology:
        """A topology from a name (``depth3``, ``balanced-4``, ...) or a nested-parentheses shape."""
        name = text.strip().lower()
        if name in NAMED:
            text = NAMED[name]
        elif re.fullmatch(r"balanced-\d+", name):
            depth = int(name.split("-")[1])
            if not 1 <= depth <= 12:
                raise OptionError(f"balanced topology depth must be between 1 and 12, got {depth}")
            text = _balanced(depth)
        tokens = re.findall(r"\(|\)|L", text.upper())
        if "".join(tokens) != re.sub(r"\s+", "", text.upper()):
            raise OptionError(f"unknown topology {text!r}: use a name ({', '.join(NAMED)}, balanced-D) "
                              "or a shape such as '((L L) (L L))'")
        children: dict = {}
        counters = {"node": 0, "leaf": 0}
        pos = _parse(tokens, 0, children, counters, text)
        if pos != len(tokens):
            raise OptionError(f"topology {text!r} has text after the tree")
        if not children:
            raise OptionError("a topology needs at least one decision node")
        topo = cls(shape=_shape(children, ("node", 1)), children=children)
        for k, (left, right) in children.items():
            if left[0] != right[0]:
                raise OptionError(f"topology {text!r}: decision node {k} has one leaf child and one decision "
                                  "child; every node needs two leaves or two decision nodes ([GKLMS] §2)")
        return topo

    # ------------------------------------------------------------------ sets
    @cached_property
    def nodes(self) -> list[int]:
        """K: decision nodes 1..|K| (pre-order)."""
        return sorted(self.children)

    @cached_property
    def leaves(self) -> list[int]:
        """B: leaves 1..|B| (left to right)."""
        return sorted(b for pair in self.children.values() for kind, b in pair if kind == "leaf")

    @cached_property
    def paths(self) -> dict[int, tuple[list[int], list[int]]]:
        """For each leaf b: (K^L(b), K^R(b)), the nodes where its root path turns left / right."""
        out: dict[int, tuple[list[int], list[int]]] = {}

        def walk(k, left_turns, right_turns):
            for side, (kind, idx) in zip(("L", "R"), self.children[k], strict=True):
                lt = left_turns + [k] if side == "L" else left_turns
                rt = right_turns + [k] if side == "R" else right_turns
                if kind == "leaf":
                    out[idx] = (lt, rt)
                else:
                    walk(idx, lt, rt)

        walk(1, [], [])
        return out

    def leaf_adjacent(self, k: int) -> bool:
        """True when decision node k has two leaf children."""
        return self.children[k][0][0] == "leaf"

    def symmetric(self, k: int) -> bool:
        """True when node k's left and right subtrees have the same shape."""
        left, right = self.children[k]
        return _shape(self.children, left) == _shape(self.children, right)

    def anchor_nodes(self) -> list[int]:
        """Nodes where the anchor equations (13) of [GKLMS] apply: not leaf-adjacent, symmetric subtrees."""
        return [k for k in self.nodes if not self.leaf_adjacent(k) and self.symmetric(k)]

    @cached_property
    def depth(self) -> int:
        return max(len(lt) + len(rt) for lt, rt in self.paths.values())

    def __str__(self) -> str:
        return self.shape


def _balanced(depth: int) -> str:
    return "L" if depth == 0 else f"({_balanced(depth - 1)} {_balanced(depth - 1)})"


def _parse(tokens, pos, children, counters, text):
    """Parse one subtree at tokens[pos]; returns the position after it and records decision nodes."""
    if pos >= len(tokens):
        raise OptionError(f"topology {text!r} ends too early")
    if tokens[pos] == "L":
        return pos + 1
    if tokens[pos] != "(":
        raise OptionError(f"topology {text!r}: unexpected ')'")
    counters["node"] += 1
    k = counters["node"]
    kids = []
    pos += 1
    for _ in range(2):
        if pos < len(tokens) and tokens[pos] == "L":
            counters["leaf"] += 1
            kids.append(("leaf", counters["leaf"]))
            pos += 1
        else:
            kids.append(("node", counters["node"] + 1))
            pos = _parse(tokens, pos, children, counters, text)
    if pos >= len(tokens) or tokens[pos] != ")":
        raise OptionError(f"topology {text!r}: each decision node needs exactly two children")
    children[k] = tuple(kids)
    return pos + 1


def _shape(children, child) -> str:
    kind, idx = child
    if kind == "leaf":
        return "L"
    left, right = children[idx]
    return f"({_shape(children, left)} {_shape(children, right)})"
