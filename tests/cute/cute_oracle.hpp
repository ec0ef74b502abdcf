// Host-only helpers for tests/cute/cpp_oracle.py: print one answer of CuTe's C++ layout algebra
// per line as "<case id> <CuTe's printed layout>". Only CuTe's public headers are used.
#pragma once
#include <cstdio>
#include <cute/layout.hpp>

namespace tl_oracle {

template <class T>
void show(int id, T const& value) {
  std::printf("%d ", id);
  cute::print(value);
  std::printf("\n");
}

}  // namespace tl_oracle
