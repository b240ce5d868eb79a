"""The soft cover and the STE scores with rows split over a mesh (``sharded_cover_scores``,
``sharded_ste_scores``) vs the single-device ``soft_cover_scores`` / ``ste_scores``: values,
reverse and forward mode, on four simulated CPU devices."""

import json
import pathlib

import jax
import jax.numpy as jnp
from jax.sharding import Mesh
import numpy as np
import pytest

from ste_jax import InputError, OptionError
from ste_jax.ops import sharded_cover_scores, sharded_ste_scores, soft_cover_scores, ste_scores
from tests.simulated_devices import run_on_cpu_devices

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Runs in a fresh interpreter: the four CPU devices need XLA_FLAGS before JAX initializes. Prints
# one JSON line: the failed comparisons (empty when all pass) and what was checked.
_SCRIPT = """
import contextlib, json, sys
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
sys.path.insert(0, {root!r})
from ste_jax.ops import _sharded, sharded_cover_scores, soft_cover_scores

assert jax.device_count() == 4, jax.devices()
config = json.loads({config!r})
meshes = {{"auto": Mesh(np.array(jax.devices()), ("rows",))}}
if config["explicit"]:
  meshes["explicit"] = jax.make_mesh((4,), ("rows",))
rng = np.random.default_rng(0)
failures, checked = [], []


def close(name, got, want, rtol, atol):
  checked.append(name)
  try:
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)
  except AssertionError as e:
    failures.append(name + ": " + str(e)[-600:])


with jax.numpy_dtype_promotion("strict"), jax.numpy_rank_promotion("raise"):
  for case in config["cases"]:
    dtype, n, gamma = jnp.dtype(case["dtype"]), case["n"], case["gamma"]
    rtol, atol = (1e-5, 1e-6) if dtype == jnp.float32 else (1e-10, 1e-12)
    _sharded._TILE_ELEMENTS = case.get("tile_elements", 1 << 18)
    D = jnp.asarray(rng.uniform(size=(n, n)), dtype)
    W = jnp.asarray(rng.normal(size=(n, n)), dtype)  # the fixed vector of the scalar loss
    T = jnp.asarray(rng.normal(size=(n, n)), dtype)  # a tangent of D
    literal = gamma == 0.0  # a literal 0: the exact kernels, no temperature to differentiate
    g = jnp.asarray(gamma, dtype)
    for mesh_name, mesh in meshes.items():
     with jax.set_mesh(mesh) if mesh_name == "explicit" else contextlib.nullcontext():
      tiles = _sharded._TILE_ELEMENTS
      tag = f"{{dtype.name}} n={{n}} gamma={{gamma}} {{mesh_name}} tiles={{tiles}}"

      def sharded(D, g):
        return sharded_cover_scores(
          D, gamma_c=0.0 if literal else g, mesh=mesh, axis_name="rows"
        )

      def single(D, g):
        return soft_cover_scores(D, gamma_c=0.0 if literal else g)

      def loss(f):
        return lambda D, g: jnp.sum(f(D, g) * W)

      got, want = sharded(D, g), single(D, g)
      assert got.shape == (n, n) and got.dtype == dtype, (got.shape, got.dtype)
      close("value " + tag, got, want, rtol, atol)
      argnums = (0,) if literal else (0, 1)
      gs = jax.jit(jax.grad(loss(sharded), argnums=argnums))(D, g)
      gu = jax.grad(loss(single), argnums=argnums)(D, g)
      close("grad D " + tag, gs[0], gu[0], rtol, atol)
      if not literal:  # a sum over the n^2 pairs, with cancellation: float32 rounds it to ~1e-5
        close("grad gamma_c " + tag, gs[1], gu[1], rtol, 1e-4 if dtype == jnp.float32 else atol)
      tg = jnp.zeros_like(g) if literal else jnp.asarray(0.5, dtype)
      _, js = jax.jvp(sharded, (D, g), (T, tg))
      _, ju = jax.jvp(single, (D, g), (T, tg))
      # The gamma_c tangent's term divides a difference by gamma_c: float32 rounding times 1/g.
      close("jvp " + tag, js, ju, rtol, 1e-5 if dtype == jnp.float32 else atol)

print(json.dumps({{"failures": failures, "checked": checked}}))
"""


