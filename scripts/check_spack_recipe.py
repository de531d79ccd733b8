#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks the Spack recipe (spack/packages/kokkos-sketch/package.py) without Spack.

Spack itself cannot run in CI here, so this imports the recipe against a small stand-in for
the part of the Spack package API it uses (directives, CMakePackage, CudaPackage, specs), and
  * checks that the recipe parses and imports;
  * calls cmake_args() for the builds docs/install.md describes (host with and without
    --test=root; CUDA through an external Kokkos' nvcc_wrapper, through kokkos-nvcc-wrapper,
    and with Clang) and checks that every -D it emits is a variable the project's CMake
    declares (option(), set(... CACHE ...), cmake_dependent_option()) or one that CMake
    itself or a find module the project uses reads (CMAKE_*, <Package>_ROOT of a
    find_package(<Package>), BLAS_LIBRARIES / LAPACK_LIBRARIES for find_package(LAPACK));
  * checks the properties issue 26 asked for: tests through self.run_tests (no `tests`
    variant, GoogleTest a test dependency, check() runs ctest and fails when the build has no
    tests), ~cuda never configures CUDA, Kokkos Kernels tied
    to Kokkos by generation and backend, +cuda with GCC asks for kokkos+wrapper, a
    class-level `git` and a `main` version.

Python 3 standard library only. Usage: python3 scripts/check_spack_recipe.py [-v] [source root]
Exit status 0 when every check passes; each failure is printed (-v: every check).
Run by ctest as KokkosSketch_SpackRecipe (unit_tests/CMakeLists.txt).
"""
import ast
import contextlib
import glob
import importlib.util
import os
import re
import sys
import tempfile
import types

_ARGS = [a for a in sys.argv[1:] if a != "-v"]
ROOT = os.path.abspath(_ARGS[0] if _ARGS else os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RECIPE = os.path.join(ROOT, "spack", "packages", "kokkos-sketch", "package.py")

failures = []


VERBOSE = "-v" in sys.argv
passed = []


def check(cond, what):
    """Records one check; prints failures (and, with -v, passes)."""
    if cond:
        passed.append(what)
    else:
        failures.append(what)
    if VERBOSE or not cond:
        print(("ok    " if cond else "FAIL  ") + what)


# ---------------------------------------------------------------------------------------------
# A stand-in for the Spack package API (the part the recipe uses).


class FakeVariant:
    def __init__(self, value):
        self.value = value


class Prefix(str):
    """spack.util.prefix.Prefix: attribute access appends a path component."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Prefix(os.path.join(self, name))


class FakeLibs:
    def __init__(self, libs):
        self.libs = libs

    def joined(self, sep=" "):
        return sep.join(self.libs)


_SPEC_TOKEN = re.compile(r"([+~][\w-]+)|(@[\w.:]+)|(%[\w-]+)|(\^[\w-]+(?:@[\w.:]+)?)|(\w[\w-]*=\w+)|([\w-]+)")


class FakeSpec:
    """A concrete node: name, version, boolean and valued variants, compiler, dependencies."""

    def __init__(self, name, version="1.0", variants=None, compiler="gcc", deps=(), libs=()):
        self.name = name
        self.version = version
        self.variants = {k: FakeVariant(v) for k, v in (variants or {}).items()}
        self.compiler_name = compiler
        self.deps = {d.name: d for d in deps}
        self.prefix = Prefix("/opt/spack/" + name)
        self.libs = FakeLibs(list(libs))

    def _nodes(self):
        yield self
        for d in self.deps.values():
            yield from d._nodes()

    def __contains__(self, name):
        return any(n.name == name for n in self._nodes())

    def __getitem__(self, name):
        for n in self._nodes():
            if n.name == name:
                return n
        raise KeyError(name)

    def _version_ok(self, rng):
        lo, colon, hi = rng.partition(":")
        key = lambda v: [int(x) for x in re.findall(r"\d+", v)]
        v = key(self.version)
        if not colon:
            return v[: len(key(lo))] == key(lo)
        return (not lo or v >= key(lo)) and (not hi or v[: len(key(hi))] <= key(hi))

    def satisfies(self, text):
        for m in _SPEC_TOKEN.finditer(text.replace(" ", "")):
            var, ver, comp, dep, kv, name = m.groups()
            if var:
                v = self.variants.get(var[1:])
                on = bool(v and v.value is True)
                if on != (var[0] == "+"):
                    return False
            elif ver and not self._version_ok(ver[1:]):
                return False
            elif comp and comp[1:] != self.compiler_name:
                return False
            elif dep:
                dname, _, dver = dep[1:].partition("@")
                if dname not in self or (dver and not self[dname]._version_ok(dver)):
                    return False
            elif kv:
                k, _, val = kv.partition("=")
                v = self.variants.get(k)
                if not v or str(v.value) != val:
                    return False
            elif name and name != self.name:
                return False
        return True


