# shellcheck shell=bash
# variants.sh — the test programs of tests/gpu/, sourced by generate.sh, run_gpu_tests.sh and
# run_sanitizers.sh.
#
# One line per test program:  <test>|<source>|<subdir>|<tlc -D flags>|<test macros>
#   test        the program's name (also the name printed in its result lines)
#   source      the .tl file that tlc compiles, in one of two forms:
#                 <name>        samples/<name>.tl; test source tests/gpu/<name>_test.cu;
#                               generated <gen>/<arch>/[<subdir>/]<name>.{cu,h}
#                 tests/gpu/<name>  a test-only kernel file tests/gpu/<name>.tl; test source
#                               tests/gpu/<name>_test.cu; generated <gen>/<arch>/gpu/<name>.{cu,h}
#                 <dir>/<name>  <dir>/<name>.tl, relative to the repository root (e.g. stdlib/gemm);
#                               test source tests/gpu/<dir>_<name>_test.cu (stdlib_gemm_test.cu);
#                               generated <gen>/<arch>/<dir>/[<subdir>/]<name>.{cu,h}
#               The test source includes "<name>.h"; the build finds it through -I.
#   subdir      "." for the file's defaults, else the variant's directory under the above;
#               a variant defines the same tlc::<kernel>s as the defaults, so it is its own binary,
#               built with -I <that directory> and -DTLC_VARIANT=<subdir> (the test then names
#               itself <name>_<subdir>, e.g. stdlib_gemm_bf16)
#   tlc flags   compile-time overrides passed to tlc ("-" for none); they apply to every kernel
#               of the file that has the parameter
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
split_heads|split_heads|.|-|-
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
split_heads_f32_d32|split_heads|f32_d32|-D T=f32 -D D=32|-DTLC_T=float -DTLC_D=32
row_sum_bf16|row_sum|bf16|-D T=bf16|-DTLC_T=__nv_bfloat16
stdlib_gemm|stdlib/gemm|.|-|-
stdlib_gemm_bf16|stdlib/gemm|bf16|-D T=bf16|-DTLC_T=__nv_bfloat16
stdlib_norms|stdlib/norms|.|-|-
stdlib_norms_bf16|stdlib/norms|bf16|-D T=bf16|-DTLC_T=__nv_bfloat16
stdlib_norms_f32|stdlib/norms|f32|-D T=f32|-DTLC_T=float
stdlib_softmax|stdlib/softmax|.|-|-
stdlib_softmax_bf16|stdlib/softmax|bf16|-D T=bf16|-DTLC_T=__nv_bfloat16
stdlib_softmax_f32|stdlib/softmax|f32|-D T=f32|-DTLC_T=float
stdlib_glu|stdlib/glu|.|-|-
stdlib_glu_bf16|stdlib/glu|bf16|-D T=bf16|-DTLC_T=__nv_bfloat16
stdlib_rope|stdlib/rope|.|-|-
stdlib_rope_bf16_d64|stdlib/rope|bf16_d64|-D T=bf16 -D D=64|-DTLC_T=__nv_bfloat16 -DTLC_D=64
stdlib_embedding|stdlib/embedding|.|-|-
stdlib_quant|stdlib/quant|.|-|-
stdlib_quant_f16|stdlib/quant|f16|-D T=f16|-DTLC_T=__half
stdlib_cross_entropy|stdlib/cross_entropy|.|-|-
stdlib_cross_entropy_f16|stdlib/cross_entropy|f16|-D T=f16|-DTLC_T=__half
stdlib_transpose|stdlib/transpose|.|-|-
stdlib_transpose_f32|stdlib/transpose|f32|-D T=f32|-DTLC_T=float
stdlib_moe|stdlib/moe|.|-|-
stdlib_qgemm|stdlib/qgemm|.|-|-
stdlib_qgemm_bf16|stdlib/qgemm|bf16|-D T=bf16|-DTLC_T=__nv_bfloat16
stdlib_moe_e256_sigmoid|stdlib/moe|e256_sigmoid|-D E=256 -D K=8 -D SIGMOID=true -D RENORM=false|-DTLC_E=256 -DTLC_K=8 -DTLC_SIGMOID=1 -DTLC_RENORM=0
stdlib_attention|stdlib/attention|.|-|-
stdlib_attention_bf16|stdlib/attention|bf16|-D T=bf16|-DTLC_T=__nv_bfloat16
stdlib_attention_causal|stdlib/attention|causal|-D CAUSAL=true|-DTLC_CAUSAL=1
stdlib_attention_d128|stdlib/attention|d128|-D D=128|-DTLC_D=128
stdlib_attention_d128_causal|stdlib/attention|d128_causal|-D D=128 -D CAUSAL=true|-DTLC_D=128 -DTLC_CAUSAL=1
stdlib_attention_backward|stdlib/attention_backward|.|-|-
stdlib_attention_backward_bf16|stdlib/attention_backward|bf16|-D T=bf16|-DTLC_T=__nv_bfloat16
stdlib_attention_backward_causal|stdlib/attention_backward|causal|-D CAUSAL=true|-DTLC_CAUSAL=1
stdlib_attention_backward_d128|stdlib/attention_backward|d128|-D D=128 -D CAUSAL=true|-DTLC_D=128 -DTLC_CAUSAL=1
stdlib_attention_backward_d128_full|stdlib/attention_backward|d128_full|-D D=128|-DTLC_D=128
stdlib_decode|stdlib/decode|.|-|-
stdlib_decode_bf16|stdlib/decode|bf16|-D T=bf16|-DTLC_T=__nv_bfloat16
stdlib_decode_d64|stdlib/decode|d64|-D D=64|-DTLC_D=64
stdlib_decode_full|stdlib/decode|full|-D CAUSAL=false|-DTLC_CAUSAL=0
fragment_gemm|tests/gpu/fragment_gemm|.|-|-
regressions|tests/gpu/regressions|.|-|-
regressions_debug|tests/gpu/regressions|debug|-|-G
layout_reduce|tests/gpu/layout_reduce|.|-|-
partial_reductions|tests/gpu/partial_reductions|.|-|-
fp8_gemm|tests/gpu/fp8_gemm|.|-|-
wgmma_shapes|tests/gpu/wgmma_shapes|.|-|-
wgmma_trips|tests/gpu/wgmma_trips|.|-|-
bounded_extents|tests/gpu/bounded_extents|.|-|-
spread_chunks|tests/gpu/spread_chunks|.|-|-
column_walks|tests/gpu/column_walks|.|-|-
"
TLC_GPU_ARCHS="sm_90a sm_80"

