//go:build tools

// Keeps the plugin's main package a requirement of this module (go mod tidy would drop it otherwise).
package tools

import _ "github.com/k8snetworkplumbingwg/sriov-cni/cmd/sriov"
