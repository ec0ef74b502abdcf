// Host-only program printing CuTe's TV layouts of MMA atoms, TiledMMAs and copy atoms.
// Built by tests/gpu/test_cute_cxx.py with g++ -std=c++17 -I<cutlass include>; prints
// "name|what|layout" lines.
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/mma_traits_sm80.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/atom/copy_traits_sm75.hpp>

using namespace cute;

// One output line: "name|what|value", the value as CuTe prints it.
template <class T>
void line(char const* name, char const* what, T const& value) {
  printf("%s|%s|", name, what); print(value); printf("\n");
}

template <class Atom>
void atom(char const* name) {
  using T = MMA_Traits<Atom>;
  line(name, "Shape_MNK", typename T::Shape_MNK{});
  line(name, "ThrID", typename T::ThrID{});
  line(name, "A", typename T::ALayout{});
  line(name, "B", typename T::BLayout{});
  line(name, "C", typename T::CLayout{});
}

template <class TM>
void tiled(char const* name, TM const& mma) {
  line(name, "tiled_A", mma.get_layoutA_TV());
  line(name, "tiled_B", mma.get_layoutB_TV());
  line(name, "tiled_C", mma.get_layoutC_TV());
  line(name, "tile", make_shape(tile_size<0>(mma), tile_size<1>(mma), tile_size<2>(mma)));
}

template <class Op>
void copy(char const* name) {
  using T = Copy_Traits<Op>;
  using A = Copy_Atom<Op, half_t>;
  line(name, "Src", typename T::SrcLayout{});
  line(name, "Dst", typename T::DstLayout{});
  line(name, "SrcHalf", typename A::ValLayoutSrc{});
  line(name, "DstHalf", typename A::ValLayoutDst{});
}

template <class TC>
void tiled_copy(char const* name, TC const& tc) {
  line(name, "tiled_S", tc.get_layoutS_TV());
  line(name, "tiled_D", tc.get_layoutD_TV());
  line(name, "tiler", typename TC::Tiler_MN{});
}

int main() {
  atom<SM80_16x8x16_F32F16F16F32_TN>("SM80_16x8x16_F32F16F16F32_TN");
  atom<SM80_16x8x16_F16F16F16F16_TN>("SM80_16x8x16_F16F16F16F16_TN");
  atom<SM80_16x8x16_F32BF16BF16F32_TN>("SM80_16x8x16_F32BF16BF16F32_TN");
  atom<SM80_16x8x8_F32F16F16F32_TN>("SM80_16x8x8_F32F16F16F32_TN");
  atom<SM80_16x8x8_F16F16F16F16_TN>("SM80_16x8x8_F16F16F16F16_TN");
  atom<SM80_16x8x8_F32TF32TF32F32_TN>("SM80_16x8x8_F32TF32TF32F32_TN");
  atom<SM80_16x8x16_S32S8S8S32_TN>("SM80_16x8x16_S32S8S8S32_TN");
  using K = GMMA::Major;
  atom<SM90_64x8x16_F32F16F16_SS<K::K, K::K>>("SM90_64x8x16_F32F16F16_SS");
  atom<SM90_64x16x16_F32F16F16_SS<K::K, K::K>>("SM90_64x16x16_F32F16F16_SS");
  atom<SM90_64x64x16_F32F16F16_SS<K::K, K::K>>("SM90_64x64x16_F32F16F16_SS");
  atom<SM90_64x128x16_F32F16F16_SS<K::K, K::K>>("SM90_64x128x16_F32F16F16_SS");
  atom<SM90_64x256x16_F32F16F16_SS<K::K, K::K>>("SM90_64x256x16_F32F16F16_SS");
  atom<SM90_64x64x16_F32F16F16_RS<K::K, K::K>>("SM90_64x64x16_F32F16F16_RS");
  atom<SM90_64x128x16_F16F16F16_RS<K::K, K::K>>("SM90_64x128x16_F16F16F16_RS");

  tiled("t221", make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_1>>{}));
  tiled("t221s", make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{},
                                Layout<Shape<_2,_2,_1>, Stride<_2,_1,_0>>{}));
  tiled("t141", make_tiled_mma(SM80_16x8x8_F16F16F16F16_TN{}, Layout<Shape<_1,_4,_1>>{}));
  tiled("t212p", make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN{}, Layout<Shape<_2,_1,_2>>{},
                                Tile<_32,_32,_32>{}));
  tiled("t411perm", make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_4,_1,_1>>{},
                                   make_tile(Layout<_64>{}, Layout<Shape<_4,_2>, Stride<_1,_8>>{}, _16{})));
  tiled("t222", make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_2>>{}));
  tiled("t112", make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_1,_1,_2>>{}));
  tiled("t321", make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_3,_2,_1>>{}));
  tiled("t90_311rs", make_tiled_mma(SM90_64x32x16_F32F16F16_RS<K::K, K::K>{}, Layout<Shape<_3,_1,_1>>{}));
  tiled("t90_211", make_tiled_mma(SM90_64x64x16_F32F16F16_SS<K::K, K::K>{}, Layout<Shape<_2,_1,_1>>{}));
  tiled("t90_121rs", make_tiled_mma(SM90_64x16x16_F32F16F16_RS<K::K, K::K>{}, Layout<Shape<_1,_2,_1>>{}));

  copy<SM75_U32x1_LDSM_N>("SM75_U32x1_LDSM_N");
  copy<SM75_U32x2_LDSM_N>("SM75_U32x2_LDSM_N");
  copy<SM75_U32x4_LDSM_N>("SM75_U32x4_LDSM_N");
  copy<SM75_U16x2_LDSM_T>("SM75_U16x2_LDSM_T");
  copy<SM75_U16x4_LDSM_T>("SM75_U16x4_LDSM_T");
  copy<SM75_U16x8_LDSM_T>("SM75_U16x8_LDSM_T");

  tiled_copy("tc_u128", make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, half_t>{},
                                        Layout<Shape<_16,_8>, Stride<_8,_1>>{}, Layout<Shape<_1,_8>>{}));
  tiled_copy("tc_u32", make_tiled_copy(Copy_Atom<UniversalCopy<uint32_t>, half_t>{},
                                       Layout<Shape<_32,_4>>{}, Layout<Shape<_2,_2>>{}));
  auto mma80 = make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN{}, Layout<Shape<_2,_2,_1>>{});
  tiled_copy("tcA_x4", make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma80));
  tiled_copy("tcB_x2", make_tiled_copy_B(Copy_Atom<SM75_U32x2_LDSM_N, half_t>{}, mma80));
  tiled_copy("tcB_x4T", make_tiled_copy_B(Copy_Atom<SM75_U16x8_LDSM_T, half_t>{},
      make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN{}, Layout<Shape<_2,_2,_1>>{}, Tile<_32,_32,_16>{})));
  tiled_copy("tcA_1", make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{},
                                        make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN{})));
  tiled_copy("tcC_u32", make_tiled_copy_C(Copy_Atom<UniversalCopy<uint32_t>, half_t>{}, mma80));
  return 0;
}
