"""Safety limits applied to every untrusted document before and while it is rendered."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = 8 * 1024 * 1024          # raw file size (also the .svgz compressed size)
    max_inflated_bytes: int = 16 * 1024 * 1024     # size of an .svgz after decompression
    max_elements: int = 20_000                     # element count in the parsed tree
    max_use_expansion: int = 50_000                # elements drawn once <use> references are expanded
    max_units: int = 5_000                         # scoring units (each costs at least one render)
    max_render_size: int = 2048                    # output is clamped to this many pixels per side
    max_data_image_bytes: int = 2 * 1024 * 1024    # an embedded data: PNG/JPEG
    render_timeout_s: float = 60.0                 # wall clock for one render job in a worker
    render_cpu_s: int = 120                        # RLIMIT_CPU of a render worker
    render_memory_mb: int = 1536                   # RLIMIT_AS of a render worker


DEFAULT_LIMITS = Limits()
