"""XLA's tiling analysis for its Triton-based GPU emitter: symbolic tiles, constraints, tiled HLO."""
