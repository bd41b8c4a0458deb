#include "garp.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if_arp.h>
#include <netinet/if_ether.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sriovctl {

void sendGratuitousArp(Connection& c, int index, const Mac& mac, const std::string& ipv4) {
  const std::string op = "gratuitous ARP " + ipv4;
  in_addr ip{};
  if (inet_pton(AF_INET, ipv4.c_str(), &ip) != 1) throw SysFailure::withDetail(EINVAL, op, "not an IPv4 address");

  ether_arp arp{};
  arp.arp_hrd = htons(ARPHRD_ETHER);
  arp.arp_pro = htons(ETHERTYPE_IP);
  arp.arp_hln = ETH_ALEN;
  arp.arp_pln = sizeof(in_addr);
  arp.arp_op = htons(ARPOP_REQUEST);
  std::memcpy(arp.arp_sha, mac.data(), ETH_ALEN);
  std::memcpy(arp.arp_spa, &ip, sizeof ip);
  std::memcpy(arp.arp_tpa, &ip, sizeof ip);

  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_protocol = htons(ETH_P_ARP);
  to.sll_ifindex = index;
  to.sll_halen = ETH_ALEN;
  std::memset(to.sll_addr, 0xff, ETH_ALEN);

  c.runInside(op, [&] {
    // Protocol 0: a send-only socket, so no ARP traffic is queued to it while it lives.
    int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throwErrno(op + " (socket)");
    ssize_t n = sendto(fd, &arp, sizeof arp, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    int err = errno;
    ::close(fd);
    if (n < 0) throw SysFailure(err, op);
  });
}

}  // namespace sriovctl
