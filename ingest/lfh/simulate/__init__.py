"""A seeded, SIMULATED corpus with planted biases and its planted truth, in the project's own file formats."""
