// The worker protocol's envelope and hello (worker_protocol.hpp).
#include "kiln/process/worker_protocol.hpp"

#include <unistd.h>

#include <algorithm>
#include <utility>

namespace kiln::worker {

namespace {

std::optional<ErrorCode> parse_error_code(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(ErrorCode::kInternal); ++i) {
    if (name == error_code_name(static_cast<ErrorCode>(i))) return static_cast<ErrorCode>(i);
  }
  return std::nullopt;
}

ErrorInfo corrupt(const std::string& what) {
  return make_error(ErrorCode::kCorrupt, what);
}

// A field's JSON value or an error naming it; never throws.
Result<const nlohmann::json*> field(const nlohmann::json& j, const char* name,
                                    nlohmann::json::value_t type) {
  if (!j.is_object()) return corrupt(std::string("expected an object holding '") + name + "'");
  auto it = j.find(name);
  if (it == j.end()) return corrupt(std::string("missing '") + name + "'");
  const bool number = type == nlohmann::json::value_t::number_integer;
  if (number ? !it->is_number_integer() : it->type() != type) {
    return corrupt(std::string("'") + name + "' has the wrong type");
  }
  return &*it;
}

}  // namespace

OwnedFd::~OwnedFd() {
  if (fd_ >= 0) ::close(fd_);
}

Frames encode_request(Op op, const Payload& payload) {
  Frames f{{{"op", std::string(op)}, {"fields", payload.fields}}, payload.raw, {}};
  for (const auto& fd : payload.fds) f.fds.push_back(fd ? fd->get() : -1);
  return f;
}

Frames encode_answer(const Answer& answer) {
  if (!answer.ok()) return {{{"ok", false}, {"error", error_to_json(answer.error())}}, {}, {}};
  return {{{"ok", true}, {"fields", answer->fields}}, answer->raw, {}};
}

Result<std::pair<std::string, Payload>> decode_request(nlohmann::json json, std::string raw,
                                                       std::vector<SharedFd> fds) {
  auto name = field(json, "op", nlohmann::json::value_t::string);
  if (!name.ok()) return corrupt("not a worker request: " + name.error().message);
  std::string op = (*name)->get<std::string>();
  // An operation the server has no handler for is its answer to give
  // (WorkerServer: "does not serve"), not a fault of the envelope.
  auto fields = field(json, "fields", nlohmann::json::value_t::object);
  if (!fields.ok()) return corrupt("request '" + op + "': " + fields.error().message);
  return std::pair<std::string, Payload>{
      std::move(op), Payload{std::move(json["fields"]), std::move(raw), std::move(fds)}};
}

Status decode_answer(nlohmann::json json, std::string raw, Answer* out) {
  auto ok = field(json, "ok", nlohmann::json::value_t::boolean);
  if (!ok.ok()) return corrupt("not a worker reply: " + ok.error().message);
  if (!(*ok)->get<bool>()) {
    auto error = field(json, "error", nlohmann::json::value_t::object);
    if (!error.ok()) return corrupt("a failed reply: " + error.error().message);
    ErrorInfo info;
    if (Status read = error_from_json(**error, &info); !read.ok()) return read;
    *out = std::move(info);
    return ok_status();
  }
  auto fields = field(json, "fields", nlohmann::json::value_t::object);
  if (!fields.ok()) return corrupt("a reply: " + fields.error().message);
  *out = Payload{std::move(json["fields"]), std::move(raw), {}};
  return ok_status();
}

nlohmann::json error_to_json(const ErrorInfo& e) {
  return {{"code", error_code_name(e.code)}, {"message", e.message}, {"details", e.details}};
}

Status error_from_json(const nlohmann::json& j, ErrorInfo* out) {
  auto code = field(j, "code", nlohmann::json::value_t::string);
  auto message = field(j, "message", nlohmann::json::value_t::string);
  auto details = field(j, "details", nlohmann::json::value_t::object);
  for (const auto* r : {&code, &message, &details}) {
    if (!r->ok()) return corrupt("an error: " + r->error().message);
  }
  auto parsed = parse_error_code((*code)->get_ref<const std::string&>());
  if (!parsed) return corrupt("an error of unknown code '" + (*code)->get<std::string>() + "'");
  ErrorInfo e{*parsed, (*message)->get<std::string>(), {}};
  for (const auto& [key, value] : (*details)->items()) {
    if (!value.is_string()) return corrupt("an error detail '" + key + "' that is not text");
    e.details[key] = value.get<std::string>();
  }
  *out = std::move(e);
  return ok_status();
}

Payload Hello::encode() const {
  return {{{"wire", wire}}, {}};
}

Result<Hello> Hello::decode(Payload payload) {
  auto wire = field(payload.fields, "wire", nlohmann::json::value_t::number_integer);
  if (!wire.ok()) return corrupt("hello: " + wire.error().message);
  Hello h;
  h.wire = whole<int>(**wire);
  return h;
}

bool HelloReply::serves(Op op) const {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

Payload HelloReply::encode() const {
  nlohmann::json names = nlohmann::json::array();
  for (const std::string& op : ops) names.push_back(op);
  return {{{"wire", wire}, {"pid", pid}, {"ops", names}, {"about", about}}, {}};
}

Result<HelloReply> HelloReply::decode(Payload payload) {
  const auto& f = payload.fields;
  auto wire = field(f, "wire", nlohmann::json::value_t::number_integer);
  auto pid = field(f, "pid", nlohmann::json::value_t::number_integer);
  auto ops = field(f, "ops", nlohmann::json::value_t::array);
  auto about = field(f, "about", nlohmann::json::value_t::object);
  for (const auto* r : {&wire, &pid, &ops, &about}) {
    if (!r->ok()) return corrupt("hello reply: " + r->error().message);
  }
  HelloReply h;
  h.wire = whole<int>(**wire);
  h.pid = whole<pid_t>(**pid);
  h.about = **about;
  for (const auto& name : **ops) {
    // An operation this parent does not know is one it will not ask for.
    if (!name.is_string()) return corrupt("hello reply: an operation that is not a name");
    h.ops.push_back(name.get_ref<const std::string&>());
  }
  return h;
}

}  // namespace kiln::worker
