"""`lawindex ask`: placeholder until the reference engine lands (issue 2)."""
