"""The HTML report and its figures, read from the marts of a warehouse or of a published copy."""
