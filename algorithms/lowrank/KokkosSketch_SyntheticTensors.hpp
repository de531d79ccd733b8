// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_SyntheticTensors.hpp
/// \brief Synthetic tensors of prescribed multilinear rank: the tensor generator of Ootomo &
/// Yokota 2023 (Algorithm 3) used to evaluate RP-HOSVD.
#ifndef KOKKOSSKETCH_SYNTHETICTENSORS_HPP
#define KOKKOSSKETCH_SYNTHETICTENSORS_HPP

#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_Operators.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_RNG.hpp>
#include <KokkosSketch_Traits.hpp>
#include <KokkosSketch_Materialize.hpp>
#include <impl/KokkosSketch_RPHOSVD_impl.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace KokkosSketch {

/// \brief Fills A (I_1 x ... x I_N, N = 3 or 4) with a random tensor of multilinear rank
/// (J_1 - p, ..., J_N - p): Algorithm 3 of Ootomo & Yokota 2023 (tensor generation for the
/// RP-HOSVD evaluation).
///
/// \f[ G \leftarrow U(-1, 1)^{J_1 \times \cdots \times J_N};\quad
///   \text{for } i = 1..N:\ \Omega_{(i)} = \Omega_\alpha \Omega_\beta,\
///   \Omega_\alpha \in U(-1,1)^{J_i \times (J_i - p)},\
///   \Omega_\beta \in U(-1,1)^{(J_i - p) \times I_i},\
///   G \leftarrow G \times_i \Omega_{(i)}^\top;\qquad A = G. \f]
///
/// Orientation: the paper writes \f$G \leftarrow G \times_i \Omega_{(i)}\f$ with
/// \f$\Omega_{(i)} \in \mathbb{R}^{J_i \times I_i}\f$ under its own definition of
/// \f$\times_i\f$ (a matrix with I_i rows contracts mode i through its first index), so that
/// mode i grows from J_i to I_i. In the usual notation (Kolda & Bader 2009,
/// \f$(T \times_i M)_{\ldots a \ldots} = \sum_j M_{aj} T_{\ldots j \ldots}\f$) that is
/// \f$G \times_i \Omega_{(i)}^\top\f$: \f$A(\ldots, a, \ldots) = \sum_j \Omega_{(i)}(j, a)\,
/// G(\ldots, j, \ldots)\f$. Every mode-i unfolding of the result is
/// \f$\Omega_{(i)}^\top\f$ times a matrix, so its rank is at most J_i - p (generically equal
/// when J_i - p does not exceed the product of the other modes' ranks).
///
/// The draws are the library's uniform operator (DenseOp with DenseEntries::uniform,
/// Scaling::unscaled): G is the J_1 x (J_2 ... J_N) operator read column-major, then for
/// each mode i in turn \f$\Omega_\alpha\f$ and \f$\Omega_\beta\f$, each operator starting
/// at the previous one's next_state(). The result is a pure function of (state, extents,
/// ranks, p), the same on every backend up to the rounding of the FP32 GEMMs (the mode
/// products run in the paper's order i = 1..N, in FP32, through Impl::DenseLA).
///
/// \tparam ExecSpace Kokkos execution space; A must be accessible from it
/// \param [in] space instance the work is enqueued on (asynchronous; the temporaries it
///   allocates are freed at return, which may wait for the device on CUDA)
/// \param [in] state RNG state of the first draw
/// \param [in] ranks J_1, ..., J_N (N = rank of A), each >= 1
/// \param [in] padding p >= 0 with J_i - p >= 1 for every i
/// \param [out] A View<float***> or View<float****>, contiguous column-major (LayoutLeft, or
///   LayoutStride with column-major strides); its extents are I_1, ..., I_N
/// \return the first RNG state the generator did not use
/// \throws Error if ranks has the wrong size, a rank or the padding is out of range, A is
///   empty or not contiguous, the work buffers cannot fit the memory space (checked before
///   allocating), or an allocation fails
///
/// Range: A cannot overflow float. |G| < 1 and every entry of Omega_(i) sums J_i - p
/// products of entries in (-1, 1), so |A| <= prod_i J_i (J_i - p) < (prod_i J_i)^2, and
/// prod_i J_i <= 2^59 (checked), so |A| < 2^118 < FLT_MAX (about 2^128): there are no
/// user-given values to refuse.
template <class ExecSpace, class AView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
RNGState tucker_test_tensor(const ExecSpace& space, const RNGState& state,
                            const std::vector<std::int64_t>& ranks, std::int64_t padding,
                            const AView& A) try {
  Impl::static_check_tensor<ExecSpace, AView, true>();
  Impl::ScopedRegion region("tucker_test_tensor");
  const char* f = "tucker_test_tensor";
  constexpr int N = int(AView::rank);
  KOKKOSSKETCH_THROW_IF(int(ranks.size()) != N, f, "ranks has ", ranks.size(),
                        " entries but A has order ", N);
  const Impl::TensorDims out = Impl::view_dims(A);
  for (int l = 0; l < N; ++l)
    KOKKOSSKETCH_THROW_IF(out.n[l] == 0, f, "A is empty: extent(", l, ") = 0");
  KOKKOSSKETCH_THROW_IF(!Impl::is_column_major_contiguous(A), f,
                        "A must be a contiguous column-major array (LayoutLeft without padding, "
                        "or LayoutStride with the same strides)");
  KOKKOSSKETCH_THROW_IF(padding < 0, f, "padding p = ", padding, " must be >= 0");
  const Impl::TensorDims in = Impl::make_dims(f, ranks, "ranks");
  for (int l = 0; l < N; ++l)
    KOKKOSSKETCH_THROW_IF(ranks[l] - padding < 1, f, "J_", l + 1, " - p = ", ranks[l], " - ",
                          padding, " < 1: every factor needs rank >= 1");
  (void)Impl::make_dims(f, std::vector<std::int64_t>(out.n.begin(), out.n.begin() + N),
                        "A's extents");

  using mem_t = typename ExecSpace::memory_space;
  using buf_t = Kokkos::View<float*, mem_t>;
  using mat_t = Impl::UMatrix<ExecSpace, float>;
  {
    const std::string shape = Impl::concat("ranks ", Impl::dims_string(in), " and A of ",
                                           Impl::dims_string(out));
    const Impl::ChainSizes cs0 =
        Impl::chain_sizes_for<ExecSpace>(in, out, std::array<int, 4>{{0, 1, 2, 3}});
    Impl::WorkspaceEstimate ws(f);
    ws.add("the core G", in.size(), 1, sizeof(float), shape)
        .add("the work buffers", cs0.intermediate, 2, sizeof(float), shape);
    for (int l = 0; l < N; ++l)
      ws.add(Impl::concat("Omega_(", l + 1, ")"), in.n[l], out.n[l], sizeof(float), shape);
    ws.check<mem_t>();
  }
  auto alloc = [&](const char* label, std::int64_t n) {
    return buf_t(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)),
                 n > 0 ? n : 0);
  };

  // G: the J_1 x (J_2 ... J_N) uniform operator, column-major.
  buf_t G = alloc("KokkosSketch::tucker_test_tensor::G", in.size());
  const DenseOp Gop(DenseDist{in.n[0], in.size() / in.n[0], DenseEntries::uniform,
                              Scaling::unscaled},
                    state);
  Impl::materialize_dense(space, Gop, mat_t(G.data(), in.n[0], in.size() / in.n[0]));
  RNGState st = Gop.next_state();

  // Omega_(i) = Omega_alpha Omega_beta, J_i x I_i.
  Impl::DenseLA<ExecSpace, float> la(space);
  std::array<buf_t, 4> omega;
  std::array<mat_t, 4> M;
  for (int l = 0; l < N; ++l) {
    const std::int64_t J = in.n[l], r = J - padding, I = out.n[l];
    const DenseOp a(DenseDist{J, r, DenseEntries::uniform, Scaling::unscaled}, st);
    st = a.next_state();
    const DenseOp b(DenseDist{r, I, DenseEntries::uniform, Scaling::unscaled}, st);
    st = b.next_state();
    buf_t ab = alloc("KokkosSketch::tucker_test_tensor::factors", J * r + r * I);
    const mat_t Ma(ab.data(), J, r), Mb(ab.data() + J * r, r, I);
    Impl::materialize_dense(space, a, Ma);
    Impl::materialize_dense(space, b, Mb);
    omega[l] = alloc("KokkosSketch::tucker_test_tensor::Omega", J * I);
    M[l] = mat_t(omega[l].data(), J, I);
    la.gemm("N", "N", 1.0f, Ma, Mb, 0.0f, M[l]);
  }

  // A = G x_1 Omega_(1)^T x_2 ... x_N Omega_(N)^T, modes in the paper's order.
  const std::array<int, 4> order{{0, 1, 2, 3}};
  const Impl::ChainSizes cs = Impl::chain_sizes_for<ExecSpace>(in, out, order);
  buf_t b0 = alloc("KokkosSketch::tucker_test_tensor::work0", cs.intermediate);
  buf_t b1 = alloc("KokkosSketch::tucker_test_tensor::work1", cs.intermediate);
  buf_t pin = alloc("KokkosSketch::tucker_test_tensor::perm_in", cs.perm_in);
  buf_t pout = alloc("KokkosSketch::tucker_test_tensor::perm_out", cs.perm_out);
  Impl::ModeProductScratch<float> scratch{pin.data(), pout.data()};
  Impl::mode_chain(la, G.data(), in, M, true, out, order, b0.data(), b1.data(), A.data(),
                   scratch);
  return st;
} catch (...) {
  Impl::rethrow_as_error("tucker_test_tensor");
}

/// \brief tucker_test_tensor on the default instance of A's execution space.
/// \param [in] state RNG state of the first draw
/// \param [in] ranks J_1, ..., J_N
/// \param [in] padding p
/// \param [out] A contiguous column-major float tensor of order 3 or 4
/// \return the first RNG state the generator did not use
/// \throws Error as the overload with an execution space instance
template <class AView, std::enable_if_t<Kokkos::is_view<AView>::value, int> = 0>
RNGState tucker_test_tensor(const RNGState& state, const std::vector<std::int64_t>& ranks,
                            std::int64_t padding, const AView& A) {
  return tucker_test_tensor(typename AView::execution_space{}, state, ranks, padding, A);
}

}  // namespace KokkosSketch

#endif
