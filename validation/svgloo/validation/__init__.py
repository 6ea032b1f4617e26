"""Validation: artifact injection and detection, edit precision, batch runs over data sets,
and the speed benchmarks."""
