// The cache tiers behind the local disk (kiln/cache/cache_tier.hpp): the
// built-in ones, made from the environment on first use, then those an
// application registers.
#include <mutex>

#include "kiln/cache/cache_tier.hpp"
#include "kiln/cache/remote_cache.hpp"

namespace kiln {

namespace {

// A built-in tier is a process global that outlives every cache (the
// remote tier is leaked on purpose, remote_cache.cpp): held, not owned.
std::shared_ptr<CacheTier> borrowed(CacheTier* tier) {
  return std::shared_ptr<CacheTier>(tier, [](CacheTier*) {});
}

struct Tiers {
  std::mutex mutex;
  std::vector<std::shared_ptr<CacheTier>> list;

  Tiers() {
    // The built-in tiers, each nullptr when it is off. A new built-in tier
    // is one line here.
    for (CacheTier* tier : {static_cast<CacheTier*>(RemoteCache::global())}) {
      if (tier) list.push_back(borrowed(tier));
    }
  }
};

Tiers& tiers() {
  // Leaked on purpose, as the remote tier is: a cache that stores while
  // static objects are destroyed at exit must still find the list.
  static Tiers* made = new Tiers;
  return *made;
}

}  // namespace

void register_cache_tier(std::shared_ptr<CacheTier> tier) {
  const auto refuse = [](const std::string& why) {
    throw Error(ErrorCode::kInvalidArgument, "cache tier not registered: " + why);
  };
  if (!tier) refuse("the tier is null; pass the tier object (std::make_shared<YourTier>())");
  const std::string name = tier->name();
  if (name.empty()) refuse("its name() is empty; name it (one word, for messages and stats)");
  Tiers& t = tiers();
  std::lock_guard<std::mutex> lock(t.mutex);
  for (const auto& known : t.list) {
    if (known->name() == name)
      refuse("a tier named \"" + name + "\" is registered already (a tier is never " +
             "replaced); register it once, or give it another name");
  }
  t.list.push_back(std::move(tier));
}

std::vector<std::shared_ptr<CacheTier>> cache_tiers() {
  Tiers& t = tiers();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.list;
}

}  // namespace kiln
