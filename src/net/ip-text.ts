// Is a string an IPv4 or IPv6 address? Our own small parser instead of node:net's isIP: loading node:net costs a
// fresh CNI process about 5 ms, and nothing else in the plugin needs it. Zone indexes ('fe80::1%eth0') are not
// addresses for our purposes (the kernel takes an ifindex, not a zone) and answer 0.

const IPV4_OCTET = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/;
const IPV6_GROUP = /^[0-9a-fA-F]{1,4}$/;

export function isIPv4Text(s: string): boolean {
  if (typeof s !== 'string') return false;
  const octets = s.split('.');
  return octets.length === 4 && octets.every((o) => IPV4_OCTET.test(o));
}

/** Eight 16-bit groups, one '::' standing for one or more zero groups, an IPv4 tail counting as two. */
export function isIPv6Text(s: string): boolean {
  if (typeof s !== 'string' || s.length > 45) return false;
  const halves = s.split('::');
  if (halves.length > 2) return false;
  const compressed = halves.length === 2;
  const groups = halves.flatMap((h) => (h === '' ? [] : h.split(':')));
  let count = 0;
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i];
    if (IPV6_GROUP.test(g)) count += 1;
    else if (i === groups.length - 1 && isIPv4Text(g) && !(compressed && halves[1] === '')) count += 2;
    else return false;
  }
  return compressed ? count <= 7 : count === 8;
}

export function ipFamily(s: string): 0 | 4 | 6 {
  if (isIPv4Text(s)) return 4;
  if (isIPv6Text(s)) return 6;
  return 0;
}
