"""The data model, the floor every other one stands on: :class:`~odtmip.core.data.Dataset` and its encoding
(:mod:`~odtmip.core.binarize`), :class:`~odtmip.core.tree.Tree`, the metrics, :class:`~odtmip.core.results.SolveResult`,
every solver's options declared as data (:mod:`~odtmip.core.options`), the errors, the datasets and their readers,
tree files (:mod:`~odtmip.core.deploy`) and progress lines. Nothing here imports an engine."""
