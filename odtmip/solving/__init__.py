"""Where the two engines meet: :func:`~odtmip.solving.solvers.solve` runs any solver by name, the MIP pipeline
(:mod:`~odtmip.solving.pipeline`) starts a formulation from the DP's trees and bounds, :mod:`~odtmip.solving.check`
compares a model's optimum with the DP's, and :mod:`~odtmip.solving.compare` runs grids of both."""
