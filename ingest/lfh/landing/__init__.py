"""Landing input files in the warehouse's `raw` schema: readers per format, normalisers, the transactional lander."""
