"""For whoever writes exercises: the reference solution read from the source notebook, and the leak lints.

``reference`` (run the source notebook's solution cells), ``leaks`` (solution
or hidden-test text where students can see it).
"""
