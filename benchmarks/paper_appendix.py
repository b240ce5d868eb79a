"""``ste_scores`` against the paper's own PyTorch appendix code, timed in the same run.

The paper's appendix ("Software Implementation Guide") prints a PyTorch transcription of the
operators (``compute_ste_scores``). This script does not carry a copy of it: it reads the
``verbatim`` blocks between the appendix's "Core Functions" and "Training Loop" headings from the
paper's LaTeX source at run time (``--paper``, by default ``../shared/paper/...`` beside the
repository) and executes them. It needs PyTorch (``pip install torch``, CPU build); without it, or
without the paper, it says so and exits 1.

For each ``n``: a random tournament (``benchmarks/operators.py``'s ``make_tournament``),
``tau = gamma = 0.05`` and ``K = n - 1`` on both sides. Forward = both score vectors; fwd+bwd =
the gradient of ``sum(t) + sum(u)`` w.r.t. ``P`` (``loss.backward()`` in PyTorch, ``jax.grad`` of
the jitted ``ste_scores`` after ahead-of-time compilation and a warm-up). The two are timed
alternately for ``--rounds`` rounds (this VM's speed drifts) and the medians printed, with the
largest differences between the two implementations' scores and gradients (a cross-check of
``ste_scores`` against independent code).

Usage: python benchmarks/paper_appendix.py [--sizes 30 100] [--rounds 3] [--paper PATH]
         [--dtype float32|float64]
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from benchmarks._timing import interleaved_medians, machine_description  # noqa: E402
from benchmarks.operators import make_tournament  # noqa: E402

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_DEFAULT_PAPER = os.path.join(
  os.path.dirname(_ROOT), "shared", "paper", "soft_tournament_equilibrium.tex"
)


def appendix_namespace(paper: str) -> dict:
  """Executes the appendix's code blocks (Core Functions up to the Training Loop); returns their
  names."""
  with open(paper, encoding="utf-8") as f:
    tex = f.read()
  start, end = tex.index(r"\subsection{Core Functions}"), tex.index(r"\subsection{Training Loop}")
  blocks = re.findall(r"\\begin\{verbatim\}\n(.*?)\\end\{verbatim\}", tex[start:end], flags=re.S)
  namespace: dict = {}
  exec(compile("\n".join(blocks), f"{paper} (appendix)", "exec"), namespace)  # noqa: S102
  return namespace


def main():
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("--sizes", type=int, nargs="+", default=[30, 100])
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--paper", default=_DEFAULT_PAPER)
  parser.add_argument(
    "--dtype",
    choices=["float32", "float64"],
    default="float32",
    help="both implementations in this dtype (float64: jax_enable_x64)",
  )
  args = parser.parse_args()
  try:
    import torch
  except ImportError:
    sys.exit("PyTorch is not installed (pip install torch): the paper's appendix code needs it.")
  if not os.path.exists(args.paper):
    sys.exit(f"paper not found: {args.paper} (--paper)")
  appendix = appendix_namespace(args.paper)

  import jax
  import jax.numpy as jnp

  jax.config.update("jax_enable_x64", args.dtype == "float64")

  import ste_jax

  print(
    f"machine: {machine_description()}; torch {torch.__version__} ({torch.get_num_threads()} "
    "threads)"
  )
  print(
    f"ste_scores(P, tau=0.05) vs the paper's compute_ste_scores(P, tau=0.05), {args.dtype}, K = n "
    "- 1; "
    f"grad of sum(t) + sum(u) w.r.t. P; medians of {args.rounds} interleaved rounds"
  )
  print()
  print(
    "| n | appendix forward (s) | appendix fwd+bwd (s) | ste forward (s) | ste fwd+bwd (s) | "
    "fwd+bwd: ste faster by | max abs diff t, u | max abs diff grad |"
  )
  print("|---:|---:|---:|---:|---:|---:|---:|---:|")
  for n in args.sizes:
    P = make_tournament(n).astype(args.dtype)

    def appendix_forward():
      with torch.no_grad():
        return appendix["compute_ste_scores"](torch.from_numpy(P), tau=0.05)

    def appendix_both():
      P_t = torch.from_numpy(P.copy()).requires_grad_(True)
      t, u = appendix["compute_ste_scores"](P_t, tau=0.05)
      (t.sum() + u.sum()).backward()
      return t.detach().numpy(), u.detach().numpy(), P_t.grad.numpy()

    P_j = jnp.asarray(P)
    forward = (
      jax.jit(lambda P: jax.tree.leaves(ste_jax.ste_scores(P, tau=0.05))).lower(P_j).compile()
    )
    grad = (
      jax.jit(
        jax.grad(
          lambda P: sum(jnp.sum(s) for s in jax.tree.leaves(ste_jax.ste_scores(P, tau=0.05)))
        )
      )
      .lower(P_j)
      .compile()
    )
    med = interleaved_medians(
      {
        "af": appendix_forward,
        "ab": appendix_both,
        "sf": lambda: forward(P_j),
        "sb": lambda: grad(P_j),
      },
      args.rounds,
    )
    t_a, u_a, g_a = appendix_both()
    t_s, u_s = (np.asarray(x) for x in forward(P_j))
    g_s = np.asarray(grad(P_j))
    diff_scores = max(np.max(np.abs(t_a - t_s)), np.max(np.abs(u_a - u_s)))
    diff_grad = np.max(np.abs(g_a - g_s))
    print(
      f"| {n} | {med['af']:.3g} | {med['ab']:.3g} | {med['sf']:.3g} | {med['sb']:.3g} | "
      f"{med['ab'] / med['sb']:.0f}x | {diff_scores:.1e} | {diff_grad:.1e} |",
      flush=True,
    )


if __name__ == "__main__":
  main()
