// Native CPU kernels of the soft cover (ste_jax/ops/_cover_kernels.py), as typed XLA FFI handlers that
// jax.ffi.ffi_call runs inside compiled JAX programs (ste_jax/ops/_native.py builds this file).
//
// The cover's cost is one exponential per triple (c, a, b) in the value and one more in the
// reverse pass: XLA:CPU evaluates them at about 2.4 G exp/s on the 2-core EPYC VM, these loops at
// 6.2 G exp/s (benchmarks/exp_rate.py, benchmarks/RESULTS.md). They compute what the JAX kernels compute, in float32:
//
//   term[c, a, b] = D[a, b] Y[c, b]      (D, Y = 1 - D: zero diagonals, so the excluded witnesses
//                                          b = a and b = c have term 0 and are subtracted once)
//   shift S[c, a] = 1 if g >= min_gamma_shift_by_one, else max_b term[c, a, b]
//   aux[c, a]     = log(sum_b exp((term - S) / g) - 2 exp((0 - S) / g))
//
// and the reverse pass, with G[c, a, b] = exp((term - S) / g) scale[c, a]:
//
//   d_c[c, b] = -sum_a G D[a, b],    d_a[a, b] = sum_c G Y[c, b].
//
// A temperature g <= 0 divides by the smallest normal float (the hard limit, as _divisor() in
// _cover_kernels.py); the exponent of a pair's maximizers is then set to exactly 0.
//
// exp: x = k ln2 + r with k = round(x log2 e) (Cody-Waite: ln2 in two parts, so r is exact to
// float32 rounding), e^r = 1 + r p(r) with p of degree 4 fitted for relative error on
// [-ln2/2, ln2/2] (exactly 1 at 0), 2^k from the exponent bits: relative error below 2e-7 on
// [-87, 0] (tests/ops/test_native.py compares the kernels with float64 equations). NaN stays NaN.
// The pair-maximum shift clamps exponents at -88 (k >= -127: 2^k is 0 or normal), as a traced
// g = 0 sends them to -inf; the shift by 1 needs no clamp, its exponents (term - 1) / g lie in
// [-1/g, 0], within [-50, 0], for terms in [0, 1]. Eight lanes at a time with GCC/Clang vector
// extensions (AVX2 registers with -march=native on x86-64, two SSE registers or NEON without).
//
// Loops: blocks of rows a (their rows of D stay in cache) outside; OpenMP threads share the rows c.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

constexpr int kLanes = 8;

inline v8f splat(float x) { return v8f{x, x, x, x, x, x, x, x}; }

inline v8f load(const float *p) {
  v8f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store(float *p, v8f v) { std::memcpy(p, &v, sizeof v); }

inline float hsum(v8f v) { return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); }

inline float hmax(v8f v) {
  float m = v[0];
  for (int i = 1; i < kLanes; i++) m = v[i] > m ? v[i] : m;
  return m;
}

template <bool kClamp>
inline v8f exp8(v8f x) {
  if (kClamp) x = x < splat(-88.0f) ? splat(-88.0f) : x;  // NaN compares false and stays
  const v8f magic = splat(12582912.0f);  // 1.5 * 2^23: (t + magic)'s low mantissa bits hold round(t)
  v8f z = x * 1.44269504088896341f + magic;
  v8f k = z - magic;
  v8f r = (x - k * 0.693359375f) - k * -2.12194440e-4f;  // ln2 = 0.693359375 - 2.12194440e-4 + ...
  v8f p = (((0.008292494f * r + 0.041897923f) * r + 0.16667600f) * r + 0.49999151f) * r + 0.99999970f;
  v8f e = p * r + 1.0f;
  v8i bits;
  std::memcpy(&bits, &z, sizeof bits);
  bits = (bits << 23) + (127 << 23);
  v8f scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return e * scale;
}

// The unnormalized weight of a term: shifted by 1 (kByOne: exp(term / g - 1 / g), exactly 1 at
// term = 1), or by the pair's maximum S (exponent exactly 0 at the maximizers, whatever the rounding
// of term - S).
struct Shift {
  bool by_one;
  float inv_g;
};

template <bool kByOne>
inline v8f weight8(v8f term, v8f S, float inv_g) {
  if (kByOne) return exp8<false>(term * inv_g - inv_g);
  return exp8<true>(term >= S ? splat(0.0f) : (term - S) * inv_g);
}

