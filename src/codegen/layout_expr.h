// C++ expressions for a fragment layout (ir::Layout) in the generated code: the tile coordinates of
// a register slot, the padding and first-replica conditions, the register of a broadcast read.
// Variables: `tl_tid` (the thread) and the slot expression passed in; every result is an int
// expression of them that folds to constants where the slot is a constant.
#pragma once

#include "ir/layout.h"

#include <string>
#include <vector>

namespace tlc::codegen {

// The row-major coordinates of flat index `flat` in `shape`.
std::vector<std::string> unflatten_index(const std::string& flat, const std::vector<int64_t>& shape);
// The tile coordinates of register `slot` of this thread (parenthesized where compound).
std::vector<std::string> layout_coordinates(const ir::Layout& l, const std::string& slot);
// True where register `slot` of this thread holds an element ("" when every register does).
std::string layout_padding_condition(const ir::Layout& l, const std::string& slot);
// True in the first of the threads holding the same elements ("" without replication).
std::string first_replica_condition(const ir::Layout& l);
// The register of the slice of `anchor` keeping axes `kept` that holds what the anchor's register
// `slot` holds.
std::string sliced_register_index(const ir::Layout& anchor, const std::vector<int>& kept, const std::string& slot);

} // namespace tlc::codegen
