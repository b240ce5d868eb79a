// Native CPU kernels of the soft cover (ste_jax/ops/_cover_kernels.py), as typed XLA FFI handlers
// that jax.ffi.ffi_call runs inside compiled JAX programs. setup.py compiles this file when the
// package is built or installed; ste_jax/ops/_native.py loads and registers it.
//
// They compute what the JAX kernels compute, in float32:
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
// [-1/g, 0], within [-50, 0], for terms in [0, 1].
//
// Vector width, chosen at run time (one build runs on any x86-64 CPU): the loops are templates
// over a GCC/Clang vector-extension type, instantiated in three variants -- "avx512" (16 lanes,
// target avx512f+fma), "avx2" (8 lanes, target avx2+fma) and "generic" (8 lanes in the baseline
// instruction set: two SSE2 registers on x86-64, NEON or scalar code elsewhere) -- and the best
// one the CPU supports (__builtin_cpu_supports) runs; SteJaxCoverSelectIsa overrides the choice.
// Other architectures build the generic variant only.
//
// Threads: XLA's CPU thread pool, through the FFI's ThreadPool context (no private pool beside
// XLA's). Rows c are cut into a fixed number of chunks; the calling thread and up to
// num_threads - 1 tasks scheduled on the pool claim chunks from an atomic counter, and the caller
// waits only for chunks already claimed (a task that starts late finds none left), so the call
// completes even where the pool runs nothing in parallel. The reverse pass sums d_a over rows c
// in per-chunk buffers added in chunk order: the result does not depend on which thread ran
// which chunk.
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

#define STE_INLINE inline __attribute__((always_inline))

