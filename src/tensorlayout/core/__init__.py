"""The layout core: what every notation lowers into, and the integer math they share."""
