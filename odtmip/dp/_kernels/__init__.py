"""Compiled kernels of the DP engine (numba ``@njit`` only; arrays, scalars and named tuples of them in)."""
