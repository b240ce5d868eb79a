"""NumPy random generators seeded from JAX PRNG keys: host-side draws that stay deterministic.

Some draws are made on the host, outside compiled code: cross-validation folds as multinomial
splits of count cells, and the bootstrap's Poisson weights and binomial redraws of count cells,
where NumPy's samplers are much faster than ``jax.random.poisson`` / ``binomial`` on mixed rates
(``benchmarks/bootstrap.py --draws`` times both). Seeding from the key's data keeps every result
a function of the caller's key.
"""

import jax
import numpy as np


def numpy_generator(key: jax.Array) -> np.random.Generator:
  """A ``numpy.random.Generator`` seeded by the bits of a JAX PRNG key (typed or raw ``uint32``).

  Args:
    key: a single PRNG key (``jax.random.key`` or ``jax.random.PRNGKey``).

  Returns:
    A PCG64 generator; the same key gives the same stream.

  Example:
    >>> import jax
    >>> a = numpy_generator(jax.random.key(0)).integers(0, 100, 3)
    >>> b = numpy_generator(jax.random.key(0)).integers(0, 100, 3)
    >>> bool((a == b).all())
    True
  """
  if jax.dtypes.issubdtype(getattr(key, "dtype", None), jax.dtypes.prng_key):
    key = jax.random.key_data(key)
  return np.random.default_rng(np.asarray(key).ravel().tolist())
