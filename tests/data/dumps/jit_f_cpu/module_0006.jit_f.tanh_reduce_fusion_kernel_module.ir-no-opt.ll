; ModuleID = '__compute_module_tanh_reduce_fusion_kernel_module'
source_filename = "__compute_module_tanh_reduce_fusion_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

%XLA_CPU_KernelCallFrame = type { ptr, ptr, i64, ptr }
%XLA_CPU_KernelArg = type { ptr, i64 }
%kernel_dim3 = type { i64, i64, i64 }

declare float @xla.tanh.f32(float)

; Function Attrs: uwtable
define ptr @tanh_reduce_fusion(ptr %0) #0 {
  %2 = getelementptr inbounds %XLA_CPU_KernelCallFrame, ptr %0, i32 0, i32 3
  %3 = load ptr, ptr %2, align 8, !invariant.load !3
  %4 = getelementptr inbounds %XLA_CPU_KernelArg, ptr %3, i32 0, i32 0
  %5 = load ptr, ptr %4, align 8, !invariant.load !3, !dereferenceable !4
  %6 = getelementptr inbounds %XLA_CPU_KernelArg, ptr %3, i32 1, i32 0
  %7 = load ptr, ptr %6, align 8, !invariant.load !3, !dereferenceable !5
  %8 = getelementptr inbounds %XLA_CPU_KernelCallFrame, ptr %0, i32 0, i32 1
  %9 = load ptr, ptr %8, align 8
  %10 = getelementptr inbounds %kernel_dim3, ptr %9, i32 0, i32 0
  %11 = load i64, ptr %10, align 4, !invariant.load !3
  %12 = getelementptr inbounds %kernel_dim3, ptr %9, i32 0, i32 1
  %13 = load i64, ptr %12, align 4, !invariant.load !3
  %14 = getelementptr inbounds %kernel_dim3, ptr %9, i32 0, i32 2
  %15 = load i64, ptr %14, align 4, !invariant.load !3
  call void @tanh_reduce_fusion_wrapped(ptr %5, ptr %7, i64 %11, i64 %13, i64 %15)
  ret ptr null
}

; Function Attrs: alwaysinline
define internal void @tanh_reduce_fusion_wrapped(ptr noalias align 64 dereferenceable(128) %0, ptr noalias align 64 dereferenceable(16) %1, i64 %2, i64 %3, i64 %4) #1 {
  br label %6

6:                                                ; preds = %22, %5
  %7 = phi i64 [ %24, %22 ], [ 0, %5 ]
  %8 = icmp slt i64 %7, 4
  br i1 %8, label %9, label %25

9:                                                ; preds = %6
  br label %10

10:                                               ; preds = %14, %9
  %11 = phi i64 [ %21, %14 ], [ 0, %9 ]
  %12 = phi float [ %20, %14 ], [ 0.000000e+00, %9 ]
  %13 = icmp slt i64 %11, 8
  br i1 %13, label %14, label %22

14:                                               ; preds = %10
  %15 = mul nsw i64 %11, 4
  %16 = add nsw i64 %7, %15
  %17 = getelementptr inbounds [32 x float], ptr %0, i32 0, i64 %16
  %18 = load float, ptr %17, align 4, !invariant.load !3
  %19 = call float @xla.tanh.f32(float %18)
  %20 = fadd reassoc float %12, %19
  %21 = add i64 %11, 1
  br label %10

22:                                               ; preds = %10
  %23 = getelementptr inbounds [4 x float], ptr %1, i32 0, i64 %7
  store float %12, ptr %23, align 4
  %24 = add i64 %7, 1
  br label %6, !llvm.loop !6

25:                                               ; preds = %6
  ret void
}

attributes #0 = { uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { alwaysinline }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 0}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 128}
!5 = !{i64 16}
!6 = distinct !{!6, !7}
!7 = !{!"llvm.loop.unroll.disable"}
