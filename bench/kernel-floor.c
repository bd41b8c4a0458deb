// kernel-floor: the kernel work of one CNI ADD+DEL pair in whole-device mode and nothing else, for
// bench/daemon.bench.mjs to hold the plugins against. No validation, no record, no result: what any plugin doing
// this pair must at least pay.
//   ADD: the IPAM plugin's ADD, the NIC moved into the pod namespace renamed in one request, set up (MTU in the same
//        request), the address and the default route.
//   DEL: the IPAM plugin's DEL, the NIC set down (MTU in the same request) and moved back under its name.
// Usage: kernel-floor <device> <ipam plugin> <address/prefix> <gateway|-> [add|del], with the CNI call's environment
// (CNI_NETNS, CNI_IFNAME, CNI_CONTAINERID, CNI_PATH, …) and its network configuration on stdin, handed to the IPAM
// plugin as a plugin hands it. Without a last argument, the pair; `add` or `del` alone (a node's ADDs at once, their
// DELs after). `-`: no default route. Exit status 0, or 1 with the failed step on stderr. Each move's own time, the
// request from send to acknowledgement, is printed on stdout (`move into <ms>`, `move back <ms>`): the kernel's own
// share of the pair.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void die(const char *what, int err) {
  fprintf(stderr, "kernel-floor: %s: %s\n", what, strerror(err));
  exit(1);
}

struct request {
  struct nlmsghdr h;
  char body[512];
};

static void *tail(struct request *r) { return (char *)&r->h + NLMSG_ALIGN(r->h.nlmsg_len); }

static void put_attr(struct request *r, unsigned short type, const void *data, size_t len) {
  struct rtattr *a = tail(r);
  a->rta_type = type;
  a->rta_len = (unsigned short)RTA_LENGTH(len);
  memcpy(RTA_DATA(a), data, len);
  r->h.nlmsg_len = NLMSG_ALIGN(r->h.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

static struct request *start(struct request *r, unsigned short type, unsigned short flags, const void *head, size_t len) {
  memset(r, 0, sizeof *r);
  r->h.nlmsg_type = type;
  r->h.nlmsg_flags = (unsigned short)(NLM_F_REQUEST | NLM_F_ACK | flags);
  r->h.nlmsg_len = (unsigned)NLMSG_LENGTH(len);
  memcpy(NLMSG_DATA(&r->h), head, len);
  return r;
}

/** Sends `r` on `fd` (an rtnetlink socket) and waits for its acknowledgement. */
static void call(int fd, struct request *r, const char *what) {
  if (send(fd, &r->h, r->h.nlmsg_len, 0) < 0) die(what, errno);
  char buf[4096];
  ssize_t n = recv(fd, buf, sizeof buf, 0);
  if (n < 0) die(what, errno);
  struct nlmsghdr *h = (struct nlmsghdr *)buf;
  if (!NLMSG_OK(h, (size_t)n) || h->nlmsg_type != NLMSG_ERROR) die(what, EPROTO);
  int err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
  if (err) die(what, -err);
}

static int rtnl(void) {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) die("rtnetlink socket", errno);
  return fd;
}

/** RTM_NEWLINK on `index`: `flags` under `change`, and the MTU, the target namespace and the name when given. */
static void set_link(int fd, int index, unsigned flags, unsigned change, unsigned mtu, int netns, const char *name, const char *what) {
  struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC, .ifi_index = index, .ifi_flags = flags, .ifi_change = change};
  struct request r;
  start(&r, RTM_NEWLINK, 0, &ifi, sizeof ifi);
  if (mtu) put_attr(&r, IFLA_MTU, &mtu, sizeof mtu);
  if (netns >= 0) put_attr(&r, IFLA_NET_NS_FD, &netns, sizeof netns);
  if (name) put_attr(&r, IFLA_IFNAME, name, strlen(name) + 1);
  call(fd, &r, what);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/** set_link that moves the link to `netns` under `name`, its time printed on stdout after `what`. */
static void move_link(int fd, int index, int netns, const char *name, const char *what) {
  double t0 = now_ms();
  set_link(fd, index, 0, 0, 0, netns, name, what);
  printf("%s %.3f\n", what, now_ms() - t0);
}

static unsigned mtu_of(const char *name) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket", errno);
  struct ifreq ifr = {0};
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
  if (ioctl(fd, SIOCGIFMTU, &ifr) < 0) die("SIOCGIFMTU", errno);
  close(fd);
  return (unsigned)ifr.ifr_mtu;
}

/** Runs `plugin` (a path) with the environment and CNI_COMMAND=`command`, `conf` on its stdin; its stdout is read whole. */
static void run_ipam(const char *plugin, const char *command, const char *conf, size_t conf_len) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) die("pipe", errno);
  pid_t pid = fork();
  if (pid < 0) die("fork", errno);
  if (pid == 0) {
    setenv("CNI_COMMAND", command, 1);
    dup2(in[0], 0);
    dup2(out[1], 1);
    char *argv[] = {(char *)plugin, NULL};
    execve(plugin, argv, environ);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  if (write(in[1], conf, conf_len) != (ssize_t)conf_len) die("IPAM stdin", errno);
  close(in[1]);
  char buf[4096];
  while (read(out[0], buf, sizeof buf) > 0) {
  }
  close(out[0]);
  int status;
  if (waitpid(pid, &status, 0) < 0) die("waitpid", errno);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die(command, ECHILD);
}

