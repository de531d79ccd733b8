// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_StepTimer.hpp
/// \brief Optional wall-clock timing of the steps of a plan's compute(): the one step timer
/// every plan uses (RandomizedSVD, RPHOSVD, and the plans to come).
#ifndef KOKKOSSKETCH_STEPTIMER_HPP
#define KOKKOSSKETCH_STEPTIMER_HPP

#include <KokkosSketch_Compat.hpp>

#include <chrono>
#include <string>
#include <utility>

namespace KokkosSketch {
namespace Impl {

/// \brief Wall-clock laps between fences of an execution-space instance, when enabled.
///
/// Enabled, the constructor and every lap() fence the instance (so a lap measures the work
/// enqueued since the previous one); disabled, it does nothing and lap() returns 0, so a plan
/// keeps its asynchrony. The fence label reaches Kokkos Tools on Kokkos 4.x.
/// \tparam ExecSpace Kokkos execution space of the instance
template <class ExecSpace>
class StepTimer {
 public:
  /// \brief Starts the first lap (fences the instance when enabled).
  /// \param [in] space instance whose work is timed
  /// \param [in] on whether to time (false: every call is a no-op)
  /// \param [in] label label of the fences, e.g. "KokkosSketch::RPHOSVD::time_steps"
  StepTimer(const ExecSpace& space, bool on, std::string label)
      : m_space(space), m_on(on), m_label(std::move(label)) {
    if (m_on) start();
  }

  /// \brief Ends the current lap and starts the next one (fences the instance when enabled).
  /// \return the seconds since the previous lap (or the construction); 0 when disabled
  double lap() {
    if (!m_on) return 0;
    const auto t0 = m_t;
    start();
    return std::chrono::duration<double>(m_t - t0).count();
  }

  /// \brief Whether the timer fences and measures.
  /// \return the `on` given to the constructor
  bool enabled() const { return m_on; }

 private:
  void start() {
    fence(m_space, m_label);
    m_t = std::chrono::steady_clock::now();
  }

  ExecSpace m_space;
  bool m_on;
  std::string m_label;
  std::chrono::steady_clock::time_point m_t;
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
