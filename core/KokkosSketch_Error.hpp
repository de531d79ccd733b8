// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Error.hpp
/// \brief The library's exception type and the argument-check macro.
#ifndef KOKKOSSKETCH_ERROR_HPP
#define KOKKOSSKETCH_ERROR_HPP

#include <sstream>
#include <stdexcept>
#include <string>

namespace KokkosSketch {

/// \brief Thrown for invalid arguments and failed library calls.
///
/// The message names the public function that rejected the call, the problem, and the
/// source location of the check: `KokkosSketch::sparse_project: A.extent(0) = 5 but
/// S.cols() = 6 [KokkosSketch_Project.hpp:120]`.
class Error : public std::runtime_error {
 public:
  /// \brief Builds the message `KokkosSketch::<function>: <what> [<file>:<line>]`.
  /// \param [in] function public entry point that rejected the call, without namespace
  /// \param [in] what the problem, with the offending extents or values
  /// \param [in] file source file of the check (the directory part is dropped)
  /// \param [in] line source line of the check
  Error(const std::string& function, const std::string& what, const char* file, int line)
      : std::runtime_error(format(function, what, file, line)),
        m_function(function),
        m_message(what),
        m_file(file),
        m_line(line) {}

  /// \brief Name of the public function that raised the error.
  /// \return the name, without the `KokkosSketch::` prefix
  const std::string& function() const noexcept { return m_function; }

  /// \brief The problem alone, without the function name and the source location.
  /// \return the `what` argument of the constructor
  const std::string& message() const noexcept { return m_message; }

  /// \brief Source file of the check, as given to the constructor.
  /// \return the file name (possibly with directories)
  const char* file() const noexcept { return m_file.c_str(); }

  /// \brief Source line of the check.
  /// \return the line number
  int line() const noexcept { return m_line; }

 private:
  static std::string format(const std::string& function, const std::string& what,
                            const char* file, int line) {
    std::string f(file);
    const auto slash = f.find_last_of('/');
    if (slash != std::string::npos) f = f.substr(slash + 1);
    std::ostringstream os;
    os << "KokkosSketch::" << function << ": " << what << " [" << f << ":" << line << "]";
    return os.str();
  }
  std::string m_function;
  std::string m_message;
  std::string m_file;
  int m_line;
};

namespace Impl {
/// Streams any number of values into one string (used by the check macros).
template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace Impl

}  // namespace KokkosSketch

/// \brief Throws KokkosSketch::Error(function, message) when `cond` holds.
///
/// `function` is the public entry point's name (without namespace); the message is built
/// from the remaining arguments, which may mix strings and numbers.
#define KOKKOSSKETCH_THROW_IF(cond, function, ...)                                    \
  do {                                                                                \
    if (cond) {                                                                       \
      throw ::KokkosSketch::Error((function), ::KokkosSketch::Impl::concat(__VA_ARGS__), \
                                  __FILE__, __LINE__);                                \
    }                                                                                 \
  } while (0)

#endif
