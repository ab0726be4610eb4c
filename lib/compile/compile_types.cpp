// Value types of the compile stage: names, JSON, the cancel token.
#include <nlohmann/json.hpp>

#include "kiln/compile/compile.hpp"

namespace kiln {

const char* binary_format_name(BinaryFormat format) {
  switch (format) {
    case BinaryFormat::kCubin:
      return "cubin";
    case BinaryFormat::kPtx:
      return "ptx";
    case BinaryFormat::kCpuObject:
      return "cpu_object";
    case BinaryFormat::kCpuSharedObject:
      return "cpu_shared_object";
  }
  return "unknown";
}

std::optional<BinaryFormat> parse_binary_format(std::string_view text) {
  for (BinaryFormat f : {BinaryFormat::kCubin, BinaryFormat::kPtx, BinaryFormat::kCpuObject,
                         BinaryFormat::kCpuSharedObject}) {
    if (text == binary_format_name(f)) return f;
  }
  return std::nullopt;
}

nlohmann::json Specialization::to_json() const {
  return {{"kernel", kernel},
          {"config", config.to_json()},
          {"entry", entry},
          {"defines", defines},
          {"options", options}};
}

Specialization Specialization::from_json(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("kernel") || !json.contains("entry") ||
      !json.contains("config")) {
    throw Error(ErrorCode::kInvalidArgument,
                "specialization JSON needs 'kernel', 'entry' and 'config': got " + json.dump());
  }
  Specialization s;
  try {
    s.kernel = json.at("kernel").get<std::string>();
    s.entry = json.at("entry").get<std::string>();
    s.config = Config::from_json(json.at("config"));
    if (json.contains("defines")) s.defines = json.at("defines").get<decltype(s.defines)>();
    if (json.contains("options")) s.options = json.at("options").get<decltype(s.options)>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("malformed specialization JSON: ") + e.what() + " in " + json.dump());
  }
  return s;
}

std::string CompileUnit::describe() const {
  return kernel + " x" + std::to_string(specializations.size()) + " " + arch + " " +
         binary_format_name(format);
}

nlohmann::json CompileUnit::to_json() const {
  nlohmann::json hs = nlohmann::json::array();
  for (const auto& h : headers) hs.push_back({{"name", h.name}, {"content", h.content}});
  nlohmann::json specs = nlohmann::json::array();
  for (const auto& s : specializations) specs.push_back(s.to_json());
  return {{"kernel", kernel},
          {"source", source},
          {"headers", hs},
          {"include_dirs", include_dirs},
          {"options", options},
          {"arch", arch},
          {"format", binary_format_name(format)},
          {"specializations", specs}};
}

CompileUnit CompileUnit::from_json(const nlohmann::json& json) {
  CompileUnit u;
  try {
    u.kernel = json.at("kernel").get<std::string>();
    u.source = json.at("source").get<std::string>();
    for (const auto& h : json.at("headers")) {
      u.headers.push_back({h.at("name").get<std::string>(), h.at("content").get<std::string>()});
    }
    u.include_dirs = json.at("include_dirs").get<std::vector<std::string>>();
    u.options = json.at("options").get<std::vector<std::string>>();
    u.arch = json.at("arch").get<std::string>();
    auto format = parse_binary_format(json.at("format").get<std::string>());
    if (!format) {
      throw Error(ErrorCode::kInvalidArgument,
                  "compile unit JSON names an unknown format " + json.at("format").dump());
    }
    u.format = *format;
    for (const auto& s : json.at("specializations")) {
      u.specializations.push_back(Specialization::from_json(s));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("malformed compile unit JSON: ") + e.what());
  }
  return u;
}

std::size_t UnitResult::ok_count() const {
  std::size_t n = 0;
  for (const auto& e : entries) n += e.ok() ? 1 : 0;
  return n;
}

CancelToken::CancelToken() : state_(std::make_shared<State>()) {}

CancelToken CancelToken::child_of(const CancelToken& parent) {
  CancelToken child;
  child.state_->parent = parent.state_;
  return child;
}

void CancelToken::cancel() const {
  state_->flag.store(true, std::memory_order_release);
}

void CancelToken::set_deadline(Clock::time_point deadline) const {
  state_->deadline.store(deadline.time_since_epoch().count(), std::memory_order_release);
}

bool CancelToken::cancelled() const {
  const Clock::rep now = Clock::now().time_since_epoch().count();
  for (const State* s = state_.get(); s != nullptr; s = s->parent.get()) {
    if (s->flag.load(std::memory_order_acquire)) return true;
    if (now >= s->deadline.load(std::memory_order_acquire)) return true;
  }
  return false;
}

}  // namespace kiln
