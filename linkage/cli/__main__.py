"""`python -m linkage.cli` runs the command line, as `python -m linkage` does."""

from linkage.cli import main

main()
