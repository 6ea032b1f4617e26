"""Leave-one-out: the picture without each unit, for every unit.

``loo`` (naive: one render per unit; fast: layers composited in z-order), the layers
themselves (``layers``, ``layer_render``: pruned texts, captured many at a time), the
blocks of units whose layers are not independent (``blocks``) and the windows that rebuild
one subpath of a compound path (``subpath_windows``).
"""
