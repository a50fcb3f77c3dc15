"""The package's errors. Library code raises these (never click's); the CLI layer (lfh.cli) turns every
LfhError into a one-line message and exit status 1. A message names the file, row or setting at fault and says
what to do next, because it is all a user sees."""

from __future__ import annotations


class LfhError(Exception):
    """A problem the user can fix: bad input, a missing prerequisite, a refused request."""


class ConfigError(LfhError, ValueError):
    """A configuration file or setting is missing or invalid (models file, simulation config, options)."""


class InputError(LfhError):
    """An input file or record cannot be used as it is (workbook, JSONL journal, landing file)."""


class LexiconError(LfhError):
    """The first-name lexicon or one of its sources is missing or unusable."""


class WarehouseError(LfhError):
    """The DuckDB warehouse is missing, locked by another process, or lacks the tables a step needs."""


class EndpointError(LfhError):
    """A language-model endpoint refused the work (key refused, batch failed)."""


class BuildError(LfhError):
    """dbt could not be run or failed."""


class ServeError(LfhError):
    """Publishing the marts or serving them from PostgreSQL failed."""
