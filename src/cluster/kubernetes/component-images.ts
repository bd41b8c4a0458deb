// The images of the cluster components and the executables each one carries: the manifests call nothing else
// (test/unit/cluster-image-entrypoints.test.ts holds them to it). Multus and the device plugin cannot be pulled
// where the tests run, so what their images hold is a record, taken from the Dockerfile at the pinned tag; the
// installer image is ours (scripts/package/image.mjs), and the field tier reads its real archive.
import { INSTALLER_CNI_BIN, installerImage } from '../../install/installer-image';

/** Images of the components; each is a multi-arch manifest list (linux/amd64 and linux/arm64). */
export const DEFAULT_IMAGES = {
  multus: 'ghcr.io/k8snetworkplumbingwg/multus-cni:v4.1.4',
  devicePlugin: 'ghcr.io/k8snetworkplumbingwg/sriov-network-device-plugin:v3.9.0',
  /** `npm run package`'s installer image (the package version): its entry point installs sriovctl-cni. */
  cniInstaller: installerImage(),
};

export type ComponentImages = typeof DEFAULT_IMAGES;

/** What one image offers a pod: its entry point and the executables a `command` may name. */
export interface ImageEntryPoints {
  /** ENTRYPOINT (empty when the image has only a CMD). */
  entrypoint: string[];
  /** CMD: what runs when a container gives neither command nor args. */
  cmd: string[];
  /** Absolute paths of the executables a container may name in `command`. */
  executables: string[];
  /** The options each executable the manifests run takes (`--name`; a value follows or is joined with '='). */
  options: Record<string, string[]>;
  /** Where the record comes from. */
  source: string;
}

export const IMAGE_ENTRY_POINTS: Record<keyof ComponentImages, ImageEntryPoints> = {
  // multus-cni v4.1.4, images/Dockerfile: FROM gcr.io/distroless/base-debian11 (no shell, no cp);
  //   COPY bin/install_multus, bin/thin_entrypoint, bin/kubeconfig_generator, bin/cert-approver to /,
  //   COPY bin (multus, multus-daemon, multus-shim, ...) to /usr/src/multus-cni/bin; CMD ["/thin_entrypoint"].
  //   cmd/install_multus/main.go: --type thin|thick (-t), --dest-dir (-d, default /host/opt/cni/bin).
  multus: {
    entrypoint: [],
    cmd: ['/thin_entrypoint'],
    executables: [
      '/install_multus',
      '/thin_entrypoint',
      '/kubeconfig_generator',
      '/cert-approver',
      '/usr/src/multus-cni/bin/multus',
      '/usr/src/multus-cni/bin/multus-daemon',
      '/usr/src/multus-cni/bin/multus-shim',
    ],
    options: {
      '/install_multus': ['--type', '-t', '--dest-dir', '-d', '--help', '-h'],
      // cmd/thin_entrypoint/main.go, Options.addFlags
      '/thin_entrypoint': [
        '--cni-bin-dir', '--cni-conf-dir', '--cni-version', '--multus-conf-file', '--multus-bin-file', '--multus-cni-conf-dir',
        '--skip-multus-binary-copy', '--multus-kubeconfig-file-host', '--multus-master-cni-file-name', '--namespace-isolation',
        '--global-namespaces', '--multus-autoconfig-dir', '--multus-log-to-stderr', '--multus-log-level', '--multus-log-file',
        '--override-network-name', '--cleanup-config-on-exit', '--skip-config-watch', '--rename-conf-file',
        '--readiness-indicator-file', '--additional-bin-dir', '--skip-tls-verify', '--force-cni-version', '--help', '-h',
      ],
    },
    source: 'github.com/k8snetworkplumbingwg/multus-cni v4.1.4 images/Dockerfile, hack/build-go.sh',
  },
  // sriov-network-device-plugin v3.9.0, images/Dockerfile: FROM alpine:3; COPY sriovdp, ddptool to /usr/bin/;
  //   COPY images/entrypoint.sh /; ENTRYPOINT ["/entrypoint.sh"]. entrypoint.sh takes --log-dir=, --log-level=,
  //   --resource-prefix=, --config-file=, --use-cdi (anything else: "ERROR: unknown parameter", exit 1).
  devicePlugin: {
    entrypoint: ['/entrypoint.sh'],
    cmd: [],
    executables: ['/entrypoint.sh', '/usr/bin/sriovdp', '/usr/bin/ddptool'],
    options: { '/entrypoint.sh': ['--log-dir', '--log-level', '--resource-prefix', '--config-file', '--use-cdi', '--help', '-h'] },
    source: 'github.com/k8snetworkplumbingwg/sriov-network-device-plugin v3.9.0 images/Dockerfile, images/entrypoint.sh',
  },
  // scripts/package/image.mjs: FROM scratch, /sriovctl and the C runtime it links; ENTRYPOINT as below.
  cniInstaller: {
    entrypoint: ['/sriovctl', 'install-cni', '--to', INSTALLER_CNI_BIN],
    cmd: [],
    executables: ['/sriovctl'],
    // src/cli/install-cni.ts (the test parses the manifests' arguments with the real command)
    options: { '/sriovctl': ['--to', '--also-as', '--no-shim', '--lock-timeout', '--then-wait', '--probe'] },
    source: 'scripts/package/image.mjs',
  },
};
