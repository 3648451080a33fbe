"""``python -m snowpy``: the command line."""

from snowpy.cli import main

main()
