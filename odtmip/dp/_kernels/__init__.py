"""Compiled kernels of the DP engine (numba ``@njit`` only; arrays and scalars in, no Python objects)."""
