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

namespace tl_oracle {

// Every coordinate of a ForwardCoordIterator, ';'-separated.
template <class It>
void show_coords(int id, It it) {
  std::printf("%d ", id);
  for (; it != cute::ForwardCoordIteratorSentinel{}; ++it) {
    cute::print(*it);
    std::printf(";");
  }
  std::printf("\n");
}

// Layout::get_hier_coord, get_flat_coord and get_1d_coord of every index in [0, size), '|' between.
template <class L>
void show_index_coords(int id, L const& layout) {
  std::printf("%d ", id);
  for (int i = 0; i < int(cute::size(layout)); ++i) {
    cute::print(layout.get_hier_coord(i)); std::printf("|");
    cute::print(layout.get_flat_coord(i)); std::printf("|");
    cute::print(layout.get_1d_coord(i)); std::printf(";");
  }
  std::printf("\n");
}

}  // namespace tl_oracle
