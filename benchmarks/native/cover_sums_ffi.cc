// cover_sums (cover_sums.c) as a typed XLA FFI handler, so that jax.ffi.ffi_call runs it inside a
// compiled JAX program (benchmarks/exp_rate.py; not used by ste_jax). Arguments: D (n, n), Y (n, n),
// inv_g (1,), all float32; result (n, n) indexed [c, a]. Build with the headers of
// jax.ffi.include_dir() (C++17) and link cover_sums.c.
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

extern "C" void cover_sums(const float *D, const float *Y, int n, float inv_g, float *out);

static ffi::Error CoverSumsImpl(ffi::Buffer<ffi::F32> D, ffi::Buffer<ffi::F32> Y, ffi::Buffer<ffi::F32> inv_g,
                                ffi::ResultBuffer<ffi::F32> out) {
  auto dims = D.dimensions();
  if (dims.size() != 2 || dims[0] != dims[1] || D.element_count() != Y.element_count() ||
      inv_g.element_count() != 1) {
    return ffi::Error::InvalidArgument("cover_sums: D and Y must be (n, n) and inv_g (1,)");
  }
  cover_sums(D.typed_data(), Y.typed_data(), static_cast<int>(dims[0]), inv_g.typed_data()[0], out->typed_data());
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(CoverSums, CoverSumsImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
