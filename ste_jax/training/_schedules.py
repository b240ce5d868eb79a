"""Temperature schedules (appendix "Temperature Annealing Schedule", Algorithm ``ste_training``).

A schedule is a pure function ``step -> scalar`` in the style of optax schedules: it takes a
(possibly traced) integer step and returns a scalar array, so annealing inside a jitted train step
never recompiles. :func:`temperature_schedule` bundles the schedules of the three STE temperatures
``tau`` (edges), ``gamma`` (Top-Cycle softmin) and ``gamma_c`` (covering).
"""

from collections.abc import Callable
import math
from typing import Union

import jax
import jax.numpy as jnp

from ste_jax._checks import default_float_dtype
from ste_jax._results import result_type
from ste_jax._validation import validate_int, validate_temperature

Schedule = Callable[[jax.typing.ArrayLike], jax.Array]


@result_type
class Temperatures:
  """The STE temperatures at one step (scalar arrays, traced under ``jit``).

  Attributes:
    tau: edge temperature of Eq. ``soft_majority_edge``.
    gamma: softmin temperature of Eq. ``soft_top_cycle_score``.
    gamma_c: covering temperature of Eqs. ``soft_cover_score``-``soft_cover_aggregate``.

  Examples:
    >>> from ste_jax.training import temperature_schedule
    >>> temps = temperature_schedule(0.1)(0)  # gamma and gamma_c default to tau
    >>> [round(float(t), 6) for t in (temps.tau, temps.gamma, temps.gamma_c)]
    [0.1, 0.1, 0.1]
  """

  tau: jax.Array
  gamma: jax.Array
  gamma_c: jax.Array


def _as_step(step) -> jax.Array:
  step = jnp.asarray(step)
  if step.ndim != 0:
    raise ValueError(f"step must be a scalar, got shape {tuple(step.shape)}.")
  return step.astype(default_float_dtype())


def constant_temperature(value: float) -> Schedule:
  """A schedule that ignores the step and returns ``value`` (for ablations without annealing).

  Args:
    value: the temperature, a finite number ``> 0``.

  Returns:
    ``schedule(step) -> ()`` scalar in the default float dtype.

  Examples:
    >>> from ste_jax.training import constant_temperature
    >>> schedule = constant_temperature(0.1)
    >>> round(float(schedule(0)), 6), round(float(schedule(1000)), 6)
    (0.1, 0.1)
  """
  v = validate_temperature(value, "value")

  def schedule(step) -> jax.Array:
    return jnp.full((), v, dtype=_as_step(step).dtype)

  return schedule


def exponential_anneal(z_max: float, z_min: float, total_steps: int) -> Schedule:
  r"""Geometric annealing from ``z_max`` to ``z_min`` (paper appendix, "Temperature Annealing").

  .. math::
    z_t = z_{\max} \left(\frac{z_{\min}}{z_{\max}}\right)^{t / T}

  for ``0 <= t <= T``; the step is clipped to ``[0, T]`` so the temperature stays at ``z_min``
  after ``T`` steps.

  Args:
    z_max: initial temperature (``> 0``, e.g. ``1.0``).
    z_min: final temperature (``> 0``, e.g. ``0.01``).
    total_steps: ``T`` (integer ``>= 1``).

  Returns:
    ``schedule(step) -> ()`` scalar in the default float dtype (float64 under x64); ``step`` may be
    a traced integer.

  Examples:
    >>> s = exponential_anneal(1.0, 0.01, 100)
    >>> [round(float(s(t)), 4) for t in (0, 50, 100, 200)]
    [1.0, 0.1, 0.01, 0.01]
  """
  hi = validate_temperature(z_max, "z_max")
  lo = validate_temperature(z_min, "z_min")
  total_steps = validate_int(total_steps, "total_steps")
  log_hi, log_ratio = math.log(hi), math.log(lo) - math.log(hi)

  def schedule(step) -> jax.Array:
    frac = jnp.clip(_as_step(step), 0, total_steps) / total_steps
    return jnp.exp(log_hi + log_ratio * frac)

  return schedule


def _as_schedule(value, name: str) -> Schedule:
  if callable(value):
    return value
  try:
    return constant_temperature(value)
  except ValueError as e:
    raise ValueError(
      f"{name} must be a schedule (callable step -> scalar) or a number > 0; {e}"
    ) from e


def temperature_schedule(
  tau: Union[float, Schedule],
  gamma: Union[float, Schedule, None] = None,
  gamma_c: Union[float, Schedule, None] = None,
) -> Callable[[jax.typing.ArrayLike], Temperatures]:
  """The schedules of ``tau``, ``gamma`` and ``gamma_c`` (Algorithm ``ste_training``, line 2).

  Args:
    tau: edge-temperature schedule, or a number for a constant.
    gamma: softmin-temperature schedule or number; ``None`` follows ``tau``.
    gamma_c: covering-temperature schedule or number; ``None`` follows ``gamma``.

  Returns:
    A pure function ``step -> Temperatures``.

  Examples:
    >>> sched = temperature_schedule(exponential_anneal(1.0, 0.01, 10), gamma=0.05)
    >>> t = sched(10)
    >>> round(float(t.tau), 4), round(float(t.gamma), 4), round(float(t.gamma_c), 4)
    (0.01, 0.05, 0.05)
  """
  tau_s = _as_schedule(tau, "tau")
  gamma_s = tau_s if gamma is None else _as_schedule(gamma, "gamma")
  gamma_c_s = gamma_s if gamma_c is None else _as_schedule(gamma_c, "gamma_c")

  def schedule(step) -> Temperatures:
    return Temperatures(tau=tau_s(step), gamma=gamma_s(step), gamma_c=gamma_c_s(step))

  return schedule
