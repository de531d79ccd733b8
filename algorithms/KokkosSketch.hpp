// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch.hpp
/// \brief Everything KokkosSketch offers, in one include.
///
/// The umbrella sits above every topic (algorithms/KokkosSketch.hpp, installed as
/// include/KokkosSketch.hpp): the build configuration first, then the public headers of core
/// and of every topic. Nothing in core/ or in a topic includes it.
#ifndef KOKKOSSKETCH_HPP
#define KOKKOSSKETCH_HPP

#include <KokkosSketch_Config.hpp>

#include <KokkosSketch_ConvolutionPlan.hpp>
#include <KokkosSketch_Convolve.hpp>
#include <KokkosSketch_CountMinHashOp.hpp>
#include <KokkosSketch_CountMinSketch.hpp>
#include <KokkosSketch_CountSketch.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_GaussianSketch.hpp>
#include <KokkosSketch_GaussianSketchOp.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_HalfGaussianOp.hpp>
#include <KokkosSketch_ImplicitALS.hpp>
#include <KokkosSketch_LeastSquares.hpp>
#include <KokkosSketch_LeverageScores.hpp>
#include <KokkosSketch_LowrankOptions.hpp>
#include <KokkosSketch_MADSketch.hpp>
#include <KokkosSketch_Materialize.hpp>
#include <KokkosSketch_ModifiedAdsorption.hpp>
#include <KokkosSketch_Operators.hpp>
#include <KokkosSketch_Orthonormalize.hpp>
#include <KokkosSketch_PlantedPartition.hpp>
#include <KokkosSketch_Project.hpp>
#include <KokkosSketch_RNG.hpp>
#include <KokkosSketch_RPHOSVD.hpp>
#include <KokkosSketch_RandomizedSVD.hpp>
#include <KokkosSketch_RecommendData.hpp>
#include <KokkosSketch_RecommendMetrics.hpp>
#include <KokkosSketch_Shgemm.hpp>
#include <KokkosSketch_SketchSize.hpp>
#include <KokkosSketch_SyntheticMatrices.hpp>
#include <KokkosSketch_SyntheticTensors.hpp>
#include <KokkosSketch_Workspace.hpp>

// The distributed layer, in a build with MPI (-DKokkosSketch_ENABLE_MPI=ON) only.
#ifdef KOKKOSSKETCH_ENABLE_MPI
#include <KokkosSketch_Distributed.hpp>
#endif

// The configuration must match the Kokkos this translation unit is compiled against.
#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS) && !defined(KOKKOS_ENABLE_CUDA)
#error "KokkosSketch was configured with a CUDA Kokkos, but this Kokkos has no CUDA"
#endif
#if !defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS) && defined(KOKKOS_ENABLE_CUDA)
#error "KokkosSketch was configured without CUDA, but this Kokkos has CUDA"
#endif

#endif
