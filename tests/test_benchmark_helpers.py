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
      "\\subsection{Core Functions}\n\\begin{verbatim}\ndef f(x):\n    return 2 * x\n\\end{verbatim}\n"
      "text\n\\begin{verbatim}\ndef g(x):\n    return f(x) + 1\n\\end{verbatim}\n"
      "\\subsection{Training Loop}\n\\begin{verbatim}\nraise RuntimeError('after')\n\\end{verbatim}\n"
  )
  namespace = appendix_namespace(str(tex))
  assert namespace["g"](3) == 7


def test_hand_written_cover_sums_equal_the_float64_sums(tmp_path):
  """`benchmarks/native/cover_sums.c` (the C row of exp_rate.py) computes the cover's forward sums.

  n = 37: five 8-lane blocks and a scalar tail per row; skipped where no C compiler is found.
  """
  from benchmarks.exp_rate import native_cover_sums

  native = native_cover_sums(str(tmp_path))
  if native is None:
    pytest.skip("no C compiler")
  sums, exp = native
  rng = np.random.default_rng(0)
  D = rng.uniform(size=(37, 37)).astype(np.float32)
  Y = (1.0 - D.T).copy()
  expect = np.exp(D[None, :, :].astype(np.float64) * Y[:, None, :] * 20.0 - 20.0).sum(-1)  # [c, a]
  np.testing.assert_allclose(sums(D, Y, 20.0), expect, rtol=2e-6)
  x = np.linspace(-50.0, 0.0, 5001, dtype=np.float32)
  np.testing.assert_allclose(exp(x), np.exp(x.astype(np.float64)), rtol=2e-6)


def test_hand_written_cover_sums_through_jax_ffi_equal_the_float64_sums(tmp_path):
  """The same C code as a typed XLA FFI target, called by ``jax.ffi.ffi_call`` under ``jit`` and ``vmap``."""
  import jax

  from benchmarks.exp_rate import native_ffi_cover_sums

  sums = native_ffi_cover_sums(str(tmp_path))
  if sums is None:
    pytest.skip("no C++ compiler, or the FFI build failed")
  rng = np.random.default_rng(1)
  D = rng.uniform(size=(2, 37, 37)).astype(np.float32)
  Y = (1.0 - D.transpose(0, 2, 1)).copy()
  expect = np.exp(D[:, None, :, :].astype(np.float64) * Y[:, :, None, :] * 20.0 - 20.0).sum(-1)  # [item, c, a]
  got = jax.jit(jax.vmap(sums, in_axes=(0, 0, None)))(jnp.asarray(D), jnp.asarray(Y), jnp.float32(20.0))
  np.testing.assert_allclose(np.asarray(got), expect, rtol=2e-6)
