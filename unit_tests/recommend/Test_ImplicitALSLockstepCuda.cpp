// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA lockstep CG phases of the implicit ALS (backends/cuda/
// KokkosSketch_Cuda_ImplicitALSLockstep.cu) called directly, every task-kernel mode (0 to 6)
// against an FP64 host evaluation of the same phase, on the float CG vectors themselves (not
// rounded to the factor storage, so a slip of one bfloat16 term in the tensor-core kernel
// shows): the residual phase (r = sum_i (c_i - (c_i - 1) y_i.x) y_i - D, p = r, rs = r.r)
// and a step (Ap = D + sum_i (c_i - 1)(y_i.p) y_i, then the CG update), with rows packed into
// one task, an empty row, a row split into two segments (slots and the long-row kernel), a
// nonzero of weight 0 and an inactive row; BF16 rows at k = 32, 96 and 256 (the tensor-core
// kernel's sizes) and FP32 rows at k = 64 and 256; the split row also as a heavy one (a block
// of the long-row kernel), and the last step (x only). D is (Y^T Y + lambda I) v, so p.Ap > 0.
#include <KokkosSketch.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_TestUtils.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#include <KokkosSketch_Cuda_ImplicitALSKernels.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace KokkosSketch;
namespace CA = KokkosSketch::Impl::CudaALS;

/// The test problem on the host: 6 rows over 40 columns, the CG vectors and the tasks.
struct LockstepCase {
  std::int64_t k = 0, cols = 40, rows = 6;
  std::vector<std::int64_t> row_map, entries, tasks, long_rows;
  std::vector<float> conf, Yf, x, r, p, d, rs;  // Yf: the factors as floats (storage values)
  std::vector<std::uint16_t> Yh;                // BF16 bits of Yf (BF16 storage)
};

LockstepCase make_case(std::int64_t k, bool bf16_rows, bool residual, unsigned seed) {
  LockstepCase c;
  c.k = k;
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), w(1.0f, 5.0f);
  // Rows: 20 nonzeros (two trips of 16), 3, empty, 37 (split 17 + 20 into slots 0 and 1),
  // 5 with one weight 0, 4 (inactive: rs = 0).
  const std::int64_t counts[6] = {20, 3, 0, 37, 5, 4};
  c.row_map.push_back(0);
  for (std::int64_t i = 0; i < c.rows; ++i) {
    for (std::int64_t j = 0; j < counts[i]; ++j) {
      c.entries.push_back((j * 7 + i * 3) % c.cols);  // distinct columns within a row
      c.conf.push_back(i == 4 && j == 2 ? 0.0f : w(gen));
    }
    c.row_map.push_back(std::int64_t(c.entries.size()));
  }
  const std::int64_t b3 = c.row_map[3], e3 = c.row_map[4];
  c.tasks = {0, 3, 0, 0, -1, 3, 4, b3, b3 + 17, 0, 3, 4, b3 + 17, e3, 1, 4, 6, 0, 0, -1};
  c.long_rows = {3, 0, 2};
  c.Yf.resize(std::size_t(c.cols * k));
  c.Yh.resize(c.Yf.size());
  for (std::size_t i = 0; i < c.Yf.size(); ++i) {
    float v = 0.5f * u(gen);
    if (bf16_rows) {
      c.Yh[i] = to_bf16(v).bits;
      v = to_float(bf16{c.Yh[i]});
    }
    c.Yf[i] = v;
  }
  const std::size_t n = std::size_t(c.rows * k);
  c.x.resize(n);
  c.r.resize(n);
  c.p.resize(n);
  c.d.resize(n);
  c.rs.assign(std::size_t(c.rows), 1.0f);
  for (std::size_t i = 0; i < n; ++i) {
    c.x[i] = u(gen);
    c.r[i] = u(gen);
    c.p[i] = u(gen);
  }
  // D = (Y^T Y + lambda I) v with v = x (residual) or p (step), in double, rounded.
  const double lambda = 0.1;
  for (std::int64_t row = 0; row < c.rows; ++row) {
    const float* v = (residual ? c.x.data() : c.p.data()) + row * k;
    for (std::int64_t a = 0; a < k; ++a) {
      double s = lambda * v[a];
      for (std::int64_t b = 0; b < k; ++b) {
        double g = 0.0;
        for (std::int64_t i = 0; i < c.cols; ++i) g += double(c.Yf[i * k + a]) * c.Yf[i * k + b];
        s += g * v[b];
      }
      c.d[std::size_t(row * k + a)] = float(s);
    }
    if (!residual) {
      double rr = 0.0;
      for (std::int64_t a = 0; a < k; ++a) rr += double(c.r[row * k + a]) * c.r[row * k + a];
      c.rs[std::size_t(row)] = float(rr);
    }
  }
  c.rs[5] = 0.0f;  // inactive
  return c;
}

