// HMAC-SHA256 (envelope.hpp): the one file that calls OpenSSL. Linked into
// programs with the remote tier (kiln_cache_redis_linked), or into the
// Redis plugin the `kiln` command loads (redis_plugin.hpp).
#include "remote/envelope.hpp"

#ifdef KILN_HAVE_OPENSSL
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif

namespace kiln::remote {

std::string hmac_sha256(const std::string& secret, const std::string& data) {
#ifdef KILN_HAVE_OPENSSL
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &size);
  return std::string(reinterpret_cast<const char*>(mac), size);
#else
  (void)secret;
  (void)data;
  return std::string();
#endif
}

}  // namespace kiln::remote