namespace {

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

template <class F>
struct Lanes;
template <>
struct Lanes<v8f> {
  using I = v8i;
  static constexpr int n = 8;
};
template <>
struct Lanes<v16f> {
  using I = v16i;
  static constexpr int n = 16;
};

template <class F>
STE_INLINE F splat(float x) {
  F v = {};
  return v + x;
}

template <class F>
STE_INLINE F load(const float *p) {
  F v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class F>
STE_INLINE void store(float *p, F v) {
  std::memcpy(p, &v, sizeof v);
}

template <class F>
STE_INLINE float hsum(F v) {
  constexpr int N = Lanes<F>::n;
  float s[N];
  std::memcpy(s, &v, sizeof v);
  for (int w = N / 2; w >= 1; w /= 2) {
    for (int i = 0; i < w; i++) s[i] += s[i + w];
  }
  return s[0];
}

template <class F>
STE_INLINE float hmax(F v) {
  float m = v[0];
  for (int i = 1; i < Lanes<F>::n; i++) m = v[i] > m ? v[i] : m;
  return m;
}

template <class F, bool kClamp>
STE_INLINE F vexp(F x) {
  using I = typename Lanes<F>::I;
  if (kClamp) x = x < splat<F>(-88.0f) ? splat<F>(-88.0f) : x;  // NaN compares false and stays
  const F magic = splat<F>(12582912.0f);  // 1.5 * 2^23: (t + magic)'s low mantissa bits: round(t)
  F z = x * 1.44269504088896341f + magic;
  F k = z - magic;
  F r = (x - k * 0.693359375f) - k * -2.12194440e-4f;  // ln2 = 0.693359375 - 2.12194440e-4 + ...
  F p = (((0.008292494f * r + 0.041897923f) * r + 0.16667600f) * r + 0.49999151f) * r +
        0.99999970f;
  F e = p * r + 1.0f;
  I bits;
  std::memcpy(&bits, &z, sizeof bits);
  bits = (bits << 23) + (127 << 23);
  F scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return e * scale;
}

// The unnormalized weight of a term: shifted by 1 (kByOne: exp(term / g - 1 / g), exactly 1 at
// term = 1), or by the pair's maximum S (exponent exactly 0 at the maximizers, whatever the
// rounding of term - S).
template <class F, bool kByOne>
STE_INLINE F weight(F term, F S, float inv_g) {
  if (kByOne) return vexp<F, false>(term * inv_g - inv_g);
  return vexp<F, true>(term >= S ? splat<F>(0.0f) : (term - S) * inv_g);
}

template <class F, bool kByOne>
STE_INLINE float weight1(float term, float S, float inv_g) {
  return weight<F, kByOne>(splat<F>(term), splat<F>(S), inv_g)[0];
}

template <class F>
STE_INLINE float pair_max(const float *d, const float *y, int n) {
  constexpr int N = Lanes<F>::n;
  F m = splat<F>(0.0f);  // the excluded witnesses' terms are 0, at most every term
  int b = 0;
  for (; b + N <= n; b += N) {
    F t = load<F>(d + b) * load<F>(y + b);
    m = t > m ? t : m;
  }
  float mm = hmax(m);
  for (; b < n; b++) {
    float t = d[b] * y[b];
    mm = t > mm ? t : mm;
  }
  return mm;
}

template <class F, bool kByOne>
STE_INLINE float pair_sum(const float *d, const float *y, int n, float S, float inv_g) {
  constexpr int N = Lanes<F>::n;
  F acc = splat<F>(0.0f), Sv = splat<F>(S);
  int b = 0;
  for (; b + N <= n; b += N) acc += weight<F, kByOne>(load<F>(d + b) * load<F>(y + b), Sv, inv_g);
  float total = hsum(acc);
  for (; b < n; b++) total += weight1<F, kByOne>(d[b] * y[b], S, inv_g);
  return total;
}

// The arguments of one kernel call; a chunk is a range [c0, c1) of rows c.
struct Problem {
  const float *D, *Y, *S_in, *scale;
  int n;
  float inv_g;
  bool by_one;
  float *S_out, *aux_out;  // forward
  float *d_c, *acc;        // backward: acc is the chunk's (a1 - a0, n) partial sums of d_a
  int a0, a1;              // backward: the current block of rows a
  float *d_a;              // backward, reduction: the chunks' partial sums, added into d_a
  const float *partial;
  int chunks;
  size_t stride;
};

int block_rows(int n, int budget_floats) {
  int rows = budget_floats / (n > 0 ? n : 1);
  return rows < 4 ? 4 : (rows > 64 ? 64 : rows);
}

// Forward, rows c in [c0, c1): blocks of rows a (their rows of D stay in cache) outside.
template <class F, bool kByOne>
STE_INLINE void forward_rows(const Problem &p, int c0, int c1) {
  const int n = p.n, a_rows = block_rows(n, 1 << 16);
  for (int a0 = 0; a0 < n; a0 += a_rows) {
    const int a1 = a0 + a_rows < n ? a0 + a_rows : n;
    for (int c = c0; c < c1; c++) {
      const float *y = p.Y + (size_t)c * n;
      for (int a = a0; a < a1; a++) {
        const float *d = p.D + (size_t)a * n;
        const float S = kByOne ? 1.0f : pair_max<F>(d, y, n);
        const float excluded = 2.0f * weight1<F, kByOne>(0.0f, S, p.inv_g);  // the zero terms
        p.S_out[(size_t)c * n + a] = S;
        const float sum = pair_sum<F, kByOne>(d, y, n, S, p.inv_g);
        p.aux_out[(size_t)c * n + a] = std::log(sum - excluded);
      }
    }
  }
}

// Backward, rows c in [c0, c1) and rows a in [p.a0, p.a1): d_c rows c, and d_a's partial sums
// over these rows c into p.acc.
template <class F, bool kByOne>
STE_INLINE void backward_rows(const Problem &p, int c0, int c1) {
  constexpr int N = Lanes<F>::n;
  const int n = p.n;
  std::memset(p.acc, 0, sizeof(float) * (size_t)(p.a1 - p.a0) * n);
  for (int c = c0; c < c1; c++) {
    const float *y = p.Y + (size_t)c * n;
    float *dc = p.d_c + (size_t)c * n;
    for (int a = p.a0; a < p.a1; a++) {
      const float w = p.scale[(size_t)c * n + a];
      if (w == 0.0f) continue;  // no cotangent (the diagonal, or an unused pair)
      const float S = p.S_in[(size_t)c * n + a];
      const float *d = p.D + (size_t)a * n;
      float *acc_a = p.acc + (size_t)(a - p.a0) * n;
      const F Sv = splat<F>(S), wv = splat<F>(w);
      int b = 0;
      for (; b + N <= n; b += N) {
        const F dv = load<F>(d + b), yv = load<F>(y + b);
        const F G = weight<F, kByOne>(dv * yv, Sv, p.inv_g) * wv;
        store<F>(dc + b, load<F>(dc + b) - G * dv);
        store<F>(acc_a + b, load<F>(acc_a + b) + G * yv);
      }
      for (; b < n; b++) {
        const float G = weight1<F, kByOne>(d[b] * y[b], S, p.inv_g) * w;
        dc[b] -= G * d[b];
        acc_a[b] += G * y[b];
      }
    }
  }
}

typedef void (*RowsFn)(const Problem &, int, int);

// Rows [a0 + r0, a0 + r1) of d_a += the chunks' partial sums, in chunk order (deterministic).
void reduce_rows(const Problem &p, int r0, int r1) {
  const int n = p.n;
  float *dst = p.d_a + (size_t)(p.a0 + r0) * n;
  const size_t count = (size_t)(r1 - r0) * n;
  for (int k = 0; k < p.chunks; k++) {
    const float *src = p.partial + (size_t)k * p.stride + (size_t)r0 * n;
    for (size_t i = 0; i < count; i++) dst[i] += src[i];
  }
}

struct Variant {
  const char *name;
  RowsFn forward[2], backward[2];  // [by_one]
};

#define STE_VARIANT(NAME, ATTR, F)                                                       \
  ATTR void NAME##_fwd0(const Problem &p, int c0, int c1) { forward_rows<F, false>(p, c0, c1); } \
  ATTR void NAME##_fwd1(const Problem &p, int c0, int c1) { forward_rows<F, true>(p, c0, c1); }  \
  ATTR void NAME##_bwd0(const Problem &p, int c0, int c1) { backward_rows<F, false>(p, c0, c1); } \
  ATTR void NAME##_bwd1(const Problem &p, int c0, int c1) { backward_rows<F, true>(p, c0, c1); }  \
  constexpr Variant NAME##_variant = {                                                   \
      #NAME, {NAME##_fwd0, NAME##_fwd1}, {NAME##_bwd0, NAME##_bwd1}};

STE_VARIANT(generic, , v8f)
#if defined(__x86_64__)
STE_VARIANT(avx2, __attribute__((target("avx2,fma"))), v8f)
STE_VARIANT(avx512, __attribute__((target("avx512f,avx2,fma"))), v16f)
#endif

bool supported(const Variant *v) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (v == &avx2_variant) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (v == &avx512_variant) {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
           __builtin_cpu_supports("fma");
  }
#endif
  return v == &generic_variant;
}

const Variant *const kVariants[] = {
#if defined(__x86_64__)
    &avx512_variant,
    &avx2_variant,
#endif
    &generic_variant,
};

const Variant *best_variant() {
  for (const Variant *v : kVariants) {
    if (supported(v)) return v;
  }
  return &generic_variant;
}

std::atomic<const Variant *> g_variant{nullptr};

const Variant *variant() {
  const Variant *v = g_variant.load(std::memory_order_acquire);
  if (v == nullptr) {
    v = best_variant();
    g_variant.store(v, std::memory_order_release);
  }
  return v;
}

// Runs fn(p, r0, r1) on `chunks` equal ranges of [0, rows), on the caller and XLA's pool.
struct Shared {
  std::atomic<int> next{0}, done{0};
  int chunks = 0, rows = 0;
  RowsFn fn = nullptr;
  const Problem *problem = nullptr;  // valid while done < chunks
  float *acc0 = nullptr;             // backward: chunk k's partial sums at acc0 + k * acc_stride
  size_t acc_stride = 0;
  std::mutex mu;
  std::condition_variable cv;
};

void work(Shared &s) {
  for (int k; (k = s.next.fetch_add(1, std::memory_order_relaxed)) < s.chunks;) {
    Problem p = *s.problem;
    if (s.acc0 != nullptr) p.acc = s.acc0 + (size_t)k * s.acc_stride;
    const int r0 = (int)((int64_t)s.rows * k / s.chunks);
    const int r1 = (int)((int64_t)s.rows * (k + 1) / s.chunks);
    s.fn(p, r0, r1);
    if (s.done.fetch_add(1, std::memory_order_acq_rel) + 1 == s.chunks) {
      std::lock_guard<std::mutex> lock(s.mu);
      s.cv.notify_all();
    }
  }
}

void run_chunks(ffi::ThreadPool &pool, int workers, int chunks, int rows, RowsFn fn,
                const Problem &p, float *acc0 = nullptr, size_t acc_stride = 0) {
  auto s = std::make_shared<Shared>();
  s->chunks = chunks;
  s->rows = rows;
  s->fn = fn;
  s->problem = &p;
  s->acc0 = acc0;
  s->acc_stride = acc_stride;
  const int tasks = (workers < chunks ? workers : chunks) - 1;
  for (int t = 0; t < tasks; t++) pool.Schedule([s] { work(*s); });
  work(*s);
  std::unique_lock<std::mutex> lock(s->mu);
  s->cv.wait(lock, [&] { return s->done.load(std::memory_order_acquire) == s->chunks; });
}

// Threads that may work on one call (the caller included): the pool's size, at least 1.
int pool_workers(ffi::ThreadPool &pool) {
  const int64_t t = pool.num_threads();
  return t < 1 ? 1 : (t > 1024 ? 1024 : (int)t);
}

// Chunks of rows c: a few per worker (load balance when another computation holds a thread).
int row_chunks(int workers, int n) {
  const int chunks = workers > 1 ? 4 * workers : 1;
  return chunks < n ? chunks : (n > 0 ? n : 1);
}

struct Shift {
  bool by_one;
  float inv_g;
};

Shift shift_for(float g, float min_gamma_shift_by_one) {
  bool by_one = g >= min_gamma_shift_by_one;
  float divisor = g > 0.0f ? g : 1.17549435e-38f;  // FLT_MIN: the hard limit at g <= 0
  return Shift{by_one, 1.0f / divisor};
}

bool square(const ffi::Buffer<ffi::F32> &x, int64_t n) {
  auto dims = x.dimensions();
  return dims.size() == 2 && dims[0] == n && dims[1] == n;
}

ffi::Error CoverForwardImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> D,
                            ffi::Buffer<ffi::F32> Y, ffi::Buffer<ffi::F32> g,
                            float min_gamma_shift_by_one, ffi::ResultBuffer<ffi::F32> S,
                            ffi::ResultBuffer<ffi::F32> aux) {
  auto dims = D.dimensions();
  if (dims.size() != 2 || !square(Y, dims[0]) || !square(D, dims[0]) || g.element_count() != 1) {
    return ffi::Error::InvalidArgument(
        "ste_jax_cover_forward: D and Y must be (n, n) and g a scalar");
  }
  const Shift s = shift_for(g.typed_data()[0], min_gamma_shift_by_one);
  Problem p = {};
  p.D = D.typed_data();
  p.Y = Y.typed_data();
  p.n = static_cast<int>(dims[0]);
  p.inv_g = s.inv_g;
  p.S_out = S->typed_data();
  p.aux_out = aux->typed_data();
  if (p.n == 0) return ffi::Error::Success();
  const int workers = pool_workers(pool);
  run_chunks(pool, workers, row_chunks(workers, p.n), p.n, variant()->forward[s.by_one], p);
  return ffi::Error::Success();
}

