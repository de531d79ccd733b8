# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
from spack.package import *


class KokkosSketch(CMakePackage, CudaPackage):
    """KokkosSketch: a header-only C++17 library of randomized numerical linear algebra
    kernels (dense and very sparse random projections, sketches) on Kokkos and Kokkos
    Kernels, portable across Kokkos backends."""

    # There is no public release or remote repository yet, so this recipe declares no
    # version. Either build a local checkout with `spack develop` (see docs/install.md), or
    # add a version that points at a clone you can reach, for example:
    #   version("main", git="file:///path/to/KokkosSketch", branch="main")

    variant("openmp", default=True, description="Use the OpenMP backend of Kokkos")
    variant(
        "tests",
        default=False,
        description="Build the unit tests (GoogleTest); run them with `spack install --test=root`",
    )

    # Spack >= 0.23 declares compilers as dependencies; remove this line for older Spack.
    depends_on("cxx", type="build")
    depends_on("cmake@3.16:", type="build")

    depends_on("kokkos@3.4.01:")
    depends_on("kokkos-kernels")
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos+cuda+cuda_lambda", when="+cuda")
    for arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda cuda_arch={arch}", when=f"+cuda cuda_arch={arch}")
    conflicts("+cuda", when="cuda_arch=none", msg="+cuda needs a GPU architecture: cuda_arch=<cc>")

    depends_on("lapack")
    depends_on("blas")
    depends_on("googletest", type="test", when="+tests")

    def cmake_args(self):
        spec = self.spec
        args = []
        if spec.satisfies("+cuda"):
            # backends/cuda/*.cu (the Tensor Core SHGEMM) are compiled by nvcc for these GPUs.
            args.append(self.define("CMAKE_CUDA_ARCHITECTURES", spec.variants["cuda_arch"].value))
        return args + [
            # Kokkos must be compiled by the compiler it was built for (nvcc_wrapper for CUDA).
            self.define("CMAKE_CXX_COMPILER", spec["kokkos"].kokkos_cxx),
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
            self.define("KokkosKernels_ROOT", spec["kokkos-kernels"].prefix),
            self.define("LAPACK_LIBRARIES", spec["lapack"].libs.joined(";")),
            self.define("BLAS_LIBRARIES", spec["blas"].libs.joined(";")),
            self.define_from_variant("KokkosSketch_ENABLE_TESTS", "tests"),
            self.define("KokkosSketch_ENABLE_BENCHMARKS", False),
            self.define("KokkosSketch_ENABLE_EXAMPLES", False),
            self.define("KokkosSketch_ENABLE_DOCS", False),
        ]
