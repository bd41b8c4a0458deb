// The real sriov-cni (k8snetworkplumbingwg/sriov-cni), the reference the lab's differential scenario runs beside
// sriovctl-cni. Built by scripts/ensure-sriov-cni.sh; nothing here is compiled into sriovctl.
//
// Pinned commit: 6e57b33abf15d8f5d49d27ff61d7deab4bbb78a2, the v2.10.0 release. Its module path has no /v2, so
// Go names that commit by the pseudo-version below (v1.1.0 is its newest tag a v0/v1 module path accepts).
// The Go module proxy reachable here refuses that module (403 for every version), so its source is the git tree
// of that commit, exported by the script into ./src (checked by its commit id); every dependency comes from the
// proxy, pinned by go.sum. Its own go.mod's replace of netlink does not apply to a dependency: it is repeated.
module sriovctl.test/sriov-cni-build

go 1.23.0

require github.com/k8snetworkplumbingwg/sriov-cni v1.1.1-0.20250716060549-6e57b33abf15

require (
	github.com/containernetworking/cni v1.3.0 // indirect
	github.com/containernetworking/plugins v1.4.2-0.20240312120516-c860b78de419 // indirect
	github.com/coreos/go-iptables v0.7.0 // indirect
	github.com/k8snetworkplumbingwg/cni-log v0.0.0-20230801160229-b6e062c9e0f2 // indirect
	github.com/safchain/ethtool v0.3.0 // indirect
	github.com/vishvananda/netlink v1.2.1-beta.2.0.20240221172127-ec7bcb248e94 // indirect
	github.com/vishvananda/netns v0.0.4 // indirect
	golang.org/x/net v0.42.0 // indirect
	golang.org/x/sys v0.34.0 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.0.0 // indirect
)

replace github.com/vishvananda/netlink => github.com/vishvananda/netlink v1.2.1-beta.2.0.20240806173335-3b7e16c5f836

replace github.com/k8snetworkplumbingwg/sriov-cni => ./src
