"""Multi-process runs (``jax.distributed``, gloo CPU collectives) of the sharded cover, the
sharded bootstrap and the leaderboard's replicas over a mesh: 2 processes x 2 CPU devices on
localhost, started by the launcher of ``benchmarks/distributed.py``, against one process with 4
devices and against the unsharded single-device functions computed here."""

import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from benchmarks import distributed
from ste_jax.ops import soft_cover_scores
from ste_jax.stats import bootstrap_scores, ste_score_fn

N = 13  # rows not divisible by the 4 devices: padded blocks
TASK = {"kind": "check", "n": N, "gamma_c": 0.1, "agents": 9, "m": 300, "replicas": 6, "seed": 3}
COVER = ("cover", "grad_D", "grad_gamma_c")
BOOTSTRAP = ("top_cycle", "uncovered")


def _single_device_cover():
  """The unsharded ``soft_cover_scores`` on the worker's inputs: value, grad in D and gamma_c."""
  D, W = distributed._inputs(N, TASK["seed"])
  D, W, g = jnp.asarray(D), jnp.asarray(W), jnp.float32(TASK["gamma_c"])
  loss = lambda D, g: jnp.sum(soft_cover_scores(D, gamma_c=g) * W)  # noqa: E731
  dD, dg = jax.grad(loss, argnums=(0, 1))(D, g)
  return {"cover": soft_cover_scores(D, gamma_c=g), "grad_D": dD, "grad_gamma_c": dg}


def _check_processes_agree(outputs, keys):
  """Both processes hold the same global values (replicated or all-gathered)."""
  assert [o["process_id"] for o in outputs] == [0, 1]
  assert all(o["devices"] == 4 and o["processes"] == 2 for o in outputs)
  for k in keys:
    assert outputs[0][k] == outputs[1][k], k


def test_two_processes_cover_equals_one_device():
  """2 processes x 2 devices: the sharded cover, its gradient in ``D`` and ``gamma_c``, = the
  single-device ``soft_cover_scores`` (to float32 rounding: other kernels, see test_sharded)."""
  outputs = distributed.launch(
    TASK | {"parts": ["cover"]}, processes=2, local_devices=2, timeout=150
  )
  _check_processes_agree(outputs, COVER)
  want = _single_device_cover()
  for k in COVER:
    np.testing.assert_allclose(np.array(outputs[0][k]), np.asarray(want[k]), rtol=1e-5, atol=1e-5)
  assert np.array(outputs[0]["cover"]).shape == (N, N)


@pytest.mark.slow  # three runs of fresh interpreters (~60 s on two cores)
def test_two_processes_equal_one_process():
  """2 processes x 2 devices = 1 process x 4 devices: the cover and the bootstrap replicas bit for
  bit; the gradients to float32 rounding (the cotangents of the replicated ``D`` and ``gamma_c`` are
  sums over the devices, reduced by gloo across processes in another order); and the bootstrap =
  the unsharded ``bootstrap_scores(mesh=None)`` run here."""
  multi = distributed.launch(TASK, processes=2, local_devices=2, timeout=240)
  _check_processes_agree(multi, COVER + BOOTSTRAP)
  (single,) = distributed.launch(TASK, processes=1, local_devices=4, timeout=240)
  assert single["devices"] == 4 and single["processes"] == 1
  for k in ("cover",) + BOOTSTRAP:
    assert multi[0][k] == single[k], k
  for k in ("grad_D", "grad_gamma_c"):  # sums over the devices: reduced in another order
    np.testing.assert_allclose(np.array(multi[0][k]), np.array(single[k]), rtol=1e-6, atol=1e-6)
  comparisons = distributed._comparisons(TASK["agents"], TASK["m"], TASK["seed"])
  want = bootstrap_scores(
    jax.random.key(TASK["seed"]), comparisons, ste_score_fn(tau=0.1), num_replicas=TASK["replicas"]
  )
  for k in BOOTSTRAP:
    got = np.array(multi[0][k])
    assert got.shape == (TASK["replicas"], TASK["agents"])
    np.testing.assert_allclose(got, np.asarray(getattr(want, k)), rtol=1e-5, atol=1e-6)


# The leaderboard of 100 comparisons among 9 agents: P(TC) between 0 and 1 for most agents, so
# that a replica lost, repeated or drawn from another key changes the columns. 30 replicas: two
# chunks of 25 and 5 (REPLICA_CHUNK), neither a multiple of 4 devices (padded draws).
LEADERBOARD = {"kind": "leaderboard", "agents": 9, "m": 100, "replicas": 30, "seed": 3}
EXACT = ("p_tc", "p_uc", "tc_verdict", "uc_verdict", "hard_tc", "tier", "order", "candidates")
SOFT = ("tc_lo", "tc_hi", "uc_lo", "uc_hi")


def _check_leaderboard(got, task):
  """The columns of a mesh run = ``leaderboard(mesh=None)`` run here for the same key: the
  replicas' columns exactly, the soft intervals to float32 rounding."""
  want = distributed.leaderboard_columns(task, None)
  assert 0 < np.mean(want["p_tc"]) < 1, want["p_tc"]  # replicas disagree: a lost one shows
  for k in EXACT:
    assert got[k] == want[k], k
  for k in SOFT:
    np.testing.assert_allclose(got[k], want[k], rtol=1e-6, atol=1e-7)


def test_leaderboard_on_four_devices_equals_one_device():
  """1 process x 4 simulated devices, Poisson replicas of the posterior-edge estimator."""
  task = LEADERBOARD | {"estimator": "posterior"}
  (got,) = distributed.launch(task, processes=1, local_devices=4, timeout=240)
  assert got["devices"] == 4
  _check_leaderboard(got, task)


@pytest.mark.slow  # two processes and a model refit per replica (~60 s on two cores)
@pytest.mark.parametrize(
  "options",
  [{"estimator": "model"}, {"estimator": "posterior", "clusters": 3}],
  ids=["model-parametric", "posterior-clusters"],
)
def test_leaderboard_two_processes_equal_one_process(options):
  """2 processes x 2 devices: both processes end with the same table, the one of
  ``leaderboard(mesh=None)`` (parametric replicas of the model, refitted; cluster replicas)."""
  task = LEADERBOARD | options
  outputs = distributed.launch(task, processes=2, local_devices=2, timeout=240)
  _check_processes_agree(outputs, EXACT + SOFT)
  _check_leaderboard(outputs[0], task)


def test_launcher_kills_its_processes_on_timeout(monkeypatch):
  """A worker that does not finish in time: TimeoutError, and its process group is gone."""
  started = []
  popen = subprocess.Popen

  def recording_popen(cmd, **kwargs):
    # A worker that never exits (sleeps), in its own session as the launcher asks.
    p = popen(["sleep", "60"], **{k: v for k, v in kwargs.items() if k != "cwd"})
    started.append(p)
    return p

  monkeypatch.setattr(distributed.subprocess, "Popen", recording_popen)
  with pytest.raises(TimeoutError, match="still running"):
    distributed.launch({"kind": "check"}, processes=2, local_devices=1, timeout=1.0)
  assert len(started) == 2
  assert all(p.poll() is not None for p in started)  # killed and reaped


def test_launcher_reports_a_failing_worker():
  with pytest.raises(RuntimeError, match="unknown task kind"):
    distributed.launch({"kind": "nothing"}, processes=1, local_devices=1, timeout=120)
