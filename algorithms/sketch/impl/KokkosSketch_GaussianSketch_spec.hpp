// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_GaussianSketch_spec.hpp
/// \brief Dispatch of the Gaussian sketch (the contract: KokkosSketch_Dispatch.hpp): a dense A
/// goes to the dense projection's dispatch (DenseProjectApply, with its backend
/// specializations), a CSR A to blocks of generated S times KokkosSparse::spmv (or the generic
/// dense-times-CRS kernel where that path does not apply). Every apply overwrites Y.
#ifndef KOKKOSSKETCH_GAUSSIANSKETCH_SPEC_HPP
#define KOKKOSSKETCH_GAUSSIANSKETCH_SPEC_HPP

#include <KokkosSketch_Dispatch.hpp>
#include <KokkosSketch_GaussianSketchOp.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <impl/KokkosSketch_GaussianSketchSpmv_impl.hpp>
#include <impl/KokkosSketch_GaussianSketch_impl.hpp>
#include <impl/KokkosSketch_Project_spec.hpp>  // the Gaussian sketch of a dense A is a dense projection

#include <cstdint>
#include <string>

namespace KokkosSketch {
namespace Impl {

/// Y = S A (dense A) for a Gaussian sketch: the dense projection with S.dense_op(); Y
/// overwritten. AView and YView are the internal unmanaged types. Backends specialize the
/// dense projection (DenseProjectApply), not this.
template <class ExecSpace, class AView, class YView>
struct GaussianSketchApply {
  using project_t = DenseProjectApply<ExecSpace, AView, YView>;
  static constexpr const char* path = project_t::path;
  static void apply(const ExecSpace& space, const GaussianSketchOp& S, const AView& A,
                    const YView& Y) {
    ScopedRegion region(std::string("dense_project[") + project_t::path + "]");
    project_t::apply(space, S.dense_op(), A, Y);
  }
};

/// Y = S A for a Gaussian sketch and A in CSR form (its row map, column indices and values as
/// internal unmanaged Views); Y overwritten. Two paths:
/// - blocks of S generated into a buffer and KokkosSparse::spmv per block
///   (GaussianSketchCrsSpmv: cuSPARSE SpMM on CUDA), for float or double Y, LayoutLeft or
///   LayoutRight: opt-in on device spaces (GaussianCrsConfig::method = 1). On an H100 it is
///   14x to 118x the generic kernel, but on H200s its double results differed in the last bit
///   between identical calls (the distributed reproducibility test, run H200x4-31 of
///   docs/performance.md), so it is not the default until that is understood (the generic
///   kernel sums in a fixed order). Host spaces never take it through this struct: there it
///   was not faster than the generic kernel (2 cores), and leaving it out keeps Kokkos Kernels'
///   spmv (ETI off: every variant compiled in place) out of every host translation unit that
///   calls gaussian_sketch on a CRS A. Its host instantiation stays testable by direct calls
///   of GaussianSketchCrsSpmv (unit_tests/sketch/Test_GaussianSketch.cpp);
/// - DenseTimesCrsGeneric: the default on every space, and the only path for other Y types,
///   empty extents and a block of 2^31 or more entries.
/// GaussianCrsConfig::method selects a path (tests, benchmarks; method = 1 has no effect on
/// hosts).
template <class ExecSpace, class RowMap, class Entries, class Values, class YView>
struct GaussianSketchCrsApply {
  using spmv_t = GaussianSketchCrsSpmv<ExecSpace, RowMap, Entries, Values, YView>;
  using generic_t = DenseTimesCrsGeneric<ExecSpace, RowMap, Entries, Values, YView>;
  /// Whether this struct compiles the spmv path for these types: device spaces only.
  static constexpr bool spmv_compiled = !is_host_space_v<ExecSpace> && spmv_t::types;
  /// Whether the spmv path is the default for these types (not yet: see above).
  static constexpr bool spmv_default = false;
  /// The default path for these types: "spmv" or "generic".
  static constexpr const char* path = spmv_default ? "spmv" : "generic";

  /// \brief Whether apply() takes the spmv path (up to the per-block entry count).
  static bool uses_spmv(const GaussianSketchOp& S, std::int64_t d, std::int64_t nnz,
                        const GaussianCrsConfig& cfg = {}) {
    const bool want = cfg.method < 0 ? spmv_default : cfg.method == 1;
    return spmv_compiled && want && spmv_t::eligible(S.rows(), S.cols(), d, nnz);
  }

  /// \brief Bytes of workspace apply() takes (0 for the generic kernel).
  static std::uint64_t workspace_bytes(const GaussianSketchOp& S, std::int64_t d,
                                       std::int64_t nnz, const GaussianCrsConfig& cfg = {}) {
    return uses_spmv(S, d, nnz, cfg) ? spmv_t::workspace_bytes(S.rows(), S.cols(), d, nnz, cfg)
                                     : 0;
  }

  static void apply(const ExecSpace& space, const GaussianSketchOp& S, const RowMap& row_map,
                    const Entries& entries, const Values& values, const YView& Y,
                    const GaussianCrsConfig& cfg = {}) {
    if (uses_spmv(S, std::int64_t(Y.extent(1)), std::int64_t(entries.extent(0)), cfg)) {
      ScopedRegion region("gaussian_sketch[crs:spmv]");
      if (run_spmv(std::integral_constant<bool, spmv_compiled>{}, space, S, row_map, entries,
                   values, Y, cfg))
        return;
    }
    ScopedRegion region("gaussian_sketch[crs:generic]");
    generic_t::apply(space, S.dense_op(), row_map, entries, values, Y);
  }

 private:
  // Tag dispatch (not `if constexpr`: nvcc rejects extended lambdas there), so that host
  // spaces never instantiate spmv_t::apply.
  static bool run_spmv(std::false_type, const ExecSpace&, const GaussianSketchOp&,
                       const RowMap&, const Entries&, const Values&, const YView&,
                       const GaussianCrsConfig&) {
    return false;
  }
  static bool run_spmv(std::true_type, const ExecSpace& space, const GaussianSketchOp& S,
                       const RowMap& row_map, const Entries& entries, const Values& values,
                       const YView& Y, const GaussianCrsConfig& cfg) {
    return spmv_t::apply(space, S.dense_op(), row_map, entries, values, Y, cfg);
  }
};

/// Availability trait: a backend specialization handles the Gaussian sketch of a dense A
/// (through the dense projection) for user Views of types AView and YView on ExecSpace.
template <class ExecSpace, class AView, class YView>
inline constexpr bool gaussian_sketch_backend_available_v = backend_available_v<
    GaussianSketchApply<ExecSpace, unmanaged_input_t<AView>, unmanaged_output_t<YView>>>;

/// SketchApply of a GaussianSketchOp: the Gaussian sketch of a dense A.
template <>
struct OperatorApply<GaussianSketchOp> {
  static constexpr bool available = true;
  template <class ExecSpace, class AView, class YView>
  static void apply(const ExecSpace& space, const GaussianSketchOp& S, const AView& A,
                    const YView& Y) {
    GaussianSketchApply<ExecSpace, AView, YView>::apply(space, S, A, Y);
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
