// Launch functions of programs: size and place the workspaces, then call the launch function of
// each kernel the program launches, in order, on the caller's stream.
#pragma once

#include "codegen/codegen.h"
#include "codegen/cuda_writer.h"

namespace tlc::codegen {

// `<ns>::<name>(...)`, `<ns>::<name>_workspace_size(...)` and their internal helper, in the .cu.
void emit_program_definition(const ir::Program& program, const CodegenOptions& options, const SourceManager& sources,
                             DiagnosticEngine& diags, CudaWriter& out);
// Their declarations, for the header.
void emit_program_declarations(const ir::Program& program, CudaWriter& out);
// The extern "C" twins `<ns>_<name>` and `<ns>_<name>_workspace_size` (or their declarations).
void emit_program_c_twins(const ir::Program& program, const std::string& ns, CudaWriter& out, bool declaration_only);

} // namespace tlc::codegen
