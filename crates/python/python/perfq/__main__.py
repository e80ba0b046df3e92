"""``python -m perfq``: the command line."""

from ._cli import main

main()