def _run_on_four_devices(cases, *, explicit=False):
  config = json.dumps({"cases": cases, "explicit": explicit})
  result = run_on_cpu_devices(_SCRIPT.format(root=str(ROOT), config=config), devices=4)
  assert not result["failures"], "\n".join(result["failures"])
  return result["checked"]


def test_four_devices_equal_one_device():
  """n = 10 and 13 (not multiples of 4: padded rows), a literal 0 (exact maxima) and a soft
  temperature; values, ``jax.grad`` of ``sum(cover * W)`` in ``D`` and ``gamma_c``, ``jax.jvp``."""
  cases = [{"dtype": "float32", "n": n, "gamma": gamma} for n in (10, 13) for gamma in (0.0, 0.1)]
  checked = _run_on_four_devices(cases)
  assert len(checked) == 4 * 3 + 2  # value, jvp, grad in D; in gamma_c where soft


@pytest.mark.slow  # a subprocess with more cases and a second mesh
def test_four_devices_equal_one_device_more_cases():
  """Temperatures on each of the single-device kernels' paths (by the maximum, by one, large),
  float64, several tiles per device and a mesh with explicit axes."""
  cases = [
    {"dtype": "float32", "n": n, "gamma": gamma} for n in (10, 13) for gamma in (0.01, 2.0)
  ] + [
    {"dtype": "float64", "n": 13, "gamma": 0.1},
    {"dtype": "float32", "n": 13, "gamma": 0.1, "tile_elements": 2 * 13 * 13},
    {"dtype": "float32", "n": 10, "gamma": 0.0, "tile_elements": 2 * 10 * 10},
  ]
  _run_on_four_devices(cases, explicit=True)


def _one_device_mesh():
  return Mesh(np.array(jax.devices()[:1]), ("rows",))


