"""The Günlük model built with Pyomo (routing rows as LinearRows) is row for row the matrix assembled independently
with numpy (:mod:`gunluk_direct`), and both give the same LP and MIP values."""

from tests.models.gunluk_direct import check_same_model


def test_pyomo_model_equals_the_direct_numpy_build(capsys):
    assert check_same_model(n=150, mip_n=80, mip_seconds=60.0)
    out = capsys.readouterr().out
    assert "same rows up to order/sign True" in out and "DIFFER" not in out