template <bool kByOne>
inline float weight1(float term, float S, float inv_g) {
  return weight8<kByOne>(splat(term), splat(S), inv_g)[0];
}

Shift shift_for(float g, float min_gamma_shift_by_one) {
  bool by_one = g >= min_gamma_shift_by_one;
  float divisor = g > 0.0f ? g : 1.17549435e-38f;  // FLT_MIN: the hard limit at g <= 0
  return Shift{by_one, 1.0f / divisor};
}

int block_rows(int n, int budget_floats) {
  int rows = budget_floats / (n > 0 ? n : 1);
  return rows < 4 ? 4 : (rows > 64 ? 64 : rows);
}

inline float pair_max(const float *d, const float *y, int n) {
  v8f m = splat(0.0f);  // the excluded witnesses' terms are 0, at most every term
  int b = 0;
  for (; b + kLanes <= n; b += kLanes) {
    v8f t = load(d + b) * load(y + b);
    m = t > m ? t : m;
  }
  float mm = hmax(m);
  for (; b < n; b++) {
    float t = d[b] * y[b];
    mm = t > mm ? t : mm;
  }
  return mm;
}

template <bool kByOne>
inline float pair_sum(const float *d, const float *y, int n, float S, float inv_g) {
  v8f acc = splat(0.0f), Sv = splat(S);
  int b = 0;
  for (; b + kLanes <= n; b += kLanes) acc += weight8<kByOne>(load(d + b) * load(y + b), Sv, inv_g);
  float total = hsum(acc);
  for (; b < n; b++) total += weight1<kByOne>(d[b] * y[b], S, inv_g);
  return total;
}

template <bool kByOne>
void cover_forward(const float *D, const float *Y, int n, float inv_g, float *S_out, float *aux_out) {
  const int a_rows = block_rows(n, 1 << 16);
  for (int a0 = 0; a0 < n; a0 += a_rows) {
    const int a1 = a0 + a_rows < n ? a0 + a_rows : n;
#pragma omp parallel for schedule(static)
    for (int c = 0; c < n; c++) {
      const float *y = Y + (size_t)c * n;
      for (int a = a0; a < a1; a++) {
        const float *d = D + (size_t)a * n;
        const float S = kByOne ? 1.0f : pair_max(d, y, n);
        const float excluded = 2.0f * weight1<kByOne>(0.0f, S, inv_g);  // the two zero terms' share
        S_out[(size_t)c * n + a] = S;
        aux_out[(size_t)c * n + a] = std::log(pair_sum<kByOne>(d, y, n, S, inv_g) - excluded);
      }
    }
  }
}

template <bool kByOne>
void cover_backward(const float *D, const float *Y, const float *S_in, const float *scale, int n, float inv_g,
                    float *d_c, float *d_a) {
  const int a_rows = block_rows(n, 1 << 15);
  std::memset(d_c, 0, sizeof(float) * (size_t)n * n);
  std::memset(d_a, 0, sizeof(float) * (size_t)n * n);
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  // Each thread's sums over its rows c for the current block of rows a, added into d_a after the block.
  std::vector<float> partial((size_t)threads * a_rows * n, 0.0f);
  for (int a0 = 0; a0 < n; a0 += a_rows) {
    const int a1 = a0 + a_rows < n ? a0 + a_rows : n;
#pragma omp parallel num_threads(threads)
    {
      int t = 0;
#ifdef _OPENMP
      t = omp_get_thread_num();
#endif
      float *acc = partial.data() + (size_t)t * a_rows * n;
#pragma omp for schedule(static)
      for (int c = 0; c < n; c++) {
        const float *y = Y + (size_t)c * n;
        float *dc = d_c + (size_t)c * n;
        for (int a = a0; a < a1; a++) {
          const float w = scale[(size_t)c * n + a];
          if (w == 0.0f) continue;  // no cotangent (the diagonal, or an unused pair)
          const float S = S_in[(size_t)c * n + a];
          const float *d = D + (size_t)a * n;
          float *acc_a = acc + (size_t)(a - a0) * n;
          const v8f Sv = splat(S), wv = splat(w);
          int b = 0;
          for (; b + kLanes <= n; b += kLanes) {
            const v8f dv = load(d + b), yv = load(y + b);
            const v8f G = weight8<kByOne>(dv * yv, Sv, inv_g) * wv;
            store(dc + b, load(dc + b) - G * dv);
            store(acc_a + b, load(acc_a + b) + G * yv);
          }
          for (; b < n; b++) {
            const float G = weight1<kByOne>(d[b] * y[b], S, inv_g) * w;
            dc[b] -= G * d[b];
            acc_a[b] += G * y[b];
          }
        }
      }
      // Implicit barrier: every thread's partial sums of this block are complete.
#pragma omp for schedule(static)
      for (int a = a0; a < a1; a++) {
        float *out = d_a + (size_t)a * n;
        for (int u = 0; u < threads; u++) {
          float *src = partial.data() + ((size_t)u * a_rows + (a - a0)) * n;
          for (int b = 0; b < n; b++) {
            out[b] += src[b];
            src[b] = 0.0f;
          }
        }
      }
    }
  }
}