DIRECTIVES = {"version": [], "variant": [], "depends_on": [], "conflicts": [], "requires": [],
              "license": []}


def _directive(kind):
    def record(*args, **kwargs):
        DIRECTIVES[kind].append((args, kwargs))
    return record


class PackageBase:
    run_tests = False

    def __init__(self, spec):
        self.spec = spec

    @property
    def compiler(self):
        return types.SimpleNamespace(cxx="/usr/bin/" + ("clang++" if self.spec.compiler_name == "clang" else "g++"))

    @staticmethod
    def define(name, value):
        # As Spack's CMakePackage.define.
        if isinstance(value, bool):
            return f"-D{name}:BOOL={'ON' if value else 'OFF'}"
        if isinstance(value, (list, tuple)):
            value = ";".join(str(v) for v in value)
        return f"-D{name}:STRING={value}"

    def define_from_variant(self, name, variant):
        return self.define(name, self.spec.variants[variant].value)


class CMakePackage(PackageBase):
    pass


class CudaPackage(PackageBase):
    cuda_arch_values = ("70", "80", "86", "89", "90", "90a", "100")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)


class EnvMods:
    def __init__(self):
        self.set_vars = {}

    def set(self, name, value):
        self.set_vars[name] = value

    def prepend_path(self, *a):
        pass

    append_path = prepend_path


class InstallError(Exception):
    pass


COMMANDS = []


def _fake_which(name, required=False):
    return lambda *args: COMMANDS.append((name,) + args)