ffi::Error CoverBackwardImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> D,
                             ffi::Buffer<ffi::F32> Y, ffi::Buffer<ffi::F32> S,
                             ffi::Buffer<ffi::F32> scale, ffi::Buffer<ffi::F32> g,
                             float min_gamma_shift_by_one, ffi::ResultBuffer<ffi::F32> d_c,
                             ffi::ResultBuffer<ffi::F32> d_a) {
  auto dims = D.dimensions();
  const int64_t n64 = dims.size() == 2 ? dims[0] : -1;
  if (!square(D, n64) || !square(Y, n64) || !square(S, n64) || !square(scale, n64) ||
      g.element_count() != 1) {
    return ffi::Error::InvalidArgument(
        "ste_jax_cover_backward: D, Y, S and scale must be (n, n) and g a scalar");
  }
  const int n = static_cast<int>(n64);
  const Shift s = shift_for(g.typed_data()[0], min_gamma_shift_by_one);
  float *out_a = d_a->typed_data();
  std::memset(d_c->typed_data(), 0, sizeof(float) * (size_t)n * n);
  std::memset(out_a, 0, sizeof(float) * (size_t)n * n);
  if (n == 0) return ffi::Error::Success();
  const int workers = pool_workers(pool), chunks = row_chunks(workers, n);
  const int a_rows = block_rows(n, 1 << 15);
  const RowsFn fn = variant()->backward[s.by_one];
  std::vector<float> partial((size_t)chunks * a_rows * n);
  Problem p = {};
  p.D = D.typed_data();
  p.Y = Y.typed_data();
  p.S_in = S.typed_data();
  p.scale = scale.typed_data();
  p.n = n;
  p.inv_g = s.inv_g;
  p.d_c = d_c->typed_data();
  p.d_a = out_a;
  p.partial = partial.data();
  p.chunks = chunks;
  p.stride = (size_t)a_rows * n;
  for (int a0 = 0; a0 < n; a0 += a_rows) {
    p.a0 = a0;
    p.a1 = a0 + a_rows < n ? a0 + a_rows : n;
    run_chunks(pool, workers, chunks, n, fn, p, partial.data(), p.stride);
    // d_a's rows of this block: the chunks' partial sums (rows of the block split among threads).
    const int rows = p.a1 - a0;
    run_chunks(pool, workers, row_chunks(workers, rows), rows, reduce_rows, p);
  }
  return ffi::Error::Success();
}

}  // namespace