/// The phase in double on the host: x, r, p, rs after it.
struct Reference {
  std::vector<double> x, r, p, rs;
};

Reference reference(const LockstepCase& c, bool residual) {
  const std::int64_t k = c.k;
  Reference o;
  o.x.assign(c.x.begin(), c.x.end());
  o.r.assign(c.r.begin(), c.r.end());
  o.p.assign(c.p.begin(), c.p.end());
  o.rs.assign(c.rs.begin(), c.rs.end());
  for (std::int64_t row = 0; row < c.rows; ++row) {
    const double rs = c.rs[std::size_t(row)];
    if (residual ? !(rs > 0.0) : !(rs > 1e-30)) continue;
    const float* v = (residual ? c.x.data() : c.p.data()) + row * k;
    std::vector<double> acc(std::size_t(k), 0.0);
    for (std::int64_t t = c.row_map[row]; t < c.row_map[row + 1]; ++t) {
      const double cf = c.conf[std::size_t(t)];
      if (!(cf > 0.0)) continue;
      const float* y = c.Yf.data() + c.entries[std::size_t(t)] * k;
      double dot = 0.0;
      for (std::int64_t a = 0; a < k; ++a) dot += double(y[a]) * v[a];
      const double wgt = residual ? cf - (cf - 1.0) * dot : (cf - 1.0) * dot;
      for (std::int64_t a = 0; a < k; ++a) acc[std::size_t(a)] += wgt * y[a];
    }
    const std::size_t o0 = std::size_t(row * k);
    if (residual) {
      double rr = 0.0;
      for (std::int64_t a = 0; a < k; ++a) {
        const double ra = acc[std::size_t(a)] - c.d[o0 + std::size_t(a)];
        o.r[o0 + std::size_t(a)] = ra;
        o.p[o0 + std::size_t(a)] = ra;
        rr += ra * ra;
      }
      o.rs[std::size_t(row)] = rr;
      continue;
    }
    std::vector<double> ap(static_cast<std::size_t>(k));
    double pap = 0.0;
    for (std::int64_t a = 0; a < k; ++a) {
      ap[std::size_t(a)] = c.d[o0 + std::size_t(a)] + acc[std::size_t(a)];
      pap += double(v[a]) * ap[std::size_t(a)];
    }
    EXPECT_GT(pap, 0.0);
    const double alpha = rs / pap;
    double rr = 0.0;
    for (std::int64_t a = 0; a < k; ++a) {
      o.x[o0 + std::size_t(a)] += alpha * v[a];
      o.r[o0 + std::size_t(a)] -= alpha * ap[std::size_t(a)];
      rr += o.r[o0 + std::size_t(a)] * o.r[o0 + std::size_t(a)];
    }
    const double beta = rr / rs;
    for (std::int64_t a = 0; a < k; ++a)
      o.p[o0 + std::size_t(a)] = o.r[o0 + std::size_t(a)] + beta * v[a];
    o.rs[std::size_t(row)] = rr;
  }
  return o;
}

/// max_i |a_i - b_i| / max_i |b_i|
double rel_err(const std::vector<double>& a, const std::vector<double>& b) {
  double e = 0.0, s = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    e = std::max(e, std::abs(a[i] - b[i]));
    s = std::max(s, std::abs(b[i]));
  }
  return s > 0.0 ? e / s : e;
}

