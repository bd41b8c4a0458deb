#!/bin/sh
':' //; set -f; for w in $(export -p); do n=${w%%=*}; case $n in NODE_*[!A-Za-z0-9_]*) ;; NODE_*) unset "$n" ;; esac; done; command -v node >/dev/null || { echo "$0: 'node': No such file or directory (this plugin runs on Node.js)" >&2; exit 127; }; exec node "$0" "$@"
'use strict';
// The CNI plugin. Run as a file (kubelet, the runtime), the two lines above are a shell's: they start node with the
// caller's NODE_* variables removed, since Node reads them before this file's first line (NODE_OPTIONS=--require can
// load code into this root process, NODE_EXTRA_CA_CERTS makes every start parse a CA bundle the plugin never uses);
// builtins only, no program run but node (~1 ms over `env node`). Run as `node sriovctl-cni.js`, they are a string and
// a comment, and the caller chose its node's environment.
// One bundled file, so a call pays for as little module loading as possible. Every verb writes
// stdout/stderr synchronously, so the process exits as soon as the verb is done: process.exit skips tearing the
// heap and the environment down, a few ms of every call. (A verb is async only where a give-back waits on a
// driver for a recorded VF count.)
Promise.resolve(require('../dist/sriovctl-cni.bundle.js').main()).then((code) => process.exit(code));
