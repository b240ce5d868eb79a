"""Builds and executes the notebooks from their cell sources, so that they are committed with outputs.

Usage: python notebooks/build_notebooks.py [NAME ...]   (default: all)

Each notebook is written from the cells below and executed in place with nbclient (a fresh kernel,
working directory ``notebooks/``). ``tests/test_notebooks.py`` re-executes the committed notebooks
so they never rot.
"""

import pathlib
import sys

import nbformat
from nbclient import NotebookClient

HERE = pathlib.Path(__file__).resolve().parent

TRAINING = [
    ("md", """# 02 — Training a pairwise model on a context-dependent cycle

Paper §4.1 (Stage 1) and §4.5: a pairwise model `h(a, b, x)` learns win probabilities that depend on
the context `x`; its marginal tournament over an arena `Q` (Eq. `marginal_tournament`) is then
analysed with the STE operators. Here rock–paper–scissors among agents 0, 1, 2 flips direction with
the context, and all three beat agents 3 and 4 in both contexts. A Bradley–Terry model
(`h = s(a, x) - s(b, x)`) cannot represent the cycle; `PairwiseLogit` can."""),
    ("code", """import jax, jax.numpy as jnp, numpy as np
from flax import nnx
import matplotlib.pyplot as plt
import ste_jax as ste
from ste_jax.models import pairwise_logits
from ste_jax.training import reliability_diagram

rng = np.random.default_rng(0)
P_true = np.full((2, 5, 5), 0.5)
for c, win in ((0, 0.95), (1, 0.05)):                 # 0 > 1 > 2 > 0 in context 0, reversed in context 1
    for i, j in ((0, 1), (1, 2), (2, 0)):
        P_true[c, i, j], P_true[c, j, i] = win, 1 - win
    for i in range(3):
        for j in (3, 4):
            P_true[c, i, j], P_true[c, j, i] = 0.9, 0.1
    P_true[c, 3, 4], P_true[c, 4, 3] = 0.7, 0.3

def sample(m, context_probs=(0.75, 0.25)):
    pairs = np.array([(i, j) for i in range(5) for j in range(i + 1, 5)])
    ctx = rng.choice(2, size=m, p=np.asarray(context_probs))
    a, b = pairs[rng.integers(0, len(pairs), m)].T
    y = (rng.random(m) < P_true[ctx, a, b]).astype(np.int8)
    return ste.Comparisons.from_arrays(a, b, y, context=ctx, contexts=("c0", "c1"))

train, test = sample(6000), sample(3000)
contexts = jnp.eye(2)                      # one-hot context features
Q = jnp.array([0.75, 0.25])                # the arena: the data's context frequencies
print(train.num_comparisons, "training comparisons,", test.num_comparisons, "test comparisons")"""),
    ("md", "## Fit both models (`ste.fit`: minibatches, held-out split, early stopping on held-out log-loss)"),
    ("code", """results, test_loss, tournaments = {}, {}, {}
for name, cls in (("PairwiseLogit", ste.PairwiseLogit), ("BradleyTerryLogit", ste.BradleyTerryLogit)):
    model = cls(5, num_context_features=2, embedding_dim=8, hidden_features=(32,), rngs=nnx.Rngs(0))
    r = ste.fit(jax.random.key(0), model, train, context_features=contexts, num_steps=150,
                batch_size=512, learning_rate=2e-2, heldout_fraction=0.2, progress=False)
    results[name] = r
    h = pairwise_logits(r.model, test, context_features=contexts)
    test_loss[name] = float(ste.pairwise_cross_entropy(h, test.outcome, test.weight))
    tournaments[name] = ste.marginal_tournament(r.model, contexts=contexts, weights=Q)
for name, loss in test_loss.items():
    print(f"{name:18s} test log-loss {loss:.3f}")"""),
    ("code", """fig, ax = plt.subplots(figsize=(5, 3))
for name, r in results.items():
    ax.plot(np.asarray(r.history.eval_step), np.asarray(r.history.heldout_log_loss), label=name)
ax.set_xlabel("step"); ax.set_ylabel("held-out log-loss"); ax.legend(); fig.tight_layout()"""),
    ("md", "## The STE core of each model's marginal tournament (τ = γ = 0.01)"),
    ("code", """for name, P in tournaments.items():
    s = ste.ste_scores(P, tau=0.01)
    print(name)
    print("  hard Top Cycle:", np.flatnonzero(np.asarray(ste.top_cycle(P))).tolist(),
          " hard Uncovered Set:", np.flatnonzero(np.asarray(ste.uncovered_set(P))).tolist())
    print("  t =", np.round(np.asarray(s.top_cycle), 3), " u =", np.round(np.asarray(s.uncovered), 3))
print("planted core: [0, 1, 2]")"""),
    ("md", """The pairwise model recovers the planted core {0, 1, 2} (under `Q` the context-0 cycle
dominates, so the marginal tournament is cyclic among 0, 1, 2). Bradley–Terry forces a linear order
and, at best, a Condorcet winner."""),
    ("md", "## Calibration of the pairwise probabilities (temperature scaling on held-out comparisons)"),
    ("code", """model = results["PairwiseLogit"].model
scaling = ste.calibrate_temperature(model, results["PairwiseLogit"].heldout, context_features=contexts)
print("fitted temperature:", float(scaling.temperature))
h = pairwise_logits(model, test, context_features=contexts)
fig, ax = plt.subplots(figsize=(4, 4))
for label, logits in (("raw", h), ("temperature-scaled", h / scaling.temperature)):
    rd = reliability_diagram(jax.nn.sigmoid(logits), test.outcome, test.weight)
    ok = np.isfinite(np.asarray(rd.confidence))
    ax.plot(np.asarray(rd.confidence)[ok], np.asarray(rd.accuracy)[ok], "o-", label=f"{label} (ECE {float(rd.ece):.3f})")
ax.plot([0, 1], [0, 1], "k:", lw=1)
ax.set_xlabel("predicted P(a beats b)"); ax.set_ylabel("observed frequency"); ax.legend(); fig.tight_layout()"""),
]

NOTEBOOKS = {"02_training.ipynb": TRAINING}


def build(name: str, cells) -> None:
  nb = nbformat.v4.new_notebook()
  nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
  nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src) for kind, src in cells]
  NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
  nbformat.write(nb, HERE / name)
  print(f"wrote {HERE / name}")


if __name__ == "__main__":
  names = sys.argv[1:] or list(NOTEBOOKS)
  for name in names:
    build(name, NOTEBOOKS[name])
