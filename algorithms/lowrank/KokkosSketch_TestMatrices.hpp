// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_TestMatrices.hpp
/// \brief The former name of KokkosSketch_SyntheticMatrices.hpp (the synthetic matrices),
/// kept so that code including it still compiles. New code includes
/// <KokkosSketch_SyntheticMatrices.hpp>.
#ifndef KOKKOSSKETCH_TESTMATRICES_HPP
#define KOKKOSSKETCH_TESTMATRICES_HPP

#include <KokkosSketch_SyntheticMatrices.hpp>

#endif
