// Hardware (MAC) addresses between the wire (bytes) and the API (lower-case 'aa:bb:cc:dd:ee:ff').
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace sriovctl {

using Mac = std::array<uint8_t, 6>;

// Parses exactly six colon-separated hex octets; false on anything else (TS validated it already).
bool parseMac(const std::string& text, Mac& out);

// Lower-case colon-separated hex of any length ('' for zero bytes).
std::string formatHwAddr(const uint8_t* bytes, size_t len);

}  // namespace sriovctl
