"""lfh: land, label and measure stories written by language models (Laissez-Faire Harms method)."""

__version__ = "0.1.0"
