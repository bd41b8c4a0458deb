// The Kubernetes every cluster runs, pinned: the manifests are validated against this version's API schemas
// (kubernetes-models 4.5.1 is generated from Kubernetes 1.33), the kubectl stand-in is this version, and both
// providers default to node images of it — k3d v5.8.3's own default k3s is v1.31, two minors from a 1.33
// kubectl, outside kubectl's supported skew, so k3d gets an image pinned here too.
const KUBERNETES_VERSION = 'v1.33.1';

/** k3s of that Kubernetes (the tag of rancher/k3s spells k3s's '+' as '-'). */
export const DEFAULT_K3S_IMAGE = `docker.io/rancher/k3s:${KUBERNETES_VERSION}-k3s1`;

/** kind v0.29.0's default node image, by digest as kind's release notes give it. */
export const DEFAULT_KIND_NODE_IMAGE = `kindest/node:${KUBERNETES_VERSION}@sha256:050072256b9a903bd914c0b2866828150cb229cea0efe5892e2b644d5dd3b34f`;
