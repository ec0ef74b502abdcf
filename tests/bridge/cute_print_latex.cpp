// Host-only program printing CuTe's print_latex of a few layouts, an MMA atom, a TiledMMA and
// a TiledCopy. Built by tests/bridge/test_render_tikz.py with g++ -std=c++17 -I<cutlass
// include>; each document follows a line "@@@ <name>".
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/mma_traits_sm80.hpp>
#include <cute/atom/copy_traits_sm75.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/util/print_latex.hpp>

using namespace cute;

int main() {
  printf("@@@ dynamic\n");
  print_latex(make_layout(make_shape(4, 2), make_stride(2, 1)));
  printf("@@@ static\n");
  print_latex(Layout<Shape<_8, _4>, Stride<_1, _8>>{});
  printf("@@@ rank1\n");
  print_latex(make_layout(8, 2));
  printf("@@@ nested\n");
  print_latex(make_layout(make_shape(make_shape(2, 2), make_shape(2, 4)),
                          make_stride(make_stride(1, 4), make_stride(2, 8))));
  printf("@@@ swizzle\n");
  print_latex(composition(Swizzle<2, 0, 2>{}, Layout<Shape<_4, _4>, Stride<_4, _1>>{}));
  printf("@@@ mma_atom\n");
  print_latex(MMA_Atom<SM80_16x8x8_F16F16F16F16_TN>{});
  printf("@@@ wgmma_ss\n");  // A and B in shared memory: every thread "holds" every element
  print_latex(MMA_Atom<SM90_64x8x16_F16F16F16_SS<GMMA::Major::K, GMMA::Major::K>>{});
  auto mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2, _1, _1>>{});
  printf("@@@ tiled_mma\n");
  print_latex(mma);
  printf("@@@ tiled_mma_nk\n");  // threads along N and K: C's layout reaches past M x N
  print_latex(make_tiled_mma(SM80_16x8x8_F32TF32TF32F32_TN{}, Layout<Shape<_1, _2, _2>>{}));
  printf("@@@ tiled_mma_mnk\n");
  print_latex(make_tiled_mma(SM80_16x8x8_F32TF32TF32F32_TN{}, Layout<Shape<_3, _2, _2>>{}));
  auto f16 = make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN{});
  printf("@@@ tiled_copy\n");
  print_latex(make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, f16));
  return 0;
}
