// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Workspace.hpp
/// \brief Device scratch memory that outlives a call.
///
/// Freeing device memory synchronizes on CUDA (cudaFree waits for the device), so an
/// algorithm that allocated a temporary View per call would block its caller. Kernels that
/// need scratch take it from this cache instead: one grow-only buffer per (stream, tag),
/// released when Kokkos finalizes or, for one instance, by KokkosSketch::release_workspace().
/// Work on one stream is ordered, so reusing its buffer in the next call is safe; different
/// streams get different buffers.
#ifndef KOKKOSSKETCH_WORKSPACE_HPP
#define KOKKOSSKETCH_WORKSPACE_HPP

#include <KokkosSketch_Compat.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

namespace KokkosSketch {
namespace Impl {

template <class MemSpace>
class WorkspaceCache {
 public:
  /// At least `bytes` bytes of `MemSpace` memory for the stream identified by `key`; the
  /// pointer stays valid until the next get() with the same (key, tag) and a larger size.
  /// Growing frees the old buffer (which may synchronize the device).
  static void* get(const void* key, const std::string& tag, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex());
    auto& buffers = map();
    if (buffers.empty()) Kokkos::push_finalize_hook([] { map().clear(); });
    auto& v = buffers[{key, tag}];
    if (v.extent(0) < bytes) {
      v = view_t();  // release first, then allocate the larger buffer
      v = view_t(Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::workspace::" + tag),
                 bytes);
    }
    return v.data();
  }

  /// Frees every buffer of `key` (all tags); the caller has waited for the work that used
  /// them. \return the bytes freed
  static std::size_t release(const void* key) {
    std::lock_guard<std::mutex> lock(mutex());
    auto& buffers = map();
    std::size_t bytes = 0;
    for (auto it = buffers.begin(); it != buffers.end();) {
      if (it->first.first == key) {
        bytes += it->second.extent(0);
        it = buffers.erase(it);
      } else {
        ++it;
      }
    }
    return bytes;
  }

  /// \return the bytes held for `key` (all tags)
  static std::size_t held(const void* key) {
    std::lock_guard<std::mutex> lock(mutex());
    std::size_t bytes = 0;
    for (const auto& e : map())
      if (e.first.first == key) bytes += e.second.extent(0);
    return bytes;
  }

 private:
  using view_t = Kokkos::View<unsigned char*, MemSpace>;
  static std::map<std::pair<const void*, std::string>, view_t>& map() {
    static std::map<std::pair<const void*, std::string>, view_t> m;
    return m;
  }
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
};

/// \brief The WorkspaceCache key of an execution space instance: its stream on CUDA, one key
/// per execution space type elsewhere (host work of one space type is ordered).
template <class ExecSpace>
struct WorkspaceKey {
  /// \return the key of `space`
  static const void* get(const ExecSpace&) {
    static const char key = 0;
    return &key;
  }
};

#if defined(KOKKOS_ENABLE_CUDA)
/// \brief A CUDA instance's key is its stream: work on one stream is ordered.
template <>
struct WorkspaceKey<Kokkos::Cuda> {
  /// \return the instance's stream
  static const void* get(const Kokkos::Cuda& space) { return space.cuda_stream(); }
};
#endif

/// A View of type `ViewType` with `layout` over the (key, tag) buffer of WorkspaceCache<MemSpace>.
template <class MemSpace, class ViewType>
ViewType cached_view(const void* key, const std::string& tag,
                     const typename ViewType::array_layout& layout) {
  using value_t = typename ViewType::non_const_value_type;
  const ViewType probe(static_cast<value_t*>(nullptr), layout);
  const std::size_t bytes = probe.span() * sizeof(value_t);
  return ViewType(static_cast<value_t*>(WorkspaceCache<MemSpace>::get(key, tag, bytes)), layout);
}

/// \brief A View of type `ViewType` with `layout` over the (space, tag) workspace
/// (WorkspaceCache of the space's memory space, WorkspaceKey of the instance): unmanaged, so
/// it stays valid only until the next workspace_view() or WorkspaceCache::get() of the same
/// instance and tag asks for more bytes. The contents are whatever the last user left.
/// \param [in] space the instance whose work will use the View (its stream on CUDA)
/// \param [in] tag the buffer's name; one call must not take two Views of one tag
/// \param [in] layout the extents (and strides, for LayoutStride)
template <class ViewType, class ExecSpace>
ViewType workspace_view(const ExecSpace& space, const std::string& tag,
                        const typename ViewType::array_layout& layout) {
  return cached_view<typename ExecSpace::memory_space, ViewType>(
      WorkspaceKey<ExecSpace>::get(space), tag, layout);
}

/// \brief A host View of type `ViewType` over the (space, tag) buffer of the host workspace
/// kept for `space`'s stream (WorkspaceCache of HostSpace, WorkspaceKey of the instance): the
/// host side of a device instance's all-reductions and small host factorizations, so that a
/// warm call allocates (and page-faults) no host memory either. Same validity rules as
/// workspace_view(); KokkosSketch::release_workspace() frees it too.
template <class ViewType, class ExecSpace>
ViewType host_workspace_view(const ExecSpace& space, const std::string& tag,
                             const typename ViewType::array_layout& layout) {
  static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                           typename ViewType::memory_space>::accessible,
                "KokkosSketch: host_workspace_view needs a View of host memory");
  return cached_view<Kokkos::HostSpace, ViewType>(WorkspaceKey<ExecSpace>::get(space),
                                                  "host:" + tag, layout);
}

