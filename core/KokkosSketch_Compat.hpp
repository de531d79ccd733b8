// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Compat.hpp
/// \brief Every difference between Kokkos 3.4.01 and Kokkos 4.x that the library meets.
///
/// Nothing else in the library tests KOKKOS_VERSION.
#ifndef KOKKOSSKETCH_COMPAT_HPP
#define KOKKOSSKETCH_COMPAT_HPP

#include <KokkosKernels_config.h>
#include <Kokkos_Core.hpp>

#include <string>

#if KOKKOS_VERSION < 30401
#error "KokkosSketch requires Kokkos 3.4.01 or newer"
#endif

namespace KokkosSketch {
namespace Impl {

// Math functions moved from Kokkos::Experimental (3.x) to Kokkos (4.x).
#if KOKKOS_VERSION >= 40000
namespace kmath = ::Kokkos;
#else
namespace kmath = ::Kokkos::Experimental;
#endif

template <class T>
KOKKOS_INLINE_FUNCTION T log(T x) { return kmath::log(x); }
template <class T>
KOKKOS_INLINE_FUNCTION T exp(T x) { return kmath::exp(x); }
template <class T>
KOKKOS_INLINE_FUNCTION T sqrt(T x) { return kmath::sqrt(x); }
template <class T>
KOKKOS_INLINE_FUNCTION T cos(T x) { return kmath::cos(x); }
template <class T>
KOKKOS_INLINE_FUNCTION T sin(T x) { return kmath::sin(x); }
template <class T>
KOKKOS_INLINE_FUNCTION bool isfinite(T x) { return kmath::isfinite(x); }

/// True when KokkosBlas calls (gemm, gemv, nrm2, scal, axpby, dot) take the execution-space
/// instance as first argument (Kokkos Kernels 4.2 and later); before that they run on the
/// default instance of the Views' space. Use with `if constexpr`.
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40200
inline constexpr bool kokkosblas_takes_space = true;
#else
inline constexpr bool kokkosblas_takes_space = false;
#endif

/// True when KokkosSparse::spmv takes the execution-space instance as first argument (Kokkos
/// Kernels 4.x as in the CUDA build, 4.7; the threshold is that of kokkosblas_takes_space);
/// before that (3.4.01, the host build) spmv runs on the default instance of the matrix's
/// space. Use with `if constexpr` on a call whose arguments depend on a template parameter.
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40200
inline constexpr bool kokkossparse_spmv_takes_space = true;
#else
inline constexpr bool kokkossparse_spmv_takes_space = false;
#endif

/// Fences one execution-space instance; the label reaches Kokkos Tools on 4.x.
template <class ExecSpace>
void fence(const ExecSpace& space, const std::string& label) {
#if KOKKOS_VERSION >= 30500
  space.fence(label);
#else
  (void)label;
  space.fence();
#endif
}

/// Qualifier of the arguments of a custom reduction functor's `join`: Kokkos before 3.7
/// calls `join(volatile T&, const volatile T&)`; Kokkos 4 deprecates the volatile form.
/// Write `void join(KOKKOSSKETCH_JOIN_VOLATILE T& dst, const KOKKOSSKETCH_JOIN_VOLATILE T& src)`.
#if KOKKOS_VERSION >= 30700
#define KOKKOSSKETCH_JOIN_VOLATILE
#else
#define KOKKOSSKETCH_JOIN_VOLATILE volatile
#endif

/// A host mirror of `v` whose entries are not initialized (the caller overwrites all of
/// them): no initialization kernel, which would run on a default host instance rather than
/// on the instance the algorithm was given. `v` itself when it is already in HostSpace.
template <class View>
auto create_host_mirror_noinit(const View& v) {
#if KOKKOS_VERSION >= 40000
  return Kokkos::create_mirror_view(Kokkos::WithoutInitializing, Kokkos::HostSpace(), v);
#else
  return Kokkos::create_mirror_view(Kokkos::HostSpace(), v, Kokkos::WithoutInitializing);
#endif
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
