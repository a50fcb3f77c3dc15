"""`python -m lfh.cli ...`: the same as the `lfh` command."""

from lfh.cli import main

main()
