// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_Ptx.hpp
/// \brief Inline PTX shared by the CUDA kernels (SHGEMM and the CountSketch slab path in
/// `kokkossketch_cuda_kernels`, the Tensor Core dense projection): shared-memory addresses,
/// acquire/release flags in global memory, asynchronous global-to-shared copies (cp.async)
/// and the FP16 (m16n8k16) and TF32 (m16n8k8) Tensor Core products. Compute capability 8.0
/// or newer; device code only.
#ifndef KOKKOSSKETCH_CUDA_PTX_HPP
#define KOKKOSSKETCH_CUDA_PTX_HPP

#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace Ptx {

/// The shared-state-space address of a generic pointer into shared memory.
__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

/// 16 bytes from global `src` to shared `dst`, asynchronously (cp.async.cg: through L2 only).
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(dst)), "l"(src)
               : "memory");
}

/// As cp_async16, reading only the first `src_bytes` (0..16) of `src` and zero-filling the
/// rest of the 16 bytes at `dst`, given as a shared-state-space address (smem_u32).
__device__ __forceinline__ void cp_async16_zfill(std::uint32_t dst, const void* src,
                                                 int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}

/// As above, with a generic pointer into shared memory as the destination.
__device__ __forceinline__ void cp_async16_zfill(void* dst, const void* src, int src_bytes) {
  cp_async16_zfill(smem_u32(dst), src, src_bytes);
}

/// 8 bytes from global `src` to shared `dst` (a shared-state-space address), asynchronously
/// (cp.async.ca), reading only the first `src_bytes` (0..8) and zero-filling the rest.
__device__ __forceinline__ void cp_async8_zfill(std::uint32_t dst, const void* src,
                                                int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}

/// 4 bytes from global `src` to shared `dst` (a shared-state-space address), asynchronously
/// (cp.async.ca); `src_bytes` 0 writes a zero without reading `src`.
__device__ __forceinline__ void cp_async4_zfill(std::uint32_t dst, const void* src,
                                                int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}

/// 16 bytes from shared memory at a shared-state-space address.
__device__ __forceinline__ float4 ld_shared_f4(std::uint32_t addr) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

/// 16 bytes from shared memory, read again at every call (volatile, so that a kernel short of
/// registers reloads staged data instead of keeping it live; no memory clobber, and ordered
/// after the cp.async waits, which are volatile too).
__device__ __forceinline__ uint4 ld_shared_u4(std::uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr));
  return v;
}

/// 16 bytes to shared memory at a shared-state-space address.
__device__ __forceinline__ void st_shared_f4(std::uint32_t addr, const float4& v) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "f"(v.x), "f"(v.y),
               "f"(v.z), "f"(v.w)
               : "memory");
}

/// Closes the group of the thread's cp.async copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits until at most N of the thread's committed cp.async groups are still pending.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/// Loads a 32-bit flag from global memory with acquire semantics at GPU scope (pairs with
/// st_release_gpu on another SM).
__device__ __forceinline__ int ld_acquire_gpu(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

/// Stores a 32-bit flag to global memory with release semantics at GPU scope.
__device__ __forceinline__ void st_release_gpu(int* p, int v) {
  asm volatile("st.release.gpu.global.s32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

/// c += a b on FP16 Tensor Cores with FP32 accumulation: one m16n8k16 tile per warp (a: four
/// registers of the row-major 16 x 16 A fragment, b0/b1: the column-major 16 x 8 B fragment).
__device__ __forceinline__ void mma_f16_16816(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                              unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// c += a b on BF16 Tensor Cores with FP32 accumulation: one m16n8k16 tile per warp (a: four
/// registers of the row-major 16 x 16 A fragment, b0/b1: the column-major 16 x 8 B fragment;
/// two bfloat16 per register, the lower index in the low half).
__device__ __forceinline__ void mma_bf16_16816(float (&c)[4], unsigned a0, unsigned a1,
                                               unsigned a2, unsigned a3, unsigned b0,
                                               unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/// The transpose of an 8 x 8 matrix of 16-bit values held as a warp's fragment (lane 4 r + c
/// holds entries (r, 2 c) and (r, 2 c + 1)): the same lane then holds (2 c, r) and (2 c + 1, r).
__device__ __forceinline__ unsigned movmatrix_trans(unsigned a) {
  unsigned d;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(d) : "r"(a));
  return d;
}

/// c += a b on TF32 Tensor Cores with FP32 accumulation: one m16n8k8 tile per warp (a: four
/// registers of the row-major 16 x 8 A fragment, b0/b1: the column-major 8 x 8 B fragment;
/// operands in TF32 bit patterns).
__device__ __forceinline__ void mma_tf32_1688(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                              unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace Ptx
}  // namespace Impl
}  // namespace KokkosSketch

#endif
