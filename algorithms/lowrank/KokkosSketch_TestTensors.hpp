// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_TestTensors.hpp
/// \brief The former name of KokkosSketch_SyntheticTensors.hpp (the synthetic tensors), kept
/// so that code including it still compiles. New code includes
/// <KokkosSketch_SyntheticTensors.hpp>.
#ifndef KOKKOSSKETCH_TESTTENSORS_HPP
#define KOKKOSSKETCH_TESTTENSORS_HPP

#include <KokkosSketch_SyntheticTensors.hpp>

#endif