@contextlib.contextmanager
def _working_dir(path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _install_fake_spack():
    spack = types.ModuleType("spack")
    package = types.ModuleType("spack.package")
    api = dict(CMakePackage=CMakePackage, CudaPackage=CudaPackage,
               join_path=os.path.join, which=_fake_which, working_dir=_working_dir,
               make_jobs=2, InstallError=InstallError, Prefix=Prefix,
               run_after=lambda *a, **k: (lambda f: f), run_before=lambda *a, **k: (lambda f: f),
               on_package_attributes=lambda **k: (lambda f: f))
    for kind in DIRECTIVES:
        api[kind] = _directive(kind)
    for name, value in api.items():
        setattr(package, name, value)
    package.__all__ = list(api)
    spack.package = package
    sys.modules["spack"] = spack
    sys.modules["spack.package"] = package


# ---------------------------------------------------------------------------------------------
# The project's CMake variables.


def project_cmake_variables():
    files = [os.path.join(ROOT, "CMakeLists.txt")]
    files += glob.glob(os.path.join(ROOT, "cmake", "*.cmake"))
    for sub in ("unit_tests", "perf_tests", "examples", "docs"):
        files += glob.glob(os.path.join(ROOT, sub, "**", "CMakeLists.txt"), recursive=True)
    declared, packages = set(), set()
    for f in files:
        text = re.sub(r"#[^\n]*", "", open(f).read())
        declared.update(re.findall(r"\b(?:option|cmake_dependent_option)\s*\(\s*(\w+)", text, re.I))
        declared.update(re.findall(r"\bset\s*\(\s*(\w+)[^)]*\bCACHE\b", text, re.I))
        packages.update(re.findall(r"\bfind_package\s*\(\s*(\w+)", text, re.I))
    return declared, packages


def allowed(name, declared, packages):
    if name in declared:
        return "declared by the project"
    if name.startswith("CMAKE_"):
        return "CMake's own variable"
    if name.endswith("_ROOT") and name[: -len("_ROOT")] in packages:
        return "find_package(%s) root" % name[: -len("_ROOT")]
    if name in ("LAPACK_LIBRARIES", "BLAS_LIBRARIES") and "LAPACK" in packages:
        return "FindLAPACK/FindBLAS input"
    return None


# ---------------------------------------------------------------------------------------------


def main():
    # 1. It parses (with the Python that runs this check).
    source = open(RECIPE).read()
    try:
        ast.parse(source, RECIPE)
        check(True, "recipe parses")
    except SyntaxError as e:
        check(False, f"recipe parses: {e}")
        return

    # 2. It imports against the stand-in API.
    _install_fake_spack()
    spec_ = importlib.util.spec_from_file_location("kokkos_sketch_recipe", RECIPE)
    module = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(module)
    pkg_class = module.KokkosSketch
    check(True, "recipe imports")

    # 3. Directives.
    variants = {a[0] for a, _ in DIRECTIVES["variant"]}
    deps = [(a[0], k.get("when", ""), k.get("type")) for a, k in DIRECTIVES["depends_on"]]
    check("tests" not in variants, "no `tests` variant: tests follow `spack install --test=root`")
    check(("googletest", "", "test") in deps, "googletest is a test dependency (type='test')")
    check(getattr(pkg_class, "git", "").startswith(("file://", "https://", "git@")),
          "class-level git = %r" % getattr(pkg_class, "git", None))
    check(any(a == ("main",) and k.get("branch") == "main" for a, k in DIRECTIVES["version"]),
          "version('main', branch='main')")
    for dep, when in [("kokkos~cuda", "~cuda"), ("kokkos-kernels~cuda", "~cuda"),
                      ("kokkos+cuda+cuda_lambda", "+cuda"), ("kokkos-kernels+cuda", "+cuda"),
                      ("kokkos+openmp", "+openmp"), ("kokkos-kernels+openmp", "+openmp"),
                      ("kokkos-kernels@3", "^kokkos@3"), ("kokkos-kernels@4", "^kokkos@4"),
                      ("kokkos+wrapper", "+cuda %gcc"),
                      ("fftw precision=float,double", "+fftw"), ("mpi", "+mpi")]:
        check(any(d == dep and w == when for d, w, _ in deps), f"depends_on({dep!r}, when={when!r})")
    check(not re.search(r"\bkokkos_cxx\b", re.sub(r"#[^\n]*", "", source)),
          "no kokkos_cxx (gone from Kokkos' spec in Spack 1.x)")

    # 4. cmake_args for the documented builds; every -D known to the project's CMake.
    declared, packages = project_cmake_variables()
    check({"KokkosSketch_ENABLE_TESTS", "KokkosSketch_ENABLE_BENCHMARKS"} <= declared
          and {"Kokkos", "KokkosKernels", "LAPACK"} <= packages,
          "the project's options and find_package() calls are found in its CMake files")
    check(allowed("KokkosSketch_ENABLE_NO_SUCH_OPTION", declared, packages) is None,
          "an option the project does not declare is rejected")
    lapack = FakeSpec("openblas", libs=["/opt/spack/openblas/lib/libopenblas.so"])

    def build(variants, kokkos, kk, compiler="gcc", extra=()):
        variants = {"fftw": True, "mpi": False, **variants}
        deps = [kokkos, kk, FakeSpec("lapack", libs=lapack.libs.libs),
                FakeSpec("blas", libs=lapack.libs.libs), *extra]
        return FakeSpec("kokkos-sketch", "main", variants, compiler, deps)

    host_kokkos = FakeSpec("kokkos", "3.4.01", {"openmp": True, "serial": True, "cuda": False, "wrapper": False})
    host_kk = FakeSpec("kokkos-kernels", "3.4.01", {"openmp": True, "cuda": False})
    cuda_v = {"openmp": True, "cuda": True, "cuda_arch": "90"}
    cuda_kokkos = FakeSpec("kokkos", "4.6.01", {"openmp": True, "cuda": True, "wrapper": True,
                                                "cuda_lambda": True, "cuda_arch": "90"})
    cuda_kk = FakeSpec("kokkos-kernels", "4.7.00", {"openmp": True, "cuda": True})
    nvw = FakeSpec("kokkos-nvcc-wrapper", "4.6.01")
    cuda_kokkos_built = FakeSpec("kokkos", "4.6.01", {"openmp": True, "cuda": True, "wrapper": True,
                                                      "cuda_lambda": True, "cuda_arch": "90"}, deps=[nvw])
    clang_kokkos = FakeSpec("kokkos", "4.6.01", {"openmp": True, "cuda": True, "wrapper": False, "cuda_lambda": True,
                                                 "cuda_arch": "90"}, compiler="clang")
    cuda = FakeSpec("cuda", "13.0.88")
    cases = [
        ("host", build({"openmp": True, "cuda": False}, host_kokkos, host_kk), False),
        ("host --test=root", build({"openmp": True, "cuda": False}, host_kokkos, host_kk), True),
        ("host ~fftw", build({"openmp": True, "cuda": False, "fftw": False}, host_kokkos, host_kk), False),
        ("host +mpi --test=root", build({"openmp": True, "cuda": False, "mpi": True}, host_kokkos, host_kk), True),
        ("+cuda, external kokkos+wrapper", build(cuda_v, cuda_kokkos, cuda_kk, extra=[cuda]), True),
        ("+cuda, kokkos+wrapper built by Spack", build(cuda_v, cuda_kokkos_built, cuda_kk, extra=[cuda]), False),
        ("+cuda %clang, kokkos~wrapper", build(cuda_v, clang_kokkos, cuda_kk, "clang", extra=[cuda]), False),
    ]
    for label, spec, run_tests in cases:
        pkg = pkg_class(spec)
        pkg.run_tests = run_tests
        try:
            args = pkg.cmake_args()
            env = EnvMods()
            if hasattr(pkg, "setup_build_environment"):
                pkg.setup_build_environment(env)
        except Exception as e:  # noqa: BLE001 - any failure of the recipe is a finding
            check(False, f"[{label}] cmake_args: {type(e).__name__}: {e}")
            continue
        defs = {}
        for a in args:
            m = re.match(r"-D([A-Za-z_][\w]*)(?::\w+)?=(.*)$", a)
            check(bool(m), f"[{label}] {a!r} is a -D definition")
            if m:
                defs[m.group(1)] = m.group(2)
        print(f"[{label}] cmake_args: " + " ".join(f"{k}={v}" for k, v in defs.items()))
        for name in sorted(defs):
            why = allowed(name, declared, packages)
            check(why is not None, f"[{label}] -D{name}: {why or 'NOT a variable of the project CMake'}")
        check(defs.get("KokkosSketch_ENABLE_TESTS") == ("ON" if run_tests else "OFF"),
              f"[{label}] KokkosSketch_ENABLE_TESTS follows run_tests ({run_tests})")
        want_fftw = "ON" if spec.satisfies("+fftw") else "OFF"
        check(defs.get("KokkosSketch_ENABLE_FFTW") == want_fftw,
              f"[{label}] KokkosSketch_ENABLE_FFTW follows the fftw variant ({want_fftw})")
        want_mpi = "ON" if spec.satisfies("+mpi") else "OFF"
        check(defs.get("KokkosSketch_ENABLE_MPI") == want_mpi,
              f"[{label}] KokkosSketch_ENABLE_MPI follows the mpi variant ({want_mpi})")
        check(("KOKKOSSKETCH_CHECKSUMS_FILE" in env.set_vars) == run_tests,
              f"[{label}] golden checksums off exactly when the tests run ({run_tests})")
        is_cuda = spec.satisfies("+cuda")
        if not is_cuda:
            check(not any(n.startswith("CMAKE_CUDA") for n in defs) and "CMAKE_CXX_COMPILER" not in defs,
                  f"[{label}] no CUDA compiler or nvcc_wrapper")
        elif spec["kokkos"].satisfies("+wrapper"):
            want = (nvw.prefix if "kokkos-nvcc-wrapper" in spec else spec["kokkos"].prefix) + "/bin/nvcc_wrapper"
            check(defs.get("CMAKE_CXX_COMPILER") == want, f"[{label}] CMAKE_CXX_COMPILER={want}")
            check(defs.get("CMAKE_CUDA_ARCHITECTURES") == "90", f"[{label}] CMAKE_CUDA_ARCHITECTURES=90")
            external = "kokkos-nvcc-wrapper" not in spec
            check(("NVCC_WRAPPER_DEFAULT_COMPILER" in env.set_vars) == external,
                  f"[{label}] NVCC_WRAPPER_DEFAULT_COMPILER set by this recipe: {external}")
        else:
            check("CMAKE_CXX_COMPILER" not in defs, f"[{label}] Spack's compiler (no CMAKE_CXX_COMPILER)")

    # 5. check(): ctest in the build directory, and a loud error when that directory has no
    #    tests (an incremental `spack develop` build configured without them).
    pkg = pkg_class(cases[1][1])
    pkg.run_tests = True
    with tempfile.TemporaryDirectory() as build:
        pkg.build_directory = build
        try:
            pkg.check()
            check(False, "check() without tests configured raises InstallError")
        except InstallError as e:
            check(build in str(e),
                  "check() without tests configured raises InstallError naming the directory")
        open(os.path.join(build, "CTestTestfile.cmake"), "w").close()
        del COMMANDS[:]
        pkg.check()
        check(bool(COMMANDS) and COMMANDS[0][0] == "ctest" and "--output-on-failure" in COMMANDS[0],
              f"check() runs ctest --output-on-failure: {COMMANDS}")
        # Spack 0.23: the build directory is on pkg.builder, not on the package.
        del pkg.build_directory
        pkg.builder = types.SimpleNamespace(build_directory=build)
        del COMMANDS[:]
        try:
            pkg.check()
            check(bool(COMMANDS), "check() finds the build directory on pkg.builder (Spack 0.23)")
        except AttributeError as e:
            check(False, f"check() finds the build directory on pkg.builder (Spack 0.23): {e}")

    print("check_spack_recipe: %d checks, %s" % (len(passed) + len(failures),
          "all passed" if not failures else f"{len(failures)} FAILED"))


if __name__ == "__main__":
    main()
    sys.exit(1 if failures else 0)