/// `heavy`: the split row is one of LockstepProblem::n_long_heavy (a block of the long-row
/// kernel at 129-256 factors); `last`: the step is LockstepPhase::last_step (x only: r, p and
/// rs must come back untouched).
void check_phase(std::int64_t k, bool bf16_rows, bool residual, int mode, bool heavy = false,
                 bool last = false) {
  SCOPED_TRACE("k = " + std::to_string(k) + (bf16_rows ? ", BF16 rows" : ", FP32 rows") +
               (residual ? ", residual" : (last ? ", last step" : ", step")) + ", mode " +
               std::to_string(mode) + (heavy ? ", heavy split row" : ""));
  const LockstepCase c = make_case(k, bf16_rows, residual, 1234u + unsigned(k));
  const Reference ref = reference(c, residual);
  using TestUtil::vec_view;
  using C = Kokkos::Cuda;
  const auto row_map = vec_view<std::int64_t, C>(c.row_map);
  const auto entries = vec_view<std::int64_t, C>(c.entries);
  const auto tasks = vec_view<std::int64_t, C>(c.tasks);
  const auto long_rows = vec_view<std::int64_t, C>(c.long_rows);
  const auto conf = vec_view<float, C>(c.conf);
  const auto Yf = vec_view<float, C>(c.Yf);
  const auto Yh = vec_view<std::uint16_t, C>(c.Yh);
  const auto x = vec_view<float, C>(c.x), r = vec_view<float, C>(c.r),
             p = vec_view<float, C>(c.p), d = vec_view<float, C>(c.d),
             rs = vec_view<float, C>(c.rs);
  const auto part = vec_view<float, C>(std::vector<float>(std::size_t(2 * k), 0.0f));
  const auto X = vec_view<float, C>(std::vector<float>(std::size_t(c.rows * k), 0.0f));
  CA::LockstepProblem pr;
  pr.row_map = row_map.data();
  pr.entries = entries.data();
  pr.conf = conf.data();
  pr.Y = bf16_rows ? static_cast<const void*>(Yh.data()) : static_cast<const void*>(Yf.data());
  pr.X = X.data();
  pr.storage = bf16_rows ? CA::Storage::bf16 : CA::Storage::f32;
  pr.x = x.data();
  pr.r = r.data();
  pr.p = p.data();
  pr.d = d.data();
  pr.rs = rs.data();
  pr.part = part.data();
  pr.tasks = tasks.data();
  pr.long_rows = long_rows.data();
  pr.n_tasks = 4;
  pr.n_long = 1;
  pr.n_long_heavy = heavy ? 1 : 0;
  pr.n_rows = c.rows;
  pr.k = k;
  pr.row_prefetch = mode;
  Kokkos::Cuda space;
  CA::lockstep_phase(pr,
                     residual ? CA::LockstepPhase::residual
                              : (last ? CA::LockstepPhase::last_step : CA::LockstepPhase::step),
                     space.cuda_stream());
  space.fence();
  const auto xo = TestUtil::host_vector(x), ro = TestUtil::host_vector(r),
             po = TestUtil::host_vector(p), rso = TestUtil::host_vector(rs);
  // FP32 sums of at most 37 products of k terms: a few units of 2^-24 relative to the
  // vectors' scale, far below one bfloat16 term (2^-9 relative).
  const double tol = 2e-5;
  EXPECT_LT(rel_err(xo, ref.x), tol);
  if (last) {  // r, p and rs as they were
    const auto as_double = [](const std::vector<float>& v) {
      return std::vector<double>(v.begin(), v.end());
    };
    EXPECT_EQ(ro, as_double(c.r));
    EXPECT_EQ(po, as_double(c.p));
    EXPECT_EQ(rso, as_double(c.rs));
    return;
  }
  EXPECT_LT(rel_err(ro, ref.r), tol);
  EXPECT_LT(rel_err(po, ref.p), tol);
  for (std::int64_t row = 0; row < c.rows; ++row)
    EXPECT_NEAR(rso[std::size_t(row)], ref.rs[std::size_t(row)],
                tol * std::max(1.0, ref.rs[std::size_t(row)]))
        << "row " << row;
}

TEST(ImplicitALSLockstepCuda, PhasesAgainstHostDefinitionEveryMode) {
  for (bool residual : {true, false}) {
    for (std::int64_t k : {32, 96, 256})
      for (int mode : {-1, 0, 4, 5, 6}) check_phase(k, true, residual, mode);
    for (std::int64_t k : {64, 256})
      for (int mode : {-1, 0, 1, 2, 3, 4, 5, 6}) check_phase(k, false, residual, mode);
    // The long-row kernel's block team (a heavy split row at 129-256 factors; a warp at 64
    // whatever n_long_heavy says) and the last step, with the default task kernel.
    for (std::int64_t k : {64, 256}) {
      check_phase(k, false, residual, -1, true);
      if (!residual) {
        check_phase(k, false, false, -1, false, true);
        check_phase(k, false, false, -1, true, true);
      }
    }
  }
}

}  // namespace

#endif
