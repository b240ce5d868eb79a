"""``python -m ste_jax``: command-line entry point (``demo`` for now; ``score``/``explain`` follow)."""

import argparse
import sys


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(prog="ste-jax", description="Soft Tournament Equilibrium: set-valued cores of agents.")
  sub = parser.add_subparsers(dest="command", required=True)
  demo = sub.add_parser("demo", help="core table with bootstrap uncertainty on the bundled Vicuna-80 human votes")
  demo.add_argument("--replicas", type=int, default=200, help="bootstrap replicas (default 200)")
  demo.add_argument("--seed", type=int, default=0)
  demo.add_argument("--tau", type=float, default=0.01, help="temperature tau = gamma = gamma_c (default 0.01)")
  args = parser.parse_args(argv)
  if args.command == "demo":
    if args.replicas < 1:
      parser.error("--replicas must be >= 1")
    if not args.tau > 0:
      parser.error("--tau must be > 0")
    from ste_jax._demo import run_demo

    return run_demo(num_replicas=args.replicas, seed=args.seed, tau=args.tau)
  return 2


if __name__ == "__main__":
  sys.exit(main())
