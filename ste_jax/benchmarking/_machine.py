"""A one-line description of the machine a benchmark ran on (CPU model, cores, JAX, backend)."""

import os
import platform

import jax


def machine_description() -> str:
  """The machine line of the benchmark tables: CPU model, cores, jax version and backend.

  Returns:
    ``"<CPU model>, <cores> cores, jax <version>, backend <backend>"``, followed by the device
    kind in parentheses when the default backend is not the CPU.

  Examples:
    >>> from ste_jax.benchmarking import machine_description
    >>> "cores, jax" in machine_description()
    True
  """
  cpus = os.cpu_count()
  try:
    with open("/proc/cpuinfo") as f:
      model = next(
        (l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), platform.processor()
      )
  except OSError:
    model = platform.processor()
  desc = f"{model}, {cpus} cores, jax {jax.__version__}, backend {jax.default_backend()}"
  if jax.default_backend() != "cpu":
    desc += f" ({jax.devices()[0].device_kind})"
  return desc
