#include "hwaddr.h"

namespace sriovctl {

namespace {
int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

bool parseMac(const std::string& text, Mac& out) {
  if (text.size() != 17) return false;
  for (size_t i = 0; i < 6; ++i) {
    int hi = hexValue(text[i * 3]);
    int lo = hexValue(text[i * 3 + 1]);
    if (hi < 0 || lo < 0 || (i < 5 && text[i * 3 + 2] != ':')) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

std::string formatHwAddr(const uint8_t* bytes, size_t len) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  s.reserve(len * 3);
  for (size_t i = 0; i < len; ++i) {
    if (i) s.push_back(':');
    s.push_back(digits[bytes[i] >> 4]);
    s.push_back(digits[bytes[i] & 15]);
  }
  return s;
}

}  // namespace sriovctl