static void add_address(int fd, int index, const char *cidr) {
  char ip[INET_ADDRSTRLEN];
  const char *slash = strchr(cidr, '/');
  if (!slash || (size_t)(slash - cidr) >= sizeof ip) die(cidr, EINVAL);
  memcpy(ip, cidr, (size_t)(slash - cidr));
  ip[slash - cidr] = '\0';
  struct in_addr a;
  if (inet_pton(AF_INET, ip, &a) != 1) die(cidr, EINVAL);
  struct ifaddrmsg ifa = {.ifa_family = AF_INET, .ifa_prefixlen = (unsigned char)atoi(slash + 1), .ifa_index = (unsigned)index};
  struct request r;
  start(&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &ifa, sizeof ifa);
  put_attr(&r, IFA_LOCAL, &a, sizeof a);
  put_attr(&r, IFA_ADDRESS, &a, sizeof a);
  call(fd, &r, "address");
}

static void add_default_route(int fd, int index, const char *gateway) {
  struct in_addr gw;
  if (inet_pton(AF_INET, gateway, &gw) != 1) die(gateway, EINVAL);
  struct rtmsg rtm = {.rtm_family = AF_INET, .rtm_table = RT_TABLE_MAIN, .rtm_protocol = RTPROT_BOOT, .rtm_scope = RT_SCOPE_UNIVERSE, .rtm_type = RTN_UNICAST};
  struct request r;
  start(&r, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, &rtm, sizeof rtm);
  unsigned oif = (unsigned)index;
  put_attr(&r, RTA_GATEWAY, &gw, sizeof gw);
  put_attr(&r, RTA_OIF, &oif, sizeof oif);
  call(fd, &r, "route");
}

int main(int argc, char **argv) {
  if (argc != 5 && !(argc == 6 && (!strcmp(argv[5], "add") || !strcmp(argv[5], "del")))) {
    fprintf(stderr, "usage: kernel-floor <device> <ipam plugin> <address/prefix> <gateway|-> [add|del]\n");
    return 2;
  }
  const char *device = argv[1], *ipam = argv[2], *address = argv[3], *gateway = argv[4];
  int adding = argc == 5 || argv[5][0] == 'a', deleting = argc == 5 || argv[5][0] == 'd';
  const char *netns_path = getenv("CNI_NETNS"), *ifname = getenv("CNI_IFNAME"), *cni_path = getenv("CNI_PATH");
  if (!netns_path || !ifname || !cni_path) die("CNI_NETNS, CNI_IFNAME and CNI_PATH", EINVAL);
  char conf[65536];
  size_t conf_len = 0;
  for (ssize_t n; (n = read(0, conf + conf_len, sizeof conf - conf_len)) > 0;) conf_len += (size_t)n;
  char plugin[4096];
  snprintf(plugin, sizeof plugin, "%s/%s", cni_path, ipam);

  int host = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  int pod = open(netns_path, O_RDONLY | O_CLOEXEC);
  if (host < 0 || pod < 0) die("namespaces", errno);
  int pod_rtnl, index;
  unsigned mtu;
  if (adding) {
    run_ipam(plugin, "ADD", conf, conf_len);
    mtu = mtu_of(device);
    int host_rtnl = rtnl();
    move_link(host_rtnl, (int)if_nametoindex(device), pod, ifname, "move into");
    if (setns(pod, CLONE_NEWNET)) die("setns pod", errno);
    pod_rtnl = rtnl();
    index = (int)if_nametoindex(ifname);
    if (!index) die(ifname, errno);
    set_link(pod_rtnl, index, IFF_UP, IFF_UP, mtu, -1, NULL, "up");
    add_address(pod_rtnl, index, address);
    if (strcmp(gateway, "-")) add_default_route(pod_rtnl, index, gateway);
    if (setns(host, CLONE_NEWNET)) die("setns host", errno);
  } else {
    // the NIC an earlier `add` left in the pod (its MTU is what it had at home)
    if (setns(pod, CLONE_NEWNET)) die("setns pod", errno);
    pod_rtnl = rtnl();
    index = (int)if_nametoindex(ifname);
    if (!index) die(ifname, errno);
    mtu = mtu_of(ifname);
    if (setns(host, CLONE_NEWNET)) die("setns host", errno);
  }
  if (!deleting) return 0;

  run_ipam(plugin, "DEL", conf, conf_len);
  set_link(pod_rtnl, index, 0, IFF_UP, mtu, -1, NULL, "down");
  move_link(pod_rtnl, index, host, device, "move back");
  return 0;
}
