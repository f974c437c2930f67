"""`python -m linkage` runs the command line."""

from linkage.cli import main

main()
