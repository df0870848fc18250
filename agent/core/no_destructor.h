// Design: a global that is constructed on first use and never destroyed (STYLE.md 6.4). Capture
// callbacks can run on other threads while the process exits, after static destructors have
// started; whatever they reach (the rings, the enabled flag, the string table) must stay valid
// until the process is gone. NoDestructor<T> builds T in place and never runs ~T().
// Usage: static NoDestructor<EnabledFlag> g_enabled;  g_enabled->enabled() ...
#pragma once

#include <new>
#include <utility>

namespace lumos::agent {

template <typename T>
class NoDestructor {
 public:
  template <typename... Args>
  explicit NoDestructor(Args&&... args) {
    new (storage_) T(std::forward<Args>(args)...);
  }
  // Never runs ~T(): that is the point.
  ~NoDestructor() = default;
  NoDestructor(const NoDestructor&) = delete;
  NoDestructor& operator=(const NoDestructor&) = delete;

  T& get() { return *std::launder(reinterpret_cast<T*>(storage_)); }
  const T& get() const { return *std::launder(reinterpret_cast<const T*>(storage_)); }
  T& operator*() { return get(); }
  T* operator->() { return &get(); }
  const T* operator->() const { return &get(); }

 private:
  alignas(T) unsigned char storage_[sizeof(T)];
};

}  // namespace lumos::agent
