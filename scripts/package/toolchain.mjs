// The C toolchain for each architecture: this machine's for amd64, Debian's cross toolchain
// (g++-aarch64-linux-gnu, and its target libraries under /usr/aarch64-linux-gnu) for arm64.
const CROSS = { arm64: 'aarch64-linux-gnu' };

/** The name of toolchain program `name` (gcc, g++, strip, ar …) that builds for `arch`. */
export function tool(arch, name) {
  return CROSS[arch] ? `${CROSS[arch]}-${name}` : name;
}

/** Whether `arch` is built with the cross toolchain. */
export function isCross(arch) {
  return arch in CROSS;
}
