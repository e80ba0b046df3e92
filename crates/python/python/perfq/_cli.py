"""The ``perfq`` console script: the command line, run by the same Rust
entry point as the ``perfq`` binary."""

import sys

from . import _native


def main() -> None:
    """Runs ``perfq`` with this process's arguments and exits with its
    status."""
    sys.exit(_native.run_cli(["perfq", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
