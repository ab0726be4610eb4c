// kiln kernels [--json]
// The shipped tunable kernels: backend, shape parameters, dtypes, config
// parameters with their values, and the size of the config space.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "kiln/kernels/shipped_kernels.hpp"

namespace kiln::tool {

namespace {

nlohmann::json kernel_json(const ShippedKernel& k) {
  const TunableKernel t = k.kernel();
  nlohmann::json dtypes = nlohmann::json::array();
  for (DType d : k.dtypes) dtypes.push_back(dtype_name(d));
  nlohmann::json space = t.tmpl.space.to_json();
  return {{"name", k.name},
          {"family", k.family},
          {"backend", k.backend},
          {"template", t.tmpl.name},
          {"description", k.description},
          {"dims", k.dims},
          {"dtypes", dtypes},
          {"in_place", k.in_place},
          {"parameters", space["parameters"]},
          {"constraints", space["constraints"]},
          {"default", t.tmpl.space.default_config().to_json()},
          {"space_size", t.tmpl.space.size()},
          {"args", arg_specs_to_json(k.args(k.dtypes.front()))}};
}

int run_kernels(bool json) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& k : shipped_kernels()) all.push_back(kernel_json(k));
  if (json) {
    std::cout << nlohmann::json{{"kernels", all}}.dump(2) << "\n";
    return 0;
  }
  int name_width = 4;  // the longest name sets the first column
  for (const auto& k : all) {
    name_width = std::max(name_width, static_cast<int>(k["name"].get<std::string>().size()));
  }
  for (const auto& k : all) {
    std::string dims, params;
    for (const auto& d : k["dims"]) dims += (dims.empty() ? "" : ",") + d.get<std::string>();
    for (const auto& p : k["parameters"]) {
      std::string values;
      for (const auto& v : p["values"]) values += (values.empty() ? "" : ",") + v.dump();
      params += (params.empty() ? "" : " ") + p["name"].get<std::string>() + "=" + values;
    }
    std::printf("%-*s %-4s dims %-12s dtypes %-5s %4llu configs  %s\n", name_width,
                k["name"].get<std::string>().c_str(), k["backend"].get<std::string>().c_str(),
                dims.c_str(), k["dtypes"][0].get<std::string>().c_str(),
                static_cast<unsigned long long>(k["space_size"].get<std::uint64_t>()),
                params.c_str());
  }
  std::printf(
      "\ntune one: kiln tune --kernel NAME --shape DIM=VALUE,... (docs/user-kernels.md "
      "for your own)\n");
  return 0;
}

}  // namespace

void add_kernels_command(CLI::App& app, int& exit_code) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("kernels", "List the shipped tunable kernels");
  cmd->add_flag("--json", *json, "Print one JSON document");
  cmd->callback([json, &exit_code] { exit_code = run_kernels(*json); });
}

}  // namespace kiln::tool