/// \brief The host mirror of `v` (a View of `space`'s memory): `v` itself where the host can
/// read it, else a host_workspace_view() of the same extents (contents undefined).
template <class ExecSpace, class View>
typename View::HostMirror workspace_mirror(const ExecSpace& space, const std::string& tag,
                                           const View& v) {
  using mirror_t = typename View::HostMirror;
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                           typename View::memory_space>::accessible) {
    (void)space;
    (void)tag;
    return Kokkos::create_mirror_view(v);
  } else {
    return host_workspace_view<mirror_t>(space, tag, v.layout());
  }
}

}  // namespace Impl

/// \brief Frees the device (or host) scratch memory that KokkosSketch keeps between calls on
/// `space`'s stream (Impl::WorkspaceCache: grow-only buffers, per stream and purpose, kept so
/// that a repeated call allocates nothing; e.g. the block partials of a reproducible
/// distributed sketch, n_r / block_rows x k x d values, or the range basis of a distributed
/// randomized SVD and its FP64 copy, 12 n_r k bytes for float), with the host buffers kept
/// for a device instance (the host side of its all-reductions). Waits for `space` first. The next
/// call that needs scratch on `space` allocates it again. Call it between calls, never while
/// another thread runs KokkosSketch work on the same instance.
/// \param [in] space the instance whose scratch is freed
/// \return the bytes freed
template <class ExecSpace>
std::size_t release_workspace(const ExecSpace& space) {
  Impl::fence(space, "KokkosSketch::release_workspace");
  const void* key = Impl::WorkspaceKey<ExecSpace>::get(space);
  std::size_t bytes = Impl::WorkspaceCache<typename ExecSpace::memory_space>::release(key);
  if constexpr (!std::is_same<typename ExecSpace::memory_space, Kokkos::HostSpace>::value)
    bytes += Impl::WorkspaceCache<Kokkos::HostSpace>::release(key);
  return bytes;
}

/// \brief The bytes of scratch memory KokkosSketch keeps between calls on `space`'s stream
/// (release_workspace() frees them).
/// \param [in] space the instance
/// \return bytes held, all purposes together
template <class ExecSpace>
std::size_t workspace_bytes(const ExecSpace& space) {
  const void* key = Impl::WorkspaceKey<ExecSpace>::get(space);
  std::size_t bytes = Impl::WorkspaceCache<typename ExecSpace::memory_space>::held(key);
  if constexpr (!std::is_same<typename ExecSpace::memory_space, Kokkos::HostSpace>::value)
    bytes += Impl::WorkspaceCache<Kokkos::HostSpace>::held(key);
  return bytes;
}

}  // namespace KokkosSketch

#endif
