// CUDA spellings of tlc's dtypes, literals and identifiers.
#pragma once

#include "ir/dtype.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tlc::codegen {

std::string cuda_type(Dtype t);                      // "tl::f16", "float", "int32_t"
std::string float_literal(double v, Dtype t);        // "1.5f", "tl::convert<tl::f16>(1.5f)", "tl::inf<float>()"
std::string int_literal(int64_t v, Dtype t);         // "3", "3LL", "3u"
// `s` wrapped in parentheses unless it is a single name, literal or call.
std::string parenthesized(const std::string& s);
// A user name made safe as a C++ identifier (C++ keywords and `tl_` names get a trailing `_`).
std::string identifier(const std::string& name);
// A user function's name: identifier(), plus a trailing `_` when it could equal a __global__
// function's name (`<kernel>_kernel`, `<kernel>_kernel_sm90`), which shares its namespace.
std::string function_identifier(const std::string& name);
// The namespace of the copies of user functions that @fast_math kernels call.
inline constexpr const char* kFastFunctionNamespace = "tl_fast_fns";
// Why a kernel cannot be launched as `tlc::<name>` and `tlc_<name>` (a C++ keyword, a name
// reserved for the C++ implementation, a name the launch code needs at global scope), or nullopt
// when it can. Launch functions are never renamed: such a kernel is an error (E0219).
std::optional<std::string> host_name_problem(const std::string& name);

} // namespace tlc::codegen
