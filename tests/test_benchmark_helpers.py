"""The helpers of two benchmark scripts compute what their tables claim (no timing asserted)."""

import jax.numpy as jnp
import numpy as np
import pytest

from benchmarks.exp_rate import polynomial_exp
from benchmarks.paper_appendix import appendix_namespace


@pytest.mark.parametrize("rounding", ["round", "magic"])
@pytest.mark.parametrize("degree", [4, 6])
def test_polynomial_exponentials_are_float32_accurate_on_the_shift_by_one_range(degree, rounding):
  """The exponentials `benchmarks/exp_rate.py` times against `jnp.exp` compute exp on [-50, 0].

  Compiled, as in the benchmark: XLA once simplified the "magic" rounding away (a 41 % error).
  """
  import jax

  x = np.linspace(-50.0, 0.0, 20001, dtype=np.float32)
  got = np.asarray(jax.jit(polynomial_exp(degree, rounding))(jnp.asarray(x)), np.float64)
  np.testing.assert_allclose(got, np.exp(x.astype(np.float64)), rtol=2e-5, atol=0)


def test_appendix_code_is_read_from_the_verbatim_blocks_between_its_headings(tmp_path):
  """Only the blocks from "Core Functions" up to "Training Loop" run; others are ignored."""
  tex = tmp_path / "paper.tex"
  tex.write_text(
    "\\begin{verbatim}\nraise RuntimeError('before')\n\\end{verbatim}\n"
    "\\subsection{Core Functions}\n\\begin{verbatim}\ndef f(x):\n    return 2 * "
    "x\n\\end{verbatim}\n"
    "text\n\\begin{verbatim}\ndef g(x):\n    return f(x) + 1\n\\end{verbatim}\n"
    "\\subsection{Training Loop}\n\\begin{verbatim}\nraise RuntimeError('after')\n\\end{verbatim}\n"
  )
  namespace = appendix_namespace(str(tex))
  assert namespace["g"](3) == 7
