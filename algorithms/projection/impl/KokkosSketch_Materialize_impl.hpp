// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Materialize_impl.hpp
/// \brief Forwarding header: the materialize kernels moved to core
/// (KokkosSketch_Materialize.hpp). Kept so that code including this path still compiles.
#ifndef KOKKOSSKETCH_MATERIALIZE_IMPL_HPP
#define KOKKOSSKETCH_MATERIALIZE_IMPL_HPP

#include <KokkosSketch_Materialize.hpp>

#endif
