"""XLA's experimental tile propagation and tiling space (``xla/codegen/tiling/experimental``)."""
