"""Serving the marts: the read-only published copy (copy, provenance, atomic swap) and a local PostgreSQL."""
