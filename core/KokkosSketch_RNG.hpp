// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_RNG.hpp
/// \brief Explicit RNG state and the draws built on Philox4x32-10.
///
/// All draws are pure functions of 32-bit Philox output words. Uniform, sign and geometric
/// draws use exact IEEE arithmetic only (integer conversions, scaling by powers of two,
/// correctly rounded products), so they are bit-identical on every backend. Gaussian draws
/// use log/sqrt/sin/cos and may differ between host and device math libraries in the last
/// bits.
#ifndef KOKKOSSKETCH_RNG_HPP
#define KOKKOSSKETCH_RNG_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Draws.hpp>
#include <KokkosSketch_Philox.hpp>

#include <cstdint>

namespace KokkosSketch {

/// \brief Explicit generator state: a Philox key and a base counter.
///
/// Operators built from a state address the counter space relative to `counter`; calls never
/// modify the state they are given. `Op::next_state()` returns the first state whose counters
/// the operator does not use, so independent operators can be chained.
struct RNGState {
  PhiloxKey key{{0u, 0u}};                   ///< Philox key: selects the stream
  PhiloxCounter counter{{0u, 0u, 0u, 0u}};  ///< base counter: operators address counters from it

  /// \brief Key zero, counter zero.
  RNGState() = default;
  /// \brief State with key = the 64-bit seed and counter zero.
  /// \param [in] seed low 32 bits become key word 0, high 32 bits key word 1
  explicit RNGState(std::uint64_t seed)
      : key{{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}} {}
  /// \brief State from an explicit key and base counter.
  /// \param [in] k key
  /// \param [in] c base counter
  RNGState(PhiloxKey k, PhiloxCounter c) : key(k), counter(c) {}

  /// \brief Equal key and counter words.
  /// \param [in] a,b states to compare
  /// \return true when every key and counter word matches
  friend bool operator==(const RNGState& a, const RNGState& b) {
    return a.key.k[0] == b.key.k[0] && a.key.k[1] == b.key.k[1] &&
           a.counter.v[0] == b.counter.v[0] && a.counter.v[1] == b.counter.v[1] &&
           a.counter.v[2] == b.counter.v[2] && a.counter.v[3] == b.counter.v[3];
  }
  /// \brief Negation of operator==.
  /// \param [in] a,b states to compare
  /// \return true when some key or counter word differs
  friend bool operator!=(const RNGState& a, const RNGState& b) { return !(a == b); }
};

namespace Impl {

/// Two standard normal draws by Box-Muller from two words (Impl::gaussian_pair_raw of
/// KokkosSketch_Draws.hpp, which the Kokkos-free CUDA kernels share).
KOKKOS_INLINE_FUNCTION void gaussian_pair(std::uint32_t w0, std::uint32_t w1, double& z0,
                                          double& z1) {
  gaussian_pair_raw(w0, w1, z0, z1);
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
