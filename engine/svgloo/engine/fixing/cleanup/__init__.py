"""Lossless cleanup: rewrites that save bytes and are proven not to change the picture.

One job per module: ``editor`` (editor metadata, comments), ``attributes`` (values spelled
shorter, defaults), ``browser_digits`` (digits of path data that no reader keeps: the same
float32 in Chromium, resvg and Firefox), ``structure`` (blanks, groups, ids,
definitions), ``shapes`` (shapes as paths), ``device_rounding`` (path data rounded where
the proof renderers cannot tell; off in ``svgloo fix``: Chromium can); ``edits`` is what
they propose, ``rewrite`` proves and keeps them. Numbers and path spelling are
``numbers`` and ``path_short``.
"""