# tlc_gpu_paths SOURCE SUBDIR GEN_ARCH_DIR: where one program's files are, from its variants.sh
# fields and <gen>/<arch>. Sets
#   TLC_GPU_TL    the .tl file, relative to the repository root
#   TLC_GPU_NAME  the base name of the generated files (<name>.cu, <name>.h)
#   TLC_GPU_TEST  the test source, relative to the repository root
#   TLC_GPU_DIR   the directory of the generated files
tlc_gpu_paths() {
    local source=$1 subdir=$2 gen=$3
    if [[ $source == tests/gpu/* ]]; then
        TLC_GPU_TL=$source.tl
        TLC_GPU_NAME=${source##*/}
        TLC_GPU_TEST=tests/gpu/${TLC_GPU_NAME}_test.cu
        TLC_GPU_DIR=$gen/gpu
    elif [[ $source == */* ]]; then
        TLC_GPU_TL=$source.tl
        TLC_GPU_NAME=${source##*/}
        TLC_GPU_TEST=tests/gpu/${source//\//_}_test.cu
        TLC_GPU_DIR=$gen/${source%/*}
    else
        TLC_GPU_TL=samples/$source.tl
        TLC_GPU_NAME=$source
        TLC_GPU_TEST=tests/gpu/${source}_test.cu
        TLC_GPU_DIR=$gen
    fi
    if [[ $subdir != . ]]; then TLC_GPU_DIR=$TLC_GPU_DIR/$subdir; fi
}
