"""Notebooks run headlessly: the runner (python -m durable_nb.run_notebook), every tutorial, saved outputs."""
