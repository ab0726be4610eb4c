// The output files of `kiln-lab bench search` (--trace, --plot): opened
// before the replays, and never one of its inputs or each other.
#pragma once

#include <fstream>
#include <string>
#include <vector>

namespace kiln::tool {

// Opens `path` (when given) for an output the run writes; false, having
// said why, when it cannot be. `what` names it ("trace": --trace).
bool open_output(std::ofstream& out, const std::string& path, const char* what);

// Whether two paths name one file, compared as weakly_canonical absolute
// paths, so ./t and t match even before t exists.
bool names_one_file(const std::string& a, const std::string& b);

// The same file named twice among --trace, --plot and the recorded spaces
// `files`: the plot would overwrite the trace, and an output opened before
// the run would empty the space it is about to read. Says which; true when
// there is such a pair.
bool outputs_clash(const std::string& trace, const std::string& plot,
                   const std::vector<std::string>& files);

}  // namespace kiln::tool
