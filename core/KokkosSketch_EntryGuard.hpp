// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_EntryGuard.hpp
/// \brief Impl::rethrow_as_error: every exception that leaves a public entry point is a
/// KokkosSketch::Error naming that entry point.
///
/// Entry points wrap their body in a function-try-block whose handler calls it:
/// ```cpp
/// void exact_leverage_scores(const ExecSpace& space, ...) try {
///   ...  // the body, unchanged
/// } catch (...) {
///   Impl::rethrow_as_error("exact_leverage_scores");
/// }
/// ```
/// The handler translates, inside a catch clause:
/// - an Error of this function: rethrown as it is;
/// - an Error of another function (an internal one such as `DenseLA::syevd`, or a public
///   one the entry point calls, such as `dense_project` inside `sketch_and_solve`): an Error
///   of this function whose message starts with the other's name and message, then the
///   likely cause (`hint`) where the caller knows it;
/// - an allocation failure (std::bad_alloc, which Kokkos 4's RawMemoryAllocationFailure
///   is, or the std::runtime_error of Kokkos 3.x whose message says that an allocation
///   failed): an Error saying so, with Kokkos' message (which names the View);
/// - any other std::exception (a Kokkos or Kokkos Kernels check that fired inside the call):
///   an Error that carries its message.
/// Exceptions not derived from std::exception are rethrown unchanged.
#ifndef KOKKOSSKETCH_ENTRYGUARD_HPP
#define KOKKOSSKETCH_ENTRYGUARD_HPP

#include <KokkosSketch_Error.hpp>

#include <cctype>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

namespace KokkosSketch {
namespace Impl {

/// \brief Whether an exception message reports a failed memory allocation (Kokkos 3.x
/// throws std::runtime_error for those: "... allocation ... failed", "out of memory").
/// \param [in] what the message
/// \return true if it mentions an allocation and a failure
inline bool is_allocation_failure_message(const std::string& what) {
  std::string s(what);
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  const bool alloc = s.find("alloc") != std::string::npos;
  const bool failed = s.find("fail") != std::string::npos ||
                      s.find("out of memory") != std::string::npos ||
                      s.find("insufficient") != std::string::npos;
  return (alloc && failed) || s.find("out of memory") != std::string::npos;
}

/// Kokkos' message without its trailing traceback note and blank lines.
inline std::string tidy_message(const std::string& what) {
  std::string s(what);
  const auto tb = s.find("Traceback functionality not available");
  if (tb != std::string::npos) s.erase(tb);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

/// "; <hint>" or nothing.
inline std::string hint_suffix(const std::string& hint) {
  return hint.empty() ? std::string() : "; " + hint;
}

/// \brief Translates the exception being handled into an Error of `function` and throws it.
///
/// Must be called inside a catch handler (it rethrows the current exception to inspect
/// it). See the file description for what becomes what.
/// \param [in] function the public entry point, as its own Errors name it
/// \param [in] hint likely cause, appended to translated messages other than allocation
///   failures (empty: none)
/// \throws Error always (or the current exception unchanged, see above)
[[noreturn]] inline void rethrow_as_error(const std::string& function,
                                          const std::string& hint = std::string()) {
  try {
    throw;
  } catch (const Error& e) {
    if (e.function() == function) throw;
    throw Error(function, e.function() + ": " + e.message() + hint_suffix(hint), e.file(),
                e.line());
  } catch (const std::bad_alloc& e) {
    throw Error(function,
                std::string("memory allocation failed (") + tidy_message(e.what()) +
                    "); the problem's workspace does not fit the memory left in the space",
                __FILE__, __LINE__);
  } catch (const std::exception& e) {
    if (is_allocation_failure_message(e.what()))
      throw Error(function,
                  std::string("memory allocation failed (") + tidy_message(e.what()) +
                      "); the problem's workspace does not fit the memory left in the space",
                  __FILE__, __LINE__);
    throw Error(function,
                std::string("a library call inside failed: ") + tidy_message(e.what()) +
                    hint_suffix(hint),
                __FILE__, __LINE__);
  }
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
