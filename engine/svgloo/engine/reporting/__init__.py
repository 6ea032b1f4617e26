"""Reporting: results -> pictures and pages (footprint heatmaps, contact sheets, HTML)."""
