"""Peer libraries timed by ``benchmarks/cli.py``: Bradley-Terry plus a bootstrap on one file.

Each peer is a small program (``PROGRAMS``) run by that peer's own interpreter as ``python -c
PROGRAM FILE FORMAT REPLICAS``: it reads the file (``model_a, model_b, winner`` with winner in
``model_a``/``model_b``/``tie``, or the league's ``a, b, winner`` with ``a``/``b``), fits
Bradley-Terry on all battles, then once on each of ``REPLICAS`` bootstrap resamples of the battles,
and prints the number of models. ``version(python, peer)`` says whether the peer imports there.

``CONTEXTUAL_PROGRAM`` (with :func:`write_contextual`) is arena-rank's Bradley-Terry with
per-battle features, fitted by ``benchmarks/controls.py``.
"""

import subprocess

# Reads the battles into numpy arrays ``xs, ys`` (model names) and ``w`` (the winner labels
# mapped to "model_a" / "model_b" / "tie"), whatever the file's schema.
_READ = """
import sys
import numpy as np
import pandas as pd
path, fmt, replicas = sys.argv[1], sys.argv[2], int(sys.argv[3])
df = pd.read_parquet(path) if fmt == "parquet" else pd.read_csv(path)
if "model_a" not in df.columns:
  df = df.rename(columns={"a": "model_a", "b": "model_b"})
  df["winner"] = df["winner"].map({"a": "model_a", "b": "model_b"}).fillna("tie")
"""

PROGRAMS = {
  # evalica: the Rust (pyo3) Bradley-Terry solver on the battles; the bootstrap resamples the
  # battles with NumPy (indices drawn with replacement) and refits on each resample.
  "evalica": _READ
  + """
import evalica
xs = df["model_a"].to_numpy(dtype=object)
ys = df["model_b"].to_numpy(dtype=object)
w = df["winner"].to_numpy()
winners = np.where(
  w == "model_a", evalica.Winner.X, np.where(w == "model_b", evalica.Winner.Y, evalica.Winner.Draw)
).astype(np.uint8)
index = pd.Index(pd.unique(np.concatenate([xs, ys])))
scores = evalica.bradley_terry(xs, ys, winners, index=index).scores
rng = np.random.default_rng(0)
m = len(xs)
boot = []
for _ in range(replicas):
  i = rng.integers(0, m, m)
  r = evalica.bradley_terry(xs[i], ys[i], winners[i], index=index).scores
  boot.append(r.reindex(scores.index).to_numpy())
if boot:
  np.quantile(np.stack(boot), [0.025, 0.975], axis=0)
print(len(scores))
""",
  # arena-rank (LMArena's package): PairDataset aggregates (a, b, outcome) triplets, BradleyTerry
  # fits by L-BFGS in JAX; ci_method="bootstrap" draws multinomial counts over the triplets and
  # refits each replica in a multiprocessing pool (one worker per CPU, its default; "spawn").
  "arena-rank": _READ
  + """
import multiprocessing
import os
# Its pool forks a process that already runs JAX's threads, and the workers deadlock (seen on
# Linux with Python 3.11): start them with "spawn" (the default on macOS) instead. On an
# accelerator, every worker would otherwise reserve most of its memory for itself.
multiprocessing.set_start_method("spawn", force=True)
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
from arena_rank.models.bradley_terry import BradleyTerry
from arena_rank.utils.data_utils import PairDataset
dataset = PairDataset.from_pandas(df[["model_a", "model_b", "winner"]])
model = BradleyTerry(n_competitors=len(dataset.competitors))
if replicas:
  result = model.compute_ratings_and_cis(dataset, ci_method="bootstrap", num_bootstrap=replicas)
  result["rating_lower"].block_until_ready()
else:
  model.fit(dataset)
  model.params["ratings"].block_until_ready()
print(len(dataset.competitors))
""",
}

# arena-rank's ContextualBradleyTerry (``benchmarks/controls.py``), run as ``python -c
# CONTEXTUAL_PROGRAM FILE REG FEATURES``: FILE is the Parquet of :func:`write_contextual`, REG its
# ridge on the coefficients, FEATURES the comma-separated feature columns. The features are used as
# written (``normalize_features=False``) and every row weighs 1 (``reweighted=False``, not its
# default inverse pair-count weights); ``compute_ratings_and_cis`` fits (L-BFGS in float64, its
# default tolerances) and adds its sandwich intervals. Prints one JSON line: the competitors, their
# ratings on its Elo scale, the coefficients, and the scale's ``alpha = scale / ln(base)`` and
# offset.
CONTEXTUAL_PROGRAM = """
import json
import sys
import pandas as pd
path, reg, features = sys.argv[1], float(sys.argv[2]), sys.argv[3].split(",")
df = pd.read_parquet(path)
from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
from arena_rank.utils.data_utils import ContextualPairDataset
dataset = ContextualPairDataset.from_pandas(
  df, features, reweighted=False, normalize_features=False
)
model = ContextualBradleyTerry(len(dataset.competitors), len(features), reg=reg)
result = model.compute_ratings_and_cis(dataset)
print(json.dumps({
  "competitors": list(result["competitors"]),
  "ratings": [float(r) for r in result["ratings"]],
  "coeffs": [float(c) for c in result["coeffs"]],
  "alpha": float(model.alpha),
  "offset": float(model.init_rating),
}))
"""


def write_contextual(path, agents, a, b, outcome, diff, names) -> None:
  """Writes battles with their feature differences as arena-rank's contextual Parquet.

  Args:
    path: the Parquet file to write.
    agents: the agent names (``a`` and ``b`` index them).
    a, b: ``(m,)`` agent indices of each battle.
    outcome: ``(m,)`` 1 (``a`` won), 0 (``b`` won) or 1/2 (tie).
    diff: ``(m, d)`` feature differences ``f(a, x) - f(b, x)``.
    names: the ``d`` feature names (columns of the file).

  The file has ``model_a, model_b, winner`` (``model_a`` / ``model_b`` / ``tie``) and one float64
  column per feature.
  """
  import numpy as np
  import pandas as pd

  agents = np.asarray(agents, dtype=object)
  outcome = np.asarray(outcome)
  winner = np.where(outcome == 1, "model_a", np.where(outcome == 0, "model_b", "tie"))
  columns = {"model_a": agents[np.asarray(a)], "model_b": agents[np.asarray(b)], "winner": winner}
  diff = np.asarray(diff, dtype=np.float64)
  columns.update({name: diff[:, k] for k, name in enumerate(names)})
  pd.DataFrame(columns).to_parquet(path, index=False, engine="pyarrow")


DISTRIBUTIONS = {"evalica": "evalica", "arena-rank": "arena-rank"}
MODULES = {"evalica": "evalica", "arena-rank": "arena_rank"}


def version(python: str | None, peer: str) -> str | None:
  """The installed version of ``peer`` under the interpreter ``python``; ``None`` if it does not
  import there (or ``python`` is ``None`` or cannot be run)."""
  if python is None:
    return None
  probe = (
    f"import importlib.metadata as m, {MODULES[peer]}; print(m.version({DISTRIBUTIONS[peer]!r}))"
  )
  try:
    done = subprocess.run(
      [python, "-c", probe], capture_output=True, text=True, timeout=300, check=False
    )
  except (OSError, subprocess.TimeoutExpired):
    return None
  return (done.stdout.strip() or None) if done.returncode == 0 else None
