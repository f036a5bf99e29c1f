"""Evaluation per split, ablations, speed benchmarks and explanation dumps. Nothing imports this package."""
