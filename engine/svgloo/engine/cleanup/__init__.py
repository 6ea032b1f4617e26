"""Lossless cleanup: rewrites that save bytes and are proven not to change the picture.

One job per module: ``editor`` (editor metadata, comments), ``attributes`` (values spelled
shorter, defaults), ``structure`` (blanks, groups, ids, definitions), ``precision``
(rounding); ``edits`` is what they propose, ``rewrite`` proves and keeps them.
"""
