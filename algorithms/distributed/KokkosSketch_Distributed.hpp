// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Distributed.hpp
/// \brief The distributed layer (MPI) in one include: row-distributed matrices, the
/// algorithms on them and the count-min merge (namespace KokkosSketch::Distributed,
/// docs/distributed/distributed.md). Only in a build configured with
/// -DKokkosSketch_ENABLE_MPI=ON; the umbrella KokkosSketch.hpp includes it there.
#ifndef KOKKOSSKETCH_DISTRIBUTED_HPP
#define KOKKOSSKETCH_DISTRIBUTED_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_DistributedCountMin.hpp>
#include <KokkosSketch_DistributedImplicitALS.hpp>
#include <KokkosSketch_DistributedLeastSquares.hpp>
#include <KokkosSketch_DistributedLeverageSampling.hpp>
#include <KokkosSketch_DistributedLeverageScores.hpp>
#include <KokkosSketch_DistributedMatrix.hpp>
#include <KokkosSketch_DistributedOptions.hpp>
#include <KokkosSketch_DistributedRandomizedSVD.hpp>
#include <KokkosSketch_DistributedSketch.hpp>

#endif
