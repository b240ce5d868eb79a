"""Compilation for programs that gather by index arrays (the sparse pairwise fits) on XLA:CPU.

jaxlib 0.10's CPU backend routes elementwise-plus-reduction fusions through YNNPACK. When such a
fusion consumes values gathered by an index array (``s[i] - s[j]`` summed into a log-likelihood
over the observed pairs) it runs slower than XLA's own loop fusion
(``benchmarks/model_fit.py --objective`` times both). :func:`gather_friendly_jit` compiles one
function without those fusions when the default backend is the CPU and with XLA's defaults
elsewhere (the option is a CPU backend setting), so nothing else in a process is affected.
"""

import functools

import jax

# XLA:CPU options that turn YNNPACK fusions off. Provenance: benchmarks/model_fit.py --objective.
GATHER_FRIENDLY = {"xla_cpu_experimental_ynn_fusion_type": ""}


def gather_friendly_jit(fun=None, **jit_kwargs):
  """``jax.jit(fun, **jit_kwargs)``, with :data:`GATHER_FRIENDLY` compiler options on the CPU.

  The backend is read at call time (``jax.default_backend()``). A jaxlib that does not know the
  option (older than YNNPACK fusions) rejects it at the first compilation; the function then
  compiles with XLA's defaults from that call on. Usable as ``@gather_friendly_jit`` or
  ``@functools.partial(gather_friendly_jit, ...)``.
  """
  if fun is None:
    return functools.partial(gather_friendly_jit, **jit_kwargs)
  plain = jax.jit(fun, **jit_kwargs)
  tuned = {"cpu": jax.jit(fun, compiler_options=GATHER_FRIENDLY, **jit_kwargs)}

  @functools.wraps(fun)
  def call(*args, **kwargs):
    compiled = tuned.get(jax.default_backend(), plain)
    if compiled is plain:
      return plain(*args, **kwargs)
    try:
      return compiled(*args, **kwargs)
    except Exception as error:  # an unknown option is reported by the compiler as a runtime error
      if not any(name in str(error) for name in GATHER_FRIENDLY):
        raise
      tuned.clear()
      return plain(*args, **kwargs)

  return call