extern "C" {

// The name of the variant the kernels run ("avx512", "avx2" or "generic").
const char *SteJaxCoverIsa() { return variant()->name; }

// Selects the variant `name` for the calls that start after it; returns 0 where the CPU (or this
// build) lacks it, and leaves the choice unchanged. Tests use it to compare the variants.
int SteJaxCoverSelectIsa(const char *name) {
  for (const Variant *v : kVariants) {
    if (std::strcmp(v->name, name) == 0 && supported(v)) {
      g_variant.store(v, std::memory_order_release);
      return 1;
    }
  }
  return 0;
}

}  // extern "C"

XLA_FFI_DEFINE_HANDLER_SYMBOL(SteJaxCoverForward, CoverForwardImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // D
                                  .Arg<ffi::Buffer<ffi::F32>>()  // Y
                                  .Arg<ffi::Buffer<ffi::F32>>()  // g
                                  .Attr<float>("min_gamma_shift_by_one")
                                  .Ret<ffi::Buffer<ffi::F32>>()    // S
                                  .Ret<ffi::Buffer<ffi::F32>>());  // aux

XLA_FFI_DEFINE_HANDLER_SYMBOL(SteJaxCoverBackward, CoverBackwardImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // D
                                  .Arg<ffi::Buffer<ffi::F32>>()  // Y
                                  .Arg<ffi::Buffer<ffi::F32>>()  // S
                                  .Arg<ffi::Buffer<ffi::F32>>()  // scale
                                  .Arg<ffi::Buffer<ffi::F32>>()  // g
                                  .Attr<float>("min_gamma_shift_by_one")
                                  .Ret<ffi::Buffer<ffi::F32>>()    // d_c
                                  .Ret<ffi::Buffer<ffi::F32>>());  // d_a
