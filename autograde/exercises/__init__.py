"""One folder per exercise: its manifest, its checks, its hidden cases and its expected values.

``<name>/`` here goes with ``exercises/<name>/<name>.ipynb`` at the course
root; :mod:`autograde.checking.manifest` says what each folder holds and
:mod:`autograde.checking.registry` finds them.
"""
