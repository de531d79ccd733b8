// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch.hpp
/// \brief Everything KokkosSketch offers, in one include.
#ifndef KOKKOSSKETCH_HPP
#define KOKKOSSKETCH_HPP

#include <KokkosSketch_CountSketch.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_GaussianSketch.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_HalfGaussianOp.hpp>
#include <KokkosSketch_LeastSquares.hpp>
#include <KokkosSketch_LeverageScores.hpp>
#include <KokkosSketch_Operators.hpp>
#include <KokkosSketch_Project.hpp>
#include <KokkosSketch_RNG.hpp>
#include <KokkosSketch_RPHOSVD.hpp>
#include <KokkosSketch_RandomizedSVD.hpp>
#include <KokkosSketch_Shgemm.hpp>
#include <KokkosSketch_SketchSize.hpp>
#include <KokkosSketch_TestMatrices.hpp>
#include <KokkosSketch_TestTensors.hpp>

#endif
