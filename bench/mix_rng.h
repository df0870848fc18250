// Design: the event mix's random numbers (event_mix.h): xoshiro256** seeded by splitmix64, and
// from it uniform, log-normal (Box-Muller) and log-uniform draws, so the same seed gives the same
// mix on every platform (std:: distributions are implementation-defined). Header-only; one
// generator per thread.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace lumos::bench {

// xoshiro256** seeded by splitmix64, plus Box-Muller: the same numbers on every platform
// (std:: distributions are implementation-defined).
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& s : s_) {
      seed += 0x9E3779B97F4A7C15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      s = z ^ (z >> 31);
    }
  }
  uint64_t Next() {
    uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)
  size_t Below(size_t n) { return static_cast<size_t>(Uniform() * static_cast<double>(n)); }
  bool Chance(double p) { return Uniform() < p; }
  double Normal() {
    double u1 = std::max(Uniform(), 1e-300);
    double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // Log-normal with the given median and shape sigma.
  double LogNormal(double median, double sigma) { return median * std::exp(sigma * Normal()); }
  // Log-uniform in [lo, hi].
  double LogUniform(double lo, double hi) { return lo * std::exp(Uniform() * std::log(hi / lo)); }
  template <typename T, size_t N>
  T Pick(const T (&choices)[N]) {
    return choices[Below(N)];
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace lumos::bench
