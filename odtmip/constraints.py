"""Side constraints for the MIP formulations (and those the DP expresses): the public name of
:mod:`odtmip.models.constraints`, where they are defined over the models' :class:`~odtmip.models.view.TreeView`.

>>> from odtmip.constraints import MaxFeatures, StatisticalParity
>>> [MaxFeatures(2), StatisticalParity("sex", 0.05)]
[MaxFeatures(2), StatisticalParity('sex', 0.05)]
"""

from odtmip.models.constraints import *  # noqa: F403 (the public names)
from odtmip.models.constraints import __all__  # noqa: F401