bool square(const ffi::Buffer<ffi::F32> &x, int64_t n) {
  auto dims = x.dimensions();
  return dims.size() == 2 && dims[0] == n && dims[1] == n;
}

ffi::Error CoverForwardImpl(ffi::Buffer<ffi::F32> D, ffi::Buffer<ffi::F32> Y, ffi::Buffer<ffi::F32> g,
                            float min_gamma_shift_by_one, ffi::ResultBuffer<ffi::F32> S,
                            ffi::ResultBuffer<ffi::F32> aux) {
  auto dims = D.dimensions();
  if (dims.size() != 2 || !square(Y, dims[0]) || !square(D, dims[0]) || g.element_count() != 1) {
    return ffi::Error::InvalidArgument("ste_jax_cover_forward: D and Y must be (n, n) and g a scalar");
  }
  const Shift s = shift_for(g.typed_data()[0], min_gamma_shift_by_one);
  auto run = s.by_one ? cover_forward<true> : cover_forward<false>;
  run(D.typed_data(), Y.typed_data(), static_cast<int>(dims[0]), s.inv_g, S->typed_data(), aux->typed_data());
  return ffi::Error::Success();
}

ffi::Error CoverBackwardImpl(ffi::Buffer<ffi::F32> D, ffi::Buffer<ffi::F32> Y, ffi::Buffer<ffi::F32> S,
                             ffi::Buffer<ffi::F32> scale, ffi::Buffer<ffi::F32> g, float min_gamma_shift_by_one,
                             ffi::ResultBuffer<ffi::F32> d_c, ffi::ResultBuffer<ffi::F32> d_a) {
  auto dims = D.dimensions();
  const int64_t n = dims.size() == 2 ? dims[0] : -1;
  if (!square(D, n) || !square(Y, n) || !square(S, n) || !square(scale, n) || g.element_count() != 1) {
    return ffi::Error::InvalidArgument("ste_jax_cover_backward: D, Y, S and scale must be (n, n) and g a scalar");
  }
  const Shift s = shift_for(g.typed_data()[0], min_gamma_shift_by_one);
  auto run = s.by_one ? cover_backward<true> : cover_backward<false>;
  run(D.typed_data(), Y.typed_data(), S.typed_data(), scale.typed_data(), static_cast<int>(n), s.inv_g,
      d_c->typed_data(), d_a->typed_data());
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(SteJaxCoverForward, CoverForwardImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // D
                                  .Arg<ffi::Buffer<ffi::F32>>()  // Y
                                  .Arg<ffi::Buffer<ffi::F32>>()  // g
                                  .Attr<float>("min_gamma_shift_by_one")
                                  .Ret<ffi::Buffer<ffi::F32>>()  // S
                                  .Ret<ffi::Buffer<ffi::F32>>());  // aux

XLA_FFI_DEFINE_HANDLER_SYMBOL(SteJaxCoverBackward, CoverBackwardImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // D
                                  .Arg<ffi::Buffer<ffi::F32>>()  // Y
                                  .Arg<ffi::Buffer<ffi::F32>>()  // S
                                  .Arg<ffi::Buffer<ffi::F32>>()  // scale
                                  .Arg<ffi::Buffer<ffi::F32>>()  // g
                                  .Attr<float>("min_gamma_shift_by_one")
                                  .Ret<ffi::Buffer<ffi::F32>>()  // d_c
                                  .Ret<ffi::Buffer<ffi::F32>>());  // d_a
