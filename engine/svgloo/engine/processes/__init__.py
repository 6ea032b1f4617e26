"""Processes: the render workers.

A pool of limited worker processes (``workers``: CPU, memory and time limits, a worker's
death reported in its own words), how they are started (``worker_start``: a fork server,
no re-run of the caller's script, nothing left behind) and what they load before they fork
(``worker_preload``, which names the job modules rather than importing the engine above it).
"""
