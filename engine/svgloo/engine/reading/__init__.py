"""Reading: file bytes -> Document -> Units.

Safe parsing (``files``, ``safety``, ``document``: limits, entities, external references,
every element with its exact source span), the scoring units (``units``: leaf elements,
subpaths with absolute movetos, how to remove each from the text), path data
(``pathdata``), what svgloo cannot vouch for in a renderer (``features``), checks before
any render (``preflight``) and the names front ends show for a unit (``describe``).
Nothing here renders.
"""
