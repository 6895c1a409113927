// gelu_main.cpp — references the launch function of gelu_scale.tl, so that the test links it.
#include "gelu_scale.h"

cudaError_t (*const tlc_test_gelu_scale)(const float*, float*, int64_t, cudaStream_t) = tlc::gelu_scale;
