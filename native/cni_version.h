// Made by scripts/cni-version-header.mjs from src/cni/versions.ts (npm run build): do not edit.
#ifndef SRIOVCTL_CNI_VERSION_H
#define SRIOVCTL_CNI_VERSION_H

// CNI VERSION: stdout, whatever stdin holds (src/cni/stdio.ts writeStdout(versionReply())), exit 0.
#define SRIOVCTL_CNI_VERSION_REPLY "{\"cniVersion\":\"1.1.0\",\"supportedVersions\":[\"0.1.0\",\"0.2.0\",\"0.3.0\",\"0.3.1\",\"0.4.0\",\"1.0.0\",\"1.1.0\"]}\n"
// No CNI_COMMAND (a person ran it: --version, --help, bare): stderr (aboutPlugin()), exit 0.
#define SRIOVCTL_CNI_ABOUT "CNI sriovctl-cni plugin version 0.1.0\nCNI protocol versions supported: 0.1.0, 0.2.0, 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0\n"

#endif
