# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Spack recipe of KokkosSketch, for Spack 0.23 and 1.x (a package API v1 repository: Spack 1.x
# prepends the build systems to this file, 0.23 finds them in spack.package). Modelled on the
# builtin kokkos-kernels and arborx recipes. docs/install.md ("From Spack") is its manual;
# scripts/check_spack_recipe.py checks it in CI without Spack.
import os

from spack.package import *

# The clone this recipe lives in: <checkout>/spack/packages/kokkos-sketch/package.py.
_CHECKOUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * 3))


class KokkosSketch(CMakePackage, CudaPackage):
    """KokkosSketch: a header-only C++17 library of randomized numerical linear algebra
    kernels (dense and very sparse random projections, sketches) on Kokkos and Kokkos
    Kernels, portable across Kokkos backends."""

    # There is no public release or remote repository yet: `kokkos-sketch@main` clones the
    # branch main of the checkout that holds this recipe. To build a working tree as it is
    # (uncommitted changes included), use `spack develop` (docs/install.md).
    git = "file://" + _CHECKOUT

    license("Apache-2.0 WITH LLVM-exception")

    version("main", branch="main")

    variant("openmp", default=True, description="Use the OpenMP backend of Kokkos")
    # FFTW for the host transform path of ConvolutionPlan (float and double libraries). A
    # variant, on by default, rather than a plain dependency: the project's CMake treats FFTW
    # as optional (ConvolutionPlan's host FFT is then unavailable, its automatic method falls
    # back to the direct one), and with the variant Spack decides both ways: +fftw links
    # Spack's fftw (found through its pkg-config files) instead of whatever FFTW the system
    # happens to have, ~fftw turns the CMake search off. cuFFT comes with the CUDA toolkit.
    variant("fftw", default=True, description="Use FFTW for the host FFTs of the convolution plans")
    # The distributed layer (algorithms/distributed, namespace KokkosSketch::Distributed):
    # -DKokkosSketch_ENABLE_MPI=ON, which finds MPI (C API from C++) and links it. Off by
    # default, as in the project's CMake.
    variant("mpi", default=False, description="Build the distributed layer (MPI)")

    depends_on("cxx", type="build")
    depends_on("cmake@3.16:", type="build")

    # Kokkos and Kokkos Kernels 3.4.01 through 4.x (docs/install.md), of the same generation
    # (3.x with 3.x, 4.x with 4.x) and with the same backends. KokkosSketch has CUDA exactly
    # when Kokkos has: ~cuda asks for a Kokkos without CUDA, so the CUDA kernel library
    # (backends/cuda/*.cu) is not configured and nvcc is never called.
    depends_on("kokkos@3.4.01:4")
    depends_on("kokkos-kernels@3.4.01:4")
    depends_on("kokkos-kernels@3", when="^kokkos@3")
    depends_on("kokkos-kernels@4", when="^kokkos@4")
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos-kernels+openmp", when="+openmp")
    depends_on("kokkos~cuda", when="~cuda")
    depends_on("kokkos-kernels~cuda", when="~cuda")
    depends_on("kokkos+cuda+cuda_lambda", when="+cuda")
    depends_on("kokkos-kernels+cuda", when="+cuda")
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
    conflicts("+cuda", when="cuda_arch=none", msg="+cuda needs a GPU architecture: cuda_arch=<cc>")
    # Kokkos' own recipe refuses +cuda~wrapper unless its compiler is Clang (or Cray's): with
    # GCC, Kokkos and KokkosSketch are compiled through nvcc_wrapper.
    depends_on("kokkos+wrapper", when="+cuda %gcc")

    depends_on("lapack")
    depends_on("blas")
    depends_on("fftw precision=float,double", when="+fftw")
    depends_on("pkgconfig", type="build", when="+fftw")
    depends_on("mpi", when="+mpi")
    # The unit tests: built and run (ctest) with `spack install --test=root`, the usual
    # self.run_tests idiom; GoogleTest is then a dependency, otherwise not.
    depends_on("googletest", type="test")

    def _nvcc_wrapper(self):
        """Kokkos' nvcc_wrapper when this build compiles through it, else None."""
        kokkos = self.spec["kokkos"]
        if not kokkos.satisfies("+cuda+wrapper"):
            return None
        # A Kokkos built by Spack takes the wrapper from kokkos-nvcc-wrapper; an external
        # Kokkos (no dependencies in the DAG) has its own bin/nvcc_wrapper.
        if "kokkos-nvcc-wrapper" in self.spec:
            return join_path(self.spec["kokkos-nvcc-wrapper"].prefix.bin, "nvcc_wrapper")
        return join_path(kokkos.prefix.bin, "nvcc_wrapper")

    def setup_build_environment(self, env):
        if self.run_tests:
            # The "same bits" tests (ChecksumTest.*) compare with golden values recorded on
            # one machine, compiled without target flags (unit_tests/core/checksums.txt).
            # Spack compiles for its target (e.g. -march=x86-64-v4: FMA contraction changes
            # float bits), so they run here without golden values and report Skipped.
            env.set("KOKKOSSKETCH_CHECKSUMS_FILE", os.devnull)
        if self._nvcc_wrapper() and "kokkos-nvcc-wrapper" not in self.spec:
            # nvcc_wrapper compiles host code with this compiler (kokkos-nvcc-wrapper sets it
            # for a Kokkos built by Spack).
            env.set("NVCC_WRAPPER_DEFAULT_COMPILER", self.compiler.cxx)

    def check(self):
        """The unit tests, after the build, with `spack install --test=root` (the standard
        self.run_tests idiom: CMakePackage calls this after the build phase)."""
        # Spack 0.23 has the build directory on the package's builder; Spack 1.x forwards it
        # to the package (which has no `builder`).
        builder = getattr(self, "builder", None)
        build_directory = builder.build_directory if builder is not None else self.build_directory
        with working_dir(build_directory):
            # An incremental `spack develop` build skips the cmake phase when the build
            # directory is configured; configured without the tests, it has none to run.
            if not os.path.isfile("CTestTestfile.cmake"):
                raise InstallError(
                    "--test=root, but the build directory was configured without the tests "
                    "(an earlier build of this spec without --test); remove it "
                    f"({build_directory}) and install again"
                )
            ctest = which("ctest", required=True)
            ctest("--output-on-failure", "-j", str(make_jobs))

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
            self.define("KokkosKernels_ROOT", spec["kokkos-kernels"].prefix),
            self.define("LAPACK_LIBRARIES", spec["lapack"].libs.joined(";")),
            self.define("BLAS_LIBRARIES", spec["blas"].libs.joined(";")),
            self.define("KokkosSketch_ENABLE_TESTS", self.run_tests),
            self.define("KokkosSketch_ENABLE_BENCHMARKS", False),
            self.define("KokkosSketch_ENABLE_EXAMPLES", False),
            self.define("KokkosSketch_ENABLE_DOCS", False),
            self.define_from_variant("KokkosSketch_ENABLE_FFTW", "fftw"),
            self.define_from_variant("KokkosSketch_ENABLE_MPI", "mpi"),
        ]
        # Kokkos programs are compiled by the compiler Kokkos was built for: nvcc_wrapper for
        # a CUDA Kokkos built with +wrapper, otherwise Spack's compiler (CMake's default here).
        wrapper = self._nvcc_wrapper()
        if wrapper:
            args.append(self.define("CMAKE_CXX_COMPILER", wrapper))
        if spec.satisfies("+cuda"):
            # backends/cuda/*.cu are compiled by nvcc, for Kokkos' architectures (the project
            # checks that this list agrees with Kokkos).
            nvcc = join_path(spec["cuda"].prefix.bin, "nvcc")
            args.append(self.define("CMAKE_CUDA_COMPILER", nvcc))
            args.append(self.define("CMAKE_CUDA_ARCHITECTURES", spec.variants["cuda_arch"].value))
        return args
