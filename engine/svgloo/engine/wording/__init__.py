"""Wording: what a person is told about a unit.

``describe`` names a unit the way every front end shows it (``rect#stray``, ``path subpath
2``); ``plain_words`` turns a verdict, a finding or a removal's status into one short line
that names what is wrong and what to do (the exact proof stays in the result).
"""
