"""Topologies of [GKLMS] Figures 2-3: numbering, paths, anchor nodes, integer-z nodes, parse errors."""

import pytest

from odtmip.core.exceptions import OptionError
from odtmip.models.topology import Topology


def test_figure2_balanced_depth3_paths():
    t = Topology.parse("depth3")
    assert t.nodes == list(range(1, 8)) and t.leaves == list(range(1, 9))
    assert t.paths == {1: ([1, 2, 3], []), 2: ([1, 2], [3]), 3: ([1, 4], [2]), 4: ([1], [2, 4]),
                       5: ([5, 6], [1]), 6: ([5], [1, 6]), 7: ([7], [1, 5]), 8: ([], [1, 5, 7])}


@pytest.mark.parametrize("name, anchors, integer_z, depth", [
    ("depth2", [1], [1], 2),
    ("depth2.5", [2], [1, 2], 3),
    ("depth3", [1, 2, 5], [1, 2, 5], 3),
    ("imbalanced", [3], [1, 2, 3], 4),
])
def test_anchor_and_integer_nodes_match_the_paper(name, anchors, integer_z, depth):
    t = Topology.parse(name)
    assert t.anchor_nodes() == anchors  # (13): not leaf-adjacent, symmetric subtrees
    assert [k for k in t.nodes if not t.leaf_adjacent(k)] == integer_z  # Proposition 3
    assert t.depth == depth


def test_balanced_and_custom_shapes():
    assert Topology.parse("balanced-4").leaves == list(range(1, 17))
    assert Topology.parse("((L L) (L L))").shape == Topology.parse("depth2").shape
    assert Topology.parse("(L L)").depth == 1


@pytest.mark.parametrize("text, message", [
    ("(L (L L))", "one leaf child and one decision child"),
    ("((L L)", "ends too early"),
    ("L", "at least one decision node"),
    ("oak", "unknown topology"),
    ("(L L L)", "exactly two children"),
    ("balanced-40", "between 1 and 12"),
])
def test_bad_topologies(text, message):
    with pytest.raises(OptionError, match=message):
        Topology.parse(text)
