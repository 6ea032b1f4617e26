"""Proving: what may be deleted.

``proof`` decides "this can be removed" (two renderers, three sizes, 2/255, alpha included;
bulk sets bisected), ``pictures`` holds the renders and comparisons it rests on, and
``proof_reuse`` keeps what an edit cannot have changed from the previous proof.
``removal`` is the front ends' entry point for one-off checks.
"""