def test_one_device_mesh_equals_the_single_device_function(rng):
  D = jnp.asarray(rng.uniform(size=(6, 6)), jnp.float32)
  got = sharded_cover_scores(D, gamma_c=0.2, mesh=_one_device_mesh(), axis_name="rows")
  np.testing.assert_allclose(got, soft_cover_scores(D, gamma_c=0.2), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", [1, 2])
def test_no_witnesses(n):
  """``n <= 2``: no witness, ``v = 0``, so ``cover = D`` off the diagonal."""
  D = jnp.full((n, n), 0.7, jnp.float32)
  got = sharded_cover_scores(D, gamma_c=0.1, mesh=_one_device_mesh(), axis_name="rows")
  np.testing.assert_allclose(got, soft_cover_scores(D, gamma_c=0.1))


def test_errors():
  mesh = _one_device_mesh()
  D = jnp.zeros((4, 4), jnp.float32)
  with pytest.raises(TypeError, match="mesh"):
    sharded_cover_scores(D, gamma_c=0.1, mesh=None, axis_name="rows")
  with pytest.raises(OptionError, match="axis_name"):
    sharded_cover_scores(D, gamma_c=0.1, mesh=mesh, axis_name="cols")
  with pytest.raises(InputError, match=r"\(n, n\)"):
    sharded_cover_scores(jnp.zeros((2, 4, 4)), gamma_c=0.1, mesh=mesh, axis_name="rows")
  with pytest.raises(ValueError, match="square"):
    sharded_cover_scores(jnp.zeros((3, 4)), gamma_c=0.1, mesh=mesh, axis_name="rows")
  with pytest.raises(ValueError, match="gamma_c"):
    sharded_cover_scores(D, gamma_c=-1.0, mesh=mesh, axis_name="rows")


# ``sharded_ste_scores`` vs ``ste_scores`` on four devices: values, the gradient of a scalar loss
# in P and in each temperature, a JVP. Prints one JSON line as _SCRIPT does.
_STE_SCRIPT = """
import json, sys
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
sys.path.insert(0, {root!r})
from ste_jax.ops import sharded_ste_scores, ste_scores

assert jax.device_count() == 4, jax.devices()
rng = np.random.default_rng(1)
failures, checked = [], []


def close(name, got, want, rtol, atol):
  checked.append(name)
  try:
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)
  except AssertionError as e:
    failures.append(name + ": " + str(e)[-600:])


for case in json.loads({config!r}):
  dtype, n, temps = jnp.dtype(case["dtype"]), case["n"], case["temps"]
  if case.get("explicit"):
    mesh = jax.make_mesh((4,), ("rows",), axis_types=(jax.sharding.AxisType.Explicit,))
  else:
    mesh = Mesh(np.array(jax.devices()), ("rows",))
  rtol, atol = (1e-5, 1e-6) if dtype == jnp.float32 else (1e-10, 1e-12)
  U = rng.uniform(size=(n, n))
  P = jnp.asarray(np.triu(U, 1) + np.tril(1.0 - U.T, -1) + 0.5 * np.eye(n), dtype)
  w_t, w_u = (jnp.asarray(rng.normal(size=n), dtype) for _ in range(2))
  T = jnp.asarray(rng.normal(size=(n, n)), dtype)
  T = T - T.T  # a tangent that keeps P + P^T = 1
  literal = temps == [0.0, 0.0, 0.0]
  tag = f"{{dtype.name}} n={{n}} temps={{temps}}"
  K = case.get("max_path_length")

  def scores(f, P, tau, gamma, gamma_c, reach_gamma=0.0, **kw):
    if literal:
      tau = gamma = gamma_c = 0.0
    return f(
      P, tau=tau, gamma=gamma, gamma_c=gamma_c, reach_gamma=reach_gamma, max_path_length=K,
      validate=False, **kw
    )

  def sharded(P, *t):
    return scores(sharded_ste_scores, P, *t, mesh=mesh, axis_name="rows")

  def single(P, *t):
    return scores(ste_scores, P, *t)

  def loss(f):
    def scalar(P, *t):
      s = f(P, *t)
      return jnp.sum(s.top_cycle * w_t) + jnp.sum(s.uncovered * w_u)
    return scalar

  t = tuple(jnp.asarray(x, dtype) for x in temps)
  got, want = sharded(P, *t), single(P, *t)
  assert got.uncovered.sharding.is_fully_replicated, got.uncovered.sharding
  close("top_cycle " + tag, got.top_cycle, want.top_cycle, rtol, atol)
  close("uncovered " + tag, got.uncovered, want.uncovered, rtol, atol)
  argnums = (0,) if literal else tuple(range(len(t) + 1))
  gs = jax.jit(jax.grad(loss(sharded), argnums=argnums))(P, *t)
  gu = jax.grad(loss(single), argnums=argnums)(P, *t)
  for name, a, b in zip(["P", "tau", "gamma", "gamma_c", "reach_gamma"], gs, gu):
    close(f"grad {{name}} " + tag, a, b, rtol, 1e-4 if dtype == jnp.float32 else atol)
  tangents = (T,) + tuple(jnp.asarray(0.0 if literal else 0.5, dtype) for _ in t)
  _, js = jax.jvp(lambda P, *t: loss(sharded)(P, *t), (P, *t), tangents)
  _, ju = jax.jvp(lambda P, *t: loss(single)(P, *t), (P, *t), tangents)
  close("jvp " + tag, js, ju, rtol, 1e-4 if dtype == jnp.float32 else atol)

print(json.dumps({{"failures": failures, "checked": checked}}))
"""


def _ste_on_four_devices(cases):
  script = _STE_SCRIPT.format(root=str(ROOT), config=json.dumps(cases))
  result = run_on_cpu_devices(script, devices=4)
  assert not result["failures"], "\n".join(result["failures"])
  return result["checked"]


def test_ste_scores_four_devices_equal_one_device():
  """n = 11 (not a multiple of 4), soft temperatures and literal zeros (the exact extrema): both
  scores, ``jax.grad`` in ``P`` and each temperature, ``jax.jvp``, vs ``ste_scores``."""
  cases = [
    {"dtype": "float32", "n": 11, "temps": [0.1, 0.2, 0.15]},
    {"dtype": "float32", "n": 11, "temps": [0.0, 0.0, 0.0]},
  ]
  checked = _ste_on_four_devices(cases)
  assert len(checked) == (2 + 4 + 1) + (2 + 1 + 1)


def test_ste_scores_soft_closure_four_devices_equal_one_device():
  """``reach_gamma > 0``: the smooth closure's rows split over the devices. n = 7 (not a multiple
  of 4), ``K = n - 1``; both scores, ``jax.grad`` in ``P`` and in each of the four temperatures
  (``reach_gamma`` among them), ``jax.jvp``, vs ``ste_scores``."""
  checked = _ste_on_four_devices([{"dtype": "float32", "n": 7, "temps": [0.1, 0.2, 0.15, 0.05]}])
  assert len(checked) == 2 + 5 + 1


@pytest.mark.slow  # two compilations of the K-step smooth closure, sharded and not
def test_ste_scores_soft_closure_four_devices_more_cases():
  """n = 10 with a bounded ``K = 3`` and a large ``reach_gamma``; float64 at n = 9."""
  _ste_on_four_devices(
    [
      {"dtype": "float32", "n": 10, "temps": [0.1, 0.1, 0.1, 0.3], "max_path_length": 3},
      {"dtype": "float64", "n": 9, "temps": [0.05, 0.1, 0.2, 0.02]},
    ]
  )


@pytest.mark.slow  # float64, a second n, a mesh of Explicit axes
def test_ste_scores_four_devices_equal_one_device_more_cases():
  _ste_on_four_devices(
    [{"dtype": "float64", "n": n, "temps": [0.05, 0.1, 0.3]} for n in (9, 16)]
    + [{"dtype": "float32", "n": n, "temps": [0.1, 0.1, 0.1], "explicit": True} for n in (9, 16)]
  )


def test_ste_scores_one_device_and_errors(rng):
  mesh = _one_device_mesh()
  U = rng.uniform(size=(5, 5))
  P = jnp.asarray(np.triu(U, 1) + np.tril(1.0 - U.T, -1) + 0.5 * np.eye(5), jnp.float32)
  got = sharded_ste_scores(P, mesh=mesh, axis_name="rows", tau=0.1)
  want = ste_scores(P, tau=0.1)
  np.testing.assert_allclose(got.top_cycle, want.top_cycle, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(got.uncovered, want.uncovered, rtol=1e-5, atol=1e-6)
  with pytest.raises(TypeError, match="mesh"):
    sharded_ste_scores(P, mesh=None, axis_name="rows")
  with pytest.raises(OptionError, match="axis_name"):
    sharded_ste_scores(P, mesh=mesh, axis_name="cols")
  with pytest.raises(InputError, match=r"\(n, n\)"):
    sharded_ste_scores(jnp.stack([P, P]), mesh=mesh, axis_name="rows")
  with pytest.raises(InputError, match="P"):
    sharded_ste_scores(P.at[0, 1].set(2.0), mesh=mesh, axis_name="rows")
  with pytest.raises(ValueError, match="gamma_c"):
    sharded_ste_scores(P, mesh=mesh, axis_name="rows", gamma_c=-1.0)
