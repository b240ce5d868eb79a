"""``python -m ste_jax`` / ``ste-jax``: the command line (see :mod:`ste_jax._cli`)."""

import sys

from ste_jax._cli import main as main

if __name__ == "__main__":
  sys.exit(main())
