# variants.sh — the test programs of tests/gpu/, sourced by generate.sh and run_gpu_tests.sh.
#
# One line per test program:  <test> <sample> <subdir> <tlc -D flags> <test macros>
#   test        the program's name (also the name printed in its result lines)
#   sample      samples/<sample>.tl is compiled; tests/gpu/<sample>_test.cu is the test source
#   subdir      where the generated <sample>.cu/.h go under <gen>/<arch>/ ("." for the defaults);
#               a variant defines the same tlc::<kernel> as the default, so it is its own binary
#               built with -I <gen>/<arch>/<subdir> and -DTLC_VARIANT=<subdir>
#   tlc flags   compile-time overrides passed to tlc ("-" for none)
#   macros      preprocessor flags of the test source that describe the variant ("-" for none)
# Fields are separated by '|'.
TLC_GPU_TESTS="
vector_add|vector_add|.|-|-
saxpy|saxpy|.|-|-
gemm|gemm|.|-|-
softmax|softmax|.|-|-
layernorm|layernorm|.|-|-
rmsnorm|rmsnorm|.|-|-
transpose|transpose|.|-|-
row_sum|row_sum|.|-|-
flash_attention|flash_attention|.|-|-
flash_attention_causal|flash_attention|causal|-D CAUSAL=true|-DTLC_CAUSAL=1
flash_attention_d128|flash_attention|d128|-D D=128|-DTLC_D=128
flash_attention_d128_causal|flash_attention|d128_causal|-D D=128 -D CAUSAL=true|-DTLC_D=128 -DTLC_CAUSAL=1
vector_add_bf16|vector_add|bf16|-D T=bf16|-DTLC_T=__nv_bfloat16
softmax_f16|softmax|f16|-D T=f16|-DTLC_T=__half
layernorm_f32|layernorm|f32|-D T=f32|-DTLC_T=float
rmsnorm_bf16|rmsnorm|bf16|-D T=bf16|-DTLC_T=__nv_bfloat16
transpose_f16|transpose|f16|-D T=f16|-DTLC_T=__half
row_sum_bf16|row_sum|bf16|-D T=bf16|-DTLC_T=__nv_bfloat16
"
TLC_GPU_ARCHS="sm_90a sm_80"
