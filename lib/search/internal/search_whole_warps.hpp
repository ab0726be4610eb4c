// A hardware prior on thread-block shapes, for the default search (hybrid):
// blocks that run in whole warps are searched first.
//
// A GPU runs a block's threads in warps of 32 (NVIDIA) or wavefronts of 64
// (AMD's GCN and CDNA; RDNA runs 32 or 64). A block of 48 threads leaves a
// third of its second warp idle; a block 48 threads wide splits each warp
// across two rows, so its loads of a row are not whole 128-byte lines.
// CUDA's best-practices guide asks for a multiple of 32 threads and at
// least 64. The rule here: block_size_x a multiple of 32 and the block's
// threads a multiple of 64, which both vendors run whole.
//
// The parameters are found by Kernel Tuner's names (block_size_x, _y, _z:
// its default block_size_names, which its cache files and the benchmark
// hub's spaces use). A space without them has no prior.
#pragma once

#include <optional>

#include "kiln/core/config_space.hpp"

namespace kiln::internal {

// The rule as a constraint ("thread block of whole warps"), or nullopt when
// the space has no integer block_size_x.
std::optional<Constraint> whole_warps_rule(const ConfigSpace& space);

// `space` narrowed by `rule`: its constraints and the rule, and
// block_size_x's list cut to multiples of the warp. A model places a value
// by its position along the list, and with the values no whole-warp block
// takes left in, 32 and 64 sit two steps apart instead of one, and the
// search reaches near the optimum later (measured:
// docs/lab/search-spaces-journal.md, "Blocks of whole warps first"). A config
// off the rule has no place in the cut list: tell the narrowed space's
// models only of configs it contains.
ConfigSpace whole_warps_space(const ConfigSpace& space, const Constraint& rule);

}  // namespace kiln::internal
